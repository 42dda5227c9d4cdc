from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from benchtrail.validation import SafeModel

# An http(s) URL the server can call: a host name (RFC 3986 reg-name), an IPv4 address or a bracketed IPv6
# address, and an optional port 0..65535.
_H16, _OCTET = "[0-9A-Fa-f]{1,4}", "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_LS32 = f"({_H16}:{_H16}|{_OCTET}(\\.{_OCTET}){{3}})"
_IPV6 = "|".join([f"({_H16}:){{6}}{_LS32}", f"::({_H16}:){{5}}{_LS32}", f"({_H16})?::({_H16}:){{4}}{_LS32}",
                  *(f"(({_H16}:){{0,{n}}}{_H16})?::({_H16}:){{{4 - n}}}{_LS32}" for n in (1, 2)),
                  f"(({_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}", f"(({_H16}:){{0,4}}{_H16})?::{_LS32}",
                  f"(({_H16}:){{0,5}}{_H16})?::{_H16}", f"(({_H16}:){{0,6}}{_H16})?::"])
_PORT = "([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
WEBHOOK_URL = (f"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9._~%!$&'()*+,;=:-]*@)?"
               f"(\\[({_IPV6})\\]|[A-Za-z0-9._~%!$&'()*+,;=-]+)(:{_PORT})?([/?#]\\S*)?$")
# What people set. `confirmed`, `fixed` and `wontfix` accept the change as real: it becomes a known
# change point for later analysis. `withdrawn` is set only by the analysis (see AlertOut.state_reason).
State = Literal["new", "acknowledged", "investigating", "confirmed", "fixed", "wontfix", "invalid"]
# What an alert can be in, so what a list can be filtered by.
AnyState = Literal["new", "acknowledged", "investigating", "confirmed", "fixed", "wontfix", "invalid", "withdrawn"]


class AlertTrail(BaseModel):
    id: int
    scenario: str
    load_key: str
    variant: str
    mode: str


class AlertOut(BaseModel):
    id: int
    project: str
    state: str = Field(description="new | acknowledged | investigating (open) | confirmed | fixed | wontfix "
                                   "(accepted: a known change point) | invalid (a false alarm) | withdrawn (by "
                                   "the analysis: the trail no longer shows the change; see state_reason)")
    state_reason: str | None = Field(default=None, description="Why the analysis put the alert in its state "
                                                                "(withdrawn: the evidence that no longer "
                                                                "supports it)")
    kind: str = Field(description="trail | overhead")
    direction: str = Field(description="regression | improvement")
    metric: str
    trail: AlertTrail
    run: str = Field(description="The run where the new level starts")
    agent_version: str | None
    detected_by: str | None = Field(description="The run whose analysis raised the alert")
    magnitude_abs: float
    magnitude_rel: float | None
    p_value: float | None
    effect_sigma: float | None
    before_value: float | None
    after_value: float | None
    assignee: str | None
    notes: str
    summary: str
    permalink: str
    run_permalink: str
    created_at: datetime
    updated_at: datetime


class AlertGroup(BaseModel):
    run: str
    agent_version: str | None
    alert_ids: list[int]


class AlertList(BaseModel):
    items: list[AlertOut]
    groups: list[AlertGroup] = Field(description="The same alerts grouped by the run that raised them")


class AlertEventOut(BaseModel):
    id: int
    from_state: str | None
    to_state: str
    actor: str
    note: str
    created_at: datetime


class AlertDetail(AlertOut):
    events: list[AlertEventOut]


class AlertPatch(SafeModel):
    model_config = ConfigDict(extra="forbid")
    state: State | None = None
    assignee: str | None = Field(default=None, max_length=200, description="'' clears it")
    notes: str | None = None
    note: str | None = Field(default=None, description="A comment recorded with this change only")


class AnnotationIn(SafeModel):
    """An annotation is placed on the axis by agent_version or by at (a time): one of them is required."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": [
        {"required": ["agent_version"], "properties": {"agent_version": {"type": "string"}}},
        {"required": ["at"], "properties": {"at": {"type": "string", "format": "date-time"}}}]})
    kind: Literal["release", "jdk", "infra", "other"] = "other"
    title: str = Field(min_length=1, max_length=300)
    agent_version: str | None = Field(default=None, max_length=100)
    at: datetime | None = None
    known_change: bool = Field(default=False, description="Treat as a known change point: never alerted")


class AnnotationPatch(BaseModel):
    """Fields to change; an omitted field keeps its value. The result still needs agent_version or at."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["release", "jdk", "infra", "other"] | None = None
    title: str | None = Field(default=None, min_length=1, max_length=300)
    agent_version: str | None = Field(default=None, max_length=100)
    at: datetime | None = None
    known_change: bool | None = None


class AnnotationOut(BaseModel):
    id: int
    kind: str
    title: str
    agent_version: str | None
    at: datetime | None
    known_change: bool
    created_at: datetime


class AnnotationList(BaseModel):
    items: list[AnnotationOut]


class WebhookIn(SafeModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=8, max_length=1000, pattern=WEBHOOK_URL,
                     description="An http(s) URL whose host[:port] matches BENCHTRAIL_WEBHOOK_ALLOWLIST (set by "
                                 "the site admin); any other destination is refused with 422")
    style: Literal["generic", "slack"] = "generic"
    secret: str | None = Field(default=None, min_length=16, max_length=200,
                               description="HMAC-SHA256 key; generated when omitted")


class WebhookOut(BaseModel):
    id: int
    url: str
    style: str
    enabled: bool
    secret_hint: str
    created_at: datetime


class WebhookCreated(WebhookOut):
    secret: str = Field(description="Shown once")


class WebhookList(BaseModel):
    items: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: int
    alert_id: int | None
    status: str
    attempts: int
    response_code: int | None
    error: str | None
    payload: dict[str, Any]
    created_at: datetime


class DeliveryList(BaseModel):
    items: list[DeliveryOut]
