"""How a probe of an unhealthy pipeline is logged: one INFO line, never an ERROR.

Django logs every 5xx answer as an ERROR (``django.request``). A 503 from
``/healthz/pipeline`` is the probe doing its job while a worker is stopped, which the docs
describe as expected: the monitor alerts on it, and the log only notes it, naming the checks.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import JsonResponse

log = logging.getLogger("ingestion.monitoring.health")


def noted(response: JsonResponse, body: dict[str, Any]) -> JsonResponse:
    """Mark a 503 as logged (so Django does not log it), after one INFO line of our own."""
    if response.status_code >= 500:
        failing = ", ".join(f"{name}: {state}" for name, state in body["checks"].items())
        log.info("healthz/pipeline: unavailable (%s)", failing)
        response._has_been_logged = True  # type: ignore[attr-defined]  # django.utils.log
    return response
