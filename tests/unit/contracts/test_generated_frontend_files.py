"""The dashboard's generated copies of backend contracts must be current (`make openapi` regenerates)."""

from __future__ import annotations

import json

from benchtrail.metrics import catalog_json
from infra.localstack import REPO


def test_metric_catalog_json_is_current():
    committed = json.loads((REPO / "frontend/src/api/metrics.json").read_text())
    assert committed == catalog_json()


def test_openapi_document_is_current():
    from benchtrail.app import create_app

    committed = json.loads((REPO / "frontend/src/api/openapi.json").read_text())
    assert committed == json.loads(json.dumps(create_app().openapi()))
