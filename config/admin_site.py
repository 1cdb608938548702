"""The admin site: the registry's review admin, with a way back to the settings area.

It is Django's admin with the registry's names, a sign-in page in the site's words, a
header that links to the settings area and
the password page, and on its home page the review queue with its size ("Review queue (n)").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from lib.admin_lookups import shown_lookups_only
from registry.navigation import may_use_review_admin, may_use_settings, review_queue_url
from registry.selectors import review_queue_size


class RegistryAdminSite(admin.AdminSite):
    site_header = "Birth registry: review admin"
    site_title = "Birth registry review admin"
    index_title = "Review and administration"
    site_url = "/settings/"
    # No sidebar of models: a reviewer has one list, reached from the header, the home page
    # and the breadcrumbs, and the sidebar would take a third of a laptop's width from it.
    enable_nav_sidebar = False

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        """Every list filters only as it offers to (lib/admin_lookups.py)."""
        admin_class = shown_lookups_only(admin_class or admin.ModelAdmin)
        super().register(model_or_iterable, admin_class, **options)

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        return super().each_context(request) | {
            "can_use_settings": may_use_settings(request.user),
        }

    def login(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The site's words ("Sign in") and, where mail is configured, the reset by mail."""
        context = {"title": "Sign in", "password_reset_offered": settings.REGISTRY_PASSWORD_RESET}
        return super().login(request, context | (extra_context or {}))

    def index(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        if may_use_review_admin(request.user):
            extra_context = (extra_context or {}) | {
                "review_queue_url": review_queue_url(),
                "review_queue_size": review_queue_size(user=request.user),
            }
        return super().index(request, extra_context)
