"""A forgotten proxy setting is noticed (config/proxy.py): X-Forwarded-For from a peer that is
not a trusted proxy is counted and logged, at most once a minute per process (issue 31).
The check --deploy warning: tests/config/test_https.py."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from django.test import Client

from config import proxy
from tests.ingestion.monitoring.test_metrics import TOKEN, moved, scrape

pytestmark = pytest.mark.django_db

NGINX, CLIENT = "10.0.0.1", "198.51.100.23"
METRIC = "registry_untrusted_forwarded_total"


@pytest.fixture(autouse=True)
def fresh_warning(monkeypatch, settings):
    """A process that has not warned yet, with a clock the test moves; and /metrics on."""
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(proxy, "untrusted_forwarding_warning", proxy.Sometimes(60))
    monkeypatch.setattr(proxy, "time", SimpleNamespace(monotonic=lambda: clock.now))
    settings.REGISTRY_METRICS_TOKEN = TOKEN
    return clock


def forwarded(peer: str, **extra: str):
    return Client(REMOTE_ADDR=peer).get("/accounts/login/", HTTP_X_FORWARDED_FOR=CLIENT, **extra)


def warnings_in(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]


def test_forwarded_for_from_an_untrusted_peer_is_counted_and_logged_once_a_minute(
    client, caplog, fresh_warning
):
    caplog.set_level(logging.WARNING)
    before = scrape(client)
    for _ in range(3):
        assert forwarded(NGINX).status_code == 200
    assert moved(before, scrape(client), METRIC) == 3
    assert len(warnings_in(caplog)) == 1
    assert "REGISTRY_TRUSTED_PROXIES" in warnings_in(caplog)[0]
    assert NGINX not in caplog.text and CLIENT not in caplog.text  # no address in the log
    fresh_warning.now += 61
    forwarded(NGINX)
    assert len(warnings_in(caplog)) == 2


def test_a_trusted_proxy_or_a_request_without_the_header_is_not_noticed(client, caplog, settings):
    settings.REGISTRY_TRUSTED_PROXIES = [NGINX]
    caplog.set_level(logging.WARNING)
    before = scrape(client)
    assert forwarded(NGINX).status_code == 200
    assert Client(REMOTE_ADDR=CLIENT).get("/accounts/login/").status_code == 200
    assert moved(before, scrape(client), METRIC) == 0
    assert warnings_in(caplog) == []


def test_the_metric_is_exposed_before_anything_is_counted(client):
    assert (METRIC, ()) in scrape(client)
