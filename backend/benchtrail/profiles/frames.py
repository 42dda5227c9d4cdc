"""What code a frame belongs to: its package, the package prefix it is grouped under, and whether it is an
agent's own code.

A JVM frame is `package.Class.method` (`io.opentelemetry.sdk.trace.SdkSpan.end`), a Go frame
`import/path.Func` or `import/path.(*Type).Method` (`go.opentelemetry.io/otel/sdk/trace.(*tracer).Start`),
a Python frame `function (file.py:line)`. Frames are grouped by package prefix: the first three dotted parts
of a JVM package (`io.opentelemetry.sdk`), the first three path elements of a Go import path
(`go.opentelemetry.io/otel/sdk`), a Python file's name. A frame of a known agent (`AGENT_PREFIXES`) or of a
name the plan gives (`profile.agent_packages`) is grouped under that prefix and marked as agent code, so the
agent's own work stands out from the application code it slows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Agents' own code (their instrumentation, SDK and exporters, as loaded by the agent).
AGENT_PREFIXES: tuple[str, ...] = (
    "io.opentelemetry.javaagent", "io.opentelemetry.sdk", "io.opentelemetry.exporter",
    "io.opentelemetry.instrumentation", "io.opentelemetry.context", "io.opentelemetry.api",
    "com.megaease.easeagent", "co.elastic.apm", "datadog.trace", "com.datadoghq", "org.apache.skywalking",
    "com.navercorp.pinpoint", "com.newrelic", "com.amazonaws.xray", "software.amazon.opentelemetry",
    "go.opentelemetry.io", "github.com/alibaba/loongsuite-go-agent", "gopkg.in/DataDog/dd-trace-go",
    "github.com/DataDog/dd-trace-go", "go.elastic.co/apm", "opentelemetry.", "ddtrace.",
)
_SYNTHETIC = re.compile(r"^\[.*\]$")


def agent_prefix(frame: str, extra: Sequence[str] = ()) -> str | None:
    """The agent code `frame` belongs to, if any: a name the plan gives (`profile.agent_packages`) that the
    frame contains (e.g. `main.(*tracer)` for the Go demo's tracer, whose closures are named
    `main.main.(*tracer).middleware.func8`), else a known agent prefix it starts with."""
    for name in extra:
        if name and name in frame:
            return name
    for prefix in AGENT_PREFIXES:
        if frame.startswith(prefix):
            return prefix
    return None


def package(frame: str) -> str:
    """The package (JVM), import path (Go) or file (Python) of a frame; '[kernel]' or '[native]' for kernel and
    native code (async-profiler shows both), '' for a synthetic frame or a bare address."""
    if _SYNTHETIC.match(frame) or frame.startswith("0x"):
        return ""
    if frame.endswith("_[k]"):
        return "[kernel]"
    if "::" in frame or "@@" in frame:
        return "[native]"
    if frame.endswith(")") and " (" in frame:           # py-spy: function (path/file.py:line)
        where = frame.rsplit(" (", 1)[1].rstrip(")")
        return where.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    head = frame.split("(", 1)[0]
    if "/" in head or "(*" in frame or ")." in frame:
        # Go: the import path runs to the first '.' after its last '/'
        cut = head.find(".", head.rfind("/") + 1)
        return head[:cut] if cut >= 0 else head
    if "." not in frame:
        return "[native]"                                # a C function: epoll_wait, __GI_write
    # JVM (and Go without a path): drop the method and the class (the first part that starts upper-case,
    # nested classes with it)
    parts = frame.split(".")[:-1]
    for i, part in enumerate(parts):
        if part[:1].isupper() or "$" in part:
            return ".".join(parts[:i])
    return ".".join(parts)


def group(frame: str, extra: Sequence[str] = ()) -> tuple[str, bool]:
    """(the prefix a frame is grouped under, whether it is agent code)."""
    agent = agent_prefix(frame, extra)
    if agent is not None:
        return agent.rstrip("."), True
    pkg = package(frame)
    if pkg.startswith("["):
        return pkg, False
    if not pkg:
        return frame if _SYNTHETIC.match(frame) else "(no package)", False
    if "/" in pkg or "." not in pkg and not pkg.endswith(".py"):
        return "/".join(pkg.split("/")[:3]), False
    if pkg.endswith(".py"):
        return pkg, False
    return ".".join(pkg.split(".")[:3]), False
