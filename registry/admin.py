from django.contrib import admin

from keys.admin import KEY_ACTIONS, ApiKeyInline, KeyEventInline, KeyManagementMixin
from registry.models import Membership, Practice


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Practice)
class PracticeAdmin(KeyManagementMixin, admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline, ApiKeyInline, KeyEventInline]
    actions = KEY_ACTIONS


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "practice", "role", "created_at"]
    list_filter = ["role", "practice"]
    search_fields = ["user__username", "practice__slug"]
    autocomplete_fields = ["user", "practice"]
