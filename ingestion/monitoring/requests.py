"""Every web request: a request id for its log lines, and its count and time for /metrics.

The request id is made here, never taken from the client (a header could carry anything
into the logs), and answered in ``X-Request-ID`` so a caller can quote it. The route is
named by its URL pattern's name (``ingestion-receipt``), never by its path, which may hold
an id; a request that matched no route is ``unmatched``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from ingestion.monitoring.aggregate import http_request_observe
from lib.logfilters import ingestion_id, request_id

UNMATCHED = "unmatched"


def endpoint_of(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    return match.view_name or match.route or UNMATCHED


def _answered(request: HttpRequest, response: HttpResponse, started: float, rid: str) -> None:
    response["X-Request-ID"] = rid
    http_request_observe(
        endpoint=endpoint_of(request),
        status=response.status_code,
        seconds=time.perf_counter() - started,
    )


def request_metrics_middleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    """First in ``MIDDLEWARE`` (the chain is synchronous under ASGI too: config/front.py); no
    I/O (the tally is sent to Redis by a thread, ingestion.monitoring.aggregate)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        started, rid = time.perf_counter(), uuid.uuid4().hex
        token, about = request_id.set(rid), ingestion_id.set(None)
        try:
            response: HttpResponse = get_response(request)
        finally:
            request_id.reset(token)
            ingestion_id.reset(about)
        _answered(request, response, started, rid)
        return response

    return middleware
