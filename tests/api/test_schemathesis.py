"""Property-based checks of the API against its own OpenAPI document, with a valid key.

Schemathesis generates requests from /openapi.json (positive and negative: bodies, headers
and path parameters), and every response is checked: never a 500, and the status code,
headers, content type and body as documented. Examples are bounded so it runs in
`make test`. (Its pytest plugin does not run under pytest 9 yet, so the Hypothesis
strategies are driven directly; the checks are Schemathesis' own.)
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.modes import GenerationMode

from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.models import Practice

EXAMPLES = 40


@pytest.fixture
def api_schema(db):
    """The schema served by the app itself, called in-process (WSGI) inside the test's
    transaction. As Django's test client does, requests must not close the connection."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from config.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/openapi.json", application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def no_limit_on_failed_authentication(request):
    """Schemathesis sends invalid keys on purpose: more than 30 a minute from one address,
    which the per-address limit (rightly) answers 429 instead of 401."""
    request.getfixturevalue("settings").REGISTRY_AUTH_FAILURE_RATE = "100000/m"


@pytest.fixture
def token(db) -> str:
    practice = Practice.objects.create(slug="schemathesis")
    return key_mint(practice=practice, scopes=list(SCOPES), via=KeyEvent.Via.COMMAND)[1]


OPERATIONS = [
    ("POST", "/api/registry/fhir/Bundle"),
    ("POST", "/api/registry/fhir/"),
    ("POST", "/api/registry/fhir/Bundle/$validate"),
    ("GET", "/api/registry/fhir/ingestions/{ingestion}"),
]
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.mark.parametrize(
    ("method", "path", "mode"),
    [(method, path, mode) for method, path in OPERATIONS for mode in MODES]
    # /metadata takes no input at all, so there is nothing negative to generate
    + [("GET", "/api/registry/fhir/metadata", GenerationMode.POSITIVE)],
)
def test_the_api_honours_its_openapi_document(api_schema, token, method, path, mode):
    operation = api_schema[path][method]
    headers = {"Authorization": f"Bearer {token}"}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def check(case):
        case.call_and_validate(headers=headers)

    check()
