"""API keys in the Django admin.

Keys and their audit trail are read-only here. Changes go through admin actions (on
practices, and rotate/revoke on keys) that show a confirmation page first; a new token is
shown once, in a message on the page that minted it, sent with ``Cache-Control: no-store``
and never put in the session or the messages store. The actions need the
``keys.change_apikey`` permission (superusers have it).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers, patch_cache_control

from keys.forms import MintForm
from keys.models import ApiKey, KeyEvent
from keys.services import KeyStateError, key_mint, key_revoke, key_rotate
from registry.admin import MembershipInline, PracticeAdmin
from registry.admin_filters import PracticeFilter
from registry.models import Practice

CONFIRMED = "confirmed"
VIA = KeyEvent.Via.ADMIN


class KeyManagementMixin:
    """The permission behind the key actions, for any ModelAdmin that offers them."""

    def has_manage_key_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("keys.change_apikey")


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ApiKeyInline(ReadOnlyInline):
    model = ApiKey
    fields = readonly_fields = (
        "prefix",
        "scope_list",
        "created_at",
        "created_by",
        "last_used_at",
        "revoked_at",
    )
    show_change_link = True
    verbose_name_plural = "API keys (the token itself is never stored)"

    @admin.display(description="scopes")
    def scope_list(self, key: ApiKey) -> str:
        return ", ".join(key.scopes)


class KeyEventInline(ReadOnlyInline):
    model = KeyEvent
    fields = readonly_fields = (
        "at",
        "action",
        "key_prefix",
        "previous_prefix",
        "by_username",
        "via",
    )
    verbose_name_plural = "Key history"


# --- Actions ---------------------------------------------------------------------------------


def _practices(queryset: QuerySet[Any]) -> list[Practice]:
    """The practices an action applies to: the selected practices, or the selected keys' ones."""
    if queryset.model is Practice:
        return list(queryset.order_by("slug"))
    active = queryset.filter(revoked_at__isnull=True)
    return list(Practice.objects.filter(api_keys__in=active).distinct().order_by("slug"))


def _active_prefixes(practices: list[Practice]) -> dict[int, str]:
    keys = ApiKey.objects.filter(practice__in=practices, revoked_at__isnull=True)
    return {key.practice_id: key.prefix for key in keys}


def _user(request: HttpRequest) -> User:
    if not isinstance(request.user, User):
        raise PermissionDenied
    return request.user


def _confirm(
    modeladmin: admin.ModelAdmin[Any],
    request: HttpRequest,
    *,
    action: str,
    title: str,
    practices: list[Practice],
    form: MintForm | None = None,
) -> TemplateResponse:
    opts = modeladmin.model._meta
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "opts": opts,
        "action": action,
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
        "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
        "rows": [
            (practice, _active_prefixes(practices).get(practice.pk)) for practice in practices
        ],
        "form": form,
        "confirmed": CONFIRMED,
    }
    return TemplateResponse(request, "admin/keys/confirm_action.html", context)


def _tokens_page(
    modeladmin: admin.ModelAdmin[Any],
    request: HttpRequest,
    minted: list[tuple[ApiKey, str]],
    done: str,
) -> HttpResponse | None:
    if not minted:
        return None  # back to the list, where the messages say why
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": f"API key {done}" if len(minted) == 1 else f"API keys {done}",
        "opts": modeladmin.model._meta,
        "minted": minted,
        "done": done,
    }
    response = TemplateResponse(request, "admin/keys/tokens.html", context)
    add_never_cache_headers(response)
    patch_cache_control(response, no_store=True)
    return response


@admin.action(description="Mint an API key for the selected practices", permissions=["manage_key"])
def mint_key(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> HttpResponse | None:
    practices = _practices(queryset)
    form = MintForm(request.POST if CONFIRMED in request.POST else None)
    if not form.is_valid():
        return _confirm(
            modeladmin,
            request,
            action="mint_key",
            title="Mint API keys",
            practices=practices,
            form=form,
        )
    minted = []
    for practice in practices:
        try:
            minted.append(
                key_mint(
                    practice=practice,
                    scopes=form.cleaned_data["scopes"],
                    by=_user(request),
                    via=VIA,
                )
            )
        except KeyStateError as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
    return _tokens_page(modeladmin, request, minted, "minted")


@admin.action(description="Rotate the API key (revoke and mint anew)", permissions=["manage_key"])
def rotate_key(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> HttpResponse | None:
    practices = _practices(queryset)
    if CONFIRMED not in request.POST:
        return _confirm(
            modeladmin, request, action="rotate_key", title="Rotate API keys", practices=practices
        )
    minted = []
    for practice in practices:
        expected = request.POST.get(f"expected-{practice.pk}") or None
        try:
            minted.append(
                key_rotate(practice=practice, expected_prefix=expected, by=_user(request), via=VIA)
            )
        except KeyStateError as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
    return _tokens_page(modeladmin, request, minted, "rotated")


@admin.action(description="Revoke the API key", permissions=["manage_key"])
def revoke_key(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> HttpResponse | None:
    practices = _practices(queryset)
    if CONFIRMED not in request.POST:
        return _confirm(
            modeladmin, request, action="revoke_key", title="Revoke API keys", practices=practices
        )
    for practice in practices:
        expected = request.POST.get(f"expected-{practice.pk}") or None
        try:
            key = key_revoke(
                practice=practice, expected_prefix=expected, by=_user(request), via=VIA
            )
        except KeyStateError as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
            continue
        if key is None:
            modeladmin.message_user(
                request, f"{practice.slug} has no active key.", messages.WARNING
            )
        else:
            modeladmin.message_user(
                request, f"Revoked {key.prefix}… of {practice.slug}; it is refused from now on."
            )
    return None


KEY_ACTIONS = [mint_key, rotate_key, revoke_key]


class PracticeKeysAdmin(KeyManagementMixin, PracticeAdmin):
    """The registry's practice admin with each practice's key, its history and the key actions.

    Registered in place of registry's own: Django imports registry/admin.py first (it is
    imported above in any case), so this replaces it whatever the order of INSTALLED_APPS.
    """

    inlines = [MembershipInline, ApiKeyInline, KeyEventInline]
    actions = KEY_ACTIONS


admin.site.unregister(Practice)
admin.site.register(Practice, PracticeKeysAdmin)


# --- Keys and their history --------------------------------------------------------------------


class ActiveFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("active", "Active"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(KeyManagementMixin, admin.ModelAdmin):
    list_display = [
        "prefix",
        "practice_label",
        "scope_list",
        "state",
        "created_at",
        "created_by",
        "last_used_at",
        "revoked_at",
        "revoked_by",
    ]
    list_filter = [ActiveFilter, PracticeFilter]
    list_select_related = ["practice", "created_by", "revoked_by"]
    search_fields = ["prefix", "practice__slug", "practice__name"]
    fields = readonly_fields = (
        "practice",
        "prefix",
        "scopes",
        "created_at",
        "created_by",
        "last_used_at",
        "revoked_at",
        "revoked_by",
    )
    actions = [rotate_key, revoke_key]

    @admin.display(description="scopes")
    def scope_list(self, key: ApiKey) -> str:
        return ", ".join(key.scopes)

    @admin.display(description="practice", ordering="practice__name")
    def practice_label(self, key: ApiKey) -> str:
        return key.practice.label

    @admin.display(description="state")
    def state(self, key: ApiKey) -> str:
        """In words: a tick or a cross would say good or bad, which a revoked key is not."""
        return "Active" if key.is_active else "Revoked"

    # Keys are minted by the actions on practices, never typed in or edited.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(KeyEvent)
class KeyEventAdmin(admin.ModelAdmin):
    list_display = [
        "at",
        "practice_label",
        "action",
        "key_prefix",
        "previous_prefix",
        "by_username",
        "via",
    ]
    list_filter = ["action", "via", PracticeFilter]
    list_select_related = ["practice"]
    search_fields = ["key_prefix", "previous_prefix", "practice__slug", "by_username"]
    date_hierarchy = "at"

    @admin.display(description="practice", ordering="practice__name")
    def practice_label(self, event: KeyEvent) -> str:
        return event.practice.label

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
