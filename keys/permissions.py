"""Scope checks for the API: a view names the scope it needs in ``required_scope``."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from keys.models import ApiKey


class HasScope(BasePermission):
    """Allows a request whose API key carries ``view.required_scope``.

    Without a key, DRF turns the refusal into 401 (``NotAuthenticated``); with a key that
    lacks the scope, 403 naming the scope.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        scope = getattr(view, "required_scope", None)
        if not scope:
            raise ImproperlyConfigured(f"{type(view).__name__} must set required_scope")
        key = request.auth
        if not isinstance(key, ApiKey):
            return False
        if not key.has_scope(scope):
            raise PermissionDenied(f"This API key lacks the scope {scope} that this route needs.")
        return True
