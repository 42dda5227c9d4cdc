"""The one-file client (`benchtrail.cli.client`, served at /cli/benchtrail.py): Python 3.9 code with the
standard library only, checked mechanically (vermin, ast with feature_version 3.9, its imports) and by running
it on every interpreter from 3.9 on that the machine has; its statistics and wording agree with the server's."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchtrail.cli import client
from infra.localstack import VENV_BIN
from tests.support.pythons import interpreters
from tests.support.stats import benjamini_hochberg

SOURCE = Path(client.__file__)


def test_the_client_is_python_3_9_code(tmp_path: Path) -> None:
    ast.parse(SOURCE.read_text(), filename=str(SOURCE), feature_version=(3, 9))
    # vermin knows which version brought each syntax feature, module, function and argument.
    argv = [str(VENV_BIN / "vermin"), "--target=3.9-", "--violations", "--eval-annotations", "--no-tips",
            "--no-parse-comments"]
    done = subprocess.run([*argv, str(SOURCE)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # ... and it does refuse what 3.9 lacks (zip's strict= is 3.10): the check can fail.
    newer = tmp_path / "newer.py"
    newer.write_text("def f(a, b):\n    return list(zip(a, b, strict=True))\n")
    assert subprocess.run([*argv, str(newer)], capture_output=True, text=True, timeout=120).returncode != 0


def test_the_client_imports_the_standard_library_only() -> None:
    modules = set()
    for node in ast.walk(ast.parse(SOURCE.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "the client is one file: no relative imports"
            modules.add((node.module or "").split(".")[0])
    assert modules and modules <= set(sys.stdlib_module_names) | {"__future__"}, \
        modules - set(sys.stdlib_module_names)


SELF_CHECK = r"""
import importlib.util, io, json, sys
spec = importlib.util.spec_from_file_location("benchtrail_client", sys.argv[1])
bt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bt)
out = {"version": list(sys.version_info[:2]), "client": bt.__version__, "site": "site" in sys.modules}
out["epoch_ms"] = [bt.epoch_ms(v) for v in ("1717200000000", "2024-06-01T00:00:05Z", "2024-06-01T00:00:05.5+00:00",
                                            "2024-06-01T02:00:05.123456789+0200", "2024-06-01 00:00:05.25-01:30")]
out["criterion"] = bt.parse_criterion("latency_p99<=2.5e2;variant=agent;overhead")
out["bh"] = bt.adjusted_p_values(json.loads(sys.argv[2]))
table = bt.Table([("a", False), ("b", True)], title="t")
table.add_row("x", "1.5")
table.add_row("long name", "12")
out["table"] = table.render()
for argv in (["upload", "--project", "p"], ["compare", "a"], ["nope"]):
    sys.stderr = io.StringIO()
    out.setdefault("usage", []).append(bt.main(argv))
sys.stderr = sys.__stderr__
print(json.dumps(out))
"""


@pytest.mark.parametrize("version", [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13)], ids=lambda v: "%d.%d" % v)
def test_the_client_runs_on_each_python(version: tuple[int, int]) -> None:
    """Isolated (-I) and without site-packages (-S): nothing but the interpreter's standard library."""
    python = interpreters().get(version)
    if python is None:
        pytest.skip(f"no Python {version[0]}.{version[1]} on this machine")
    ps = [0.01, None, 0.04, float("nan"), 0.03, 0.04, 0.5]
    done = subprocess.run([str(python), "-I", "-S", "-c", SELF_CHECK, str(SOURCE), json.dumps(ps)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (tuple(out["version"]), out["client"], out["site"]) == (version, client.__version__, False)
    # 2024-06-01T00:00:00Z is 1717200000000 ms since the epoch.
    assert out["epoch_ms"] == [1717200000000, 1717200005000, 1717200005500, 1717200005123, 1717200005250 + 90 * 60_000]
    assert out["criterion"] == {"metric": "latency_p99", "op": "<=", "value": 250.0, "variant": "agent", "overhead": True}
    finite = [p for p in ps if p is not None and not math.isnan(p)]
    expected = iter(benjamini_hochberg(finite))
    assert out["bh"] == pytest.approx([None if p is None or math.isnan(p) else next(expected) for p in ps])
    assert out["table"] == "t\na            b\n---------  ---\nx          1.5\nlong name   12\n"
    assert out["usage"] == [2, 2, 2]


def test_the_client_adjusts_p_values_as_scipy_does() -> None:
    from scipy.stats import false_discovery_control

    rng = __import__("numpy").random.default_rng(7)
    for size in (1, 2, 5, 40):
        ps = [float(p) for p in rng.uniform(0, 0.2, size)]
        ps[size // 2] = ps[0]   # a tie
        assert client.adjusted_p_values(ps) == pytest.approx(list(false_discovery_control(ps, method="bh")), rel=1e-12)
    assert client.adjusted_p_values([]) == [] and client.adjusted_p_values([None]) == [None]


def test_the_client_words_verdicts_and_run_states_as_the_server_does() -> None:
    from benchtrail import multiplicity
    from benchtrail.runstate import lifecycle

    assert client.FALSE_DISCOVERY_RATE == multiplicity.FALSE_DISCOVERY_RATE
    for ci in ((None, 1.0), (-1.0, 1.0), (0.5, 1.0), (-2.0, -0.1)):
        for p in (None, 0.001, 0.05, 0.3):
            for cells in (1, 4):
                assert client.not_over_cells(*ci, p, cells) == multiplicity.not_over_cells(*ci, p, cells)
    for status in lifecycle.RunStatus:
        for analysis in (None, *lifecycle.AnalysisStatus):
            assert client.settled(status, analysis) == lifecycle.settled(status, analysis), (status, analysis)
    assert client.TERMINAL == {str(s) for s in lifecycle.TERMINAL}


def test_the_client_is_the_servers_version() -> None:
    from importlib.metadata import version

    assert client.__version__ == version("benchtrail")
    done = subprocess.run([sys.executable, str(SOURCE), "--version"], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == f"benchtrail.py {client.__version__}"


def test_a_read_follows_a_redirect_and_an_upload_does_not() -> None:
    """urllib turns a redirected POST into a GET without its body: the client refuses the redirect instead and
    names where the server points (exit 3), while a read follows it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: bytes = b"", location: str | None = None) -> None:
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/moved":
                self._answer(302, location="/here")
            else:
                self._answer(200, json.dumps({"path": self.path, "auth": self.headers["Authorization"]}).encode())

        def do_POST(self) -> None:  # noqa: N802
            self._answer(301, location="https://bench.example.com/api/v1/projects/p/runs")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = client.Client(f"http://127.0.0.1:{server.server_port}", "bt_token")
        assert api.get("/moved") == {"path": "/here", "auth": "Bearer bt_token"}
        with pytest.raises(client.ApiError) as refused:
            api.post("/api/v1/projects/p/runs", {"x": 1})
        assert refused.value.status == 301 and "https://bench.example.com/api/v1/projects/p/runs" in str(refused.value)
    finally:
        server.shutdown()
