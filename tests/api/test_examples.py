"""Every example the service publishes is valid FHIR R4, BFDR-shaped, and does what it says."""

from __future__ import annotations

import pytest

from ingestion.api.examples import SUBMISSIONS, example
from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from registry.models import Record
from tests.ingestion.conftest import ingestion_id_of
from tests.r4 import assert_valid_r4

pytestmark = pytest.mark.django_db

SUBMIT = "/api/registry/fhir/Bundle"


@pytest.fixture
def document(client):
    return client.get("/openapi.json").json()


def openapi_examples(document):
    """Every example value in the OpenAPI document, with where it sits."""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                for name, item in media.get("examples", {}).items():
                    yield f"{method} {path} request {name}", item["value"]
            for code, response in operation.get("responses", {}).items():
                for media in response.get("content", {}).values():
                    for name, item in media.get("examples", {}).items():
                        yield f"{method} {path} {code} {name}", item["value"]


def test_every_fhir_example_in_the_openapi_document_is_valid_r4(document):
    checked = []
    for where, value in openapi_examples(document):
        if isinstance(value, dict) and "resourceType" in value:
            assert_valid_r4(value)
            checked.append(where)
    requests = [w for w in checked if f"post {SUBMIT} request" in w]
    assert len(requests) == len(SUBMISSIONS)
    assert any("202" in w for w in checked)


@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_each_submission_example_is_valid_r4(name):
    assert_valid_r4(example(name))


def test_the_validator_refuses_what_fhirclient_refused_before():
    bundle = example("Batch")
    encounter = next(
        e["resource"]
        for e in bundle["entry"][0]["resource"]["entry"]
        if e["resource"]["resourceType"] == "Encounter"
    )
    del encounter["class"]
    with pytest.raises(Exception, match="class"):
        assert_valid_r4(bundle)


def test_the_single_course_is_bfdr_shaped():
    bundle = example("One course of care")
    kinds = [e["resource"]["resourceType"] for e in bundle["entry"]]
    assert kinds[0] == "Composition"
    assert {"Patient", "Observation", "Practitioner", "Encounter", "Consent"} <= set(kinds)
    profiles = [
        p for e in bundle["entry"] for p in e["resource"].get("meta", {}).get("profile", [])
    ]
    assert any("Patient-mother-vr" in p for p in profiles)
    assert any("Patient-child-vr" in p for p in profiles)


def ingest(api, body):
    response = api.submit(body)
    assert response.status_code == 202, response.content
    ingestion_process(Ingestion.objects.get(id=ingestion_id_of(response)).id)
    return api.receipt(ingestion_id_of(response)).json()


def test_the_examples_do_what_they_say(api, settings):
    settings.REGISTRY_FHIR_VALIDATION = True  # the service accepts its own examples
    single = ingest(api, example("One course of care"))
    assert single["accepted"] == 1, single
    assert single["outcome"]["accepted"][0]["external_record_id"] == "2026-000123"
    batch = ingest(api, example("Batch"))
    assert (batch["accepted"], batch["rejected"]) == (2, 0), batch
    by_composition = ingest(api, example("Retraction by Composition"))
    assert by_composition["outcome"]["accepted"][0]["voided"] is True
    by_delete = ingest(api, example("Retraction by DELETE"))
    assert by_delete["outcome"]["accepted"][0]["voided"] is True
    message = ingest(api, example("NVSS submission message"))
    assert message["outcome"]["accepted"][0]["external_record_id"] == "2026UT000123"
    assert Record.objects.get(external_record_id="2026-000123").voided
    assert not Record.objects.get(external_record_id="2026UT000123").voided
    void = ingest(api, example("NVSS void message"))["outcome"]["accepted"][0]
    assert (void["voided_count"], void["external_record_id"]) == (1, "2026UT000123")
    assert Record.objects.get(external_record_id="2026UT000123").voided
