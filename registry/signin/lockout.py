"""Sign-in lock-outs by (username, address) pair, and by address across usernames.

django-axes applies one failure limit to every lock-out parameter, so the pair is axes' own
parameter (``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]``) and the address's
higher limit is added here, counted over the same table: the failures recorded for every
username from the address within the cool-off (``AXES_COOLOFF_TIME``). The address is
:func:`lib.client.client_address` (``AXES_CLIENT_IP_CALLABLE``), so behind a proxy each
client is counted on its own, and a client cannot pick its address.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def address_failures(request: HttpRequest) -> int:
    """Failed sign-ins from the request's client address within the cool-off, any username."""
    attempts = AccessAttempt.objects.filter(
        ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        attempt_time__gte=get_cool_off_threshold(request),
    )
    total = attempts.aggregate(total=Sum("failures_since_start"))["total"]
    return int(total or 0)


def address_locked(request: HttpRequest) -> bool:
    if not getattr(request, "axes_ip_address", None):
        return False
    return address_failures(request) >= settings.REGISTRY_SIGN_IN_ADDRESS_LIMIT


class PairAndAddressHandler(AxesDatabaseHandler):
    """``AXES_HANDLER``: axes' database handler, with the per-address limit beside the pair's."""

    def is_locked(self, request: Any, credentials: dict[str, Any] | None = None) -> bool:
        return bool(super().is_locked(request, credentials)) or address_locked(request)

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
    ) -> None:
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or request.axes_locked_out or not address_locked(request):
            return
        request.axes_locked_out = True
        request.axes_credentials = credentials
        user_locked_out.send(
            "axes",
            request=request,
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
        )


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the page in the site's look, 429, the wait in words."""
    minutes = round(float(settings.AXES_COOLOFF_TIME) * 60)
    context = {"wait": human_duration(minutes), "password_reset": settings.REGISTRY_PASSWORD_RESET}
    return render(request, "registration/locked_out.html", context, status=429)


def human_duration(minutes: int) -> str:
    """``15 minutes``, ``1 hour``, ``1 hour 30 minutes``: how a person says a wait."""
    hours, rest = divmod(max(minutes, 1), 60)
    parts = [_count(hours, "hour"), _count(rest, "minute")]
    return " ".join(part for part in parts if part)


def _count(number: int, unit: str) -> str:
    if not number:
        return ""
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"
