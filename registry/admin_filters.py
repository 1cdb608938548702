"""List filters shared by the admin's lists: practices by name, as people know them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from registry.models import Practice


class PracticeFilter(admin.SimpleListFilter):
    """By practice, offering each practice by its name (Django's own filter says the slug)."""

    title = "practice"
    parameter_name = "practice"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(p.slug, p.label) for p in Practice.objects.order_by("name", "slug")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(practice__slug=self.value())
        return queryset
