"""``/healthz/pipeline``: a real worker's heartbeat, and the age of the oldest queued ingestion."""

from __future__ import annotations

import os
import signal
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from ingestion.models import Ingestion
from ingestion.monitoring.heartbeat import Heartbeat
from tests.factories import course
from tests.workers import celery_worker, wait_for

URL = "/healthz/pipeline"


def answer(client, status: int):
    def check():
        response = client.get(URL)
        return response if response.status_code == status else None

    return check


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS=3)
def test_a_stopped_worker_turns_the_pipeline_unhealthy_until_it_continues(client, tmp_path):
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
def test_an_old_queued_ingestion_turns_the_pipeline_unhealthy(api, client):
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
def test_a_probe_while_no_worker_runs_logs_one_info_line_and_no_error(client, caplog):
    with caplog.at_level("INFO"):
        assert client.get(URL).status_code == 503  # no worker: the state the docs expect
    loud = [r for r in caplog.records if r.levelno >= 30]
    assert not loud, [r.getMessage() for r in loud]
    noted = [r.getMessage() for r in caplog.records if "healthz/pipeline" in r.getMessage()]
    assert noted == ["healthz/pipeline: unavailable (worker: silent, queue: ok)"]
