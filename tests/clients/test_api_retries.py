"""The client's waiting rules, on answers a live server rarely gives on cue (503, dropped
connections, a refused key). The HTTP exchange is scripted with httpx's own MockTransport;
everything above the transport is the real client."""

from __future__ import annotations

import io

import httpx
import pytest

from registry_client.api import ApiError, Queued, Refused, RegistryApi
from registry_client.cli import main

BASE = "https://registry.example.org/api/registry/fhir"
STATUS = f"{BASE}/ingestions/0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10"


def scripted(*answers):
    """A transport that answers each request with the next item (a Response or an error)."""
    queue = list(answers)
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


def client(transport, waits):
    return RegistryApi(BASE, "rgk_x", http=httpx.Client(transport=transport), sleep=waits.append)


ACCEPTED = httpx.Response(202, headers={"Content-Location": STATUS}, json={})


def test_503_and_429_are_waited_out_as_retry_after_says():
    transport, seen = scripted(
        httpx.Response(503, headers={"Retry-After": "7"}),
        httpx.Response(429, headers={"Retry-After": "30"}),
        ACCEPTED,
    )
    waits: list[float] = []
    answer = client(transport, waits).submit(b"{}", "key-1")
    assert answer == Queued("0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10", STATUS)
    assert waits == [7.0, 30.0]
    assert {r.headers["Idempotency-Key"] for r in seen} == {"key-1"}  # the same key each time


def test_a_dropped_connection_is_retried_then_given_up():
    transport, _ = scripted(httpx.ConnectError("refused"), ACCEPTED)
    waits: list[float] = []
    assert isinstance(client(transport, waits).submit(b"{}", "k"), Queued)
    assert len(waits) == 1
    transport, _ = scripted(*[httpx.ConnectError("refused")] * 5)
    with pytest.raises(ApiError, match="ConnectError"):
        client(transport, []).submit(b"{}", "k")


def test_a_refused_bundle_keeps_its_operation_outcome():
    outcome = {"resourceType": "OperationOutcome", "issue": [{"code": "structure"}]}
    transport, _ = scripted(httpx.Response(400, json=outcome))
    assert client(transport, []).submit(b"[]", "k") == Refused(400, outcome)


def test_a_refused_key_stops_the_run_with_status_2(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    transport, _ = scripted(
        httpx.Response(
            401,
            json={"resourceType": "OperationOutcome", "issue": [{"diagnostics": "Invalid key."}]},
        )
    )
    argv = [str(tmp_path / "a.json"), "--receipts", str(tmp_path / "r"), "--no-progress"]
    assert main(argv, api=client(transport, []), out=io.StringIO()) == 2


def test_polling_waits_as_the_receipt_asks():
    transport, _ = scripted(
        httpx.Response(200, headers={"Retry-After": "3"}, json={"status": "processing"}),
        httpx.Response(200, json={"status": "completed"}),
    )
    api = client(transport, [])
    first, second = api.poll(STATUS), api.poll(STATUS)
    assert (first.finished, first.wait_seconds) == (False, 3.0)
    assert second.finished


def test_the_first_poll_waits_out_the_202s_retry_after(tmp_path):
    """A poll at once would find the ingestion queued: the 202's Retry-After comes first."""
    (tmp_path / "a.json").write_text("{}")
    transport, seen = scripted(
        httpx.Response(202, headers={"Content-Location": STATUS, "Retry-After": "2"}, json={}),
        httpx.Response(200, json={"status": "completed"}),
    )
    waits: list[float] = []
    argv = [str(tmp_path / "a.json"), "--receipts", str(tmp_path / "r"), "--no-progress"]
    assert main(argv, api=client(transport, waits), out=io.StringIO()) == 0
    assert [r.method for r in seen] == ["POST", "GET"]
    assert len(waits) == 1 and 1.5 < waits[0] <= 2.0  # before the GET, less the time gone by
