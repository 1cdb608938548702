"""PostgreSQL down: a real gunicorn against a private PostgreSQL that the test stops.

Both API endpoints answer 503 with an OperationOutcome (code ``transient``) and Retry-After,
a web page answers 503 in the site's look, and the log holds no traceback.
"""

from __future__ import annotations

import orjson
import pytest
import requests

from tests.factories import course
from tests.services import private_postgres, private_redis, stack

pytestmark = pytest.mark.django_db  # for the secrets the worker environment copies


def assert_transient(response: requests.Response) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["Retry-After"]) > 0
    body = response.json()
    assert body["resourceType"] == "OperationOutcome"
    assert body["issue"][0]["code"] == "transient"
    assert "Traceback" not in response.text


def test_with_postgresql_down_both_endpoints_answer_503_transient(tmp_path):
    with private_postgres() as postgres, private_redis() as redis:
        shape = stack(tmp_path, database_url=postgres.url, redis_url=redis.url)
        token = shape.practice_with_key()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
        with shape.web() as web, requests.Session() as http:
            submit = f"{web.url}/api/registry/fhir/Bundle"
            accepted = http.post(submit, data=orjson.dumps(course("C-1")), headers=headers)
            assert accepted.status_code == 202
            status_url = accepted.headers["Content-Location"]

            postgres.stop()
            assert_transient(
                http.post(submit, data=orjson.dumps(course("C-2")), headers=headers, timeout=30)
            )
            assert_transient(http.get(status_url, headers=headers, timeout=30))
            page = http.get(f"{web.url}/settings/key/", cookies={"sessionid": "x" * 32}, timeout=30)
            assert page.status_code == 503
            assert "Unavailable for a moment" in page.text
            assert "Retry-After" in page.headers

            postgres.start()
            assert http.get(status_url, headers=headers, timeout=30).status_code == 200
        log = web.output()
    assert "Traceback" not in log
