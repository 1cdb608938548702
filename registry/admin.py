from django.contrib import admin

from registry.models import Membership, Practice


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Practice)
class PracticeAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "practice", "role", "created_at"]
    list_filter = ["role", "practice"]
    search_fields = ["user__username", "practice__slug"]
    autocomplete_fields = ["user", "practice"]
