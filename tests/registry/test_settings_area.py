"""current_membership: which practice a signed-in member is looking at."""

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.http import Http404

from registry.models import Membership, Practice
from registry.settings_area import SESSION_KEY, current_membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return User.objects.create_user("pat")


@pytest.fixture
def memberships(user):
    """Pat is staff at st-mary and a reviewer at riverside; nobody-s-practice exists too."""
    st_mary = Practice.objects.create(slug="st-mary")
    riverside = Practice.objects.create(slug="riverside")
    Practice.objects.create(slug="nobody-s-practice")
    return {
        "st-mary": Membership.objects.create(user=user, practice=st_mary, role="staff"),
        "riverside": Membership.objects.create(user=user, practice=riverside, role="reviewer"),
    }


def request_for(rf, user, query="", session=None):
    request = rf.get(f"/settings/key/{query}")
    request.user = user
    request.session = session if session is not None else SessionStore()
    return request


def test_the_first_membership_by_slug_is_the_default(rf, user, memberships):
    assert current_membership(request_for(rf, user)) == memberships["riverside"]


def test_the_practice_parameter_chooses_and_is_remembered(rf, user, memberships):
    session = SessionStore()
    chosen = current_membership(request_for(rf, user, "?practice=st-mary", session))
    assert chosen == memberships["st-mary"]
    assert session[SESSION_KEY] == "st-mary"
    assert current_membership(request_for(rf, user, "", session)) == memberships["st-mary"]


@pytest.mark.parametrize("slug", ["nobody-s-practice", "no-such-practice", ""])
def test_a_practice_the_user_is_not_a_member_of_is_404(rf, user, memberships, slug):
    session = SessionStore()
    with pytest.raises(Http404):
        current_membership(request_for(rf, user, f"?practice={slug}", session))
    assert SESSION_KEY not in session


def test_a_remembered_practice_the_user_left_falls_back_to_the_first(rf, user, memberships):
    session = SessionStore()
    current_membership(request_for(rf, user, "?practice=st-mary", session))
    memberships["st-mary"].delete()
    assert current_membership(request_for(rf, user, "", session)) == memberships["riverside"]


def test_a_user_without_memberships_is_404(rf, user):
    with pytest.raises(Http404):
        current_membership(request_for(rf, user))


def test_an_anonymous_user_is_404(rf, memberships):
    with pytest.raises(Http404):
        current_membership(request_for(rf, AnonymousUser()))
