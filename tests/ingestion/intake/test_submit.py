"""POST /api/registry/fhir/Bundle: spec 4.1, 7 and docs/decisions.md "The API"."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.process import ingestion_process
from tests.factories import batch, course, delete_entry, dumps
from tests.ingestion.conftest import ingestion_id_of, mint

pytestmark = pytest.mark.django_db


def assert_outcome(response, status, code, expression=None):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/fhir+json")
    body = response.json()
    assert body["resourceType"] == "OperationOutcome"
    issue = body["issue"][0]
    assert issue["code"] == code
    assert issue["diagnostics"]
    if expression is not None:
        assert issue["expression"] == [expression]
    return body


def test_a_course_of_care_is_queued_with_202_and_a_status_url(api):
    response = api.submit(course("C-1"))
    body = assert_outcome(response, 202, "informational")
    assert body["issue"][0]["severity"] == "information"
    location = response["Content-Location"]
    assert location.startswith("http://testserver/api/registry/fhir/ingestions/")
    ingestion = Ingestion.objects.get()
    assert ingestion_id_of(response) == str(ingestion.id)
    assert str(ingestion.id) in body["issue"][0]["diagnostics"]
    assert ingestion.status == Ingestion.Status.QUEUED
    assert ingestion.practice == api.practice
    assert ingestion.kind == Ingestion.Kind.SINGLE
    # When to poll first: a poll at once would find it queued.
    assert response["Retry-After"] == str(settings.REGISTRY_POLL_RETRY_AFTER_SECONDS)


def test_the_staged_payload_is_encrypted(api):
    api.submit(course("CHART-SECRET", family="Zyxwvutsrq"))
    ciphertext = bytes(StagedChunk.objects.get().ciphertext)
    assert b"Zyxwvutsrq" not in ciphertext
    assert b"CHART-SECRET" not in ciphertext
    assert b"Patient" not in ciphertext


def test_a_batch_is_staged_in_chunks_of_entries(api):
    with override_settings(REGISTRY_CHUNK_ENTRIES=2):
        response = api.submit(batch(*(course(f"C-{i}") for i in range(5))))
    assert response.status_code == 202
    ingestion = Ingestion.objects.get()
    assert ingestion.kind == Ingestion.Kind.BATCH
    assert ingestion.entry_count == 5
    chunks = list(StagedChunk.objects.order_by("seq").values_list("first_index", "entry_count"))
    assert chunks == [(0, 2), (2, 2), (4, 1)]


def test_a_transaction_of_deletes_is_a_batch(api):
    api.submit(batch(delete_entry("C-1"), delete_entry("C-2"), kind="transaction"))
    assert Ingestion.objects.get().kind == Ingestion.Kind.BATCH


@pytest.mark.parametrize(
    "content_type",
    ["application/fhir+json", "application/json", "application/fhir+json; charset=utf-8"],
)
def test_fhir_json_and_plain_json_are_accepted(api, content_type):
    assert api.submit(course("C-1"), content_type=content_type).status_code == 202


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/fhir+xml"])
def test_another_content_type_is_415(api, content_type):
    assert_outcome(api.submit(course("C-1"), content_type=content_type), 415, "not-supported")
    assert not Ingestion.objects.exists()


def test_a_missing_content_type_is_415(api, client):
    response = client.generic(
        "POST",
        "/api/registry/fhir/Bundle",
        data=dumps(course("C-1")),
        content_type="",
        headers={"Authorization": f"Bearer {api.token}"},
    )
    assert_outcome(response, 415, "not-supported")


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceType": "Bundle", "entry": [1, 2,, 3]}',
        b'{"resourceType": "Bundle"',
        b'[{"resourceType": "Bundle"}]',
        b'"Bundle"',
        b"42",
        b"null",
        b'{"resourceType": "Patient"}',
        b'{"type": "document"}',
        b'{"resourceType": ["Bundle"]}',
        b"",
        b"   ",
        b'{"resourceType": "Bundle", "x": "\xff\xfe"}',
        b'{"resourceType": "Bundle"} trailing',
    ],
    ids=[
        "malformed",
        "truncated",
        "array",
        "string",
        "number",
        "null",
        "patient",
        "no-resource-type",
        "resource-type-array",
        "empty",
        "blank",
        "invalid-utf8",
        "trailing",
    ],
)
def test_a_body_that_is_not_a_json_fhir_bundle_is_400(api, body):
    assert_outcome(api.submit(body), 400, "structure", "Bundle.resourceType")
    assert not Ingestion.objects.exists()


def test_a_400_does_not_echo_the_body(api):
    response = api.submit(b'{"resourceType": "Jada Quinn 1990-05-20"}')
    assert b"Jada" not in response.content


@override_settings(REGISTRY_MAX_BODY_BYTES=1000)
def test_a_body_over_the_limit_is_413(api):
    body = course("C-1", extra=[{"resource": {"resourceType": "Basic", "x": "y" * 2000}}])
    assert_outcome(api.submit(body), 413, "too-costly")
    assert not Ingestion.objects.exists()


def test_without_a_key_it_is_401_with_www_authenticate(api, client):
    response = client.post(
        "/api/registry/fhir/Bundle", data=dumps(course("C-1")), content_type="application/json"
    )
    assert_outcome(response, 401, "login")
    assert response["WWW-Authenticate"] == "Bearer"


def test_an_unknown_key_is_401(api):
    response = api.submit(course("C-1"), token="rgk_" + "A" * 40)
    assert_outcome(response, 401, "login")
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_key_without_ingest_write_is_403(api, practice):
    from keys.models import INGEST_READ, KeyEvent
    from keys.services import key_rotate

    _, read_only = key_rotate(practice=practice, scopes=[INGEST_READ], via=KeyEvent.Via.COMMAND)
    assert_outcome(api.submit(course("C-1"), token=read_only), 403, "forbidden")
    assert not Ingestion.objects.exists()


# -- Idempotency-Key --------------------------------------------------------------------------


def test_a_repeated_idempotency_key_returns_the_original_202_without_reingesting(api):
    first = api.submit(course("C-1"), idempotency_key="retry-1")
    second = api.submit(course("C-1"), idempotency_key="retry-1")
    assert second.status_code == 202
    assert second["Content-Location"] == first["Content-Location"]
    assert second.json() == first.json()
    assert Ingestion.objects.count() == 1


def test_a_repeated_idempotency_key_wins_even_with_a_different_body(api):
    first = api.submit(course("C-1"), idempotency_key="retry-1")
    second = api.submit(b"not even json", idempotency_key="retry-1")
    assert second.status_code == 202
    assert second["Content-Location"] == first["Content-Location"]
    assert Ingestion.objects.count() == 1


def test_the_same_idempotency_key_from_another_practice_is_unrelated(api, other_api):
    first = api.submit(course("C-1"), idempotency_key="shared")
    second = other_api.submit(course("C-1"), idempotency_key="shared")
    assert second.status_code == 202
    assert second["Content-Location"] != first["Content-Location"]
    assert Ingestion.objects.count() == 2


def test_without_an_idempotency_key_each_post_is_a_new_ingestion(api):
    api.submit(course("C-1"))
    api.submit(course("C-1"))
    assert Ingestion.objects.count() == 2


@pytest.mark.parametrize("value", ["x" * 256, "tab\there", "é"])
def test_an_invalid_idempotency_key_is_400(api, value):
    response = api.client.post(
        "/api/registry/fhir/Bundle",
        data=dumps(course("C-1")),
        content_type="application/fhir+json",
        headers={"Authorization": f"Bearer {api.token}", "Idempotency-Key": value},
    )
    assert_outcome(response, 400, "invalid")


def test_processing_is_enqueued_only_after_commit(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        api.submit(course("C-1"))
    (callback,) = callbacks
    assert callback.__name__ == "publish"
    assert Ingestion.objects.get().status == Ingestion.Status.QUEUED


def reset_producers(app):
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_a_submission_is_kept_for_the_recovery(client, settings):
    from config.celery import app
    from ingestion.pipeline.recovery import ingestions_to_recover
    from registry.models import Practice
    from tests.ingestion.conftest import Api

    settings.REGISTRY_RECOVERY_GRACE_SECONDS = 0
    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # a real, closed port
    reset_producers(app)  # producers connect anew, to the closed port
    try:
        response = api.submit(course("C-1"))
    finally:
        app.conf.broker_url = original
        reset_producers(app)
    assert response.status_code == 202
    ingestion = Ingestion.objects.get()
    assert ingestion.status == Ingestion.Status.QUEUED
    assert ingestion.enqueued_at is None
    assert StagedChunk.objects.filter(ingestion=ingestion).exists()
    assert ingestions_to_recover() == [ingestion.id]


def test_an_unknown_api_path_is_an_operation_outcome(api, client):
    response = client.get("/api/registry/fhir/Patient/1")
    assert_outcome(response, 404, "not-supported")  # an unknown type: issue 21


def test_two_practices_keys_are_independent(api, other_practice, client):
    token = mint(other_practice)
    api.submit(course("C-1"), token=token)
    assert Ingestion.objects.get().practice == other_practice


def test_a_retry_after_the_ingestion_completed_says_it_completed(api):
    first = api.submit(course("C-1"), idempotency_key="retry-done")
    assert "is queued" in first.json()["issue"][0]["diagnostics"]
    ingestion_process(Ingestion.objects.get().id)
    again = api.submit(course("C-1"), idempotency_key="retry-done")
    assert again.status_code == 202
    assert again["Content-Location"] == first["Content-Location"]
    diagnostics = again.json()["issue"][0]["diagnostics"]
    assert "is completed" in diagnostics and "queued" not in diagnostics
    assert again["Content-Location"] in diagnostics
    assert "Retry-After" in first and "Retry-After" not in again  # nothing left to wait for
