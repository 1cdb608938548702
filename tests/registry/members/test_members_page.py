"""The Members page: staff manage, reviewers read, other practices are not there at all; and
the registry office's page that adds a practice with its first staff member."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from registry.models import Invitation, Membership, MembershipEvent, Practice
from registry.office import office_permission
from tests.registry.conftest import signed_in
from tests.registry.factories import PASSWORD, member

pytestmark = pytest.mark.django_db

URL = "/settings/members/?practice=st-mary"


def membership_of(user: User) -> Membership:
    return Membership.objects.get(user=user)


def test_staff_invite_a_reviewer_change_a_role_and_remove_a_member(st_mary, staff):
    colleague = member(st_mary, "cleo")
    client = signed_in(staff)
    invited = client.post(URL, {"action": "invite", "email": "rae@example.org", "role": "reviewer"})
    assert invited.status_code == 200
    assert Invitation.objects.get().role == "reviewer"

    changed = client.post(
        URL, {"action": "role", "member": membership_of(colleague).pk, "role": "reviewer"}
    )
    assert changed.status_code == 302
    assert membership_of(colleague).role == "reviewer"
    removed = client.post(URL, {"action": "remove", "member": membership_of(colleague).pk})
    assert removed.status_code == 302
    assert not Membership.objects.filter(user=colleague).exists()

    actions = list(MembershipEvent.objects.values_list("action", "subject", "by_username"))
    assert actions == [
        ("removed", "cleo", "sam"),
        ("role_changed", "cleo", "sam"),
        ("invited", "rae@example.org", "sam"),
    ]
    page = client.get(URL).content.decode()
    assert "Role changed (reviewer)" in page and "rae@example.org" in page


def test_pending_invitations_are_sent_again_or_cancelled(st_mary, staff):
    client = signed_in(staff)
    first = client.post(URL, {"action": "invite", "email": "rae@example.org", "role": "staff"})
    invitation = Invitation.objects.get()
    old_digest = invitation.token_digest
    client.post(URL, {"action": "resend", "invitation": invitation.pk})
    invitation.refresh_from_db()
    assert invitation.token_digest != old_digest  # the first link no longer works
    link = first.content.decode().split("http://testserver", 1)[1].split("<", 1)[0]
    assert client.get(link).status_code == 404
    client.post(URL, {"action": "cancel", "invitation": invitation.pk})
    invitation.refresh_from_db()
    assert invitation.cancelled_at is not None
    assert "No invitation is waiting" in client.get(URL).content.decode()


def test_the_last_staff_member_can_be_neither_removed_nor_demoted(st_mary, staff):
    client = signed_in(staff)
    own = membership_of(staff).pk
    demoted = client.post(URL, {"action": "role", "member": own, "role": "reviewer"}, follow=True)
    assert "The last staff member cannot be demoted" in demoted.content.decode()
    removed = client.post(URL, {"action": "remove", "member": own}, follow=True)
    assert "The last staff member cannot be removed" in removed.content.decode()
    assert membership_of(staff).role == "staff"
    assert "The only staff member: stays staff." in client.get(URL).content.decode()


def test_a_staff_member_may_leave_when_another_stays(st_mary, staff):
    member(st_mary, "cleo")
    client = signed_in(staff)
    left = client.post(URL, {"action": "remove", "member": membership_of(staff).pk})
    assert left["Location"] == "/settings/"
    assert not Membership.objects.filter(user=staff).exists()


def test_reviewers_see_the_list_read_only(st_mary, staff, reviewer):
    client = signed_in(reviewer)
    page = client.get(URL).content.decode()
    assert "sam" in page and "Send invitation" not in page and "Change role" not in page
    refused = client.post(URL, {"action": "remove", "member": membership_of(staff).pk})
    assert refused.status_code == 403
    invite = {"action": "invite", "email": "x@example.org", "role": "staff"}
    assert client.post(URL, invite).status_code == 403
    assert Membership.objects.filter(user=staff).exists() and not Invitation.objects.exists()


def test_no_access_across_practices(st_mary, riverside, staff, riverside_reviewer):
    rory = membership_of(riverside_reviewer)
    Invitation.objects.create(
        practice=riverside,
        email="r@example.org",
        role="staff",
        token_digest="0" * 64,
        expires_at=rory.created_at,
    )
    client = signed_in(staff)
    assert client.get("/settings/members/?practice=riverside").status_code == 404
    for posted in [
        {"action": "remove", "member": rory.pk},
        {"action": "role", "member": rory.pk, "role": "staff"},
        {"action": "cancel", "invitation": Invitation.objects.get().pk},
        {"action": "resend", "invitation": Invitation.objects.get().pk},
    ]:
        assert client.post(URL, posted).status_code == 404, posted
        assert client.post("/settings/members/?practice=riverside", posted).status_code == 404
    assert membership_of(riverside_reviewer).role == "reviewer"
    assert Invitation.objects.get().cancelled_at is None
    assert "rory" not in client.get(URL).content.decode()


@pytest.mark.parametrize(
    "posted",
    [
        {"action": "remove", "member": "abc"},
        {"action": "remove", "member": "9" * 30},
        {"action": "role", "member": "1", "role": "owner"},
        {"action": "launch"},
        {},
    ],
)
def test_bad_input_is_a_404_never_a_500(st_mary, staff, posted):
    assert signed_in(staff).post(URL, posted).status_code == 404


def test_a_bad_invitation_is_shown_on_the_form(st_mary, staff):
    member(st_mary, "cleo", email="cleo@example.org")
    client = signed_in(staff)
    cases = [("not-an-address", "valid email"), ("Cleo@example.org", "already a member")]
    for email, words in cases:
        page = client.post(URL, {"action": "invite", "email": email, "role": "staff"})
        assert page.status_code == 400
        assert words in page.content.decode()
    assert not Invitation.objects.exists()


@pytest.fixture
def office(db) -> User:
    user = User.objects.create_user("olga", email="olga@example.org", password=PASSWORD)
    user.user_permissions.add(office_permission())
    return user


def test_the_registry_office_adds_a_practice_and_invites_its_first_staff(office):
    client = signed_in(office)
    assert client.get("/settings/practices/new/").status_code == 200
    answer = client.post(
        "/settings/practices/new/",
        {
            "name": "Lakeside Hospital",
            "slug": "lakeside",
            "kind": "real",
            "email": "lu@example.org",
        },
    )
    assert answer.status_code == 200
    assert "/accounts/invitation/" in answer.content.decode()
    practice = Practice.objects.get(slug="lakeside")
    assert (practice.name, practice.sandbox) == ("Lakeside Hospital", False)
    invitation = Invitation.objects.get()
    assert invitation.practice == practice
    assert (invitation.role, invitation.invited_by) == ("staff", office)
    actions = set(MembershipEvent.objects.values_list("action", "by_username"))
    assert actions == {("practice_added", "olga"), ("invited", "olga")}
    # And it manages that practice's members as its staff would.
    members = client.get("/settings/members/?practice=lakeside").content.decode()
    assert "lu@example.org" in members and "Send invitation" in members


def test_a_sandbox_practice_and_a_taken_code(office, st_mary):
    client = signed_in(office)
    client.post(
        "/settings/practices/new/",
        {"name": "Try", "slug": "try-it", "kind": "sandbox", "email": "t@example.org"},
    )
    assert Practice.objects.get(slug="try-it").sandbox
    taken = client.post(
        "/settings/practices/new/",
        {"name": "Again", "slug": "st-mary", "kind": "real", "email": "a@example.org"},
    )
    assert taken.status_code == 400
    assert "A practice with this code already exists" in taken.content.decode()
    bad = client.post(
        "/settings/practices/new/",
        {"name": "Bad", "slug": "Bad Code", "kind": "other", "email": "nope"},
    )
    assert bad.status_code == 400
    assert Practice.objects.count() == 2


def test_only_the_registry_office_adds_practices(st_mary, staff):
    client = signed_in(staff)
    assert client.get("/settings/practices/new/").status_code == 403
    posted = {"name": "X", "slug": "x", "kind": "real", "email": "x@example.org"}
    assert client.post("/settings/practices/new/", posted).status_code == 403
    assert not Practice.objects.filter(slug="x").exists()
