"""The API's errors: each is answered as a FHIR OperationOutcome with its status and issue code.

ingestion/api/handler.py maps these and DRF's own exceptions to responses.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions, status

from ingestion.fhir.outcome import IssueCode


class FhirError(exceptions.APIException):
    """An error the API reports as an OperationOutcome with the given status and issue code."""

    def __init__(
        self,
        status_code: int,
        code: IssueCode,
        diagnostics: str,
        *,
        expression: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail=diagnostics)
        self.status_code = status_code
        self.issue_code: IssueCode = code
        self.diagnostics = diagnostics
        self.expression = expression
        self.headers = headers or {}


PERIOD_NAMES = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def rate_in_words(rate: str, counted: str) -> str:
    """A rate such as REGISTRY_RATE_LIMIT ("120/m") as "at most 120 <counted> per minute"."""
    count, period = rate.split("/")
    return f"at most {count} {counted} per {PERIOD_NAMES[period]}"


class RateLimited(FhirError):
    def __init__(self, retry_after: int, what: str | None = None) -> None:
        if what is None:
            what = rate_in_words(settings.REGISTRY_RATE_LIMIT, "requests")
            what += " per key for this endpoint"
        seconds = max(1, retry_after)
        super().__init__(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "throttled",
            f"Rate limit exceeded: {what}. Retry after {seconds} seconds.",
            headers={"Retry-After": str(seconds)},
        )


class Unavailable(FhirError):
    """The database cannot be reached: 503, ``transient``, with Retry-After (never a 500)."""

    def __init__(self) -> None:
        seconds = settings.REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS
        super().__init__(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "transient",
            f"The registry's database cannot be reached just now; nothing was stored. "
            f"Retry after {seconds} seconds.",
            headers={"Retry-After": str(seconds)},
        )
