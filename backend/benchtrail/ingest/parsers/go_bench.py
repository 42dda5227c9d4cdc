"""`go test -bench` output (the testing package's text, as `benchstat` reads it).

    goos: linux
    pkg: example.com/tracing
    BenchmarkSpan/exporter=recording-8   	  412345	      2890 ns/op	     512 B/op	       7 allocs/op

- scenario: the name without its `-N` GOMAXPROCS suffix; `key=value` parts of a sub-benchmark name
  are parameters (`BenchmarkSpan(exporter=recording)`), other parts stay in the name; a name found under
  two packages is prefixed with its package;
- load: GOMAXPROCS as threads (`-cpu 1,4` gives two load levels; no suffix = 1);
- one cell per measure (mode = its unit: `ns/op`, `B/op`, `allocs/op`, `MB/s` from b.SetBytes, and
  every b.ReportMetric unit); `-count N` gives N repetitions of each (their mean is the score);
  a unit ending in `/s` is a rate (better higher), every other better lower;
- the iteration count of each repetition is kept in params (`iterations`).
A line the testing package prints around results (PASS, ok, --- BENCH, logs) is skipped; a benchmark
line whose measures cannot be read is refused with its line.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from ..model import LoadSpec, ParsedFile, ParseError, ParseOptions
from ..textio import read_text
from .microbench import score_cell, split_params

# "BenchmarkX-8   1000   123 ns/op ..." (the name and its results may also be split over two lines when the
# benchmark logs: the name line, then a line of results starting with the iteration count).
_RESULTS = re.compile(r"^\s*(?P<rest>\d+\s+[-+\d.eE]+\s+\S+.*)$")
_PROCS = re.compile(r"^(?P<base>.+?)-(?P<procs>\d+)$")
_CONFIG = re.compile(r"^(?P<key>[a-z][a-z0-9_-]*):\s*(?P<value>.*)$")


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    lines = read_text(path).split("\n")
    config: dict[str, str] = {}
    # (package, name, procs, unit) -> [(value, iterations, line)]
    values: dict[tuple[str, str, int, str], list[tuple[float, int]]] = defaultdict(list)
    order: list[tuple[str, str, int, str]] = []
    pending: tuple[str, int] | None = None      # a name line whose results come on a later line
    packages: dict[str, set[str]] = defaultdict(set)
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if not line:
            continue
        if m := _CONFIG.match(line):
            config[m.group("key")] = m.group("value").strip()
            continue
        head, *more = line.split(None, 1)    # Go names hold no spaces (the testing package writes '_')
        tail = more[0] if more else ""
        if head.startswith("Benchmark") and len(head) > len("Benchmark"):
            if not re.match(r"\s*\d+\s+\S", tail):
                pending = (head, n)    # results follow on a later line (the benchmark logged)
                continue
            name, rest = head, tail.strip()
        elif pending is not None and (r := _RESULTS.match(line)):
            (name, _), rest = pending, r.group("rest")
        else:
            continue
        pending = None
        base, procs = _procs(name)
        fields = rest.split()
        iterations = int(fields[0])
        pairs = fields[1:]
        if len(pairs) < 2 or len(pairs) % 2:
            raise ParseError(f"benchmark {name}: expected the iteration count then value-unit pairs, got "
                             f"{rest.strip()!r}", line=n, field=name)
        package = config.get("pkg", "")
        packages[base].add(package)
        for value_text, unit in zip(pairs[0::2], pairs[1::2], strict=True):
            try:
                value = float(value_text)
            except ValueError:
                raise ParseError(f"benchmark {name}: {value_text!r} is not a number (unit {unit})",
                                 line=n, field=unit) from None
            key = (package, base, procs, unit)
            if key not in values:
                order.append(key)
            values[key].append((value, iterations))
    if not values:
        raise ParseError("no benchmark result line ('BenchmarkName  N  value unit ...') in the file")
    cells = []
    for key in order:
        package, base, procs, unit = key
        first, *rest = base.split("/")
        kept, params = split_params(rest)
        name = "/".join([first, *kept])
        if len(packages[base]) > 1 and package:
            name = f"{package}.{name}"
        runs = values[key]
        load = options.load or LoadSpec("threads", float(procs))
        cells.append(score_cell(
            name, params, unit, unit, replicates=[v for v, _ in runs], load=load,
            direction="higher" if unit.endswith("/s") else "lower",
            extra={"iterations": ", ".join(str(i) for _, i in runs), **({"package": package} if package else {})},
            where=base))
    return ParsedFile(tool="go", format="go-bench", reported=cells,
                      meta={k: v for k, v in config.items() if k in ("goos", "goarch", "pkg", "cpu")})


def _procs(name: str) -> tuple[str, int]:
    m = _PROCS.match(name)
    if m is None:
        return name, 1
    return m.group("base"), int(m.group("procs"))
