"""The address ``make run``'s start-up banner gives: one that answers, whatever ``.env`` says.

With ``REGISTRY_HTTPS`` on, plain HTTP is redirected to https on port 443, which is the
proxy's (docs/operations.md); with ``ALLOWED_HOSTS`` naming only the registry's public name,
``127.0.0.1`` is refused with a 400. So the banner names the address a browser can use.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.http.request import validate_host

LOOPBACK = "127.0.0.1"


def serving_url(*, port: int, allowed_hosts: Sequence[str], https: bool) -> str:
    """Where the web answers: gunicorn itself, or the public name through the proxy."""
    public = next((h for h in allowed_hosts if h and not h.startswith(".") and h != "*"), None)
    if https:
        return f"https://{public or LOOPBACK}/  (through the proxy; REGISTRY_HTTPS is on)"
    if validate_host(LOOPBACK, list(allowed_hosts)) or public is None:
        return f"http://{LOOPBACK}:{port}/"
    return f"http://{public}:{port}/  (ALLOWED_HOSTS does not name {LOOPBACK})"
