"""Duplicate review in the Django admin: who sees which records, the comparison, decisions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from registry.models import Membership, Provider, Record, ReviewDecision
from registry.review import admin as registry_admin
from tests.registry.conftest import signed_in
from tests.registry.factories import birth, member

pytestmark = pytest.mark.django_db

RECORDS = "/admin/registry/record/"


def page(record: Record) -> str:
    return f"{RECORDS}{record.pk}/change/"


def review(record: Record, action: str) -> str:
    return f"{RECORDS}{record.pk}/review/{action}/"


@pytest.fixture
def pair(st_mary):
    original = birth(
        st_mary,
        external_record_id="C-1",
        fingerprint="f" * 64,
        mother_age_years=31,
        mother_postal_prefix="841",
        attended_by=(Provider.Role.MIDWIFE,),
        child__birth_weight_grams=3300,
    )
    flagged = birth(
        st_mary,
        external_record_id="C-2",
        fingerprint="f" * 64,
        suspected_duplicate=True,
        mother_age_years=31,
        mother_postal_prefix="841",
        child__birth_weight_grams=3350,
    )
    return original, flagged


@pytest.fixture
def riverside_record(riverside):
    return birth(riverside, external_record_id="R-1", suspected_duplicate=True)


# -- Who sees what --------------------------------------------------------------------------------


def test_a_reviewer_lists_only_their_practices_records(pair, riverside_record, reviewer):
    response = signed_in(reviewer).get(RECORDS)
    assert response.status_code == 200
    listed = {r.external_record_id for r in response.context["cl"].result_list}
    assert listed == {"C-1", "C-2"}
    assert b"Riverside" not in response.content  # not even in the practice filter


def test_the_list_filters_suspected_duplicates_state_practice_and_date(pair, reviewer, riverside):
    Membership.objects.create(user=reviewer, practice=riverside, role="reviewer")
    birth(riverside, external_record_id="R-1", suspected_duplicate=True)
    client = signed_in(reviewer)

    def listed(query: str) -> set[str]:
        response = client.get(f"{RECORDS}?{query}")
        assert response.status_code == 200, query
        return {r.external_record_id for r in response.context["cl"].result_list}

    assert listed("suspected_duplicate__exact=1") == {"C-2", "R-1"}
    assert listed("suspected_duplicate__exact=1&practice=st-mary") == {"C-2"}
    assert listed("voided__exact=0&practice=riverside") == {"R-1"}
    assert listed("created_at__gte=2000-01-01T00:00:00%2B00:00&suspected_duplicate__exact=0") == {
        "C-1"
    }
    assert listed("q=C-2") == {"C-2"}


def test_the_admin_index_offers_records_to_a_reviewer(pair, reviewer):
    response = signed_in(reviewer).get("/admin/")
    assert response.status_code == 200
    assert f'href="{RECORDS}"'.encode() in response.content


def test_a_reviewer_cannot_open_another_practices_record(riverside_record, reviewer):
    client = signed_in(reviewer)
    response = client.get(page(riverside_record))
    assert response.status_code == 302  # the admin's "does not exist" redirect
    assert client.get(review(riverside_record, "void")).status_code == 404
    assert client.post(review(riverside_record, "void")).status_code == 404
    assert not Record.objects.get(pk=riverside_record.pk).voided


def test_a_staff_member_who_is_not_a_reviewer_cannot_see_records(pair, staff):
    staff.is_staff = True
    staff.save()
    # Even with the model permission, membership decides.
    staff.user_permissions.add(Permission.objects.get(codename="view_record"))
    client = signed_in(staff)
    assert client.get(RECORDS).status_code == 403
    assert client.get(page(pair[1])).status_code == 403
    assert client.post(review(pair[1], "keep")).status_code == 404
    assert Record.objects.get(pk=pair[1].pk).suspected_duplicate


def test_a_reviewer_without_staff_status_cannot_enter_the_admin(pair, st_mary):
    reviewer = member(st_mary, "rita", Membership.Role.REVIEWER)
    response = signed_in(reviewer).get(RECORDS)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_an_anonymous_visitor_is_sent_to_the_admin_login(client, pair):
    for url in (RECORDS, page(pair[1]), review(pair[1], "keep")):
        response = client.get(url)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


def test_a_superuser_sees_every_practices_records(pair, riverside_record, superuser):
    response = signed_in(superuser).get(f"{RECORDS}?suspected_duplicate__exact=1")
    assert {r.external_record_id for r in response.context["cl"].result_list} == {"C-2", "R-1"}


def test_records_are_never_added_edited_or_deleted_in_the_admin(pair, reviewer):
    client = signed_in(reviewer)
    _, flagged = pair
    assert client.get(f"{RECORDS}add/").status_code == 403
    assert client.get(f"{RECORDS}{flagged.pk}/delete/").status_code == 403
    response = client.post(page(flagged), {"external_record_id": "HACKED", "birth_year": 1900})
    assert response.status_code == 403
    assert Record.objects.get(pk=flagged.pk).external_record_id == "C-2"
    actions = [
        name for name, _ in client.get(RECORDS).context["action_form"].fields["action"].choices
    ]
    assert "delete_selected" not in actions
    assert {"keep_selected", "void_selected"} <= set(actions)


# -- The record page ------------------------------------------------------------------------------


def test_the_record_page_shows_it_side_by_side_with_what_it_resembles(pair, reviewer):
    original, flagged = pair
    response = signed_in(reviewer).get(page(flagged))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Side by side with the records it resembles" in html
    comparison = response.context["comparison"]
    assert [r.external_record_id for r in comparison.records] == ["C-2", "C-1"]
    rows = {row.label: [cell.text for cell in row.cells] for row in comparison.rows}
    assert rows["Same mother and birth date"][1] == "Yes"
    assert rows["Postal code (first 3)"] == ["841", "841"]
    assert rows["Child 1"][0].startswith("Live birth, female, 3350 g, 39 w 2 d")
    differs = {row.label for row in comparison.rows if any(c.differs for c in row.cells)}
    assert {"Child 1", "Attended by"} <= differs
    assert "Postal code (first 3)" not in differs
    assert "f" * 64 not in html  # the fingerprint itself is never shown
    assert f'href="{review(flagged, "keep")}"' in html
    assert f"{review(flagged, 'merge')}?survivor={original.pk}" in html
    assert f'href="{review(flagged, "void")}"' in html


def test_the_original_record_page_shows_the_record_that_resembles_it(pair, reviewer):
    original, _ = pair
    response = signed_in(reviewer).get(page(original))
    assert [r.external_record_id for r in response.context["comparison"].records] == ["C-1", "C-2"]
    assert review(original, "keep").encode() not in response.content  # not flagged


def test_the_record_page_takes_a_bounded_number_of_queries(
    st_mary, reviewer, django_assert_max_num_queries
):
    flagged = birth(st_mary, fingerprint="e" * 64, suspected_duplicate=True, children=2)
    for _ in range(8):
        birth(st_mary, fingerprint="e" * 64, attended_by=("nurse",))
    client = signed_in(reviewer)
    client.get(page(flagged))
    # bounded whatever the cluster (2 of them set and reset the planner for the index seeks)
    with django_assert_max_num_queries(30):
        assert client.get(page(flagged)).status_code == 200


# -- Decisions, each with a confirmation step ----------------------------------------------------


def test_keep_asks_for_confirmation_then_clears_the_flag_and_shows_the_decision(pair, reviewer):
    _, flagged = pair
    client = signed_in(reviewer)
    confirm = client.get(review(flagged, "keep"))
    assert confirm.status_code == 200
    assert b"no longer flagged" in confirm.content
    assert Record.objects.get(pk=flagged.pk).suspected_duplicate  # nothing yet

    response = client.post(review(flagged, "keep"), {"note": "different mothers"}, follow=True)
    assert response.redirect_chain[-1][0] == page(flagged)
    assert not Record.objects.get(pk=flagged.pk).suspected_duplicate
    decision = ReviewDecision.objects.get(record=flagged)
    assert (decision.action, decision.decided_by, decision.note) == (
        "keep",
        reviewer,
        "different mothers",
    )
    html = response.content.decode()
    assert "Record C-2 kept" in html
    assert "Kept (not a duplicate)" in html and "rita" in html and "different mothers" in html


def test_void_asks_for_confirmation_then_voids(pair, reviewer):
    _, flagged = pair
    client = signed_in(reviewer)
    assert b"drops out of the statistics" in client.get(review(flagged, "void")).content
    response = client.post(review(flagged, "void"), {"note": ""}, follow=True)
    record = Record.objects.get(pk=flagged.pk)
    assert record.voided and not record.suspected_duplicate
    assert ReviewDecision.objects.get(record=flagged).decided_by_username == "rita"
    assert "nothing left to decide" in response.content.decode()


def test_merge_asks_for_the_survivor_then_merges(pair, reviewer):
    original, flagged = pair
    client = signed_in(reviewer)
    confirm = client.get(f"{review(flagged, 'merge')}?survivor={original.pk}")
    assert confirm.status_code == 200
    assert [r.pk for r in confirm.context["form"].fields["survivor"].queryset] == [original.pk]
    assert confirm.context["form"].initial["survivor"] == original

    refused = client.post(review(flagged, "merge"), {"note": "x"})  # no survivor chosen
    assert refused.status_code == 200
    assert not Record.objects.get(pk=flagged.pk).voided

    client.post(review(flagged, "merge"), {"survivor": original.pk, "note": "same birth"})
    merged = Record.objects.get(pk=flagged.pk)
    assert merged.voided and merged.merged_into_id == original.pk
    decision = ReviewDecision.objects.get(record=flagged)
    assert (decision.action, decision.survivor) == ("merge", original)
    html = client.get(page(flagged)).content.decode()
    assert "Merged (voided)" in html and "same birth" in html


def test_merge_offers_only_records_shown_beside_it(pair, reviewer, st_mary, riverside):
    _, flagged = pair
    unrelated = birth(st_mary, external_record_id="C-9")
    foreign = birth(riverside, external_record_id="R-9")
    client = signed_in(reviewer)
    for survivor in (unrelated, foreign, flagged):
        client.post(review(flagged, "merge"), {"survivor": survivor.pk})
    assert not Record.objects.get(pk=flagged.pk).voided
    assert not ReviewDecision.objects.exists()


def test_a_refused_decision_says_why_and_changes_nothing(pair, reviewer):
    original, _ = pair
    response = signed_in(reviewer).post(review(original, "keep"), {"note": ""}, follow=True)
    assert "is not flagged as a suspected duplicate" in response.content.decode()
    assert not ReviewDecision.objects.exists()


def test_an_unknown_decision_is_404(pair, reviewer):
    assert signed_in(reviewer).get(review(pair[1], "delete")).status_code == 404


def test_a_decision_needs_the_csrf_token(pair, reviewer):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    assert client.post(review(pair[1], "void"), {"note": ""}).status_code == 403
    assert not Record.objects.get(pk=pair[1].pk).voided


# -- Actions on the list -------------------------------------------------------------------------


def test_keep_selected_confirms_then_keeps_each(pair, reviewer, st_mary):
    _, flagged = pair
    another = birth(st_mary, suspected_duplicate=True)
    client = signed_in(reviewer)
    data = {"action": "keep_selected", "_selected_action": [flagged.pk, another.pk]}
    confirm = client.post(RECORDS, data)
    assert confirm.status_code == 200
    assert b"no longer flagged" in confirm.content
    assert Record.objects.filter(suspected_duplicate=True).count() == 2

    response = client.post(RECORDS, {**data, "confirmed": "yes", "note": "checked"}, follow=True)
    assert "2 of 2 records kept" in response.content.decode()
    assert not Record.objects.filter(suspected_duplicate=True).exists()
    assert ReviewDecision.objects.filter(action="keep", note="checked").count() == 2


def test_void_selected_skips_what_it_cannot_void_and_says_so(pair, reviewer):
    original, flagged = pair
    Record.objects.filter(pk=original.pk).update(voided=True)
    data = {"action": "void_selected", "_selected_action": [original.pk, flagged.pk]}
    response = signed_in(reviewer).post(RECORDS, {**data, "confirmed": "yes"}, follow=True)
    html = response.content.decode()
    assert "Record C-1 is already voided" in html
    assert "1 of 2 records voided" in html
    assert Record.objects.get(pk=flagged.pk).voided


def test_list_actions_never_reach_another_practices_records(riverside_record, pair, reviewer):
    data = {"action": "void_selected", "_selected_action": [riverside_record.pk], "confirmed": "y"}
    signed_in(reviewer).post(RECORDS, data)
    assert not Record.objects.get(pk=riverside_record.pk).voided


def test_list_actions_refuse_more_records_than_they_decide_at_once(st_mary, reviewer, monkeypatch):
    monkeypatch.setattr(registry_admin, "MAX_SELECTED", 2)
    records = [birth(st_mary, suspected_duplicate=True) for _ in range(3)]
    data = {"action": "keep_selected", "_selected_action": [r.pk for r in records]}
    response = signed_in(reviewer).post(RECORDS, {**data, "confirmed": "y"}, follow=True)
    assert "Select at most 2 records at a time" in response.content.decode()
    assert Record.objects.filter(suspected_duplicate=True).count() == 3


# -- What a person reads ------------------------------------------------------------------------


def test_the_record_page_names_the_practice_and_links_nowhere_closed(pair, reviewer):
    _, flagged = pair
    html = signed_in(reviewer).get(page(flagged)).content.decode()
    assert "St Mary&#x27;s (st-mary)" in html
    assert "/admin/registry/practice/" not in html  # a page that would answer 403
    assert f"{flagged.practice_id}/C-2" not in html  # no database id, in breadcrumbs or title
    assert "&rsaquo; C-2 v1" in html


def test_merged_into_shows_the_survivors_chart_number(pair, reviewer):
    original, flagged = pair
    client = signed_in(reviewer)
    client.post(review(flagged, "merge"), {"survivor": original.pk, "note": ""})
    html = client.get(page(flagged)).content.decode()
    assert ">C-1 v1</a>" in html
    assert f"{original.practice_id}/C-1" not in html


def test_apgar_scores_say_which_minute_they_are(pair, reviewer):
    _, flagged = pair
    html = signed_in(reviewer).get(page(flagged)).content.decode()
    assert "Apgar 1 min 8, 5 min 9, 10 min \N{EN DASH}" in html


# -- At scale: bounded pages -----------------------------------------------------------------------


def test_a_large_cluster_shows_the_20_most_alike_and_links_to_the_rest(st_mary, reviewer):
    flagged = birth(st_mary, fingerprint="c" * 64, suspected_duplicate=True, external_record_id="Q")
    others = [birth(st_mary, fingerprint="c" * 64) for _ in range(24)]
    birth(st_mary, fingerprint="d" * 64)  # another birth: never listed
    client = signed_in(reviewer)
    response = client.get(page(flagged))
    assert len(response.context["comparison"].records) == 21  # it, and 20 beside it
    assert response.context["resemblance"].total == 24
    link = f"{RECORDS}?resembles={flagged.pk}"
    assert link.encode() in response.content
    listed = client.get(link).context["cl"].result_list
    assert {r.pk for r in listed} == {r.pk for r in others}


def test_merge_accepts_a_resembling_survivor_from_beyond_the_first_20(st_mary, reviewer):
    flagged = birth(st_mary, fingerprint="c" * 64, suspected_duplicate=True)
    others = [birth(st_mary, fingerprint="c" * 64) for _ in range(22)]
    shown = set(signed_in(reviewer).get(page(flagged)).context["resemblance"].record_ids)
    beyond = next(r for r in others if r.pk not in shown)
    response = signed_in(reviewer).post(review(flagged, "merge"), {"survivor": beyond.pk})
    assert response.status_code == 302
    assert Record.objects.get(pk=flagged.pk).merged_into_id == beyond.pk


def test_the_list_counts_no_further_than_its_cap(st_mary, reviewer, monkeypatch):
    monkeypatch.setattr(registry_admin.CappedPaginator, "CAP", 3)
    for _ in range(5):
        birth(st_mary)
    response = signed_in(reviewer).get(RECORDS)
    assert response.context["cl"].result_count == 4
    assert b"More than 3 records" in response.content


def test_search_finds_the_chart_number_exactly(pair, reviewer):
    client = signed_in(reviewer)
    found = client.get(RECORDS, {"q": " C-2 "}).context["cl"].result_list
    assert [r.external_record_id for r in found] == ["C-2"]
    assert not client.get(RECORDS, {"q": "c-2"}).context["cl"].result_list


def test_merge_pre_selects_a_lone_survivor(pair, reviewer):
    original, flagged = pair
    html = signed_in(reviewer).get(review(flagged, "merge")).content.decode()
    assert f'value="{original.pk}"' in html
    assert "checked" in html.split(f'value="{original.pk}"')[1].split(">")[0]


def test_merge_pre_selects_nothing_among_several_survivors(pair, reviewer, st_mary):
    _, flagged = pair
    birth(st_mary, external_record_id="C-3", fingerprint="f" * 64)
    html = signed_in(reviewer).get(review(flagged, "merge")).content.decode()
    assert "checked" not in html


def test_the_list_says_states_in_words_and_names_the_practice(pair, reviewer):
    html = signed_in(reviewer).get(RECORDS).content.decode()
    assert "Suspected duplicate" in html and "Not flagged" in html and "Not voided" in html
    assert "icon-yes" not in html and "icon-no" not in html
    assert "St Mary&#x27;s" in html


def test_the_review_note_hint_is_the_one_its_field_names(pair, reviewer):
    _, flagged = pair
    html = signed_in(reviewer).get(review(flagged, "keep")).content.decode()
    assert 'aria-describedby="id_note_helptext"' in html
    assert 'id="id_note_helptext"' in html


def test_a_decision_is_announced_in_a_status_region(pair, reviewer):
    _, flagged = pair
    response = signed_in(reviewer).post(review(flagged, "keep"), {"note": ""}, follow=True)
    html = response.content.decode()
    assert '<div class="admin-messages" id="admin-messages" role="status" tabindex="-1">' in html
    assert "Record C-2 kept: no longer flagged as a suspected duplicate." in html
    assert "registry/admin." in html  # the script that moves the focus to it


@pytest.mark.parametrize(
    "path", ["/admin/keys/apikey/", "/admin/keys/keyevent/", "/admin/registry/membership/"]
)
def test_lists_filter_by_practice_name(path, superuser, st_mary, riverside, reviewer):
    client = signed_in(superuser)
    html = client.get(path).content.decode()
    assert "?practice=st-mary" in html and "St Mary&#x27;s<" in html
    assert client.get(f"{path}?practice=riverside").status_code == 200


def test_the_admin_sign_in_page_says_sign_in_and_offers_no_reset_without_mail(client, settings):
    settings.REGISTRY_PASSWORD_RESET = False
    html = client.get("/admin/login/?next=/admin/").content.decode()
    assert "<title>Sign in |" in html and 'value="Sign in"' in html
    assert "Log in" not in html and "login credentials" not in html
    assert "Ask a registry administrator to set a new one." in html


def test_the_admin_sign_in_page_links_the_reset_where_mail_is_configured(client, settings):
    settings.REGISTRY_PASSWORD_RESET = True
    html = client.get("/admin/login/?next=/admin/").content.decode()
    assert '<a href="/accounts/password_reset/">Set a new one by mail</a>' in html
