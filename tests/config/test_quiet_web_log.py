"""A healthy web process logs no WARNING: HEAD requests (monitors, browsers) included."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.services import Stack
from tests.workers import worker_environment


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_head_requests_are_answered_without_a_warning(tmp_path):
    with Stack(worker_environment(), tmp_path).web() as web:
        for path in ("/", "/healthz", "/accounts/login/", "/favicon.ico"):
            response = httpx.head(f"{web.url}{path}")
            assert response.status_code == 200, path
            assert response.content == b""
        assert httpx.get(f"{web.url}/healthz").status_code == 200  # and GET still has its body
    log = web.output()
    assert '"HEAD /favicon.ico" 200' in log  # the log was read after the requests
    assert not re.findall(r"WARNING|ERROR", log), log
