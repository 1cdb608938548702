"""Site-wide error answers: a database that cannot be reached is 503 with Retry-After.

Django calls :func:`server_error` for any exception no view or middleware handled. An
unreachable database (``OperationalError``, ``InterfaceError``) is not a bug but an outage:
the API answers a FHIR OperationOutcome with code ``transient``, the web pages a page in
the site's look, both 503 with ``Retry-After``. Nothing here touches the database, and no
traceback ever reaches the client. (Inside the API, DRF's handler does the same:
:mod:`ingestion.api.errors`.)
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from ingestion.api.errors import Unavailable
from ingestion.fhir.outcome import error_outcome

API_PREFIX = "/api/"


def database_unavailable(error: BaseException | None) -> bool:
    return isinstance(error, OperationalError | InterfaceError)


def unavailable_outcome() -> dict[str, object]:
    unavailable = Unavailable()
    return error_outcome(unavailable.issue_code, unavailable.diagnostics)


def server_error(request: HttpRequest) -> HttpResponse:
    unavailable = database_unavailable(sys.exc_info()[1])
    status = 503 if unavailable else 500
    if request.path.startswith(API_PREFIX):
        body = (
            unavailable_outcome()
            if unavailable
            else error_outcome("exception", "Internal error; the request was not processed.")
        )
        response: HttpResponse = JsonResponse(
            body, status=status, content_type="application/fhir+json"
        )
    else:
        page = "errors/503.html" if unavailable else "errors/500.html"
        response = HttpResponse(render_to_string(page), status=status)
    if unavailable:
        response["Retry-After"] = str(settings.REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response
