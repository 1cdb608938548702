"""The admin filters a list only as its sidebar and search box offer (lib/admin_lookups.py).

Before, ``?fingerprint__startswith=a`` narrowed the record list by a value the admin never
shows, so a reviewer could read fingerprints one character at a time.
"""

from __future__ import annotations

import pytest
from django.contrib import admin

from keys.models import KeyEvent
from registry.navigation import review_queue_url
from tests.ingestion.conftest import mint
from tests.registry.conftest import signed_in
from tests.registry.factories import birth

pytestmark = pytest.mark.django_db

RECORDS = "/admin/registry/record/"


@pytest.fixture
def records(st_mary):
    return [
        birth(st_mary, external_record_id="C-1", fingerprint="a" * 64),
        birth(st_mary, external_record_id="C-2", fingerprint="b" * 64, suspected_duplicate=True),
    ]


def assert_refused(response) -> None:
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-testid="error-page"' in html and "Bad request" in html


@pytest.mark.parametrize(
    "query",
    [
        "fingerprint__startswith=a",
        "fingerprint=" + "a" * 64,
        "fingerprint__regex=^a",
        "match_keys__fingerprint__gt=0",
        "children__birth_weight_grams__gt=3000",
        "mother_age_years__lt=30",
        "birth_year=2024",
        "id__gt=0",
    ],
)
def test_a_reviewer_cannot_filter_records_on_what_the_list_does_not_offer(records, reviewer, query):
    assert_refused(signed_in(reviewer).get(f"{RECORDS}?{query}"))


def test_the_offered_filters_search_ordering_and_paging_still_work(records, reviewer):
    client = signed_in(reviewer)
    for query in [
        "suspected_duplicate__exact=1&voided__exact=0&practice=st-mary",
        "created_at__gte=2000-01-01T00:00:00%2B00:00&created_at__lt=2999-01-01T00:00:00%2B00:00",
        f"resembles={records[0].pk}",
        "q=C-2",
        "o=1",
        "p=1",
        "_facets=1",
    ]:
        assert client.get(f"{RECORDS}?{query}").status_code == 200, query
    assert client.get(review_queue_url()).status_code == 200


def test_every_admin_list_refuses_a_hidden_field_lookup(superuser, practice):
    """Every ModelAdmin on the site, Django's and django-axes' included."""
    mint(practice)
    client = signed_in(superuser)
    for model, _ in admin.site._registry.items():
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url
        pk = model._meta.pk.name
        assert_refused(client.get(f"{url}?{pk}__gt=0"))


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("/admin/keys/apikey/", "digest__startswith=a"),
        ("/admin/auth/user/", "password__startswith=pbkdf2"),
        ("/admin/keys/keyevent/", "key__digest__startswith=a"),
    ],
)
def test_secrets_cannot_be_read_a_character_at_a_time(superuser, practice, url, query):
    mint(practice)
    assert_refused(signed_in(superuser).get(f"{url}?{query}"))


def test_a_date_hierarchy_still_narrows_its_list(superuser, practice):
    mint(practice)
    year = KeyEvent.objects.get().at.year
    client = signed_in(superuser)
    response = client.get(f"/admin/keys/keyevent/?at__year={year}")
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 1
