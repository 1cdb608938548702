# Two commands do everything on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Production shape for the test suite and the benchmark (docs/decisions.md "Running it").
TEST_DATABASE_URL ?= $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/registry)
TEST_REDIS_URL ?= $(or $(REDIS_URL),redis://127.0.0.1:6379/0)
# The tests read no .env file (REGISTRY_ENV_FILE empty): only what is set here and in the shell.
TEST_ENV := DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) REGISTRY_DEV_SECRETS=true \
	REGISTRY_ENV_FILE=
PYTEST_ARGS ?=
BENCH ?=

.PHONY: install run test test-fast lint bench worker beat chromium test-packages services format clean

$(STAMP): pyproject.toml
	@test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# Configuration comes from the environment and .env (docs/operations.md). In production shape
# the PostgreSQL database is created when missing; static files are collected when changed.
run: install
	$(PY) manage.py create_database
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic_if_changed
	REGISTRY_BANNER=1 exec $(VENV)/bin/gunicorn config.asgi:application --config config/gunicorn.py

worker: install
	exec $(VENV)/bin/celery -A config worker --loglevel=INFO

beat: install
	@mkdir -p var
	exec $(VENV)/bin/celery -A config beat --loglevel=INFO --schedule var/celerybeat-schedule

# Debian's packages the tests drive for real: Chromium for the browser tests (no test tool
# downloads a browser of its own), nginx for the reverse-proxy tests, promtool (prometheus)
# for the alert rules. Installed with apt-get only when one is missing.
TEST_PACKAGES := chromium chromium-driver nginx prometheus
chromium: test-packages
test-packages:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	  && test -x /usr/sbin/nginx && command -v promtool >/dev/null || { \
	  echo "Installing Debian's $(TEST_PACKAGES) for the tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_PACKAGES) >/dev/null; }

services:
	@.ci/services

test: install test-packages
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_ARGS)

# The fast lane: the pure and database tests, none that starts a process (worker, gunicorn,
# nginx, Chromium, promtool, the fault tests: tests/conftest.py marks those "process").
test-fast: install
	$(TEST_ENV) $(PY) -m pytest -m "not process" $(PYTEST_ARGS)

# mypy's Django plugin and makemigrations load the settings: with development secrets and no
# .env, lint passes whatever the shell sets (production shape needs real secrets otherwise).
LINT_ENV := REGISTRY_DEV_SECRETS=true REGISTRY_ENV_FILE=

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(LINT_ENV) $(VENV)/bin/mypy .
	$(LINT_ENV) $(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports --no-logo

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install
	$(TEST_ENV) $(PY) -m bench $(BENCH)

clean:
	rm -rf $(VENV) var build *.egg-info
