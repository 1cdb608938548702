import pytest
from django.core.cache import caches
from django.db import connection
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_the_suite_runs_on_postgresql_and_redis():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version_num')::int")
        assert cursor.fetchone()[0] >= 130000
    cache = caches["default"]
    assert type(cache).__name__ == "RedisCache"
    cache.set("smoke", "written", timeout=5)
    assert cache.get("smoke") == "written"


def test_healthz_reports_every_part_up_without_authentication(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
    }
    assert "no-cache" in response["Cache-Control"]


UNREACHABLE_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
}


@override_settings(CACHES=UNREACHABLE_REDIS)
def test_healthz_is_503_when_the_cache_is_unreachable(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"] == {"database": "ok", "cache": "unavailable", "broker": "ok"}


def test_healthz_is_503_when_the_broker_is_unreachable(client):
    from config.celery import app

    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = original
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == "unavailable"


def test_healthz_only_answers_get(client):
    assert client.post("/healthz").status_code == 405
