"""Latency histograms: the one HdrHistogram configuration we store, and how to read it back.

Every cell's latency distribution is kept as hdrh's standard compressed base64 encoding, so a
stored cell can be re-read at any percentile and merged across repetitions without raw samples.

Percentile definition (used everywhere in Benchtrail for sample-based cells): **nearest rank** —
the smallest recorded value v such that at least ceil(p/100 · n) samples are <= v (numpy's
`method="inverted_cdf"`). Read from the histogram, v is the highest value equivalent to its HDR
bucket, clamped to the exact min/max, so it is within 0.1% (3 significant digits) of the exact
order statistic.
"""

from __future__ import annotations

import math

import numpy as np
from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000   # one hour
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record_counts(hist: HdrHistogram, values_us: np.ndarray, counts: np.ndarray) -> None:
    """Record distinct values with their multiplicities, vectorised.

    Equivalent to `hist.record_value(v, c)` for each pair (a test checks the encodings are
    identical) but computes hdrh's counts-array index with numpy, because a Python call per
    distinct value costs ~0.1 s for a 1M-sample run."""
    if len(values_us) == 0:
        return
    v = np.clip(np.asarray(values_us, dtype=np.int64), 0, HIGHEST_US)
    # Bit length of (v | sub_bucket_mask): frexp's exponent, exact for integers below 2**53.
    pow2ceiling = np.frexp((v | hist.sub_bucket_mask).astype(np.float64))[1].astype(np.int64)
    bucket = pow2ceiling - hist.unit_magnitude - (hist.sub_bucket_half_count_magnitude + 1)
    sub_bucket = v >> (bucket + hist.unit_magnitude)
    index = ((bucket + 1) << hist.sub_bucket_half_count_magnitude) + sub_bucket \
        - hist.sub_bucket_half_count
    np.add.at(np.ctypeslib.as_array(hist.counts), index, np.asarray(counts, dtype=np.uint64))
    hist.total_count += int(np.sum(counts))
    hist.min_value = min(hist.min_value, int(v.min()))
    hist.max_value = max(hist.max_value, int(v.max()))


def encode(hist: HdrHistogram) -> str:
    return hist.encode().decode("ascii")


def decode(encoded: str | bytes) -> HdrHistogram:
    return HdrHistogram.decode(encoded.encode("ascii") if isinstance(encoded, str) else encoded)


def merge(encoded: list[str]) -> str:
    """Merge stored histograms (e.g. repetitions of one cell) into one encoded histogram."""
    total = new_histogram()
    for e in encoded:
        total.add(decode(e))
    return encode(total)


def value_at_percentile_us(hist: HdrHistogram, percentile: float, *,
                           exact_min: float | None = None,
                           exact_max: float | None = None) -> float:
    """Nearest-rank percentile in microseconds (see the module docstring)."""
    n = hist.get_total_count()
    if n == 0:
        return math.nan
    rank = max(1, math.ceil(round(percentile / 100.0 * n, 9)))
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    index = int(np.searchsorted(np.cumsum(counts, dtype=np.int64), rank))
    value = float(hist.get_highest_equivalent_value(hist.get_value_from_index(index)))
    if exact_max is not None:
        value = min(value, exact_max)
    if exact_min is not None:
        value = max(value, exact_min)
    return value


def percentile_ms(encoded: str, percentile: float) -> float:
    """Any percentile (ms) of a stored histogram."""
    hist = decode(encoded)
    return value_at_percentile_us(hist, percentile, exact_min=float(hist.get_min_value()),
                                  exact_max=float(hist.get_max_value())) / 1000.0
