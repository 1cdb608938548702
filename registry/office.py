"""The registry office: people of the registry who see and manage every practice.

The role is one permission, ``registry.view_registry`` (on :class:`registry.models.Practice`),
granted in the admin (a user's permissions, or a group's) or by ``manage.py
grantregistryoffice EMAIL``. Superusers hold every permission, so they count as registry
office too.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Permission
from django.db.models import Q, QuerySet

OFFICE_PERMISSION = "registry.view_registry"
# The answer, kept on the user object: a settings page asks several times per request.
_KNOWN = "_registry_office"


def is_registry_office(user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    known = getattr(user, _KNOWN, None)
    if known is None:
        known = _holds_office_permission(user.pk)
        setattr(user, _KNOWN, known)
    return bool(known)


def _holds_office_permission(user_id: object) -> bool:
    """One query, where Django's ``has_perm`` takes two (the user's and the groups')."""
    held = _office_permissions().filter(Q(user__pk=user_id) | Q(group__user__pk=user_id))
    return held.exists()


def office_permission() -> Permission:
    return _office_permissions().get()


def _office_permissions() -> QuerySet[Permission]:
    app_label, codename = OFFICE_PERMISSION.split(".")
    return Permission.objects.filter(content_type__app_label=app_label, codename=codename)
