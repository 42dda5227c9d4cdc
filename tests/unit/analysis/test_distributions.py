"""Decoding HDR histograms: every bucket value equals what the hdrh library reports for it."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from benchtrail.analysis.distributions import from_hdr


@pytest.mark.parametrize(("lowest", "highest", "digits"), [(1, 3_600_000_000, 3), (1, 60_000_000, 2), (1000, 10**9, 3)])
def test_from_hdr_bucket_values_are_hdrhs_highest_equivalent_values(lowest: int, highest: int, digits: int) -> None:
    rng = np.random.default_rng(7)
    hist = HdrHistogram(lowest, highest, digits)
    # Values from the first buckets (below the sub-bucket count) to the top of the range.
    values = np.concatenate([rng.integers(lowest, 3000, 500), np.exp(rng.uniform(np.log(lowest), np.log(highest), 5000))])
    for v in values.astype(np.int64):
        hist.record_value(int(v))
    encoded = hist.encode()

    dist = from_hdr(encoded, scale=1e-3)

    # Independent: hdrh's own per-index methods on the decoded histogram.
    decoded = HdrHistogram.decode(encoded)
    counts = np.asarray(decoded.counts[: decoded.counts_len])
    nz = np.flatnonzero(counts)
    expected = np.array([decoded.get_highest_equivalent_value(decoded.get_value_from_index(int(i))) for i in nz],
                        dtype=float) * 1e-3
    order = np.argsort(expected, kind="stable")
    assert np.array_equal(dist.values, expected[order])
    assert np.array_equal(dist.counts, counts[nz][order])
    assert dist.n == values.size
