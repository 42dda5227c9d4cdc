# Benchtrail: the two commands a new user needs are `make up` and `make test` (see README.md).
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
# Python keeps the bytecode it compiles (__pycache__/, ignored by git and by the image builds), as it does by
# default: a machine with PYTHONDONTWRITEBYTECODE set compiles every module that bootstrap did not, and pytest
# rewrites every test module's assertions, in every process, every time (collecting the suite: 20 CPU-seconds
# per test process instead of 11).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: up down admin backup restore lint docs test test-fast test-python test-containers test-frontend test-e2e bench bench-ingest bench-detect bench-ui bench-runner bench-api bench-ab bench-analysis bench-profile openapi

## Start the whole product with demo data (PostgreSQL, Redis, API + dashboard, worker, beat, runner).
up:
	infra/scripts/bootstrap.sh --frontend --tools
	$(PY) infra/scripts/stack.py up

## Stop everything `make up` started.
down:
	@if [ -x $(PY) ]; then $(PY) infra/scripts/stack.py down; fi

## `benchtrail admin ...` on `make up`'s database and raw files: make admin ARGS="reingest --project P".
admin:
	$(PY) infra/scripts/stack.py admin $(ARGS)

## Back up `make up`'s database and raw uploads into one archive (FILE=path, default .data/backups/).
backup:
	$(PY) infra/scripts/stack.py backup $(FILE)

## Restore an archive from `make backup` into `make up`'s stack: make restore FILE=path.
restore:
	@if [ -z "$(FILE)" ]; then echo "usage: make restore FILE=.data/backups/benchtrail-....tar" >&2; exit 2; fi
	$(PY) infra/scripts/stack.py restore "$(FILE)"

## Every test: Python (unit + integration on real PostgreSQL/Redis/Celery, the compose stack on a real Docker
## engine and the Playwright e2e suite among them, tests/integration/test_dashboard_e2e.py), Vitest.
test:
	infra/scripts/bootstrap.sh --browser --tools --frontend --docker
	$(MAKE) --no-print-directory lint docs test-python test-frontend

## Boundaries and static checks: ruff, mypy (strict on the statistics), import-linter contracts, ESLint feature zones.
lint:
	.venv/bin/ruff check .
	.venv/bin/mypy backend/benchtrail/analysis
	.venv/bin/lint-imports --no-cache
	cd frontend && npm run --silent lint

## The manual, strict (a broken link or anchor, a missing page or one left out of the nav fails) into site/, served at /docs.
docs:
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet

# Test processes of pytest-xdist: each has its own throw-away PostgreSQL, Redis, data and log folders. The
# tests that run load tools form one group, run by one process at a time (tests/conftest.py).
PYTEST_WORKERS ?= 4

test-python:
	$(PY) -m pytest -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25 --junitxml=artifacts/junit.xml

## The edit loop: unit tests without load tools, and Vitest (no browser, no load tools, no stack).
test-fast:
	infra/scripts/bootstrap.sh --frontend
	$(PY) -m pytest -p no:cacheprovider -n 2 -m "not slow" tests/unit
	cd frontend && npm run --silent test

## Only the container test: builds the images, runs the compose stack on a Docker engine it starts and stops
## (images and build cache kept in /var/cache/benchtrail-test-docker). `make test-python` runs it too.
test-containers:
	infra/scripts/bootstrap.sh --tools --docker
	$(PY) -m pytest -p no:cacheprovider -m containers tests/integration/test_containers.py

test-frontend:
	cd frontend && npm run --silent test

test-e2e:
	infra/scripts/bootstrap.sh --browser --frontend
	$(PY) infra/scripts/stack.py ephemeral --demo --cwd frontend -- npm run --silent e2e

## Benchmarks: each prints ratios against a reference measured in the same run, and a last line `RESULT k=v ...`.
## BENCH_SMOKE=1 (e.g. make bench-ui BENCH_SMOKE=1) runs a bench's whole path at a tiny size (bench/sizes.py): `make test`
## runs every bench-* target of this file so (tests/bench/test_bench_smoke.py, which also names each one's RESULT keys).
bench: bench-ingest bench-detect bench-analysis bench-ui bench-runner bench-api bench-ab bench-profile

bench-ingest:
	infra/scripts/bootstrap.sh
	$(PY) bench/bench_ingest.py

bench-detect:
	infra/scripts/bootstrap.sh
	$(PY) bench/bench_detect.py

bench-ab:
	infra/scripts/bootstrap.sh
	$(PY) bench/bench_ab.py

bench-analysis:
	infra/scripts/bootstrap.sh
	$(PY) bench/bench_analysis.py

bench-ui:
	infra/scripts/bootstrap.sh --browser --frontend
	$(PY) infra/scripts/stack.py ephemeral --seed --cwd frontend -- node scripts/bench-ui.mjs

bench-runner:
	infra/scripts/bootstrap.sh --tools
	$(PY) bench/bench_runner.py

bench-api:
	infra/scripts/bootstrap.sh
	$(PY) bench/bench_api.py

## Profiling's own cost (on against off) and the gap between a profile's added CPU and the sampled CPU, on the Java demo.
bench-profile:
	infra/scripts/bootstrap.sh --tools
	$(PY) bench/bench_profile.py

## Regenerate the OpenAPI document, the metric catalog and the TypeScript client (a test checks they are current).
openapi:
	cd frontend && npm run --silent gen:api
