"""The signed-in settings area: which practice a member is looking at, and its layout.

A user may belong to several practices. The practice in view is chosen with
``?practice=<slug>`` (remembered in the session) and otherwise defaults to the first
membership by slug. A practice the user is not a member of is a 404, so nothing about it,
not even its existence, shows. Pages under ``/settings/`` use :func:`member_view` and
:func:`settings_context`; add a page to the nav by appending to :data:`NAV`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from registry.models import Membership

PRACTICE_PARAM = "practice"
SESSION_KEY = "settings_practice"


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str


# The settings nav, in order. The statistics page adds itself here.
NAV: list[NavItem] = [NavItem("API key", "keys:key")]

P = ParamSpec("P")
MemberView = Callable[Concatenate[HttpRequest, Membership, P], HttpResponse]


def signed_in_user(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User):
        raise Http404  # only reachable without login_required in front
    return user


def memberships_of(user: User) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user=user).select_related("practice").order_by("practice__slug")
    )


def current_membership(request: HttpRequest) -> Membership:
    """The signed-in user's membership of the practice in view; 404 for a non-member."""
    memberships = list(memberships_of(signed_in_user(request)))
    by_slug = {membership.practice.slug: membership for membership in memberships}
    requested = request.GET.get(PRACTICE_PARAM)
    if requested is not None:
        if requested not in by_slug:
            raise Http404("No such practice.")
        request.session[SESSION_KEY] = requested
        return by_slug[requested]
    remembered = request.session.get(SESSION_KEY)
    if remembered in by_slug:
        return by_slug[remembered]
    if not memberships:
        raise Http404("No practice.")
    return memberships[0]


def member_view(view: MemberView[P]) -> Callable[Concatenate[HttpRequest, P], HttpResponse]:
    """For a settings page: sign-in required, and the view receives the current membership.

    A signed-in user with no membership at all gets a page saying so (403), not a bare 404.
    """

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        if not memberships_of(signed_in_user(request)).exists():
            return render(request, "settings/no_practice.html", status=403)
        return view(request, current_membership(request), *args, **kwargs)

    return wrapper


def settings_context(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    """What ``settings/base.html`` needs: the practice in view, the switcher, the nav.

    ``settings_nav`` is ``(item, url, current)`` per nav item; a page below an item's URL
    (such as ``/settings/key/rotate/``) counts as that item's.
    """
    return {
        "membership": membership,
        "practice": membership.practice,
        "memberships": memberships_of(signed_in_user(request)),
        "settings_nav": [
            (item, url, request.path.startswith(url))
            for item in NAV
            for url in [reverse(item.url_name)]
        ],
    }
