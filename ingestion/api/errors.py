"""Every API error is a FHIR OperationOutcome, mapped here from DRF's exceptions.

DRF's own exceptions (authentication, permissions, throttling, 404, 405, 415) and the
service's :class:`FhirError` all pass through :func:`fhir_exception_handler`, so there is one
place that decides status codes, issue codes and headers.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from ingestion.fhir.outcome import IssueCode, error_outcome

log = logging.getLogger(__name__)


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


class RateLimited(FhirError):
    def __init__(
        self,
        retry_after: int,
        what: str = "at most 120 requests per minute per key for this endpoint",
    ) -> None:
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


def _outcome_for(exc: Exception) -> FhirError | None:
    if isinstance(exc, FhirError):
        return exc
    if isinstance(exc, OperationalError | InterfaceError):
        log.warning("database unavailable (%s): answering 503", type(exc).__name__)
        return Unavailable()
    if isinstance(exc, exceptions.NotAuthenticated):
        return FhirError(
            401, "login", "Authentication required: send Authorization: Bearer <API key>."
        )
    if isinstance(exc, exceptions.AuthenticationFailed):
        return FhirError(401, "login", str(exc.detail))
    if isinstance(exc, exceptions.PermissionDenied | PermissionDenied):
        detail = getattr(exc, "detail", None) or "This key may not use this endpoint."
        return FhirError(403, "forbidden", str(detail))
    if isinstance(exc, exceptions.NotFound | Http404):
        return FhirError(404, "not-found", "Not found.")
    if isinstance(exc, exceptions.MethodNotAllowed):
        return FhirError(405, "not-supported", str(exc.detail))
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return FhirError(415, "not-supported", str(exc.detail))
    if isinstance(exc, exceptions.Throttled):
        return RateLimited(int(getattr(exc, "wait", None) or 60))
    if isinstance(exc, exceptions.ParseError):
        return FhirError(400, "structure", str(exc.detail), expression="Bundle")
    if isinstance(exc, exceptions.APIException):
        return FhirError(exc.status_code, "processing", str(exc.detail))
    return None


def fhir_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    error = _outcome_for(exc)
    if error is None:
        # A bug, not bad input. Log the kind and where, never the request's content.
        log.exception("unhandled error in %s", type(context.get("view")).__name__)
        error = FhirError(500, "exception", "Internal error; the request was not processed.")
    if error.status_code == status.HTTP_401_UNAUTHORIZED and "request" in context:
        from ingestion.api.ratelimit import auth_failure_refusal

        error = auth_failure_refusal(context["request"]) or error
    body = error_outcome(error.issue_code, error.diagnostics, expression=error.expression)
    response = Response(body, status=error.status_code, headers=error.headers)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header and error.status_code == status.HTTP_401_UNAUTHORIZED:
        response["WWW-Authenticate"] = auth_header
    return response
