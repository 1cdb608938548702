"""The embedded default (no DATABASE_URL, no REDIS_URL): SQLite, tasks in-process.

A first look must work end to end, so this runs the real thing in a fresh interpreter: migrate
a new SQLite file, mint a key, submit a course, amend it, retract it in a batch, and read the
receipts, with every task executed in-process; then /metrics and /healthz/pipeline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, django
django.setup()
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client
from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.services import practice_create
from tests.factories import batch, course, delete_entry, dumps

assert connection.vendor == "sqlite" and settings.CELERY_TASK_ALWAYS_EAGER
call_command("migrate", verbosity=0)
practice, _ = practice_create(slug="first-look")
token = key_mint(practice=practice, scopes=list(SCOPES), via=KeyEvent.Via.COMMAND)[1]
client = Client(HTTP_HOST="127.0.0.1", headers={"Authorization": f"Bearer {token}"})
receipts = []
bodies = [course("C-1"), course("C-1", weight_grams=3100)]
bodies.append(batch(delete_entry("C-1"), course("C-2")))
for body in bodies:
    response = client.post(
        "/api/registry/fhir/Bundle", dumps(body), content_type="application/fhir+json"
    )
    assert response.status_code == 202, response.content
    receipt = client.get(response["Content-Location"])  # finished, written whole
    receipts.append(json.loads(receipt.content))
anonymous = Client(HTTP_HOST="127.0.0.1")
metrics = anonymous.get(
    "/metrics", headers={"Authorization": f"Bearer {settings.REGISTRY_METRICS_TOKEN}"}
).content.decode()
pipeline = anonymous.get("/healthz/pipeline").status_code
# The registry office's pages read the kept counts on SQLite too.
call_command("collectstatic", "--noinput", verbosity=0)
from django.contrib.auth import get_user_model
office = Client(HTTP_HOST="127.0.0.1")
office.force_login(get_user_model().objects.create_superuser("root", "root@example.org"))
pages = {
    path: office.get(path).status_code
    for path in [
        "/registry/",
        "/registry/console.csv",
        "/registry/practices/first-look/scorecard",
        "/settings/statistics/?practice=first-look",
    ]
}
print(json.dumps({"receipts": receipts, "metrics": metrics, "pipeline": pipeline, "pages": pages}))
"""


def test_the_embedded_default_ingests_amends_and_retracts(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "REGISTRY_DEV_SECRETS")
    }
    env["REGISTRY_VAR_DIR"] = str(tmp_path)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env["REGISTRY_METRICS_TOKEN"] = "embedded-" + "0123456789abcdefghijklmnopqrstuvwxyz"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    created, amended, retracted = seen["receipts"]
    assert (created["status"], created["accepted"]) == ("completed", 1)
    assert amended["outcome"]["accepted"][0]["version"] == 2
    assert [e.get("voided", False) for e in retracted["outcome"]["accepted"]] == [True, False]
    # One process runs everything: its own tallies are the metrics, it is its own worker.
    assert 'registry_ingestions_total{status="completed"} 3.0' in seen["metrics"]
    assert 'registry_records_total{outcome="retracted"} 1.0' in seen["metrics"]
    assert (
        'registry_http_requests_total{endpoint="submit-bundle",status="202"} 3.0'
        in (seen["metrics"])
    )
    # By kind (issue 34): the two single-course Bundles and the batch.
    assert 'registry_ingestion_duration_seconds_count{kind="single"} 2.0' in seen["metrics"]
    assert 'registry_ingestion_duration_seconds_count{kind="batch"} 1.0' in seen["metrics"]
    assert seen["pipeline"] == 200
    assert set(seen["pages"].values()) == {200}, seen["pages"]
    assert (tmp_path / "registry.sqlite3").exists()
    assert (tmp_path / "secrets.json").exists()


def test_the_embedded_migrate_prints_no_system_check_warning(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "REGISTRY_DEV_SECRETS")
    }
    env["REGISTRY_VAR_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "models.W040" not in result.stdout + result.stderr
    assert "System check identified" not in result.stdout + result.stderr
