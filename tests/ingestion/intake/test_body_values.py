"""A body's cost is bounded by its values, not only by its bytes and depth (issue 31, item 2).

A body under the size and depth limits can still hold millions of values (400,000 arrays
nested 62 deep), and decoding them cost half a minute and gigabytes. The door counts them
before anything decodes the body, and the worker counts what it decodes at once.
"""

from __future__ import annotations

import pytest

from ingestion.fhir.shape import values_in
from ingestion.intake.submission import MAX_NESTING
from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of
from tests.ingestion.lifecycle.test_lifecycle import only_accepted, only_rejected
from tests.ingestion.lifecycle.test_nvss import load

pytestmark = pytest.mark.django_db

BODY_LIMIT = 5_000


def nested_arrays(count: int, depth: int = MAX_NESTING - 2) -> bytes:
    """The shape of issue 31's body: ``count`` arrays nested ``depth`` deep, and no entry."""
    one = b"[" * depth + b"]" * depth
    return b'{"resourceType":"Bundle","x":[' + b",".join([one] * count) + b"]}"


def _refused(response, limit: int, per: str, expression: str) -> None:
    assert response.status_code == 413, response.content
    (issue,) = response.json()["issue"]
    assert (issue["code"], issue["expression"]) == ("too-costly", [expression])
    assert f"more than {limit:,} JSON values" in issue["diagnostics"]
    assert f"the limit per {per}" in issue["diagnostics"]


@pytest.fixture
def limits(settings):
    settings.REGISTRY_MAX_BODY_NODES = BODY_LIMIT
    settings.REGISTRY_MAX_ENTRY_NODES = 1_000
    return settings


def test_a_body_within_size_and_depth_but_over_the_value_limit_is_413_on_submit(api, limits):
    body = nested_arrays(BODY_LIMIT // (MAX_NESTING - 2) + 1)
    assert len(body) < limits.REGISTRY_MAX_BODY_BYTES
    _refused(api.submit(body), BODY_LIMIT, "body", "Bundle")
    assert not Ingestion.objects.exists()


def test_the_same_body_is_413_on_validate(api, limits):
    body = nested_arrays(BODY_LIMIT // (MAX_NESTING - 2) + 1)
    _refused(api.validate(body), BODY_LIMIT, "body", "Bundle")


def test_a_batch_entry_over_the_entry_limit_is_413_naming_the_entry(api, limits):
    wide = {"resource": course("C-2"), "x": list(range(1_000))}
    body = batch(course("C-1"), course("C-3"))
    body["entry"].insert(1, wide)
    _refused(api.submit(body), 1_000, "entry", "Bundle.entry[1]")
    _refused(api.validate(body), 1_000, "entry", "Bundle.entry[1]")


def test_an_nvss_message_over_the_entry_limit_is_413(api, limits):
    message = load("BirthRecordSubmissionMessage.json")
    assert values_in(_dumps(message)) > 500  # the message is one course: its whole body counts
    limits.REGISTRY_MAX_ENTRY_NODES = 500
    _refused(api.submit(message), 500, "entry", "Bundle")
    _refused(api.validate(message), 500, "entry", "Bundle")


def test_real_courses_pass_the_default_limits(api):
    only_accepted(_ingest(api, load("BirthRecordSubmissionMessage.json")))
    assert api.submit(batch(*(course(f"C-{i}") for i in range(50)))).status_code == 202


def test_a_batch_stored_before_the_limit_is_refused_entry_by_entry_by_the_worker(api, settings):
    """Stored under a higher limit (before the door counted): the worker does not decode the
    entry, it rejects it with an OperationOutcome naming the limit."""
    wide = {"resource": course("C-2"), "x": list(range(1_000))}
    response = api.submit(batch(wide))
    assert response.status_code == 202
    settings.REGISTRY_MAX_ENTRY_NODES = 1_000
    rejected = only_rejected(_process(api, ingestion_id_of(response)))
    (issue,) = rejected["operation_outcome"]["issue"]
    assert (issue["code"], issue["expression"]) == ("too-costly", ["Bundle.entry[0]"])
    assert "more than 1,000 JSON values" in issue["diagnostics"]


def test_a_single_stored_before_the_limit_is_refused_by_the_worker(api, settings):
    response = api.submit(load("BirthRecordSubmissionMessage.json"))
    assert response.status_code == 202
    settings.REGISTRY_MAX_ENTRY_NODES = 500
    rejected = only_rejected(_process(api, ingestion_id_of(response)))
    assert rejected["operation_outcome"]["issue"][0]["code"] == "too-costly"
    assert rejected["operation_outcome"]["issue"][0]["expression"] == ["Bundle"]


def _dumps(body) -> bytes:
    import orjson

    return orjson.dumps(body)


def _ingest(api, body):
    response = api.submit(body)
    assert response.status_code == 202, response.content
    return _process(api, ingestion_id_of(response))


def _process(api, ingestion_id: str):
    ingestion_process(Ingestion.objects.get(id=ingestion_id).id)
    return api.receipt(ingestion_id).json()
