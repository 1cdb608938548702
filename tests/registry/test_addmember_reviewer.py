"""addmember --role reviewer gives what reviewing needs: staff status to enter the admin."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.registry.conftest import signed_in
from tests.registry.factories import birth

pytestmark = pytest.mark.django_db


def test_a_reviewer_added_by_the_command_can_review_their_practices_records(capsys, st_mary):
    record = birth(st_mary, suspected_duplicate=True)
    call_command("addmember", "st-mary", "rita", "--role", "reviewer", "--create-user")
    rita = User.objects.get(username="rita")
    assert rita.is_staff and not rita.is_superuser
    assert not rita.user_permissions.exists()  # access comes from the membership alone
    assert "may now sign in to /admin/" in capsys.readouterr().out
    client = signed_in(rita)
    assert client.get("/admin/registry/record/").status_code == 200
    assert client.get(f"/admin/registry/record/{record.pk}/change/").status_code == 200


def test_a_staff_member_gets_no_staff_status(capsys, st_mary):
    call_command("addmember", "st-mary", "sam", "--create-user")
    assert not User.objects.get(username="sam").is_staff
    assert "/admin/" not in capsys.readouterr().out


def test_making_an_admin_user_a_reviewer_says_nothing_about_staff_status(capsys, st_mary):
    User.objects.create_user("kim", is_staff=True)
    call_command("addmember", "st-mary", "kim", "--role", "reviewer")
    assert "may now sign in" not in capsys.readouterr().out


def test_a_reviewer_made_staff_member_again_no_longer_sees_records(st_mary):
    birth(st_mary)
    call_command("addmember", "st-mary", "rita", "--role", "reviewer", "--create-user")
    call_command("addmember", "st-mary", "rita", "--role", "staff")
    client = signed_in(User.objects.get(username="rita"))
    assert client.get("/admin/registry/record/").status_code == 403
