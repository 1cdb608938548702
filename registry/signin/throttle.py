"""Password reset throttles, counted in the shared cache (Redis in production).

Per client address, on the request (:func:`reset_request_refusal`): past it the page answers
429, whatever the address asked for, so the answer says nothing about accounts. Per account,
in the worker (:func:`reset_mail_allowed`): past it no mail is sent and the page is none the
wiser. Both fail open when the cache cannot be reached, as the API's limits do.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from config.breaker import cache_breaker
from config.client import client_address

log = logging.getLogger(__name__)

ADDRESS_GROUP = "registry.reset-address"
ACCOUNT_GROUP = "registry.reset-account"


def counted_usage(request: HttpRequest | None, *, group: str, key: Any, rate: str) -> Any:
    """Count one use in django-ratelimit's ``group``; its usage, or None when failing open.

    Also counts invitations (registry.members.throttle).
    """
    if cache_breaker.is_open:
        return None
    try:
        return get_usage(request, group=group, key=key, rate=rate, increment=True)
    except Exception as error:  # the cache is down or hung: fail open
        log.warning("throttle unavailable, failing open (%s)", type(error).__name__)
        cache_breaker.trip(error)
        return None


def reset_request_refusal(request: HttpRequest) -> int | None:
    """Count a reset request from the client's address; past the limit, seconds to wait."""
    usage = counted_usage(
        request,
        group=ADDRESS_GROUP,
        key=lambda group, request: client_address(request),
        rate=settings.REGISTRY_RESET_ADDRESS_RATE,
    )
    if usage is None or not usage["should_limit"]:
        return None
    return max(1, int(usage["time_left"]))


def reset_mail_allowed(user_id: int) -> bool:
    """Count a reset mail for the account; False past the limit."""
    usage = counted_usage(
        None,
        group=ACCOUNT_GROUP,
        key=lambda group, request: f"user:{user_id}",
        rate=settings.REGISTRY_RESET_ACCOUNT_RATE,
    )
    return usage is None or not usage["should_limit"]
