"""What a reverse proxy may tell Django, and only a trusted one.

A proxy that ends TLS forwards plain HTTP and says ``X-Forwarded-Proto: https``; one that
rewrites the host says ``X-Forwarded-Host``. Django believes these headers from anyone once
``SECURE_PROXY_SSL_HEADER`` or ``USE_X_FORWARDED_HOST`` is set, so a client talking to the
web process directly could claim HTTPS (and get past the HTTPS redirect) or any host. This
middleware, first in the list, removes both headers unless the socket's peer is one of
``REGISTRY_TRUSTED_PROXIES``: the same list, and the same judge (:mod:`lib.client`), as
for ``X-Forwarded-For``. gunicorn's own judgement of these headers is switched off
(config/gunicorn.py), so there is one list, not two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from lib.client import is_trusted

PROXY_HEADERS = ("HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST")


def drop_untrusted_proxy_headers(request: HttpRequest) -> None:
    meta = request.META
    if not any(name in meta for name in PROXY_HEADERS):
        return
    if is_trusted(str(meta.get("REMOTE_ADDR") or "")):
        return
    for name in PROXY_HEADERS:
        meta.pop(name, None)


def trusted_proxy_middleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    """First in ``MIDDLEWARE`` (the chain is synchronous under ASGI too: config/front.py)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        drop_untrusted_proxy_headers(request)
        response: HttpResponse = get_response(request)
        return response

    return middleware
