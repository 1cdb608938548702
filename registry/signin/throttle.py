"""Password reset throttles, counted in the shared cache (Redis in production).

Per client address, on the request (:func:`reset_request_refusal`): past it the page answers
429, whatever the address asked for, so the answer says nothing about accounts. Per account
and requesting address, in the worker (:func:`reset_mail_allowed`): past it no mail is sent
and the page is none the wiser; a stranger spends only their own budget for the account,
never its owner's. Per account over every address, a higher backstop against a flood.
Both fail open when the cache cannot be reached, as the API's limits do.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from lib.breaker import cache_breaker
from lib.client import client_address

log = logging.getLogger(__name__)

ADDRESS_GROUP = "registry.reset-address"
ACCOUNT_GROUP = "registry.reset-account"
REQUESTER_GROUP = "registry.reset-requester"


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


def reset_mail_allowed(user_id: int, requester: str) -> bool:
    """Count a reset mail for the account asked by ``requester`` (a keyed hash of the client's
    address); False past either limit. The backstop is counted only for a mail the
    requester's own budget allows, so a stranger's refused asks do not spend it either."""
    return _within(REQUESTER_GROUP, f"user:{user_id}:{requester}", RATE_REQUESTER) and _within(
        ACCOUNT_GROUP, f"user:{user_id}", RATE_ACCOUNT
    )


RATE_REQUESTER, RATE_ACCOUNT = "REGISTRY_RESET_REQUESTER_RATE", "REGISTRY_RESET_ACCOUNT_RATE"


def _within(group: str, key: str, rate_setting: str) -> bool:
    rate = getattr(settings, rate_setting)
    usage = counted_usage(None, group=group, key=lambda group, request: key, rate=rate)
    return usage is None or not usage["should_limit"]
