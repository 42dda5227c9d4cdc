"""Pure statistics for Benchtrail: no database, HTTP, queue or framework imports (only numpy, scipy,
arch, apache-otava, hdrh and `benchtrail.metrics`). Everything here is deterministic.

Public API
----------
A/B within a run (overhead of a cell, variant vs reference)::

    from benchtrail.analysis import compare, Replicates, Repetition, Timeline
    r = compare(ref, var, direction="lower", kind="latency_p75", scale=1e-3)
    # ref/var: [Repetition(histogram=..., stats={"p75": ...}, position=i, timeline=Timeline(...)), ...]
    #          | Replicates([...]) (one value per repetition) | a 1-D time-ordered sample array (one
    #          repetition) | a list of sample arrays or base64 HDR histograms (one per repetition)
    # The repetition is the unit: a t interval over per-repetition values, or for one repetition a
    # side a block bootstrap over its time-ordered intervals (see benchtrail.analysis.ab).
    # r: AbResult(abs_diff, rel_diff, ci_low, ci_high (95%, of abs_diff), ci_low_rel, ci_high_rel,
    #             mw_p, cliffs_delta, verdict, worse, mde, mde_rel, n_ref, n_var, method, p_value,
    #             paired, ref_values, var_values, ref_positions, var_positions, block_length, effective_n)
    # verdict: "no difference" | "small" | "medium" | "large" | "too noisy to tell"

History (change points on a trail or an overhead trail, values ordered by `trail_order_key`)::

    from benchtrail.analysis import Settings, detect, analyse, detect_incremental
    s = Settings(direction=metrics.get(name).direction)       # per project/metric overrides:
    #   min_magnitude_pct, min_effect_sigma, p_value, window (defaults = the evaluated global setting)
    cps = detect(values, replicates=reps_or_None, settings=s, known=[annotated indices])
    # values: one float per version, NaN for invalid runs (skipped, indices stay the caller's)
    # ChangePoint(index, p_value, magnitude_abs, magnitude_rel, direction, before_mean, after_mean,
    #             effect_sigma, known); direction is 'regression' | 'improvement' | 'known'
    state = analyse(values, settings=s)                        # DetectionResult, keep it
    state = detect_incremental(values + new_values, state, len(new_values), s)

Ordering of the x-axis::

    from benchtrail.analysis import trail_order_key, version_key, sort_versions

Scoring against annotations (TCPDBench definitions, used by `make bench-detect`)::

    from benchtrail.analysis.scoring import f_measure, covering
"""

from __future__ import annotations

from benchtrail.analysis.ab import AbResult, Repetition, Replicates, Timeline, compare
from benchtrail.analysis.changepoints import (
    ChangePoint,
    DetectionResult,
    Settings,
    analyse,
    detect,
    detect_incremental,
)
from benchtrail.analysis.versions import sort_versions, trail_order_key, version_key

__all__ = [
    "AbResult", "ChangePoint", "DetectionResult", "Repetition", "Replicates", "Settings", "Timeline", "analyse", "compare",
    "detect", "detect_incremental", "sort_versions", "trail_order_key", "version_key",
]
