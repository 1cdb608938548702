"""``/metrics``: the token, and each figure moving when it should (parsed by prometheus-client)."""

from __future__ import annotations

import math
import secrets
import uuid
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from ingestion.models import Ingestion
from ingestion.monitoring.heartbeat import Heartbeat
from ingestion.pipeline.completion import ingestion_fail
from ingestion.pipeline.process import ingestion_process
from tests.factories import batch, course, retraction_document
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db

TOKEN = secrets.token_urlsafe(32)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client) -> Samples:
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    families = text_string_to_metric_families(response.content.decode())
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


@override_settings(REGISTRY_METRICS_TOKEN="")
def test_metrics_do_not_exist_without_a_token_configured(client):
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_metrics_need_the_token(client):
    assert client.get("/metrics").status_code == 404
    wrong = {"Authorization": f"Bearer {TOKEN[:-1]}x"}
    assert client.get("/metrics", headers=wrong).status_code == 404
    assert client.get("/metrics", headers={"Authorization": TOKEN}).status_code == 404
    assert b"registry_" not in client.get("/metrics", headers=wrong).content
    assert scrape(client)


def processed(ingestion_id, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        ingestion_process(uuid.UUID(str(ingestion_id)))


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_the_ingestion_and_record_figures_move_with_a_batch(
    api, client, django_capture_on_commit_callbacks
):
    before = scrape(client)
    submitted = api.submit(batch(course("M-1"), course("M-2"), retraction_document("NOPE")))
    assert submitted.status_code == 202
    ingestion_id = ingestion_id_of(submitted)
    Ingestion.objects.filter(id=ingestion_id).update(
        queued_at=timezone.now() - timedelta(seconds=100)
    )

    queued = scrape(client)
    assert moved(before, queued, "registry_ingestions_total", status="submitted") == 1
    assert moved(before, queued, "registry_ingestion_queue_depth") == 1
    assert value(queued, "registry_ingestion_oldest_queued_seconds") >= 100
    assert (
        moved(
            before, queued, "registry_http_requests_total", endpoint="submit-bundle", status="202"
        )
        == 1
    )
    assert (
        moved(
            before, queued, "registry_http_request_duration_seconds_count", endpoint="submit-bundle"
        )
        == 1
    )

    processed(ingestion_id, django_capture_on_commit_callbacks)
    done = scrape(client)
    assert moved(before, done, "registry_ingestions_total", status="submitted") == 1
    assert moved(before, done, "registry_ingestions_total", status="completed") == 1
    assert moved(before, done, "registry_ingestion_queue_depth") == 0
    assert value(done, "registry_ingestion_oldest_queued_seconds") == 0
    assert moved(before, done, "registry_records_total", outcome="accepted") == 2
    assert moved(before, done, "registry_records_total", outcome="rejected") == 1
    duration = "registry_ingestion_duration_seconds"
    assert moved(before, done, f"{duration}_count", kind="batch") == 1
    assert moved(before, done, f"{duration}_sum", kind="batch") >= 100
    assert moved(before, done, f"{duration}_bucket", kind="batch", le="60.0") == 0
    assert moved(before, done, f"{duration}_bucket", kind="batch", le="+Inf") == 1
    assert moved(before, done, f"{duration}_count", kind="single") == 0
    exposition = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).content
    assert b"M-1" not in exposition and b"Quinn" not in exposition
    assert ingestion_id.encode() not in exposition


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_waiting_singles_applied_together_count_their_kinds_of_outcome(
    api, client, django_capture_on_commit_callbacks
):
    first = ingestion_id_of(api.submit(course("S-1", family="Quinn")))
    processed(first, django_capture_on_commit_callbacks)
    before = scrape(client)
    singles = [
        api.submit(course("S-1", family="Quinn", last_updated="2030-01-01T00:00:00Z")),  # amended
        api.submit(course("S-2", family="Quinn")),  # resembles S-1: flagged
        api.submit(retraction_document("S-1")),  # retracted
        api.submit(retraction_document("NOPE")),  # rejected
    ]
    processed(ingestion_id_of(singles[0]), django_capture_on_commit_callbacks)  # takes all four

    after = scrape(client)
    assert moved(before, after, "registry_ingestions_total", status="completed") == 4
    assert moved(before, after, "registry_records_total", outcome="accepted") == 3
    assert moved(before, after, "registry_records_total", outcome="amended") == 1
    assert moved(before, after, "registry_records_total", outcome="flagged") == 1
    assert moved(before, after, "registry_records_total", outcome="retracted") == 1
    assert moved(before, after, "registry_records_total", outcome="rejected") == 1
    assert moved(before, after, "registry_ingestion_duration_seconds_count", kind="single") == 4


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_a_failed_ingestion_and_a_live_worker_are_counted(api, client):
    before = scrape(client)
    ingestion_fail(uuid.UUID(ingestion_id_of(api.submit(course("F-1")))), "given up")
    Heartbeat("metrics-test@host").beat()

    after = scrape(client)
    assert moved(before, after, "registry_ingestions_total", status="failed") == 1
    assert moved(before, after, "registry_ingestions_total", status="submitted") == 1
    assert moved(before, after, "registry_workers_alive") == 1


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_routes_are_named_never_by_their_path(api, client):
    secret_looking = "0123456789abcdef-0123"
    api.receipt(secret_looking)
    client.get(f"/no/such/{secret_looking}")
    exposition = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).content
    assert secret_looking.encode() not in exposition
    samples = scrape(client)
    assert value(samples, "registry_http_requests_total", endpoint="ingestion-status", status="404")
    assert value(samples, "registry_http_requests_total", endpoint="unmatched", status="404")


UNREACHABLE_REDIS = {
    "default": {
        "BACKEND": "lib.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
}


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_without_redis_a_scrape_still_has_the_databases_figures(api, client, settings):
    ingestion_id_of(api.submit(course("R-1")))
    settings.CACHES = UNREACHABLE_REDIS
    samples = scrape(client)
    assert value(samples, "registry_ingestion_queue_depth") == 1
    assert value(samples, "registry_ingestions_total", status="submitted") == 1
    assert math.isnan(value(samples, "registry_workers_alive"))  # unknown, not 0
    pipeline = client.get("/healthz/pipeline", headers={"Authorization": f"Bearer {TOKEN}"})
    assert pipeline.status_code == 503
    assert pipeline.json()["checks"]["worker"] == "unknown"


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_the_oldest_waiting_single_is_its_own_figure_whatever_batches_wait(api, client):
    waiting_batch = ingestion_id_of(api.submit(batch(course("W-1"), course("W-2"))))
    single = ingestion_id_of(api.submit(course("W-3")))
    now = timezone.now()
    Ingestion.objects.filter(id=waiting_batch).update(queued_at=now - timedelta(seconds=900))
    Ingestion.objects.filter(id=single).update(queued_at=now - timedelta(seconds=100))

    waiting = scrape(client)
    assert value(waiting, "registry_ingestion_oldest_queued_seconds") >= 900
    assert 100 <= value(waiting, "registry_single_oldest_waiting_seconds") < 900

    Ingestion.objects.filter(id=single).update(status=Ingestion.Status.COMPLETED)
    assert value(scrape(client), "registry_single_oldest_waiting_seconds") == 0
