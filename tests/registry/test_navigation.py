"""Links both ways between the settings area and the review admin, and the review queue."""

from __future__ import annotations

import pytest

from registry.models import Membership
from registry.selectors import review_queue_size
from tests.registry.conftest import signed_in
from tests.registry.factories import birth, member

pytestmark = pytest.mark.django_db

QUEUE = "/admin/registry/record/?suspected_duplicate__exact=1&voided__exact=0"


@pytest.fixture
def queue(st_mary, riverside):
    """Three of St Mary's records await review; Riverside's one is not St Mary's business."""
    for _ in range(3):
        birth(st_mary, suspected_duplicate=True)
    birth(st_mary, suspected_duplicate=True, voided=True)
    birth(st_mary)
    birth(riverside, suspected_duplicate=True)


def test_the_settings_area_links_a_reviewer_to_the_review_admin(reviewer):
    html = signed_in(reviewer).get("/settings/key/").content.decode()
    assert 'href="/admin/">Review admin' in html


def test_the_settings_area_offers_no_review_admin_to_staff(staff):
    html = signed_in(staff).get("/settings/key/").content.decode()
    assert 'href="/admin/"' not in html
    assert 'href="/settings/password/">Password' in html


def test_the_admin_links_back_to_the_settings_area(reviewer):
    html = signed_in(reviewer).get("/admin/").content.decode()
    assert 'href="/settings/">Settings</a>' in html
    assert 'href="/settings/statistics/">Statistics</a>' in html
    assert 'href="/settings/password/">Change password</a>' in html
    assert "View site" not in html


def test_the_admin_home_shows_the_review_queue_with_its_size(queue, reviewer):
    html = signed_in(reviewer).get("/admin/").content.decode()
    assert f'href="{QUEUE.replace("&", "&amp;")}">Review queue (3)</a>' in html


def test_the_queue_page_says_what_it_is(queue, reviewer):
    response = signed_in(reviewer).get(QUEUE)
    html = response.content.decode()
    assert "<h1>Review queue: suspected duplicates awaiting a decision</h1>" in html
    assert "Select record to view" not in html
    assert 'aria-current="page">Review queue (3)</a>' in html
    assert len(response.context["cl"].result_list) == 3


def test_an_empty_queue_says_so_and_what_happens_next(st_mary, reviewer):
    html = signed_in(reviewer).get(QUEUE).content.decode()
    assert "Nothing awaits review." in html
    assert "0 records" not in html


def test_the_queue_size_is_counted_up_to_a_cap(queue, st_mary, reviewer, superuser):
    assert str(review_queue_size(user=reviewer)) == "3"
    capped = review_queue_size(user=reviewer, cap=2)
    assert (capped.count, capped.capped, str(capped)) == (2, True, "2+")
    assert str(review_queue_size(user=superuser)) == "4"
    assert str(review_queue_size(user=superuser, practice=st_mary)) == "3"


def test_the_statistics_card_links_a_reviewer_to_the_practices_queue(queue, st_mary, reviewer):
    html = signed_in(reviewer).get("/settings/statistics/").content.decode()
    assert f'href="{QUEUE.replace("&", "&amp;")}&amp;practice=st-mary"' in html
    assert "open the review queue" in html


def test_the_statistics_card_does_not_link_staff_to_a_queue_they_cannot_open(queue, staff):
    html = signed_in(staff).get("/settings/statistics/").content.decode()
    assert "open the review queue" not in html


def test_a_reviewer_who_is_staff_elsewhere_gets_no_link_for_that_practice(queue, riverside):
    rita = member(riverside, "rita", Membership.Role.REVIEWER, is_staff=True)
    html = signed_in(rita).get("/settings/statistics/?practice=riverside").content.decode()
    assert "open the review queue" in html
    Membership.objects.filter(user=rita).update(role=Membership.Role.STAFF)
    html = signed_in(rita).get("/settings/statistics/?practice=riverside").content.decode()
    assert "open the review queue" not in html


def test_the_header_leads_the_registry_office_to_its_console(staff, superuser):
    """The registry office finds its console from any page's header; a practice's staff
    are not offered it."""
    assert 'href="/registry/">Registry console' in signed_in(superuser).get("/").content.decode()
    assert 'href="/registry/"' not in signed_in(staff).get("/").content.decode()
