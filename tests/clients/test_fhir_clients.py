"""fhirpy and fhirclient, as an integrator uses them, against a live server and a real worker.

The code run here is the "From your FHIR client" section of docs/clients.md, extracted as
written: if the snippets stop working, this fails.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ingestion.api.examples import example
from registry.models import Record

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CLIENTS = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
INTEGRATORS = Path(__file__).resolve().parents[2] / "docs" / "integrators.md"


def documented_snippets() -> list[str]:
    text = CLIENTS.read_text()
    section = text.split("## From your FHIR client", 1)[1].split("\n#", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def run_snippet(code: str, server, bundle: dict) -> dict:
    namespace = {"BASE": server.base, "TOKEN": server.token, "bundle": bundle}
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(code, "docs/clients.md", "exec"), namespace)  # noqa: S102
    return namespace["receipt"]


def test_the_docs_have_a_snippet_for_each_client():
    snippets = documented_snippets()
    assert len(snippets) == 2
    assert "fhirpy" in snippets[0] and "fhirclient" in snippets[1]


@pytest.mark.parametrize("client", ["fhirpy", "fhirclient"])
def test_a_batch_posted_to_the_base_is_read_back_and_polled_to_completion(server, client):
    code = documented_snippets()[0 if client == "fhirpy" else 1]
    receipt = run_snippet(code, server, example("Batch"))
    assert receipt["status"] == "completed"
    assert (receipt["accepted"], receipt["rejected"]) == (2, 0)
    assert Record.objects.count() == 2


@pytest.mark.parametrize("client", ["fhirpy", "fhirclient"])
def test_a_document_and_an_nvss_message_go_through_the_same_snippet(server, client):
    code = documented_snippets()[0 if client == "fhirpy" else 1]
    for name in ("One course of care", "NVSS submission message", "NVSS void message"):
        receipt = run_snippet(code, server, example(name))
        assert receipt["status"] == "completed", name
        assert receipt["rejected"] == 0, receipt
    assert Record.objects.get(external_record_id="2026UT000123").voided
    assert not Record.objects.get(external_record_id="2026-000123").voided


def test_fhirclient_reads_the_capability_statement(server):
    from fhirclient import client

    smart = client.FHIRClient(settings={"app_id": "test", "api_base": server.base})
    assert smart.prepare()
    statement = smart.server.capabilityStatement
    assert statement.fhirVersion == "4.0.1"
    assert statement.rest[0].resource[0].type == "Bundle"


def validate_snippet() -> str:
    text = INTEGRATORS.read_text()
    section = text.split("## Checking before sending", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return code


def test_fhirpy_calls_validate_as_the_integrators_guide_shows(server):
    namespace = {"BASE": server.base, "TOKEN": server.token, "bundle": example("Batch")}
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(validate_snippet(), "integrators.md", "exec"), namespace)  # noqa: S102
    issues = namespace["outcome"]["issue"]
    assert [i["diagnostics"].split(" ")[:2] for i in issues] == [["would", "create"]] * 2
    assert "information Bundle.entry[0] would create" in printed.getvalue()
    assert not Record.objects.exists()


def test_fhirclient_can_call_validate_through_its_server(server):
    from fhirclient import client

    smart = client.FHIRClient(settings={"app_id": "test", "api_base": server.base})
    smart.server.session.headers["Authorization"] = f"Bearer {server.token}"
    try:
        answer = smart.server.post_json("Bundle/$validate", example("One course of care")).json()
    finally:
        smart.server.session.close()  # a kept-alive connection would keep the server's thread
    (issue,) = answer["issue"]
    assert issue["diagnostics"].startswith("would create")
    assert not Record.objects.exists()
