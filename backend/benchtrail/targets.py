"""The allow-list of load-test targets. The runner checks it again on its host, so the implementation
lives in the runner package (`benchtrail_runner.targets`) and the API imports it from there."""

from __future__ import annotations

from benchtrail_runner.targets import LOOPBACK, allowed, disallowed_targets, host_port, jmx_path_problem, plan_problems

__all__ = ["LOOPBACK", "allowed", "disallowed_targets", "host_port", "jmx_path_problem", "plan_problems"]
