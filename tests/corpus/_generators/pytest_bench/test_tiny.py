"""Our pytest-benchmark benchmarks for tests/corpus/pytest-benchmark (run by produce.sh, not by `make test`)."""

import json

import pytest


@pytest.mark.parametrize("size", [10, 1000])
@pytest.mark.parametrize("kind", ["list", "tuple"])
def test_build(benchmark, size, kind):
    make = list if kind == "list" else tuple
    benchmark(lambda: make(range(size)))


def test_json_dumps(benchmark):
    doc = {"spans": [{"id": i, "name": f"op-{i}", "attrs": {"k": "v"}} for i in range(50)]}
    benchmark.extra_info["spans"] = 50
    benchmark(json.dumps, doc)


@pytest.mark.benchmark(group="sorting")
def test_sorted(benchmark):
    data = list(range(500, 0, -1))
    benchmark.pedantic(sorted, args=(data,), rounds=20, iterations=5)
