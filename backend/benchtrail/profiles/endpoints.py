from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal

from benchtrail.auth.dependencies import get_principal
from benchtrail.db_boundary import request_session
from benchtrail.openapi import errors
from benchtrail.profiles import service
from benchtrail.profiles.schemas import FlameOut, ProfileDiffOut, ProfileList

router = APIRouter(prefix="/api/v1", tags=["profiles"])
SessionDep = Depends(request_session, scope="function")
_LOAD = Query(default=None, max_length=100, description="The load level's key; default: the first profiled")
_SCENARIO = Query(default=None, max_length=500, description="Default: '*' (every scenario at once) when profiled")


@router.get("/runs/{slug}/profiles", response_model=ProfileList, responses=errors(404))
def list_profiles(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> ProfileList:
    """The run's CPU profiles, one per profiled repetition of a variant at a load level (empty: none)."""
    return service.list_profiles(session, principal, slug)


@router.get("/runs/{slug}/profiles/flame", response_model=FlameOut, responses=errors(404, 422))
def flame_graph(slug: str, variant: str = Query(max_length=100), load: str | None = _LOAD,
                scenario: str | None = _SCENARIO, session: Session = SessionDep,
                principal: Principal = Depends(get_principal)) -> FlameOut:
    """A variant's flame graph: CPU-ms per 1,000 requests, the mean over its profiled repetitions."""
    return service.flame_graph(session, principal, slug, variant, load, scenario)


@router.get("/runs/{slug}/profiles/diff", response_model=ProfileDiffOut, responses=errors(404, 422))
def profile_diff(slug: str, variant: str | None = Query(default=None, max_length=100, description=(
                     "Default: the first profiled variant that is not the reference")),
                 reference: str | None = Query(default=None, max_length=100, description=(
                     "Default: the run's reference variant; with `base`, the same variant")),
                 base: str | None = Query(default=None, max_length=16, description=(
                     "Another run whose `reference` profiles are the reference (agent version N against N+1); "
                     "'previous': the project's latest run before this one (same environment) with a profile of "
                     "the variant at the load level (an alert's change point against the level before it)")),
                 load: str | None = _LOAD, scenario: str | None = _SCENARIO, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> ProfileDiffOut:
    """Where the added CPU goes: the differential flame graph (variant minus reference, per 1,000 requests), the
    package prefixes and frames that add the most self and total CPU with intervals over the repetitions, and
    (within one run) the check against the sampled process CPU."""
    return service.diff(session, principal, slug, variant, reference, load, scenario, base)
