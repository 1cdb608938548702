"""``make run``'s start-up banner names an address that answers, whatever ``.env`` says."""

from __future__ import annotations

import re

import httpx
import pytest

from config.banner import serving_url
from tests.services import Stack
from tests.workers import wait_for, worker_environment


def test_the_embedded_default_is_served_on_the_loopback():
    url = serving_url(port=8000, allowed_hosts=["127.0.0.1", "localhost", "[::1]"], https=False)
    assert url == "http://127.0.0.1:8000/"


def test_behind_the_proxy_the_banner_names_the_public_https_address():
    url = serving_url(port=8000, allowed_hosts=["registry.example.org"], https=True)
    assert url.startswith("https://registry.example.org/ ")


def test_a_host_list_without_the_loopback_names_the_host_it_allows():
    hosts = [".example.org", "registry.example.org"]
    url = serving_url(port=8000, allowed_hosts=hosts, https=False)
    assert url.startswith("http://registry.example.org:8000/ ")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_banner_of_a_drill_on_a_production_machine_answers(tmp_path):
    production = {"ALLOWED_HOSTS": "registry.example.org", "REGISTRY_HTTPS": "true"}
    drill = {"ALLOWED_HOSTS": "127.0.0.1", "REGISTRY_HTTPS": "false"}  # docs/operations.md
    stack = Stack(worker_environment(**(production | drill)), tmp_path)
    with stack.web(REGISTRY_BANNER="1") as web:
        printed = wait_for(lambda: re.search(r"serving (\S+)", web.output()), timeout=60)
        assert printed[1] == f"{web.url}/"
        assert httpx.get(f"{printed[1]}healthz").status_code == 200
