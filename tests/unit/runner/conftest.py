"""Fixtures for the runner tests: the real demo target on a free loopback port, and the installed
tools. A missing tool fails the test with the command that installs it (never a silent skip)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from benchtrail_runner.tools import tools_dir

from infra.localstack import free_port
from tests.support.runner import Target, require_tool, wait_http


@pytest.fixture(scope="session")
def target() -> Iterator[Target]:
    exe = require_tool("benchtrail-demo-target")
    port = free_port()
    # In a session of its own: a test may raise its priority alone (tests.support.runner.renice).
    proc = subprocess.Popen([exe, "-addr", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/ok", 10)
        yield Target(proc, port)
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture(scope="session")
def java_demo() -> Iterator[Target]:
    """The Java demo service (no agent) for Prometheus sampling."""
    java_dir = tools_dir() / "demo-java"
    if not (java_dir / "demo-service.jar").is_file():
        pytest.fail(f"{java_dir}/demo-service.jar is missing: run infra/tools/install.sh")
    port = free_port()
    proc = subprocess.Popen(["java", "-Xms64m", "-Xmx128m", "-cp", f"{java_dir}/demo-service.jar:{java_dir}/lib/*",
                             "dev.benchtrail.demo.DemoService", str(port), "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", 30)
        yield Target(proc, port)
    finally:
        proc.terminate()
        proc.wait(5)


