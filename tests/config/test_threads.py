"""The web process runs requests on a bounded set of threads (config/front.py), not one each.

A real gunicorn as ``make run`` starts it, with ``REGISTRY_WEB_THREADS=3``: 24 clients submit
at once; every submission is accepted, and the process never holds more than its three
request threads beyond those it has when idle. (Django's own ASGI handler started a thread
per request: 24 clients made some 24 threads.)
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import psutil
import pytest
import requests

from tests import workers
from tests.factories import course
from tests.ingestion.conftest import mint
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

THREADS = 3
CLIENTS = 24


def threads_of(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


def test_requests_share_a_bounded_set_of_threads(tmp_path):
    from registry.models import Practice

    tokens = [mint(Practice.objects.create(slug=f"clinic-{i}")) for i in range(CLIENTS)]
    env = workers.worker_environment(REGISTRY_WEB_THREADS=str(THREADS))
    with Stack(env, tmp_path).web() as web:
        most, stop = [], threading.Event()

        def sample() -> None:
            while not stop.wait(0.005):
                most.append(threads_of(worker_pid))

        def client(i: int, count: int = 5) -> list[int]:
            with requests.Session() as http:
                headers = {
                    "Authorization": f"Bearer {tokens[i]}",
                    "Content-Type": "application/fhir+json",
                }
                return [
                    http.post(
                        f"{web.url}/api/registry/fhir/Bundle",
                        data=orjson.dumps(course(f"T-{i}-{n}")),
                        headers=headers,
                        timeout=60,
                    ).status_code
                    for n in range(count)
                ]

        # Warm: the database pool, Redis and the broker connection have their threads.
        # The arbiter listens before it forks its worker: the worker exists once it has answered.
        assert client(0, count=1) == [202] and requests.get(f"{web.url}/healthz", timeout=30).ok
        (worker_pid,) = [c.pid for c in psutil.Process(web.process.pid).children()]
        idle = threads_of(worker_pid)
        most.append(idle)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            with ThreadPoolExecutor(CLIENTS) as pool:
                answers = [code for codes in pool.map(client, range(CLIENTS)) for code in codes]
        finally:
            stop.set()
            sampler.join()
    assert answers == [202] * CLIENTS * 5
    assert max(most) <= idle + THREADS, (idle, max(most))  # at most all three were idle
