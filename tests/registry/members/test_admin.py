"""Membership changes made in the admin are recorded as on the web; the record and the
invitations are listed there, read-only, and never show a link's digest."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from registry.models import Invitation, Membership, MembershipEvent
from tests.registry.conftest import signed_in

pytestmark = pytest.mark.django_db


def test_adding_changing_and_removing_a_member_in_the_admin_is_recorded(st_mary, superuser):
    nina = User.objects.create_user("nina")
    client = signed_in(superuser)
    added = client.post(
        "/admin/registry/membership/add/",
        {"user": nina.pk, "practice": st_mary.pk, "role": "staff"},
    )
    assert added.status_code == 302
    membership = Membership.objects.get(user=nina)
    client.post(
        f"/admin/registry/membership/{membership.pk}/change/",
        {"user": nina.pk, "practice": st_mary.pk, "role": "reviewer"},
    )
    client.post(f"/admin/registry/membership/{membership.pk}/delete/", {"post": "yes"})
    assert not Membership.objects.exists()
    events = MembershipEvent.objects.values_list("action", "subject", "role", "by_username")
    assert list(events) == [
        ("removed", "nina", "", "root"),
        ("role_changed", "nina", "reviewer", "root"),
        ("added", "nina", "staff", "root"),
    ]


def test_the_record_and_the_invitations_are_read_only_in_the_admin(st_mary, superuser):
    Invitation.objects.create(
        practice=st_mary,
        email="rae@example.org",
        role="staff",
        token_digest="d" * 64,
        expires_at=st_mary.created_at,
    )
    client = signed_in(superuser)
    listed = client.get("/admin/registry/invitation/").content.decode()
    assert "rae@example.org" in listed and "d" * 64 not in listed
    invitation = Invitation.objects.get()
    shown = client.get(f"/admin/registry/invitation/{invitation.pk}/change/").content.decode()
    assert "d" * 64 not in shown
    assert client.get("/admin/registry/membershipevent/").status_code == 200
    assert client.get("/admin/registry/membershipevent/add/").status_code == 403


def test_a_member_added_and_removed_on_the_practice_page_is_recorded(st_mary, superuser):
    nina = User.objects.create_user("nina")
    client = signed_in(superuser)
    url = f"/admin/registry/practice/{st_mary.pk}/change/"

    def practice_form(memberships: dict[str, str], total: int, initial: int) -> dict[str, str]:
        empty = {"TOTAL_FORMS": "0", "INITIAL_FORMS": "0"}
        prefixes = ("api_keys", "key_events")
        keys = {f"{prefix}-{k}": v for prefix in prefixes for k, v in empty.items()}
        return {
            "slug": "st-mary",
            "name": "St Mary's",
            **keys,
            "memberships-TOTAL_FORMS": str(total),
            "memberships-INITIAL_FORMS": str(initial),
            **memberships,
        }

    added = practice_form({"memberships-0-user": str(nina.pk), "memberships-0-role": "staff"}, 1, 0)
    assert client.post(url, added).status_code == 302
    membership = Membership.objects.get(user=nina)
    removed = practice_form(
        {
            "memberships-0-id": str(membership.pk),
            "memberships-0-practice": str(st_mary.pk),
            "memberships-0-user": str(nina.pk),
            "memberships-0-role": "staff",
            "memberships-0-DELETE": "on",
        },
        1,
        1,
    )
    assert client.post(url, removed).status_code == 302
    assert not Membership.objects.exists()
    events = MembershipEvent.objects.values_list("action", "subject", "by_username")
    assert list(events) == [("removed", "nina", "root"), ("added", "nina", "root")]
