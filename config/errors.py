"""The web side's error pages (400, 403, 404, 500, and a refused CSRF token) in the site's look.

Each page says what happened and where to go next. None shows a stack trace, the path or
query that was asked for, or anything about a record: only a fixed text per status, and for a
403 the reason the code gave (always one of ours, never data). Under the API's prefix the same
errors are OperationOutcomes, so an integrator never gets a page of HTML.

The 500 page is rendered without the request's context: whatever broke (the database, the
session store) is not touched again to draw the header. An unreachable database
(``OperationalError``, ``InterfaceError``) is not a bug but an outage: 503 with Retry-After, an
OperationOutcome with code ``transient`` under the API (as DRF's handler answers inside it,
:mod:`ingestion.api.errors`), a page saying so elsewhere.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader

from ingestion.api.errors import Unavailable
from ingestion.fhir.outcome import IssueCode, error_outcome

API_PREFIX = "/api/"
TEMPLATE = "errors/error.html"


@dataclass(frozen=True)
class ErrorPage:
    title: str
    explanation: str
    issue_code: IssueCode  # for the API's OperationOutcome


PAGES: dict[int, ErrorPage] = {
    400: ErrorPage(
        "Bad request",
        "The request could not be understood: a link may be damaged or a form out of date. "
        "Go back and try again.",
        "invalid",
    ),
    403: ErrorPage(
        "Not allowed",
        "Your account may not open this page.",
        "forbidden",
    ),
    404: ErrorPage(
        "Page not found",
        "There is no page here, or it is not one your account can see. "
        "A link may be out of date, or the practice may not be one of yours.",
        "not-found",
    ),
    500: ErrorPage(
        "Something went wrong",
        "The registry could not answer this request. Try again in a moment; if it keeps "
        "happening, tell the registry's administrator what you were doing and when.",
        "exception",
    ),
    408: ErrorPage(
        "Request too slow",
        "The request did not arrive in time, so it was not processed. Send it again.",
        "timeout",
    ),
    413: ErrorPage(
        "Request too large",
        "The request is larger than the registry accepts, so it was not processed.",
        "too-costly",
    ),
    503: ErrorPage(
        "Unavailable for a moment",
        "The registry cannot reach its database just now. Nothing was changed. "
        "Please try again in a few seconds.",
        "transient",
    ),
}
# A refused CSRF token is, for a person, a form left open too long (or cookies blocked): a page
# of its own in plain words, not "Not allowed", which would blame their account.
CSRF_PAGE = ErrorPage(
    "Form expired",
    "This form has expired. Reload the page and send it again.",
    "forbidden",
)
CSRF_REASON = "If it happens again, check that your browser accepts cookies from this site."


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_response(request, 400)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    reason = str(exception) if isinstance(exception, PermissionDenied) else ""
    return _error_response(request, 403, reason=reason)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_response(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    if not database_unavailable(sys.exc_info()[1]):
        return _error_response(request, 500, with_request=False)
    response = _error_response(request, 503, with_request=False, reason=Unavailable().diagnostics)
    response["Retry-After"] = str(settings.REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


def database_unavailable(error: BaseException | None) -> bool:
    return isinstance(error, OperationalError | InterfaceError)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: Django's ``reason`` is for developers and is not shown."""
    return _error_response(request, 403, reason=CSRF_REASON, page=CSRF_PAGE)


def error_page_html(status: int, reason: str = "") -> str:
    """The page for ``status`` without a request (the front answers before Django runs)."""
    context = {"status": status, "page": PAGES[status], "reason": reason}
    return loader.get_template(TEMPLATE).render(context)


def _error_response(
    request: HttpRequest,
    status: int,
    *,
    reason: str = "",
    with_request: bool = True,
    page: ErrorPage | None = None,
) -> HttpResponse:
    page = page or PAGES[status]
    if request.path.startswith(API_PREFIX):
        return _operation_outcome(status, page, reason)
    context = {"status": status, "page": page, "reason": reason}
    html = loader.get_template(TEMPLATE).render(context, request if with_request else None)
    return HttpResponse(html, status=status)


def _operation_outcome(status: int, page: ErrorPage, reason: str) -> HttpResponse:
    body = error_outcome(page.issue_code, reason or f"{page.title}.")
    return HttpResponse(json.dumps(body), status=status, content_type="application/fhir+json")
