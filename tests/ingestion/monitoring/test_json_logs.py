"""LOG_FORMAT=json: one object per line, carrying the ingestion id (web and worker) and the
web's request id; no traceback text; the default stays a readable line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.utils.module_loading import import_string

from ingestion.models import Ingestion
from lib.logfilters import Context, KindOnly, about_ingestion
from tests.factories import course
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.workers import celery_worker, wait_for


def json_lines(text: str) -> list[dict]:
    found = []
    for line in text.splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


@contextmanager
def json_logs() -> Iterator[io.StringIO]:
    """The root logger also writes through the settings' ``json`` formatter and filters."""
    options = dict(settings.LOGGING["formatters"]["json"])
    formatter = import_string(options.pop("()"))(**options)
    sink = io.StringIO()
    handler = logging.StreamHandler(sink)
    handler.setFormatter(formatter)
    handler.addFilter(KindOnly())
    handler.addFilter(Context())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield sink
    finally:
        root.removeHandler(handler)


@pytest.mark.django_db
def test_a_web_line_carries_the_ingestion_id_and_the_request_id(api):
    with json_logs() as sink:
        response = api.submit(course("J-1", family="Secretname"))
    ingestion_id = ingestion_id_of(response)
    lines = [line for line in json_lines(sink.getvalue()) if line.get("ingestion_id")]
    assert lines, sink.getvalue()
    queued = lines[0]
    assert queued["ingestion_id"] == ingestion_id
    assert queued["request_id"] == response["X-Request-ID"]
    assert len(queued["request_id"]) == 32
    assert {"time", "level", "logger", "message"} <= set(queued)
    assert "Secretname" not in sink.getvalue()


@pytest.mark.django_db
def test_a_client_cannot_choose_the_request_id(api):
    with json_logs() as sink:
        response = api.client.get("/healthz", headers={"X-Request-ID": "forged\nline"})
    assert response["X-Request-ID"] != "forged\nline"
    assert "forged" not in sink.getvalue()


def test_a_json_line_has_no_traceback_text():
    with json_logs() as sink, about_ingestion("00000000-0000-0000-0000-000000000001"):
        try:
            raise ValueError("Secretname Quinn 2024-03-09")
        except ValueError:
            logging.getLogger("ingestion.test").exception("ingestion failed")
    (line,) = json_lines(sink.getvalue())
    assert line["ingestion_id"] == "00000000-0000-0000-0000-000000000001"
    assert "ValueError at " in line["message"]
    assert "Secretname" not in sink.getvalue() and "Traceback" not in sink.getvalue()
    assert "exc_info" not in line


def test_the_default_format_stays_a_readable_line():
    assert settings.LOG_FORMAT == "plain"
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "plain"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_line_carries_the_ingestion_id(client, tmp_path):
    from registry.models import Practice

    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    with celery_worker(tmp_path, "json", LOG_FORMAT="json") as worker:
        ingestion_id = ingestion_id_of(api.submit(course("J-2", family="Secretname")))
        wait_for(lambda: Ingestion.objects.get(id=ingestion_id).finished, message="the ingestion")
        lines = wait_for(
            lambda: [
                line
                for line in json_lines(worker.output())
                if line.get("ingestion_id") == ingestion_id
            ],
            timeout=30,
            message="the worker's line about the ingestion",
        )
    assert any("completed" in line["message"] for line in lines)
    assert "Secretname" not in worker.output()
