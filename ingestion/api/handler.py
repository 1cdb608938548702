"""Every API error is a FHIR OperationOutcome, mapped here from DRF's exceptions.

DRF's own exceptions (authentication, permissions, throttling, 404, 405, 415) and the
service's :class:`~ingestion.api.errors.FhirError` all pass through
:func:`fhir_exception_handler` (DRF's ``EXCEPTION_HANDLER``), so there is one place that
decides status codes, issue codes and headers.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from ingestion.api.errors import FhirError, RateLimited, Unavailable
from ingestion.api.ratelimit import auth_failure_refusal
from ingestion.fhir.outcome import error_outcome

log = logging.getLogger(__name__)


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
        error = auth_failure_refusal(context["request"]) or error
    body = error_outcome(error.issue_code, error.diagnostics, expression=error.expression)
    response = Response(body, status=error.status_code, headers=error.headers)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header and error.status_code == status.HTTP_401_UNAUTHORIZED:
        response["WWW-Authenticate"] = auth_header
    return response
