"""Every router of every domain is registered by the app factory (`benchtrail.app.create_app`): an
endpoint module whose routes the app does not serve fails here."""

from __future__ import annotations

import importlib
from pathlib import Path

from fastapi import APIRouter
from fastapi.routing import APIRoute

import benchtrail
from benchtrail.app import create_app

PACKAGE = Path(benchtrail.__file__).parent


def _endpoint_modules() -> list[str]:
    found = sorted(PACKAGE.glob("*/endpoints.py")) + sorted(PACKAGE.glob("*/*_endpoints.py"))
    return [".".join(("benchtrail", *p.relative_to(PACKAGE).with_suffix("").parts)) for p in found]


def test_every_domain_router_is_served_by_the_app() -> None:
    # What the app serves, as its OpenAPI document lists it (FastAPI includes routers lazily).
    served = {(path, method.upper()) for path, ops in create_app().openapi()["paths"].items() for method in ops}
    modules = _endpoint_modules()
    assert len(modules) >= 9  # projects, runs, execution, uploads, plans, trails, alerts, sharing, health
    missing = []
    for name in modules:
        module = importlib.import_module(name)
        routers = [v for v in vars(module).values() if isinstance(v, APIRouter)]
        assert routers, f"{name} defines no APIRouter"
        for router in routers:
            for route in router.routes:
                if isinstance(route, APIRoute) and route.include_in_schema:
                    missing += [(name, route.path, m) for m in route.methods if (route.path, m) not in served]
    assert not missing, f"routes the app factory does not register: {missing}"
