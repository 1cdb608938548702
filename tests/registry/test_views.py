"""/settings/statistics/ and its JSON and CSV: who sees what, the year range, the figures."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.test import Client

from registry.models import Membership, Provider
from tests.registry.conftest import signed_in
from tests.registry.factories import birth, member

pytestmark = pytest.mark.django_db

PAGE, JSON, CSV = "/settings/statistics/", "/settings/statistics.json", "/settings/statistics.csv"


@pytest.fixture
def figures(st_mary, riverside):
    """St Mary's: three births (one voided); Riverside: one, which St Mary's never sees."""
    birth(st_mary, attended_by=(Provider.Role.MIDWIFE,), child__birth_weight_grams=2200)
    birth(st_mary, attended_by=(Provider.Role.OTHER,), birth_year=2022, suspected_duplicate=True)
    birth(st_mary, voided=True)
    birth(riverside, children=3)


# -- Who may see them ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [PAGE, CSV])
def test_a_visitor_is_sent_to_sign_in(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/accounts/login/?next={path}")


def test_the_json_tells_a_visitor_to_sign_in_in_json(client):
    response = client.get(JSON)
    assert response.status_code == 401
    assert response.json() == {"error": "Sign in to see statistics."}


@pytest.mark.parametrize("path", [PAGE, JSON, CSV])
def test_a_signed_in_user_of_no_practice_is_refused(path, figures):
    response = signed_in(User.objects.create_user("nobody")).get(path)
    assert response.status_code == 403
    assert b"St Mary" not in response.content


@pytest.mark.parametrize("path", [PAGE, JSON, CSV])
def test_a_member_of_another_practice_cannot_see_this_one(path, figures, riverside):
    outsider = member(riverside, "rory")
    response = signed_in(outsider).get(f"{path}?practice=st-mary")
    assert response.status_code == 404
    assert b"St Mary" not in response.content


def test_a_member_of_another_practice_sees_their_own_figures(figures, riverside):
    outsider = member(riverside, "rory")
    data = signed_in(outsider).get(JSON).json()
    assert (data["practice"], data["births"], data["live_births"]) == ("riverside", 1, 3)


@pytest.mark.parametrize("role", [Membership.Role.STAFF, Membership.Role.REVIEWER])
def test_every_member_sees_their_practices_figures(figures, st_mary, role):
    response = signed_in(member(st_mary, "mo", role)).get(JSON)
    assert response.status_code == 200
    assert response.json()["births"] == 2


def test_a_member_of_two_practices_chooses_which_one(figures, st_mary, riverside, staff):
    Membership.objects.create(user=staff, practice=riverside)
    client = signed_in(staff)
    assert client.get(f"{JSON}?practice=riverside").json()["practice"] == "riverside"
    assert client.get(f"{JSON}?practice=st-mary").json()["practice"] == "st-mary"


# -- JSON ---------------------------------------------------------------------------------------


def test_the_json_has_every_figure_with_its_counts(figures, staff):
    data = signed_in(staff).get(JSON).json()
    assert data["births"] == 2
    assert data["live_births"] == 2
    assert data["fetal_deaths"] == 0
    assert data["suspected_duplicates"] == 1
    assert data["low_birth_weight_rate"] == 0.5
    assert data["low_birth_weight"] == {"numerator": 1, "denominator": 2}
    for rate in ("preterm_rate", "apgar5_below_7_rate", "consent_granted_rate"):
        assert rate in data
    assert list(data["by_attendant_role"]) == ["midwife", "doula", "nurse", "assistant"]
    assert data["by_attendant_role"]["midwife"]["births"] == 1
    assert data["by_attendant_role"]["midwife"]["low_birth_weight_rate"] == 1.0
    assert data["definitions"]["low_birth_weight_rate"]["denominator"] == (
        "live-born children with a known birth weight"
    )


def test_the_json_filters_a_year_range(figures, staff):
    data = signed_in(staff).get(f"{JSON}?from=2022&to=2022").json()
    assert (data["year_from"], data["year_to"], data["births"]) == (2022, 2022, 1)


BAD_RANGES = ["from=abc", "to=20x4", "from=2025&to=2023", "from=-1", "from=99999", "to=1e3"]


@pytest.mark.parametrize("query", BAD_RANGES)
def test_a_bad_year_range_is_a_400_in_json(figures, staff, query):
    response = signed_in(staff).get(f"{JSON}?{query}")
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid year range."
    assert response.json()["errors"]


@pytest.mark.parametrize("query", BAD_RANGES)
def test_a_bad_year_range_is_a_400_page_that_says_why(figures, staff, query):
    response = signed_in(staff).get(f"{PAGE}?{query}")
    assert response.status_code == 400
    assert b'class="field-error"' in response.content or b"must not be after" in response.content
    assert b"<svg" not in response.content


@pytest.mark.parametrize("query", BAD_RANGES)
def test_a_bad_year_range_is_a_400_for_the_csv(figures, staff, query):
    response = signed_in(staff).get(f"{CSV}?{query}")
    assert response.status_code == 400
    assert response.content.startswith(b"Invalid year range")


def test_only_get_is_allowed(figures, staff):
    client = signed_in(staff)
    for path in (PAGE, JSON, CSV):
        assert client.post(path).status_code == 405


# -- The page -----------------------------------------------------------------------------------


def test_the_page_shows_charts_with_their_counts(figures, staff):
    response = signed_in(staff).get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('<figure class="bar-chart"') == 5  # four rates, births by role
    assert 'id="chart-1-title">Low birth weight (under 2,500 g)</strong>' in html
    assert "50.0% (1 of 2)" in html  # the rate with its numerator and denominator
    assert "<svg" not in html  # HTML bars, whose text keeps its size on a phone
    assert 'data-testid="figure-births">2<' in html
    assert 'data-testid="figure-suspected-duplicates">1<' in html
    assert "Statistics</a>" in html and 'aria-current="page">Statistics' in html
    assert "https://" not in html  # nothing from elsewhere: no CDN, no external assets


def test_the_page_links_to_the_csv_and_json_for_the_same_range(figures, staff):
    html = signed_in(staff).get(f"{PAGE}?from=2020&to=2024").content.decode()
    assert f"{CSV}?practice=st-mary&amp;from=2020&amp;to=2024" in html
    assert f"{JSON}?practice=st-mary&amp;from=2020&amp;to=2024" in html


def test_the_page_takes_a_bounded_number_of_queries(st_mary, staff, django_assert_max_num_queries):
    for index in range(40):
        birth(
            st_mary, attended_by=(Provider.Role.MIDWIFE,) * (1 + index % 2), children=1 + index % 2
        )
    client = signed_in(staff)
    client.get(PAGE)  # the session is stored once, and the scorecard's registry totals cached
    # The scorecard adds a query per kept table for the viewer's months (registry/statistics/
    # scorecard.py): 12 however many records.
    with django_assert_max_num_queries(12):
        response = client.get(f"{PAGE}?from=2020&to=2025")
    assert response.status_code == 200


def test_the_key_page_links_to_statistics(figures, staff):
    html = signed_in(staff).get("/settings/key/").content.decode()
    assert f'href="{PAGE}"' in html


# -- CSV ----------------------------------------------------------------------------------------


def test_the_csv_holds_every_figure_for_all_births_and_each_role(figures, staff):
    response = signed_in(staff).get(f"{CSV}?from=2020&to=2024")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="statistics-st-mary-2020-2024.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_key = {(row["group"], row["figure"]): row for row in rows}
    assert {row["group"] for row in rows} == {"all", "midwife", "doula", "nurse", "assistant"}
    assert by_key[("all", "births")]["value"] == "2"
    low = by_key[("all", "low_birth_weight_rate")]
    assert (low["value"], low["numerator"], low["denominator"]) == ("0.5", "1", "2")
    assert by_key[("doula", "preterm_rate")]["value"] == ""  # nothing to divide by
    assert all(row["practice"] == "st-mary" and row["year_from"] == "2020" for row in rows)


def test_a_session_client_is_needed_not_an_api_key(figures, st_mary):
    response = Client().get(JSON, headers={"Authorization": "Bearer rgk_x"})
    assert response.status_code == 401


# -- Empty and thin ------------------------------------------------------------------------------


def test_a_practice_with_no_births_is_told_how_figures_arrive(st_mary, staff):
    html = signed_in(staff).get(PAGE).content.decode()
    assert "No births on file yet" in html
    assert 'href="/settings/key/?practice=st-mary">See the API key' in html
    assert '<figure class="bar-chart"' not in html and "no data" not in html


def test_an_empty_year_range_says_so_instead_of_empty_charts(figures, staff):
    html = signed_in(staff).get(f"{PAGE}?from=2030&to=2031").content.decode()
    assert "No births in this range" in html
    assert "with a birth year from 2030 to 2031" in html
    assert 'href="/settings/statistics/?practice=st-mary">Show all years' in html
    assert '<figure class="bar-chart"' not in html and "0 of 0" not in html


def test_a_rate_out_of_fewer_than_20_is_marked_unreliable(st_mary, staff):
    for index in range(20):
        birth(st_mary, attended_by=(Provider.Role.MIDWIFE,) if index < 19 else ())
    html = signed_in(staff).get(PAGE).content.decode()
    # All births: 20 with a known weight, reliable; midwives: 19, marked.
    assert "0.0% (0 of 20)</span>" in html
    assert '0.0% (0 of 19) <span class="unreliable">unreliable</span>' in html
    assert "fewer than 20 in the denominator" in html


def test_a_rate_with_nothing_to_divide_is_no_data_not_a_number(figures, staff):
    html = signed_in(staff).get(PAGE).content.decode()
    assert "no data (none to count)" in html  # doulas attended none of St Mary's births
