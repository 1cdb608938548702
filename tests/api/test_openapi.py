"""The machine-readable contract: /openapi.json is valid OpenAPI 3.1 and says what we do."""

from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

pytestmark = pytest.mark.django_db

SUBMIT = "/api/registry/fhir/Bundle"
STATUS = "/api/registry/fhir/ingestions/{ingestion}"


@pytest.fixture
def document(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_document_is_valid_openapi_3_1(document):
    assert document["openapi"].startswith("3.1")
    validate(document, cls=OpenAPIV31SpecValidator)


def test_it_describes_both_endpoints_and_every_status_code(document):
    submit = document["paths"][SUBMIT]["post"]
    status = document["paths"][STATUS]["get"]
    assert set(submit["responses"]) == {
        *("202", "400", "401", "403", "408", "413", "415", "429", "503")
    }
    assert set(status["responses"]) == {"200", "401", "403", "404", "429", "503"}
    outcome = "#/components/schemas/OperationOutcome"
    for operation in (submit, status):
        for code, response in operation["responses"].items():
            schema = next(iter(response["content"].values()))["schema"]
            expected = "#/components/schemas/IngestionReceipt" if code == "200" else outcome
            assert schema["$ref"] == expected, code


def test_it_describes_the_bearer_scheme_and_the_scopes(document):
    scheme = document["components"]["securitySchemes"]["registryApiKey"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert document["paths"][SUBMIT]["post"]["security"] == [{"registryApiKey": ["ingest:write"]}]
    assert document["paths"][STATUS]["get"]["security"] == [{"registryApiKey": ["ingest:read"]}]


def test_it_describes_the_headers(document):
    submit = document["paths"][SUBMIT]["post"]
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in submit["parameters"])
    assert "Content-Location" in submit["responses"]["202"]["headers"]
    assert "Retry-After" in submit["responses"]["429"]["headers"]
    assert "WWW-Authenticate" in submit["responses"]["401"]["headers"]
    status = document["paths"][STATUS]["get"]
    assert "Retry-After" in status["responses"]["200"]["headers"]


def test_it_carries_a_realistic_example_bundle_and_receipt(document):
    submit = document["paths"][SUBMIT]["post"]
    bundle = next(
        iter(submit["requestBody"]["content"]["application/fhir+json"]["examples"].values())
    )
    assert bundle["value"]["resourceType"] == "Bundle"
    types = {e["resource"]["resourceType"] for e in bundle["value"]["entry"]}
    assert {"Patient", "Observation", "Practitioner", "Encounter", "Consent"} <= types
    status = document["paths"][STATUS]["get"]
    receipt = next(
        iter(status["responses"]["200"]["content"]["application/json"]["examples"].values())
    )
    assert set(receipt["value"]) == {
        "id",
        "status",
        "accepted",
        "rejected",
        "outcome",
        "completedAt",
    }


def test_the_example_receipt_shows_an_accepted_entry_with_a_plausibility_warning(document):
    status = document["paths"][STATUS]["get"]
    receipt = next(
        iter(status["responses"]["200"]["content"]["application/json"]["examples"].values())
    )
    warned = [e for e in receipt["value"]["outcome"]["accepted"] if "operation_outcome" in e]
    (issue,) = warned[0]["operation_outcome"]["issue"]
    assert (issue["severity"], issue["code"]) == ("warning", "value")
    assert issue["details"]["coding"][0]["code"] == "birth-weight-range"
    assert issue["expression"][0].endswith(".valueQuantity")
    accepted = document["components"]["schemas"]["AcceptedEntry"]["description"]
    assert "queried and verified" in accepted


def test_the_example_bundle_is_accepted_and_maps_to_a_course_of_care():
    from ingestion.api.schema import EXAMPLE_BUNDLE
    from ingestion.fhir import CourseOfCare, map_single, practice_fingerprint_key

    result = map_single(EXAMPLE_BUNDLE, fingerprint_key=practice_fingerprint_key(b"k", 1))
    assert isinstance(result, CourseOfCare)
    assert result.attended_by and result.consent_granted


def test_interactive_docs_are_served_from_installed_assets(client):
    response = client.get("/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    # A word, not three letters inside a random CSRF token.
    assert not re.search(r"(?<![0-9a-z])cdn", html.lower()) and "https://" not in html
    asset = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200


def test_it_describes_the_fhir_base_and_metadata(document):
    base = document["paths"]["/api/registry/fhir/"]["post"]
    assert base["operationId"] == "submitBundleAtBase"
    assert base["security"] == [{"registryApiKey": ["ingest:write"]}]
    assert set(base["responses"]) == set(document["paths"][SUBMIT]["post"]["responses"])
    metadata = document["paths"]["/api/registry/fhir/metadata"]["get"]
    assert metadata.get("security", []) in ([], [{}])  # no key needed


def test_it_says_plainly_that_try_it_out_writes_real_data(document):
    assert '"Try it out" writes real data' in document["info"]["description"]
    assert '"Try it out" writes real data' in document["paths"][SUBMIT]["post"]["description"]


def test_it_documents_the_progress_header_and_field(document):
    status = document["paths"][STATUS]["get"]
    assert "X-Progress" in status["responses"]["200"]["headers"]
    receipt = document["components"]["schemas"]["IngestionReceipt"]
    assert set(receipt["properties"]["progress"]["required"]) == {"processed", "total", "unit"}
