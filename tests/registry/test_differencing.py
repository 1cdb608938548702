"""A person in two practices learns nothing from the registry's figures that one page hides.

Every page of a viewer shows the registry's figure only when the practices that viewer belongs
to none of pass the thresholds, and a sandbox shows no comparison at all; so subtracting one
page's registry figure and the figures the viewer knows from another never leaves a part that
a page calls "Not shown".
"""

from __future__ import annotations

from itertools import chain, combinations
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.models import BirthCount, Practice
from registry.statistics.benchmarks import ALL, HEADLINE, SMALL_COUNT
from registry.statistics.quality import FIGURES as QUALITY_FIGURES
from registry.statistics.selectors import benchmarks_for_practice
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, member

pytestmark = pytest.mark.django_db

YEAR = 2024


def births(practice: Practice, total: int, low_weight: int, *, year: int = YEAR) -> None:
    """``total`` live births of ``year`` with a known weight, ``low_weight`` of them low."""
    BirthCount.objects.create(
        practice=practice,
        birth_year=year,
        group=ALL,
        births=total,
        live_births=total,
        known_birth_weight=total,
        low_birth_weight=low_weight,
    )


def low_weight_seen(client, practice: Practice) -> tuple[tuple[int, int], dict[str, Any]]:
    """The practice's own low-birth-weight counts and the registry's side, from the JSON."""
    data = client.get(f"/settings/statistics.json?practice={practice.slug}").json()
    figure = data["headline"]["low_birth_weight"]
    own = (figure["practice"]["numerator"], figure["practice"]["denominator"])
    return own, figure["registry"]


@pytest.mark.parametrize("second", ["sandbox", "live practice without births"])
def test_staff_of_two_practices_cannot_work_out_what_one_is_not_shown(second):
    clinic, other_b, other_c = (PracticeFactory() for _ in range(3))
    births(clinic, 20, 20)
    births(other_b, 10, 5)
    births(other_c, 10, 5)  # B and C together: 10 of 20, from two practices
    second_practice = PracticeFactory(sandbox=second == "sandbox")
    if second_practice.sandbox:
        births(second_practice, 20, 10)
    person = member(clinic, "two-hats")
    member(second_practice, "two-hats")
    client = signed_in(person)

    own_figures, registry_figures = [], []
    for practice in (clinic, second_practice):
        own, registry = low_weight_seen(client, practice)
        own_figures.append(own)
        if "suppressed" not in registry:
            registry_figures.append((registry["numerator"], registry["denominator"]))
    _, clinics_view = low_weight_seen(client, clinic)
    assert clinics_view["suppressed"].startswith("Fewer than three")
    # The attack: a registry figure, less any of the figures the person knows as their own.
    derivable = {
        (numerator - sum(n for n, _ in known), denominator - sum(d for _, d in known))
        for numerator, denominator in registry_figures
        for known in chain.from_iterable(
            combinations(own_figures, size) for size in range(len(own_figures) + 1)
        )
    }
    assert (10, 20) not in derivable


def test_a_sandbox_sees_its_own_figures_and_says_why_it_is_not_compared():
    for _ in range(4):
        births(PracticeFactory(), 30, 12)
    sandbox = PracticeFactory(sandbox=True)
    births(sandbox, 4, 1)
    client = signed_in(member(sandbox, "integrator"))
    data = client.get("/settings/statistics.json").json()
    assert data["comparison_withheld"].startswith("Comparisons with the registry are for live")
    headline = data["headline"]["low_birth_weight"]
    assert (headline["practice"]["numerator"], headline["practice"]["denominator"]) == (1, 4)
    assert headline["registry"] == {"suppressed": data["comparison_withheld"]}
    page = client.get("/settings/statistics/").content.decode()
    assert "Your figures only: comparisons with the registry are for live practices" in page
    assert 'data-testid="not-shown-explained"' not in page


# --- Any memberships, any counts ----------------------------------------------------------------

COUNTS = ["births", "live_births", "known_birth_weight", "low_birth_weight", "with_warning"]
YEARS = [2023, 2024]
# The figures of all births a page puts beside the registry (the headline and data quality).
SHOWN = [*HEADLINE, *QUALITY_FIGURES]

practice_counts = st.fixed_dictionaries(
    {
        "sandbox": st.booleans(),
        "cells": st.dictionaries(
            st.sampled_from(YEARS),
            st.fixed_dictionaries(
                {name: st.sampled_from([0, 1, 3, 6, 10, 14, 25]) for name in COUNTS}
            ),
        ),
    }
)
registries = st.lists(practice_counts, min_size=2, max_size=7).flatmap(
    lambda practices: st.tuples(
        st.just(practices),
        st.sets(st.integers(0, len(practices) - 1), min_size=1, max_size=len(practices)),
    )
)


def _complement(registry, members, years, count) -> tuple[int, int, set[int]]:
    """What the practices the viewer belongs to none of add to ``count`` over ``years``:
    the total, and the smallest (total, contributors) of a year that is not zero."""
    contributors: set[int] = set()
    total, worst = 0, None
    for year in years:
        values = [
            (index, practice["cells"].get(year, {}).get(count, 0))
            for index, practice in enumerate(registry)
            if index not in members and not practice["sandbox"]
        ]
        in_year = sum(value for _, value in values)
        from_practices = sum(1 for _, value in values if value)
        contributors |= {index for index, value in values if value}
        total += in_year
        if in_year and (worst is None or (in_year, from_practices) < worst):
            worst = (in_year, from_practices)
    return total, len(contributors), worst


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(registry_and_viewer=registries)
def test_no_figure_shown_to_a_viewer_includes_a_part_the_thresholds_hide(db, registry_and_viewer):
    registry, members = registry_and_viewer
    with transaction.atomic():
        practices = [PracticeFactory(sandbox=p["sandbox"]) for p in registry]
        for practice, counts in zip(practices, registry, strict=True):
            for year, cell in counts["cells"].items():
                BirthCount.objects.create(practice=practice, birth_year=year, group=ALL, **cell)
        ids = [practices[index].pk for index in members]
        for index in members:
            seen = benchmarks_for_practice(practice=practices[index], members_of=ids)
            _check(registry, members, index, seen)
        transaction.set_rollback(True)


def _check(registry, members, viewed, seen) -> None:
    years = seen["compared_years"]["included"]
    sides = {f.name: seen["headline"].get(f.name, {}).get("registry") for f in HEADLINE}
    sides |= {f.name: _quality_side(seen["data_quality"], f.name) for f in QUALITY_FIGURES}
    for figure in SHOWN:
        registry_side = sides[figure.name]
        if "suppressed" in registry_side:
            continue
        assert not registry[viewed]["sandbox"], "a sandbox is shown a registry figure"
        for count in (figure.numerator, figure.denominator):
            total, contributors, worst = _complement(registry, members, years, count)
            assert total not in SMALL_COUNT
            assert contributors >= 3 or total == 0
            assert worst is None or (worst[0] >= 10 and worst[1] >= 3)
        # What is shown is every live practice's count (the viewer's ones included): so the
        # part the viewer does not know is exactly what the thresholds were tested on.
        everyone = sum(
            practice["cells"].get(year, {}).get(figure.numerator, 0)
            for index, practice in enumerate(registry)
            for year in years
            if not practice["sandbox"] or index == viewed
        )
        assert registry_side["numerator"] == everyone


def _quality_side(data_quality: dict[str, Any], name: str) -> dict[str, Any]:
    for section in data_quality.values():
        if "registry" in section and name == "plausibility":
            return section["registry"]
        if name in section:
            return section[name]["registry"]
    raise AssertionError(name)
