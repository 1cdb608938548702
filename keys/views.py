"""The settings area's API key page: see the practice's key; staff mint, rotate and revoke.

Each change is a confirmation page (GET) followed by a POST. The raw token appears only in
the response to the POST that minted it, sent with ``Cache-Control: no-store``.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers, patch_cache_control
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods, require_safe

from keys.forms import MintForm, RevokeForm, RotateForm
from keys.models import ApiKey, KeyEvent
from keys.selectors import key_active_for, key_events_for
from keys.services import KeyStateError, key_mint, key_revoke, key_rotate
from registry.access import may_manage_key
from registry.models import Membership
from registry.settings_area import (
    PRACTICE_PARAM,
    member_view,
    settings_context,
    signed_in_user,
)

VIA = KeyEvent.Via.SETTINGS


@require_safe
@member_view
def key_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    practice = membership.practice
    context = settings_context(request, membership) | {
        "key": key_active_for(practice=practice),
        "events": key_events_for(practice=practice),
        "can_manage": may_manage_key(membership),
    }
    return render(request, "settings/key.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def key_mint_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    _require_manager(membership)
    practice = membership.practice
    if key_active_for(practice=practice) is not None:
        messages.info(request, "This practice already has an active key: rotate it instead.")
        return _back_to_key_page(membership)
    form = MintForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            key, token = key_mint(
                practice=practice,
                scopes=form.cleaned_data["scopes"],
                by=signed_in_user(request),
                via=VIA,
            )
        except KeyStateError as error:
            messages.error(request, str(error))
            return _back_to_key_page(membership)
        return _token_page(request, membership, key, token, "minted")
    context = settings_context(request, membership) | {"form": form}
    return render(request, "settings/key_mint.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def key_rotate_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    _require_manager(membership)
    practice = membership.practice
    current = key_active_for(practice=practice)
    if current is None:
        messages.info(request, "This practice has no active key to rotate: mint one.")
        return _back_to_key_page(membership)
    initial = {"scopes": current.scopes, "key": current.prefix}
    form = RotateForm(request.POST if request.method == "POST" else None, initial=initial)
    if form.is_valid():
        try:
            key, token = key_rotate(
                practice=practice,
                scopes=form.cleaned_data["scopes"],
                expected_prefix=form.cleaned_data["key"],
                by=signed_in_user(request),
                via=VIA,
            )
        except KeyStateError as error:
            messages.error(request, str(error))
            return _back_to_key_page(membership)
        return _token_page(request, membership, key, token, "rotated")
    context = settings_context(request, membership) | {"form": form, "key": current}
    return render(request, "settings/key_rotate.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def key_revoke_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    _require_manager(membership)
    practice = membership.practice
    current = key_active_for(practice=practice)
    if current is None:
        messages.info(request, "This practice has no active key.")
        return _back_to_key_page(membership)
    form = RevokeForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            key_revoke(
                practice=practice,
                expected_prefix=form.cleaned_data["key"],
                by=signed_in_user(request),
                via=VIA,
            )
        except KeyStateError as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                f"Key {current.prefix}… revoked: requests using it are refused from now on.",
            )
        return _back_to_key_page(membership)
    context = settings_context(request, membership) | {"key": current}
    return render(request, "settings/key_revoke.html", context)


def _require_manager(membership: Membership) -> None:
    if not may_manage_key(membership):
        raise PermissionDenied("Only staff members of the practice manage its key.")


def _back_to_key_page(membership: Membership) -> HttpResponse:
    query = urlencode({PRACTICE_PARAM: membership.practice.slug})
    return redirect(f"{reverse('keys:key')}?{query}")


def _token_page(
    request: HttpRequest, membership: Membership, key: ApiKey, token: str, done: str
) -> HttpResponse:
    context = settings_context(request, membership) | {"key": key, "token": token, "done": done}
    response = render(request, "settings/key_token.html", context)
    add_never_cache_headers(response)
    patch_cache_control(response, no_store=True)
    return response
