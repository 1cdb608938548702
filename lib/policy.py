"""The Content-Security-Policy header, built once per process for the responses that share it.

django-csp builds the header anew for every response, twice (the policy and the report-only
one), which cost about a tenth of a millisecond per request: as much as a single's INSERT
costs the web to send. Here a response whose policy is the settings' own (no decorator
changed it for the view, and no nonce was asked for) gets a header built once, and cleared
whenever a test changes the setting; any other response goes through django-csp as before.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponseBase

PER_RESPONSE = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
SETTINGS = ("CONTENT_SECURITY_POLICY", "CONTENT_SECURITY_POLICY_REPORT_ONLY", "DEBUG")


class ContentSecurityPolicy(CSPMiddleware):
    """``MIDDLEWARE``'s CSP: django-csp's, with the settings' own header kept (see above)."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        headers = _settings_headers()
        if headers is None or not _settings_policy(request, response):
            return super().process_response(request, response)
        for name, value in zip((HEADER, HEADER_REPORT_ONLY), headers, strict=True):
            if value and name not in response:
                response[name] = value
        # As django-csp: a nonce asked for once the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response


def _settings_policy(request: HttpRequest, response: HttpResponseBase) -> bool:
    """No decorator set the response's own policy or exempted it, and no nonce was used."""
    if getattr(request, "_csp_nonce", None) is not None:
        return False
    if getattr(response, "_csp_exempt", False) or getattr(response, "_csp_exempt_ro", False):
        return False
    return all(getattr(response, name, None) is None for name in PER_RESPONSE)


@cache
def _settings_headers() -> tuple[str, str] | None:
    """The two headers the settings give, or None where django-csp should decide each
    time (a setting that excludes some paths, or DEBUG, which exempts its error pages)."""
    policies: list[Any] = [
        getattr(settings, "CONTENT_SECURITY_POLICY", None) or {},
        getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None) or {},
    ]
    if settings.DEBUG or any(policy.get("EXCLUDE_URL_PREFIXES") for policy in policies):
        return None
    return build_policy(), build_policy(report_only=True)


def _forget(*, setting: str, **_: Any) -> None:
    if setting in SETTINGS:
        _settings_headers.cache_clear()


setting_changed.connect(_forget)
