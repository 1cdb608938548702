"""Sandbox practices: created and flagged, and never part of another practice's figures."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.models import Practice, Provider
from registry.statistics.selectors import (
    SANDBOX_WITHHELD,
    benchmarks_for_practice,
    stats_for_practice,
)
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, birth

pytestmark = pytest.mark.django_db

MIDWIFE = Provider.Role.MIDWIFE
PRACTICES = "/admin/registry/practice/"


def test_createpractice_sandbox_creates_a_sandbox(capsys):
    call_command("createpractice", "acme-test", "--sandbox")
    assert Practice.objects.get(slug="acme-test").sandbox
    assert "(sandbox)" in capsys.readouterr().out


def test_createpractice_without_the_flag_leaves_an_existing_practice_as_it_is():
    call_command("createpractice", "acme-test", "--sandbox")
    call_command("createpractice", "acme-test")
    assert Practice.objects.get(slug="acme-test").sandbox


def test_createpractice_sandbox_switches_an_empty_practice_and_refuses_one_with_a_key(st_mary):
    call_command("createpractice", "riverside")
    call_command("createpractice", "riverside", "--sandbox")
    assert Practice.objects.get(slug="riverside").sandbox
    key_mint(practice=st_mary, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    with pytest.raises(CommandError, match="active API key"):
        call_command("createpractice", "st-mary", "--sandbox")
    assert not Practice.objects.get(slug="st-mary").sandbox


def test_the_admin_shows_the_flag_and_refuses_a_change_the_practice_cannot_take(superuser, st_mary):
    client = signed_in(superuser)
    assert b'name="sandbox"' in client.get(f"{PRACTICES}{st_mary.pk}/change/").content
    birth(st_mary)
    form = {
        "slug": "st-mary",
        "name": "St Mary's",
        "sandbox": "on",
        **{
            f"{prefix}-{field}": value
            for prefix in ("memberships", "api_keys", "key_events")
            for field, value in (("TOTAL_FORMS", "0"), ("INITIAL_FORMS", "0"))
        },
    }
    refused = client.post(f"{PRACTICES}{st_mary.pk}/change/", form)
    assert refused.status_code == 200
    assert b"cannot become a sandbox while it has records" in refused.content
    assert not Practice.objects.get(pk=st_mary.pk).sandbox
    added = client.post(f"{PRACTICES}add/", {**form, "slug": "acme-test"})
    assert added.status_code == 302
    assert Practice.objects.get(slug="acme-test").sandbox


def everyones_figures(practices) -> list:
    return [
        (benchmarks_for_practice(practice=p), stats_for_practice(practice=p)) for p in practices
    ]


def test_a_sandboxs_births_count_in_no_other_practices_figures_nor_the_registrys(st_mary):
    live = [st_mary, *(PracticeFactory() for _ in range(4))]
    for practice in live:
        for _ in range(12):
            birth(practice, attended_by=(MIDWIFE,))
    before = everyones_figures(live)
    sandbox = PracticeFactory(slug="acme-test", sandbox=True)
    for _ in range(30):
        birth(
            sandbox,
            attended_by=(MIDWIFE,),
            child__birth_weight_grams=1500,
            child__gestational_age_weeks=30,
        )
    assert everyones_figures(live) == before
    midwife = before[0][0]["benchmarks"]["midwife"]["births"]["registry"]
    assert (midwife["numerator"], midwife["practices"]) == (60, 5)
    # The sandbox sees its own figures, and no comparison with the registry (docs/decisions.md,
    # "Suppression against differencing").
    own = stats_for_practice(practice=sandbox)
    assert own["births"] == 30 and own["low_birth_weight"]["numerator"] == 30
    registry = benchmarks_for_practice(practice=sandbox)["benchmarks"]["midwife"]
    assert registry["births"]["practice"]["numerator"] == 30
    assert registry["births"]["registry"] == {"suppressed": SANDBOX_WITHHELD}
