"""Every call the API does not support answers an OperationOutcome ``not-supported``: 405 with
``Allow`` on a known path, 404 on any other; never HTML, never an empty body."""

from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.django_db

BASE = "/api/registry/fhir/"
SOME_INGESTION = f"ingestions/{uuid.uuid4()}"

# (path under the base, methods it does not take, its Allow header)
KNOWN = [
    ("", ["GET", "PUT", "PATCH", "DELETE"], "POST, OPTIONS"),
    ("Bundle", ["GET", "PUT", "PATCH", "DELETE"], "POST, OPTIONS"),
    ("Bundle?identifier=urn:example:chart|C-1", ["GET", "DELETE"], "POST, OPTIONS"),
    ("Bundle/$validate", ["GET", "PUT", "PATCH", "DELETE"], "POST, OPTIONS"),
    ("Bundle/C-1", ["GET", "POST", "PUT", "PATCH", "DELETE"], "OPTIONS"),
    (SOME_INGESTION, ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"),
    ("metadata", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"),
]
UNKNOWN = [
    "Patient",
    "Patient/1",
    "Observation/1/_history/2",
    "ingestions",
    "ingestions/",
    f"{SOME_INGESTION}/outcome",
    "Bundle/",
    "Bundle/C-1/_history",
    "Bundle/C-1/$validate",
    "Bundle/_history",
    "Bundle/_search",
    "Bundle/$everything",
    "$validate",
    "metadata/x",
    "_search",
    "bundle",
]


def call(client, method: str, path: str, **headers):
    return client.generic(
        method, BASE + path, data=b"{}", content_type="application/fhir+json", headers=headers
    )


def assert_not_supported(response, status: int) -> str:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/fhir+json")
    outcome = response.json()
    assert outcome["resourceType"] == "OperationOutcome"
    (issue,) = outcome["issue"]
    assert (issue["severity"], issue["code"]) == ("error", "not-supported")
    assert issue["diagnostics"]
    return issue["diagnostics"]


@pytest.mark.parametrize(
    ("path", "method", "allow"),
    [(path, method, allow) for path, methods, allow in KNOWN for method in methods],
)
@pytest.mark.parametrize("keyed", [False, True], ids=["no key", "with a key"])
def test_a_known_path_with_a_method_it_does_not_take_is_405_with_allow(
    api, client, path, method, allow, keyed
):
    headers = {"Authorization": f"Bearer {api.token}"} if keyed else {}
    response = call(client, method, path, **headers)
    diagnostics = assert_not_supported(response, 405)
    assert response["Allow"] == allow
    assert diagnostics.startswith(f"{method} is not supported on ")
    assert f"Allowed: {allow}." in diagnostics


@pytest.mark.parametrize("path", UNKNOWN)
@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE", "OPTIONS"])
def test_any_other_path_is_404_not_supported(api, client, path, method):
    response = call(client, method, path, Authorization=f"Bearer {api.token}")
    diagnostics = assert_not_supported(response, 404)
    assert "POST [base]/Bundle/$validate" in diagnostics
    assert "Allow" not in response


def test_the_method_is_answered_before_the_key_is_looked_at(client):
    response = call(client, "DELETE", SOME_INGESTION, Authorization="Bearer rgk_wrong")
    assert_not_supported(response, 405)
    assert "WWW-Authenticate" not in response


def test_a_bundle_by_id_says_where_a_submissions_result_is_read(client):
    diagnostics = assert_not_supported(call(client, "GET", "Bundle/C-1"), 405)
    assert "keeps no submitted Bundle" in diagnostics and "ingestions/{id}" in diagnostics


def test_an_unknown_method_is_405_without_echoing_it(client):
    diagnostics = assert_not_supported(call(client, "BREW", "Bundle"), 405)
    assert "BREW" not in diagnostics


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("", "POST, OPTIONS"),
        ("Bundle", "POST, OPTIONS"),
        ("Bundle/$validate", "POST, OPTIONS"),
        ("Bundle/C-1", "OPTIONS"),
        (SOME_INGESTION, "GET, HEAD, OPTIONS"),
        ("metadata", "GET, HEAD, OPTIONS"),
    ],
)
def test_options_answers_allow_and_an_information_outcome_without_a_key(client, path, allow):
    response = call(client, "OPTIONS", path)
    assert response.status_code == 200
    assert response["Allow"] == allow
    (issue,) = response.json()["issue"]
    assert (issue["severity"], issue["code"]) == ("information", "informational")
    assert f"allows {allow}." in issue["diagnostics"]


def test_head_is_answered_where_get_is_and_405_elsewhere(api, client):
    metadata = client.head(BASE + "metadata")
    assert metadata.status_code == 200 and metadata.content == b""
    keyed = {"Authorization": f"Bearer {api.token}"}
    assert client.head(BASE + SOME_INGESTION, headers=keyed).status_code == 404
    assert client.head(BASE + SOME_INGESTION).status_code == 401
    bundle = client.head(BASE + "Bundle")
    assert bundle.status_code == 405 and bundle["Allow"] == "POST, OPTIONS"
