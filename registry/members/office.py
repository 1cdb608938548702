"""The registry office: people of the registry who see and manage every practice.

The role is one permission, ``registry.view_registry`` (on :class:`registry.models.Practice`),
granted in the admin (a user's permissions) or by ``manage.py grantregistryoffice EMAIL``.
Superusers hold every permission, so they count as registry office too.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Permission

OFFICE_PERMISSION = "registry.view_registry"


def is_registry_office(user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    has_perm = getattr(user, "has_perm", None)  # PermissionsMixin's; every account here has it
    return bool(has_perm and has_perm(OFFICE_PERMISSION))


def office_permission() -> Permission:
    app_label, codename = OFFICE_PERMISSION.split(".")
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)
