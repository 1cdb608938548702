"""Under ASGI a large body is staged from the file it was spooled to (ingestion/api/body.py).

A real gunicorn as ``make run`` starts it: a batch past Django's in-memory spool size,
sent with Content-Length and sent chunked, is accepted and staged whole, chunk by chunk;
one past the limit is refused. The web process's peak memory for such bodies is measured
by ``make bench BENCH=bodymemory``.
"""

from __future__ import annotations

import uuid

import orjson
import pytest
import requests

from ingestion.models import Ingestion, StagedChunk
from tests import workers
from tests.factories import batch, course, letters
from tests.ingestion.conftest import mint
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

COURSES = 1_500  # about 3.6 MB: past FILE_UPLOAD_MAX_MEMORY_SIZE (2.5 MB), so on disk


def test_a_body_spooled_to_disk_is_staged_whole_however_it_is_framed(tmp_path):
    from registry.models import Practice

    token = mint(Practice.objects.create(slug="st-mary"))
    body = orjson.dumps(
        batch(*(course(f"S-{i}", family=f"Family{letters(i)}") for i in range(COURSES)))
    )
    assert len(body) > 2_621_440
    env = workers.worker_environment(REGISTRY_MAX_BODY_BYTES=str(len(body) + 10))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    with Stack(env, tmp_path).web() as web, requests.Session() as http:
        submit = f"{web.url}/api/registry/fhir/Bundle"
        declared = http.post(submit, data=body, headers=headers, timeout=120)
        pieces = (body[i : i + 65_536] for i in range(0, len(body), 65_536))
        chunked = http.post(submit, data=pieces, headers=headers, timeout=120)
        too_large = http.post(submit, data=body + b" " * 20, headers=headers, timeout=120)
    assert (declared.status_code, chunked.status_code) == (202, 202)
    assert too_large.status_code == 413
    for response in (declared, chunked):
        ingestion_id = uuid.UUID(response.headers["Content-Location"].rsplit("/", 1)[-1])
        ingestion = Ingestion.objects.get(id=ingestion_id)
        assert (ingestion.entry_count, ingestion.body_bytes) == (COURSES, len(body))
        staged = StagedChunk.objects.filter(ingestion=ingestion).order_by("seq")
        assert sum(staged.values_list("entry_count", flat=True)) == COURSES
        assert staged.count() == ingestion.chunk_count > 1
