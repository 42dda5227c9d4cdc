"""Tables. Alembic migrations in /migrations are the only source of schema; these mirror them."""

from benchtrail.models.alert import Alert, AlertEvent, Annotation, WebhookDelivery, Webhook
from benchtrail.models.project import ApiToken, Project, ProjectChange, ProjectRevision
from benchtrail.models.result import (Blob, Cell, Environment, Load, MetricDef, ResultsUpload, Run, RunFile, RunShare,
                                      Scenario, Series, Trail, UnrecordedBlob, Variant)
from benchtrail.models.plan import Plan, Schedule
from benchtrail.models.profile import Profile
from benchtrail.models.snapshot import Snapshot

__all__ = [
    "Alert", "AlertEvent", "Annotation", "ApiToken", "Blob", "Cell", "Environment", "Load", "MetricDef",
    "Plan", "Profile", "Project", "ProjectChange", "ProjectRevision", "ResultsUpload", "Run", "RunFile", "RunShare", "Scenario",
    "Schedule", "Series", "Snapshot", "Trail", "UnrecordedBlob", "Variant",
    "Webhook", "WebhookDelivery",
]
