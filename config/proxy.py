"""What a reverse proxy may tell Django, and only a trusted one.

A proxy that ends TLS forwards plain HTTP and says ``X-Forwarded-Proto: https``; one that
rewrites the host says ``X-Forwarded-Host``. Django believes these headers from anyone once
``SECURE_PROXY_SSL_HEADER`` or ``USE_X_FORWARDED_HOST`` is set, so a client talking to the
web process directly could claim HTTPS (and get past the HTTPS redirect) or any host. This
middleware, first in the list, removes both headers unless the socket's peer is one of
``REGISTRY_TRUSTED_PROXIES``: the same list, and the same judge (:mod:`lib.client`), as
for ``X-Forwarded-For``. gunicorn's own judgement of these headers is switched off
(config/gunicorn.py), so there is one list, not two.

A forgotten ``REGISTRY_TRUSTED_PROXIES`` fails quietly: behind nginx every client then looks
like nginx, and one client's failures throttle or lock out all of them. So a request that
carries ``X-Forwarded-For`` from a peer that is not trusted is noticed: counted in
``registry_untrusted_forwarded_total`` and logged, at most once a minute per process (the
line names no address). ``manage.py check --deploy`` warns (``registry.W001``) when no proxy
is trusted and ``REGISTRY_HTTPS`` is off, the shape of a site behind a proxy that ends TLS
and was not listed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage
from django.core.checks import Warning as CheckWarning
from django.http import HttpRequest, HttpResponse

from ingestion.monitoring.aggregate import untrusted_forwarded_observe
from lib.client import FORWARDED_FOR, is_trusted

log = logging.getLogger(__name__)

PROXY_HEADERS = ("HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST")
WARN_EVERY_SECONDS = 60.0


def drop_untrusted_proxy_headers(request: HttpRequest) -> None:
    meta = request.META
    if not any(name in meta for name in PROXY_HEADERS):
        return
    if is_trusted(str(meta.get("REMOTE_ADDR") or "")):
        return
    for name in PROXY_HEADERS:
        meta.pop(name, None)


class Sometimes:
    """Says yes at most once per ``seconds`` in this process: a warning that would otherwise
    repeat on every request of a misconfigured site."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._last: float | None = None

    def due(self) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._last is not None and now - self._last < self.seconds:
                return False
            self._last = now
            return True


untrusted_forwarding_warning = Sometimes(WARN_EVERY_SECONDS)


def notice_untrusted_forwarding(request: HttpRequest) -> None:
    """X-Forwarded-For from a peer that is not trusted: ignored, counted, and now and then
    logged, since it usually means a proxy that ``REGISTRY_TRUSTED_PROXIES`` forgot."""
    meta = request.META
    if FORWARDED_FOR not in meta or is_trusted(str(meta.get("REMOTE_ADDR") or "")):
        return
    untrusted_forwarded_observe()
    if untrusted_forwarding_warning.due():
        log.warning(
            "X-Forwarded-For from a peer that is not in REGISTRY_TRUSTED_PROXIES was ignored "
            "(logged at most once a minute): behind a reverse proxy, list it there, or every "
            "client shares the proxy's address for limits and lock-outs"
        )


def forgotten_proxy_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``registry.W001`` (``check --deploy``): no trusted proxy and no HTTPS."""
    if settings.REGISTRY_HTTPS or settings.REGISTRY_TRUSTED_PROXIES:
        return []
    return [
        CheckWarning(
            "REGISTRY_TRUSTED_PROXIES is empty and REGISTRY_HTTPS is off.",
            hint="Behind a reverse proxy that ends TLS, list it in REGISTRY_TRUSTED_PROXIES "
            "and set REGISTRY_HTTPS=true; otherwise every client shares the proxy's address, "
            "and one client's failures throttle or lock out all of them.",
            id="registry.W001",
        )
    ]


def trusted_proxy_middleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    """First in ``MIDDLEWARE`` (the chain is synchronous under ASGI too: config/front.py)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        drop_untrusted_proxy_headers(request)
        notice_untrusted_forwarding(request)
        response: HttpResponse = get_response(request)
        return response

    return middleware
