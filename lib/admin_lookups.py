"""The admin filters a list only as its sidebar and its search box offer.

Django's admin accepts a lookup on any field of the model in the query string
(``?fingerprint__startswith=a``), shown or not: enough to read a hidden value one character
at a time. Here a list's query may hold only the parameters its list filters consume (and
the search, ordering and paging the admin reads itself). Anything left over is refused as
Django refuses a lookup across a relation it does not offer: ``DisallowedModelAdminLookup``,
a 400 page (config/errors.py). Every ModelAdmin on the site gets this rule
(:meth:`config.admin_site.RegistryAdminSite.register`), Django's own included.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.views.main import ChangeList
from django.http import HttpRequest


class ShownLookupsChangeList(ChangeList):
    def get_filters(self, request: HttpRequest) -> Any:
        specs, has_filters, remaining, duplicates, active = super().get_filters(request)
        # What no list filter consumed, and the query string asked for (the date hierarchy
        # adds its own range after the filters: that one is the admin's, not the visitor's).
        unoffered = [name for name in remaining if name in self.filter_params]
        if unoffered:
            raise DisallowedModelAdminLookup("Filtering by a field the list does not offer")
        return specs, has_filters, remaining, duplicates, active


_CHANGELISTS: dict[type[ChangeList], type[ChangeList]] = {}


def shown_lookups_changelist(changelist: type[ChangeList]) -> type[ChangeList]:
    if issubclass(changelist, ShownLookupsChangeList):
        return changelist
    if changelist not in _CHANGELISTS:
        mixed = type(changelist.__name__, (ShownLookupsChangeList, changelist), {})
        _CHANGELISTS[changelist] = mixed
    return _CHANGELISTS[changelist]


class ShownLookupsOnly(admin.ModelAdmin):
    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return shown_lookups_changelist(super().get_changelist(request, **kwargs))


def shown_lookups_only(admin_class: type[admin.ModelAdmin]) -> type[admin.ModelAdmin]:
    """``admin_class`` with :class:`ShownLookupsOnly` mixed in (once)."""
    if issubclass(admin_class, ShownLookupsOnly):
        return admin_class
    names = {"__module__": admin_class.__module__, "__qualname__": admin_class.__qualname__}
    return type(admin_class.__name__, (ShownLookupsOnly, admin_class), names)
