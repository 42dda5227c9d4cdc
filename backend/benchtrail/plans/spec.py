"""Plan documents at the API: YAML or JSON, validated by the same model the runners execute
(`benchtrail.plans.model`), so a plan the API stores is a plan a runner can run."""

from __future__ import annotations

from typing import Any

import yaml

from benchtrail.errors import ErrorCode, InvalidRequest
from benchtrail.plans.model import PlanError, load_plan


def parse(text: str, *, source: str = "plan") -> dict[str, Any]:
    """The plan body as stored; errors name the field path and the reason."""
    try:
        load_plan(text)
    except PlanError as exc:
        raise InvalidRequest(f"{source}: {exc}", code=ErrorCode.PLAN_INVALID) from None
    return yaml.safe_load(text)
