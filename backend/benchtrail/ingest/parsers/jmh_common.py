"""What JMH text and JSON share: units, percentile names, secondary-metric names."""

from __future__ import annotations

import re

# Time units JMH prints (`<tu>/op`), in milliseconds.
TIME_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "min": 60_000.0,
                "m": 60_000.0, "h": 3_600_000.0}
_PCT_LABEL = {"0.00": "min", "0.0": "min", "0": "min", "1.00": "max", "1.0": "max", "1": "max"}
# (text rows print "p0.00"/"p1.00"; JSON keys "0.0"/"100.0" normalise to "0"/"1")
# JMH fraction -> catalog name (benchtrail.metrics.PERCENTILES).
_CATALOG_PCT = {0.5: "p50", 0.75: "p75", 0.9: "p90", 0.95: "p95", 0.99: "p99", 0.999: "p999"}


def time_unit_ms(unit: str | None) -> float | None:
    """ms per unit for `<time>/op` units (sample/avgt/ss); None for throughput and other units."""
    if not unit or not unit.endswith("/op"):
        return None
    return TIME_UNIT_MS.get(unit[:-3])


def percentile_stat(fraction_text: str) -> tuple[str, bool]:
    """('latency_p50', True) for a catalog percentile, ('latency_p9999', False) otherwise."""
    if fraction_text in _PCT_LABEL:
        return f"latency_{_PCT_LABEL[fraction_text]}", True
    f = float(fraction_text)
    if f in _CATALOG_PCT:
        return f"latency_{_CATALOG_PCT[f]}", True
    digits = re.sub(r"^0\.", "", fraction_text).rstrip("0") or "0"
    return f"latency_p{digits}", False


def scenario_of(benchmark: str, params: dict[str, str], secondary: str | None = None) -> str:
    """The scenario of one JMH result: the benchmark with its @Param values, as JMH runs each combination
    as a benchmark of its own ("Bench.enforce(modelType=rbac, useCache=false)"), then its secondary
    metric ("...:gc.alloc.rate"). Sorted by name, as JMH prints them; a text table's "N/A" (a parameter the
    benchmark does not have) is left out."""
    shown = [f"{k}={v}" for k, v in sorted(params.items()) if v != "N/A"]
    name = f"{benchmark}({', '.join(shown)})" if shown else benchmark
    return f"{name}:{secondary}" if secondary else name


def normalise_secondary(name: str) -> str:
    """JMH <= 1.36 prefixes profiler results with U+00B7 ('·gc.alloc.rate'); 1.37 does not."""
    return name.lstrip("\u00b7")
