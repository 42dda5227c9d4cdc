"""Scores of a change-point detector against human annotations, defined as TCPDBench defines them.

Reference: G.J.J. van den Burg and C.K.I. Williams, "An Evaluation of Change Point Detection Algorithms"
(arXiv:2003.06222), and TCPDBench's `analysis/scripts/metrics.py`. Both scores count index 0 as a
change point of every segmentation, so "never alert" still scores a positive F1 and cover.

- F1: precision against the union of all annotators' points, recall averaged over annotators; a
  prediction matches an annotated point within `margin` indices, each prediction at most once.
- Cover: segmentation covering (Arbelaez et al.): for every annotator's partition, each of its
  segments is weighted by its length and scored by its best Jaccard overlap with a predicted
  segment; the result is averaged over annotators.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def true_positives(truth: Iterable[int], predicted: Iterable[int], margin: int = 5) -> set[int]:
    """Annotated points matched by a distinct prediction within `margin` (closest prediction wins)."""
    remaining = set(predicted)
    matched: set[int] = set()
    for tau in sorted(set(truth)):
        close = sorted((abs(tau - x), x) for x in remaining if abs(tau - x) <= margin)
        if not close:
            continue
        matched.add(tau)
        remaining.remove(close[0][1])
    return matched


def f_measure(annotations: Mapping[str, Sequence[int]], predictions: Iterable[int], margin: int = 5,
              alpha: float = 0.5) -> float:
    f, _, _ = precision_recall_f(annotations, predictions, margin=margin, alpha=alpha)
    return f


def precision_recall_f(annotations: Mapping[str, Sequence[int]], predictions: Iterable[int],
                       margin: int = 5, alpha: float = 0.5) -> tuple[float, float, float]:
    per_annotator = [set(points) | {0} for points in annotations.values()]
    if not per_annotator:
        raise ValueError("at least one annotator is needed")
    predicted = set(int(p) for p in predictions) | {0}
    union = set().union(*per_annotator)
    precision = len(true_positives(union, predicted, margin)) / len(predicted)
    recall = sum(len(true_positives(tk, predicted, margin)) / len(tk)
                 for tk in per_annotator) / len(per_annotator)
    f = precision * recall / (alpha * recall + (1 - alpha) * precision)
    return f, precision, recall


def _segments(locations: Iterable[int], n_obs: int) -> list[tuple[int, int]]:
    """Half-open [start, stop) segments of range(n_obs) cut at the given locations."""
    cuts = sorted({int(c) for c in locations if 0 < int(c) < n_obs})
    bounds = [0, *cuts, n_obs]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _jaccard(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union


def cover_single(predicted: Sequence[tuple[int, int]], truth: Sequence[tuple[int, int]]) -> float:
    total = sum(stop - start for start, stop in truth)
    covered = sum((seg[1] - seg[0]) * max(_jaccard(seg, p) for p in predicted) for seg in truth)
    return covered / total


def covering(annotations: Mapping[str, Sequence[int]], predictions: Iterable[int], n_obs: int) -> float:
    predicted = _segments(predictions, n_obs)
    scores = [cover_single(predicted, _segments(points, n_obs)) for points in annotations.values()]
    return sum(scores) / len(scores)
