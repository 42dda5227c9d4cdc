"""Weighted value distributions: the common form of raw samples and HDR histograms.

They describe one repetition (its percentiles, Cliff's delta between two of them); the A/B
inference never treats their samples as independent observations (see `benchtrail.analysis.ab`), so
there is no request-level significance test here.

A distribution is (values, counts) with distinct sorted values. HDR histograms are decoded to their
bucket values; raw samples beyond `MAX_DISTINCT` distinct values are rounded to 3 significant digits,
the HDR precision the design fixes for latency cells, so that resampling stays a matter of counts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram
from numpy.typing import ArrayLike, NDArray

MAX_DISTINCT = 20_000
SIGNIFICANT_DIGITS = 3


@dataclass(frozen=True, slots=True)
class Distribution:
    values: NDArray[np.float64]
    counts: NDArray[np.int64]

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def mean(self) -> float:
        return float(self.counts @ self.values / self.n)

    def percentile(self, q: float) -> float:
        return float(percentiles_from_counts(self.values, self.counts[None, :], q)[0])


def round_significant(values: NDArray[np.float64], digits: int = SIGNIFICANT_DIGITS) -> NDArray[np.float64]:
    out = np.asarray(values, dtype=np.float64).copy()
    nz = out != 0
    mag = np.floor(np.log10(np.abs(out[nz])))
    scale = 10.0 ** (digits - 1 - mag)
    out[nz] = np.round(out[nz] * scale) / scale
    return out


def from_samples(samples: ArrayLike) -> Distribution:
    arr = np.asarray(samples, dtype=np.float64).ravel()
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        raise ValueError("no finite samples")
    values, counts = np.unique(arr, return_counts=True)
    if values.size > MAX_DISTINCT:
        values, counts = np.unique(round_significant(arr), return_counts=True)
    return Distribution(values, counts.astype(np.int64))


@functools.lru_cache(maxsize=256)
def from_hdr(encoded: str | bytes, scale: float = 1.0) -> Distribution:
    """Decode a base64 HDR histogram (as `HdrHistogram.encode()` writes it). Bucket values are the
    HDR "highest equivalent value", the value HDR itself reports for percentiles. Cached (read-only
    arrays): an analysis compares the same cells for several statistics."""
    hist = HdrHistogram.decode(encoded)
    counts = np.asarray(hist.counts[: hist.counts_len], dtype=np.int64)
    idx = np.flatnonzero(counts)
    if idx.size == 0:
        raise ValueError("empty histogram")
    # hdrh's get_value_from_index and get_highest_equivalent_value, for every index at once: an index's
    # bucket and sub-bucket give its lowest value; its highest is one below the next bucket's step.
    half, half_mag, unit = hist.sub_bucket_half_count, hist.sub_bucket_half_count_magnitude, hist.unit_magnitude
    bucket = (idx >> half_mag) - 1
    sub = (idx & (half - 1)) + half
    first = bucket < 0
    sub[first] -= half
    bucket[first] = 0
    values = (((sub << (bucket + unit)) + (1 << (bucket + unit)) - 1).astype(np.float64)) * scale
    order = np.argsort(values, kind="stable")
    dist = Distribution(np.asarray(values[order], dtype=np.float64), counts[idx][order])
    dist.values.flags.writeable = False
    dist.counts.flags.writeable = False
    return dist


def merge(parts: list[Distribution]) -> Distribution:
    values = np.concatenate([p.values for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    uniq, inv = np.unique(values, return_inverse=True)
    return Distribution(uniq, np.bincount(inv, weights=counts).astype(np.int64))


def percentiles_from_counts(values: NDArray[np.float64], counts: NDArray[np.int64], q: float) -> NDArray[np.float64]:
    """Percentile q of every row of `counts` over the shared `values`: the smallest value whose
    cumulative count reaches ceil(q/100 * n) (numpy's "inverted_cdf", HDR's own rule)."""
    cum = np.cumsum(counts, axis=1)
    n = cum[:, -1]
    rank = np.maximum(np.ceil(q / 100.0 * n - 1e-9), 1).astype(np.int64)
    idx = np.minimum((cum < rank[:, None]).sum(axis=1), values.size - 1)
    return np.asarray(values[idx], dtype=np.float64)


def cliffs_delta_and_u(ref: Distribution, var: Distribution) -> tuple[float, float]:
    """Cliff's delta P(var > ref) - P(var < ref) and the Mann-Whitney U of `var`, from counts, exact
    with ties, in O(k log k)."""
    pos = np.searchsorted(ref.values, var.values, side="left")
    pos_right = np.searchsorted(ref.values, var.values, side="right")
    cum = np.concatenate([[0], np.cumsum(ref.counts)])
    below = cum[pos].astype(np.float64)            # ref values < each var value
    equal = (cum[pos_right] - cum[pos]).astype(np.float64)
    above = ref.n - below - equal
    greater = float(var.counts @ below)
    less = float(var.counts @ above)
    ties = float(var.counts @ equal)
    total = float(ref.n) * float(var.n)
    return (greater - less) / total, greater + 0.5 * ties
