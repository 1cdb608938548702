"""Where a person can go from any page: the site header's links, shared by every web page.

The settings area (practice staff and reviewers), the review admin (reviewers and superusers)
and the API docs (integrators) link to each other through :func:`site_links`, which the
``site_navigation`` context processor hands to ``base.html`` and the admin's header. A link
is offered only to those it would let in, so nobody is sent to a 403.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.http import urlencode

from registry.models import Membership, Practice
from registry.office import is_registry_office
from registry.selectors import practices_reviewed_by

QUEUE_FILTER = {"suspected_duplicate__exact": "1", "voided__exact": "0"}


@dataclass(frozen=True)
class Link:
    label: str
    url: str
    current: bool = False


_KNOWN_MEMBER = "_registry_member"


def may_use_settings(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Members of a practice, and the registry office (who choose among all practices)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if is_registry_office(user):
        return True
    # Kept on the user object: the page's view and its header both ask, once each.
    known = getattr(user, _KNOWN_MEMBER, None)
    if known is None:
        known = Membership.objects.filter(user_id=user.pk).exists()
        setattr(user, _KNOWN_MEMBER, known)
    return bool(known)


def may_use_review_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff status lets a user into the admin; reviewing some practice gives it a purpose."""
    if not user.is_authenticated or not getattr(user, "is_staff", False):
        return False
    return practices_reviewed_by(user=user).exists()


def review_queue_url(practice: Practice | None = None) -> str:
    """The admin's record list filtered to the review queue (one practice's, if given)."""
    query = QUEUE_FILTER | ({"practice": practice.slug} if practice else {})
    return f"{reverse('admin:registry_record_changelist')}?{urlencode(query)}"


def is_review_queue(params: Any) -> bool:
    """Whether a record list's query is the review queue (``params`` as ``request.GET``)."""
    return all(params.get(name) == value for name, value in QUEUE_FILTER.items())


def site_links(request: HttpRequest) -> list[Link]:
    """The header's links for this visitor, the one leading to the current page marked.

    An error raised before the authentication middleware ran leaves no user: a visitor.
    """
    user = getattr(request, "user", None) or AnonymousUser()
    links: list[tuple[str, str]] = []
    if may_use_settings(user):
        links.append(("Settings", reverse("settings")))
    if is_registry_office(user):
        links.append(("Registry console", reverse("office:console")))
    if may_use_review_admin(user):
        links.append(("Review admin", reverse("admin:index")))
    links.append(("API docs", reverse("docs")))
    if not user.is_authenticated:
        links.append(("Sign in", reverse("login")))
    return [Link(label, url, request.path.startswith(url)) for label, url in links]


def site_navigation(request: HttpRequest) -> dict[str, Any]:
    """Context processor: ``site_nav``, worked out only on a page that shows it."""
    return {"site_nav": SimpleLazyObject(lambda: site_links(request))}
