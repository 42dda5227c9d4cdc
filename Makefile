# Benchtrail: the two commands a new user needs are `make up` and `make test` (see README.md).
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: up down admin backup restore lint test test-python test-containers test-frontend test-e2e bench bench-ingest bench-detect bench-ui bench-runner bench-api bench-ab bench-analysis openapi

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
## engine among them), Vitest, Playwright e2e.
test:
	infra/scripts/bootstrap.sh --browser --tools --frontend --docker
	$(MAKE) --no-print-directory lint test-python test-frontend test-e2e

## Boundaries and static checks: ruff, mypy (strict on the statistics), import-linter contracts, ESLint feature zones.
lint:
	.venv/bin/ruff check .
	.venv/bin/mypy backend/benchtrail/analysis
	.venv/bin/lint-imports --no-cache
	cd frontend && npm run --silent lint

test-python:
	$(PY) -m pytest -p no:cacheprovider --durations=25

## Only the container test: builds the images, runs the compose stack on a Docker engine it starts and stops
## (images and build cache kept in /var/cache/benchtrail-test-docker). `make test-python` runs it too.
test-containers:
	infra/scripts/bootstrap.sh --tools --docker
	$(PY) -m pytest -p no:cacheprovider -m containers tests/integration/test_containers.py

test-frontend:
	cd frontend && npm run --silent test

test-e2e:
	$(PY) infra/scripts/stack.py ephemeral --cwd frontend -- npm run --silent e2e

## Benchmarks: each prints ratios against a reference measured in the same run.
bench: bench-ingest bench-detect bench-analysis bench-ui bench-runner bench-api bench-ab

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

## Regenerate the OpenAPI document, the metric catalog and the TypeScript client (a test checks they are current).
openapi:
	cd frontend && npm run --silent gen:api
