"""The signed-in settings area: which practice a person is looking at, and its layout.

A user may belong to several practices. The practice in view is chosen with
``?practice=<slug>`` (remembered in the session) and otherwise defaults to the first
membership by slug. A practice the user is not a member of is a 404, so nothing about it,
not even its existence, shows. The registry office (superusers included,
:mod:`registry.office`) may look at any practice, as its staff would: one who is a
member of none chooses on the practice chooser (:data:`CHOOSER`) first.

Pages under ``/settings/`` use :func:`member_view` and :func:`settings_context`; add a page to
the nav by appending to :data:`NAV`.
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
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from registry.models import Membership, Practice
from registry.navigation import may_use_review_admin, may_use_settings
from registry.office import is_registry_office

PRACTICE_PARAM = "practice"
SESSION_KEY = "settings_practice"
CHOOSER = "registry:practices"


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str


# The settings nav, in order.
NAV: list[NavItem] = [
    NavItem("API key", "keys:key"),
    NavItem("Statistics", "registry:statistics"),
    NavItem("Members", "registry:members"),
    NavItem("Password", "password_change"),
]
# After the key, for a sandbox practice only: deleting its data (ingestion.sandbox).
SANDBOX_NAV = NavItem("Sandbox data", "sandbox:reset")

P = ParamSpec("P")
MemberView = Callable[Concatenate[HttpRequest, Membership, P], HttpResponse]


class PracticeNotChosen(Exception):
    """Someone of the registry office who is a member of no practice has not chosen one yet."""


def signed_in_user(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User):
        raise Http404  # only reachable without login_required in front
    return user


def memberships_of(user: User) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user=user).select_related("practice").order_by("practice__slug")
    )


def practice_choices(user: User) -> QuerySet[Practice]:
    """The practices ``user`` may look at: every one for the registry office."""
    if is_registry_office(user):
        return Practice.objects.order_by("slug")
    return Practice.objects.filter(memberships__user=user).order_by("slug")


def current_membership(request: HttpRequest) -> Membership:
    """The signed-in user's membership of the practice in view; 404 for a non-member.

    For the registry office looking at a practice they are no member of, an unsaved
    membership with the staff role stands in. Raises :class:`PracticeNotChosen` for someone
    of the registry office with no membership and no choice yet.
    """
    user = signed_in_user(request)
    memberships = list(memberships_of(user))
    by_slug = {membership.practice.slug: membership for membership in memberships}
    requested = request.GET.get(PRACTICE_PARAM)
    if requested is not None:
        chosen = by_slug.get(requested) or _superuser_membership(user, requested)
        if chosen is None:
            raise Http404("No such practice.")
        request.session[SESSION_KEY] = requested
        return chosen
    remembered = request.session.get(SESSION_KEY)
    if isinstance(remembered, str):
        chosen = by_slug.get(remembered) or _superuser_membership(user, remembered)
        if chosen is not None:
            return chosen
    if memberships:
        return memberships[0]
    if is_registry_office(user):
        raise PracticeNotChosen
    raise Http404("No practice.")


def _superuser_membership(user: User, slug: str) -> Membership | None:
    if not is_registry_office(user):
        return None
    practice = Practice.objects.filter(slug=slug).first()
    if practice is None:
        return None
    return Membership(user=user, practice=practice, role=Membership.Role.STAFF)


def member_view(view: MemberView[P]) -> Callable[Concatenate[HttpRequest, P], HttpResponse]:
    """For a settings page: sign-in required, and the view receives the current membership.

    A signed-in user with no membership at all gets a page saying so (403), not a bare 404;
    a superuser who has not chosen a practice is sent to the chooser, and comes back.
    """

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        if not may_use_settings(signed_in_user(request)):
            return render(request, "settings/no_practice.html", status=403)
        try:
            membership = current_membership(request)
        except PracticeNotChosen:
            return redirect(f"{reverse(CHOOSER)}?{urlencode({'next': request.path})}")
        return view(request, membership, *args, **kwargs)

    return wrapper


def settings_context(request: HttpRequest, membership: Membership | None) -> dict[str, Any]:
    """What ``settings/base.html`` needs: the practice in view, the switcher, the nav.

    ``settings_nav`` is ``(item, url, current)`` per nav item; a page below an item's URL
    (such as ``/settings/key/rotate/``) counts as that item's. ``membership`` is None on
    the pages that need no practice (the password, the chooser).
    """
    user = signed_in_user(request)
    nav = NAV
    if membership is not None and membership.practice.sandbox:
        nav = [NAV[0], SANDBOX_NAV, *NAV[1:]]
    context: dict[str, Any] = {
        "settings_nav": [
            (item, url, request.path.startswith(url))
            for item in nav
            for url in [reverse(item.url_name)]
        ],
        "can_review": may_use_review_admin(user),
        "choose_among_all": is_registry_office(user),
    }
    if membership is None:
        return context
    return context | {
        "membership": membership,
        "practice": membership.practice,
        "role_label": membership.get_role_display() if membership.pk else _office_label(user),
        "memberships": [] if is_registry_office(user) else memberships_of(user),
    }


def _office_label(user: User) -> str:
    return "Superuser" if user.is_superuser else "Registry office"


def optional_settings_context(request: HttpRequest) -> dict[str, Any]:
    """:func:`settings_context` for a page that works with or without a practice in view."""
    user = signed_in_user(request)
    if not may_use_settings(user):
        return settings_context(request, None)
    try:
        return settings_context(request, current_membership(request))
    except (Http404, PracticeNotChosen):
        return settings_context(request, None)
