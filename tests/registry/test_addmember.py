import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from registry.models import Membership, Practice

pytestmark = pytest.mark.django_db


@pytest.fixture
def practice():
    return Practice.objects.create(slug="st-mary")


@pytest.fixture
def user():
    return User.objects.create_user("sam", password="correct horse battery staple")


def test_addmember_adds_a_staff_member_by_default(capsys, practice, user):
    call_command("addmember", "st-mary", "sam")
    membership = Membership.objects.get(practice=practice, user=user)
    assert membership.role == "staff"
    assert "Added sam in st-mary as staff" in capsys.readouterr().out


def test_addmember_sets_the_role(practice, user):
    call_command("addmember", "st-mary", "sam", "--role", "reviewer")
    assert Membership.objects.get().role == "reviewer"


def test_addmember_again_changes_the_role_and_adds_no_second_membership(capsys, practice, user):
    call_command("addmember", "st-mary", "sam")
    call_command("addmember", "st-mary", "sam", "--role", "reviewer")
    assert Membership.objects.get().role == "reviewer"
    assert "Updated sam" in capsys.readouterr().out


def test_addmember_refuses_an_unknown_role(practice, user):
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("addmember", "st-mary", "sam", "--role", "owner")
    assert not Membership.objects.exists()


def test_addmember_names_a_missing_practice(user):
    with pytest.raises(CommandError, match="No practice 'nowhere'"):
        call_command("addmember", "nowhere", "sam")


def test_addmember_names_a_missing_user_and_creates_it_on_request(capsys, practice):
    with pytest.raises(CommandError, match=r"No user 'nina'.*--create-user"):
        call_command("addmember", "st-mary", "nina")
    call_command("addmember", "st-mary", "nina", "--create-user")
    nina = User.objects.get(username="nina")
    assert not nina.has_usable_password()
    assert Membership.objects.get(user=nina).role == "staff"
    assert "changepassword nina" in capsys.readouterr().out
