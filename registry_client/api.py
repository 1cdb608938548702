"""The API calls (submit, poll, validate), with the waiting the API asks for.

* 429 (rate limit) and 503 (service busy or restarting): wait ``Retry-After`` seconds, then
  send the same request again. The submit call carries its Idempotency-Key, so sending it
  again can never create a second ingestion.
* A connection that fails: wait and retry a few times, then give up with :class:`ApiError`.
* Polling: the 202's ``Retry-After`` says when to ask first; while the receipt says ``queued``
  or ``processing``, the server's ``Retry-After`` says when to ask again.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

RETRY_STATUSES = (429, 503)
DEFAULT_WAIT_SECONDS = 2.0
LONGEST_WAIT_SECONDS = 120.0
CONNECTION_ATTEMPTS = 5
FINAL_STATUSES = ("completed", "failed")


class ApiError(Exception):
    """The registry could not be reached, or answered in a way the client cannot act on."""


@dataclass(frozen=True, slots=True)
class Queued:
    ingestion_id: str
    status_url: str
    wait_seconds: float = 0.0  # the 202's Retry-After: how long to wait before the first poll


@dataclass(frozen=True, slots=True)
class Refused:
    """The submit call answered an error (400, 413, 415, ...): the Bundle was not taken."""

    http_status: int
    operation_outcome: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Validated:
    """``Bundle/$validate`` answered: what submitting the Bundle would do now (nothing stored)."""

    operation_outcome: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Poll:
    receipt: dict[str, Any]
    wait_seconds: float  # how long the server asked us to wait before polling again

    @property
    def finished(self) -> bool:
        return self.receipt.get("status") in FINAL_STATUSES


def retry_after(response: httpx.Response) -> float:
    try:
        seconds = float(response.headers.get("Retry-After", DEFAULT_WAIT_SECONDS))
    except ValueError:
        seconds = DEFAULT_WAIT_SECONDS
    return min(max(seconds, 0.0), LONGEST_WAIT_SECONDS)


class RegistryApi:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        timeout = httpx.Timeout(60.0, connect=10.0)
        self.http = http or httpx.Client(timeout=timeout, verify=verify)
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/fhir+json"}
        self.sleep = sleep

    def submit(self, body: bytes, idempotency_key: str) -> Queued | Refused:
        headers = {
            **self.headers,
            "Content-Type": "application/fhir+json",
            "Idempotency-Key": idempotency_key,
        }
        response = self._send("POST", f"{self.base_url}/Bundle", content=body, headers=headers)
        if response.status_code == 202:
            status_url = response.headers["Content-Location"]
            wait = retry_after(response) if "Retry-After" in response.headers else 0.0
            return Queued(status_url.rstrip("/").rsplit("/", 1)[-1], status_url, wait)
        if response.status_code in (401, 403):
            raise ApiError(_explain(response))  # every other Bundle would fail the same way
        return Refused(response.status_code, _outcome(response))

    def validate(self, body: bytes) -> Validated | Refused:
        """Check a Bundle and preview its submission (``POST Bundle/$validate``)."""
        headers = {**self.headers, "Content-Type": "application/fhir+json"}
        url = f"{self.base_url}/Bundle/$validate"
        response = self._send("POST", url, content=body, headers=headers)
        if response.status_code == 200:
            return Validated(_outcome(response))
        if response.status_code in (401, 403):
            raise ApiError(_explain(response))
        return Refused(response.status_code, _outcome(response))

    def poll(self, status_url: str) -> Poll:
        response = self._send("GET", status_url, headers=self.headers)
        if response.status_code != 200:
            raise ApiError(_explain(response))
        receipt = response.json()
        return Poll(receipt, retry_after(response))

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        failures = 0
        while True:
            try:
                response = self.http.request(method, url, **kwargs)
            except httpx.TransportError as error:
                failures += 1
                if failures >= CONNECTION_ATTEMPTS:
                    raise ApiError(f"{method} {url}: {type(error).__name__}: {error}") from None
                self.sleep(min(DEFAULT_WAIT_SECONDS * 2**failures, LONGEST_WAIT_SECONDS))
                continue
            if response.status_code not in RETRY_STATUSES:
                return response
            self.sleep(retry_after(response))


def _outcome(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("resourceType") == "OperationOutcome":
        return body
    return {
        "resourceType": "OperationOutcome",
        "issue": [
            {
                "severity": "error",
                "code": "exception",
                "diagnostics": f"HTTP {response.status_code} without an OperationOutcome.",
            }
        ],
    }


def _explain(response: httpx.Response) -> str:
    issues = _outcome(response).get("issue") or [{}]
    return f"HTTP {response.status_code}: {issues[0].get('diagnostics', '')}"
