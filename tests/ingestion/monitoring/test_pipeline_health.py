"""``/healthz/pipeline``: a real worker's heartbeat, and the age of the oldest queued ingestion."""

from __future__ import annotations

import os
import secrets
import signal
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from ingestion.models import Ingestion
from ingestion.monitoring import health
from ingestion.monitoring.heartbeat import Heartbeat
from tests.factories import course
from tests.workers import celery_worker, wait_for

URL = "/healthz/pipeline"
TOKEN = secrets.token_urlsafe(32)


@pytest.fixture
def monitor(settings):
    """A monitor with the metrics token: /healthz/pipeline tells it every check and figure."""
    settings.REGISTRY_METRICS_TOKEN = TOKEN
    return Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")


def answer(client, status: int):
    def check():
        response = client.get(URL)
        return response if response.status_code == status else None

    return check


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS=3)
def test_a_stopped_worker_turns_the_pipeline_unhealthy_until_it_continues(monitor, tmp_path):
    client = monitor
    assert client.get(URL).json()["checks"]["worker"] == "silent"  # no worker yet
    with celery_worker(tmp_path, "beating", REGISTRY_WORKER_HEARTBEAT_SECONDS="0.5") as worker:
        healthy = wait_for(answer(client, 200), timeout=30, message="a heartbeat")
        assert healthy.json()["workers_alive"] == 1
        os.killpg(worker.process.pid, signal.SIGSTOP)
        try:
            stopped = wait_for(answer(client, 503), timeout=60, message="the heartbeat to age")
            assert stopped.json()["checks"] == {"worker": "silent", "queue": "ok"}
            assert stopped.json()["workers_alive"] == 0
            assert client.get("/healthz").status_code == 200  # the web's own liveness
        finally:
            os.killpg(worker.process.pid, signal.SIGCONT)
        wait_for(answer(client, 200), timeout=30, message="the heartbeat to resume")
    wait_for(answer(client, 503), timeout=30, message="the stopped worker to say it is gone")


@pytest.mark.django_db
@override_settings(REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS=120)
def test_an_old_queued_ingestion_turns_the_pipeline_unhealthy(api, monitor):
    client = monitor
    Heartbeat("health-test@host").beat()
    assert client.get(URL).status_code == 200
    assert api.submit(course("Q-1")).status_code == 202
    assert client.get(URL).status_code == 200  # young
    Ingestion.objects.update(queued_at=timezone.now() - timedelta(seconds=121))

    behind = client.get(URL)
    assert behind.status_code == 503
    assert behind.json()["checks"] == {"worker": "ok", "queue": "behind"}
    assert behind.json()["queued"] == 1
    assert behind.json()["oldest_queued_seconds"] >= 121
    assert set(behind.json()) == {
        "status",
        "checks",
        "workers_alive",
        "queued",
        "oldest_queued_seconds",
    }


@pytest.mark.django_db
@override_settings(
    REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS=120, REGISTRY_HEALTH_VERDICT_SECONDS=3600
)
def test_anyone_is_told_only_ok_or_not_from_a_verdict_kept_a_few_seconds(api, monitor):
    health.public_verdict.healthy = None  # this process's verdict, from an earlier test
    Heartbeat("health-test@host").beat()
    anyone = Client()
    first = anyone.get(URL)
    assert (first.status_code, first.json()) == (200, {"status": "ok"})
    assert api.submit(course("Q-2")).status_code == 202
    Ingestion.objects.update(queued_at=timezone.now() - timedelta(seconds=121))
    # The monitor sees the queue behind at once; anyone else the kept verdict, and no figure.
    assert monitor.get(URL).json()["checks"]["queue"] == "behind"
    kept = anyone.get(URL)
    assert (kept.status_code, kept.json()) == (200, {"status": "ok"})
    health.public_verdict.healthy = None  # the verdict ages out
    behind = anyone.get(URL)
    assert (behind.status_code, behind.json()) == (503, {"status": "unavailable"})


@pytest.mark.django_db
def test_a_probe_while_no_worker_runs_logs_one_info_line_and_no_error(client, caplog):
    health.public_verdict.healthy = None  # this process's verdict, from an earlier test
    with caplog.at_level("INFO"):
        assert client.get(URL).status_code == 503  # no worker: the state the docs expect
    loud = [r for r in caplog.records if r.levelno >= 30]
    assert not loud, [r.getMessage() for r in loud]
    noted = [r.getMessage() for r in caplog.records if "healthz/pipeline" in r.getMessage()]
    assert noted == ["healthz/pipeline: unavailable (worker: silent, queue: ok)"]
