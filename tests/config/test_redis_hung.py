"""Redis hung (not down): a private redis-server the test SIGSTOPs, under a real gunicorn.

The kernel still accepts connections to a stopped process, so every call waits for an answer
that never comes: only timeouts bound it. Every cache and broker call has a short one, the
rate limiter fails open, publishing gives up (the recovery publishes later), and ``/healthz``
answers from a verdict it keeps for a few seconds. The log shows each outage noticed once
per process while the breaker is open, not once per request. Durations are printed, not
asserted (``make bench`` measures).
"""

from __future__ import annotations

import time

import orjson
import pytest
import requests

from tests import workers
from tests.factories import course
from tests.ingestion.conftest import mint
from tests.services import Stack, private_redis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_a_hung_redis_holds_up_no_request(tmp_path):
    from registry.models import Practice

    token = mint(Practice.objects.create(slug="st-mary"))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    with private_redis() as redis:
        env = workers.worker_environment(
            REDIS_URL=redis.url,
            REGISTRY_HEALTH_VERDICT_SECONDS="60",
            REGISTRY_REDIS_BREAKER_SECONDS="60",
        )
        with Stack(env, tmp_path).web() as web, requests.Session() as http:
            submit = f"{web.url}/api/registry/fhir/Bundle"

            def post(chart):
                return http.post(
                    submit, data=orjson.dumps(course(chart)), headers=headers, timeout=60
                )

            assert post("C-0").status_code == 202
            redis.hang()
            try:
                durations = {"healthz": [], "post": [], "status": []}
                for i in range(1, 5):
                    response, seconds = timed(lambda i=i: post(f"C-{i}"))
                    durations["post"].append(round(seconds, 2))
                    assert response.status_code == 202, response.text
                    status_url = response.headers["Content-Location"]
                for _ in range(4):
                    response, seconds = timed(lambda: http.get(f"{web.url}/healthz", timeout=60))
                    durations["healthz"].append(round(seconds, 2))
                    assert response.status_code == 503
                    assert response.json()["checks"]["cache"] == "unavailable"
                response, seconds = timed(lambda: http.get(status_url, headers=headers, timeout=60))
                durations["status"].append(round(seconds, 2))
                assert response.status_code == 200
                print("with Redis hung, seconds per request:", durations)
            finally:
                redis.resume()
        log = web.output()
    # Noticed once while the breakers are open (60 s here), not once per request.
    assert log.count("cache unavailable (") == 1
    assert log.count("broker unavailable (") == 1
    assert "Traceback" not in log
