"""FHIR-native conventions: /metadata, a Bundle posted to the base, the 202's structured id."""

from __future__ import annotations

import pytest

from ingestion.api.examples import SINGLE_COURSE
from ingestion.models import Ingestion
from tests.ingestion.conftest import ingestion_id_of
from tests.r4 import assert_valid_r4

pytestmark = pytest.mark.django_db

BASE = "/api/registry/fhir/"
ID_URL = "http://testserver/api/registry/fhir/StructureDefinition/ingestion-id"
STATUS_URL = "http://testserver/api/registry/fhir/StructureDefinition/ingestion-status-url"


def post_to_base(api, body, **headers):
    return api.client.post(
        BASE,
        data=body,
        content_type="application/fhir+json",
        headers={"Authorization": f"Bearer {api.token}", **headers},
    )


def test_metadata_is_a_valid_r4_capability_statement_served_without_a_key(client):
    response = client.get(f"{BASE}metadata")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/fhir+json"
    statement = response.json()
    assert statement["resourceType"] == "CapabilityStatement"
    assert statement["fhirVersion"] == "4.0.1"
    assert "application/fhir+json" in statement["format"]
    assert_valid_r4(statement)


def test_metadata_describes_the_bundle_submission_and_the_bearer_security(client):
    rest = client.get(f"{BASE}metadata").json()["rest"][0]
    assert rest["mode"] == "server"
    (bundle,) = rest["resource"]
    assert bundle["type"] == "Bundle"
    assert [i["code"] for i in bundle["interaction"]] == ["create"]
    assert {i["code"] for i in rest["interaction"]} == {"batch", "transaction"}
    assert "Bearer" in rest["security"]["description"]
    assert "202" in bundle["documentation"]


def test_a_bundle_posted_to_the_base_is_submitted_as_to_bundle(api):
    response = post_to_base(api, SINGLE_COURSE)
    assert response.status_code == 202
    ingestion = Ingestion.objects.get(id=ingestion_id_of(response))
    assert (ingestion.practice, ingestion.kind) == (api.practice, "single")


def test_the_base_and_bundle_share_idempotency_and_answers(api):
    first = post_to_base(api, SINGLE_COURSE, **{"Idempotency-Key": "k-1"})
    again = api.submit(SINGLE_COURSE, idempotency_key="k-1")
    assert first["Content-Location"] == again["Content-Location"]
    assert first.json() == again.json()
    assert post_to_base(api, "[]").json()["issue"][0]["expression"] == ["Bundle.resourceType"]


def test_the_base_needs_the_write_scope(client, practice):
    from keys.models import INGEST_READ
    from tests.ingestion.conftest import Api, mint

    reader = Api(client, mint(practice, scopes=[INGEST_READ]), practice)
    assert post_to_base(reader, SINGLE_COURSE).status_code == 403
    assert client.post(BASE, data=SINGLE_COURSE, content_type="application/json").status_code == 401


def test_the_base_and_bundle_share_one_rate_limit_counter(api, settings):
    settings.REGISTRY_RATE_LIMIT = "3/m"
    assert post_to_base(api, SINGLE_COURSE).status_code == 202
    assert api.submit(SINGLE_COURSE).status_code == 202
    assert post_to_base(api, SINGLE_COURSE).status_code == 202
    assert api.submit(SINGLE_COURSE).status_code == 429
    assert post_to_base(api, SINGLE_COURSE).status_code == 429


def test_the_202_names_the_ingestion_and_its_status_url_in_structured_extensions(api):
    response = api.submit(SINGLE_COURSE)
    outcome = response.json()
    assert_valid_r4(outcome)
    extensions = {e["url"]: e for e in outcome["issue"][0]["extension"]}
    assert extensions[ID_URL]["valueString"] == ingestion_id_of(response)
    assert extensions[STATUS_URL]["valueUrl"] == response["Content-Location"]
    assert api.client.get(
        extensions[STATUS_URL]["valueUrl"], headers={"Authorization": f"Bearer {api.token}"}
    ).json()["id"] == ingestion_id_of(response)


def test_metadata_names_validate_as_an_operation_on_bundle(client):
    (bundle,) = client.get(f"{BASE}metadata").json()["rest"][0]["resource"]
    (operation,) = bundle["operation"]
    assert operation["name"] == "validate"
    assert operation["definition"] == "http://hl7.org/fhir/OperationDefinition/Resource-validate"
