"""stats_for_practice: each figure, its denominator, and what never counts."""

from __future__ import annotations

import pytest

from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from registry.models import Child, Provider
from registry.statistics.selectors import stats_for_practice
from tests.factories import course, retraction_document
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.registry.factories import ProviderFactory, birth

pytestmark = pytest.mark.django_db

MIDWIFE, DOULA, NURSE, ASSISTANT, OTHER = (
    Provider.Role.MIDWIFE,
    Provider.Role.DOULA,
    Provider.Role.NURSE,
    Provider.Role.ASSISTANT,
    Provider.Role.OTHER,
)


def stats(practice, **years):
    return stats_for_practice(practice=practice, **years)


def test_a_practice_without_records_has_zero_counts_and_no_rates(st_mary):
    figures = stats(st_mary)
    assert figures["births"] == figures["live_births"] == figures["fetal_deaths"] == 0
    assert figures["suspected_duplicates"] == 0
    for rate in ("low_birth_weight_rate", "preterm_rate", "apgar5_below_7_rate"):
        assert figures[rate] is None  # nothing to divide by is not 0 %
    assert figures["consent_granted_rate"] is None
    assert set(figures["by_attendant_role"]) == {"midwife", "doula", "nurse", "assistant"}


def test_births_count_courses_of_care_and_live_births_and_fetal_deaths_count_children(st_mary):
    birth(st_mary, children=2)  # twins: one birth, two live births
    birth(st_mary, child__outcome=Child.Outcome.FETAL_DEATH)
    birth(st_mary)
    figures = stats(st_mary)
    assert (figures["births"], figures["live_births"], figures["fetal_deaths"]) == (3, 3, 1)


def test_voided_records_drop_out_of_every_figure(st_mary):
    birth(st_mary, attended_by=(MIDWIFE,), child__birth_weight_grams=3000)
    birth(
        st_mary,
        voided=True,
        suspected_duplicate=True,
        attended_by=(MIDWIFE,),
        child__birth_weight_grams=2000,
        child__gestational_age_weeks=30,
        child__apgar_5=3,
    )
    figures = stats(st_mary)
    assert (figures["births"], figures["live_births"], figures["suspected_duplicates"]) == (1, 1, 0)
    assert figures["low_birth_weight"] == {"numerator": 0, "denominator": 1}
    assert figures["preterm"] == {"numerator": 0, "denominator": 1}
    assert figures["apgar5_below_7"] == {"numerator": 0, "denominator": 1}
    assert figures["by_attendant_role"]["midwife"]["births"] == 1
    assert figures["by_attendant_role"]["midwife"]["low_birth_weight_rate"] == 0.0


def test_low_birth_weight_is_under_2500_g_among_live_born_children_with_a_known_weight(st_mary):
    birth(st_mary, child__birth_weight_grams=2499)
    birth(st_mary, child__birth_weight_grams=2500)  # not low
    birth(st_mary, child__birth_weight_grams=3400)
    birth(st_mary, child__birth_weight_grams=None)  # unknown: not in the denominator
    birth(st_mary, child__birth_weight_grams=900, child__outcome=Child.Outcome.FETAL_DEATH)
    figures = stats(st_mary)
    assert figures["low_birth_weight"] == {"numerator": 1, "denominator": 3}
    assert figures["low_birth_weight_rate"] == 0.3333


def test_preterm_is_under_37_completed_weeks_among_live_born_children_with_a_known_age(st_mary):
    birth(st_mary, child__gestational_age_weeks=36, child__gestational_age_days=6)
    birth(st_mary, child__gestational_age_weeks=37, child__gestational_age_days=0)
    birth(st_mary, child__gestational_age_weeks=None, child__gestational_age_days=None)
    birth(st_mary, child__gestational_age_weeks=24, child__outcome=Child.Outcome.FETAL_DEATH)
    figures = stats(st_mary)
    assert figures["preterm"] == {"numerator": 1, "denominator": 2}
    assert figures["preterm_rate"] == 0.5


def test_apgar5_below_7_counts_live_born_children_with_a_known_score(st_mary):
    birth(st_mary, child__apgar_5=6)
    birth(st_mary, child__apgar_5=7)
    birth(st_mary, child__apgar_5=9, children=2)
    birth(st_mary, child__apgar_5=None)
    birth(st_mary, child__apgar_5=0, child__outcome=Child.Outcome.FETAL_DEATH)
    figures = stats(st_mary)
    assert figures["apgar5_below_7"] == {"numerator": 1, "denominator": 4}
    assert figures["apgar5_below_7_rate"] == 0.25


def test_consent_granted_rate_is_over_births(st_mary):
    birth(st_mary, consent_granted=True, children=2)
    birth(st_mary, consent_granted=False)
    birth(st_mary, consent_granted=False)
    birth(st_mary, consent_granted=True, voided=True)
    figures = stats(st_mary)
    assert figures["consent_granted"] == {"numerator": 1, "denominator": 3}
    assert figures["consent_granted_rate"] == 0.3333


def test_suspected_duplicates_are_records_on_file_still_flagged(st_mary):
    birth(st_mary, suspected_duplicate=True)
    birth(st_mary, suspected_duplicate=True, voided=True)
    birth(st_mary)
    assert stats(st_mary)["suspected_duplicates"] == 1


def test_each_attendant_role_gets_the_same_figures_over_the_births_it_attended(st_mary):
    birth(st_mary, attended_by=(MIDWIFE,), child__birth_weight_grams=2000, suspected_duplicate=True)
    birth(st_mary, attended_by=(MIDWIFE,), child__birth_weight_grams=3000, consent_granted=False)
    birth(st_mary, attended_by=(NURSE,), child__gestational_age_weeks=35)
    birth(st_mary, attended_by=(ASSISTANT,), child__outcome=Child.Outcome.FETAL_DEATH)
    by_role = stats(st_mary)["by_attendant_role"]
    midwife = by_role["midwife"]
    assert (midwife["births"], midwife["live_births"], midwife["suspected_duplicates"]) == (2, 2, 1)
    assert midwife["low_birth_weight"] == {"numerator": 1, "denominator": 2}
    assert midwife["low_birth_weight_rate"] == 0.5
    assert midwife["consent_granted"] == {"numerator": 1, "denominator": 2}
    assert by_role["nurse"]["preterm"] == {"numerator": 1, "denominator": 1}
    assert (by_role["assistant"]["births"], by_role["assistant"]["fetal_deaths"]) == (1, 1)
    assert by_role["doula"]["births"] == 0
    assert by_role["doula"]["low_birth_weight_rate"] is None


def test_a_birth_attended_by_a_midwife_and_a_nurse_counts_for_both(st_mary):
    birth(st_mary, attended_by=(MIDWIFE, NURSE), children=2)
    by_role = stats(st_mary)["by_attendant_role"]
    assert (by_role["midwife"]["births"], by_role["midwife"]["live_births"]) == (1, 2)
    assert (by_role["nurse"]["births"], by_role["nurse"]["live_births"]) == (1, 2)


def test_a_birth_attended_by_two_midwives_counts_once_for_midwives(st_mary):
    record = birth(st_mary, attended_by=(MIDWIFE, MIDWIFE), children=2, suspected_duplicate=True)
    assert record.attendances.count() == 2
    midwife = stats(st_mary)["by_attendant_role"]["midwife"]
    assert (midwife["births"], midwife["live_births"], midwife["suspected_duplicates"]) == (1, 2, 1)
    assert midwife["low_birth_weight"]["denominator"] == 2


def test_role_other_is_never_benchmarked_but_its_births_count_overall(st_mary):
    birth(st_mary, attended_by=(OTHER,))
    figures = stats(st_mary)
    assert figures["births"] == 1
    assert "other" not in figures["by_attendant_role"]
    assert all(role["births"] == 0 for role in figures["by_attendant_role"].values())


def test_a_provider_only_present_is_not_an_attendant(st_mary):
    birth(st_mary, attended_by=(MIDWIFE,), present=(DOULA,))
    by_role = stats(st_mary)["by_attendant_role"]
    assert (by_role["midwife"]["births"], by_role["doula"]["births"]) == (1, 0)


def test_the_year_range_filters_on_birth_year_inclusively(st_mary):
    for year in (2021, 2022, 2023, 2024, None):
        birth(st_mary, birth_year=year, attended_by=(MIDWIFE,))
    assert stats(st_mary)["births"] == 5  # no range: every record, known year or not
    ranged = stats(st_mary, year_from=2022, year_to=2023)
    assert (ranged["births"], ranged["live_births"]) == (2, 2)
    assert ranged["by_attendant_role"]["midwife"]["births"] == 2
    assert (ranged["year_from"], ranged["year_to"]) == (2022, 2023)
    assert stats(st_mary, year_from=2024)["births"] == 1
    assert stats(st_mary, year_to=2021)["births"] == 1


def test_another_practices_records_never_count(st_mary, riverside):
    shared = ProviderFactory(practice=riverside, role=MIDWIFE)
    other = birth(riverside, attended_by=(MIDWIFE,), suspected_duplicate=True)
    other.attendances.update(provider=shared)
    birth(st_mary)
    figures = stats(st_mary)
    assert (figures["births"], figures["suspected_duplicates"]) == (1, 0)
    assert figures["by_attendant_role"]["midwife"]["births"] == 0


def test_the_figures_take_one_query_however_many_records(st_mary, django_assert_num_queries):
    for index in range(30):
        birth(
            st_mary, attended_by=(MIDWIFE, NURSE) if index % 2 else (DOULA,), children=1 + index % 2
        )
    with django_assert_num_queries(1):  # sums of the kept counts (registry.statistics.counts)
        figures = stats(st_mary, year_from=2020, year_to=2025)
    assert figures["births"] == 30


# -- Through the API and the pipeline -----------------------------------------------------------


@pytest.fixture
def api(st_mary, client):
    return Api(client, mint(st_mary), st_mary)


def ingest(api, body) -> None:
    response = api.submit(body)
    assert response.status_code == 202, response.content
    ingestion_process(Ingestion.objects.get(id=ingestion_id_of(response)).id)


def test_figures_follow_what_the_pipeline_stores_and_a_retraction_drops_out_at_once(st_mary, api):
    ingest(api, course("C-1", weight_grams=2100, weeks=35, apgar5=6))
    ingest(api, course("C-2", family="Ngata", weight_grams=3500, consent="proposed"))
    ingest(api, course("C-3"))  # same mother and birth date as C-1: flagged
    figures = stats(st_mary, year_from=2024, year_to=2024)
    assert (figures["births"], figures["live_births"], figures["suspected_duplicates"]) == (3, 3, 1)
    assert figures["low_birth_weight"] == {"numerator": 1, "denominator": 3}
    assert figures["preterm"] == {"numerator": 1, "denominator": 3}
    assert figures["apgar5_below_7"] == {"numerator": 1, "denominator": 3}
    assert figures["consent_granted"] == {"numerator": 2, "denominator": 3}
    assert figures["by_attendant_role"]["midwife"]["births"] == 3  # "Certified Nurse Midwife"

    ingest(api, retraction_document("C-1"))
    figures = stats(st_mary)
    assert figures["births"] == 2
    assert figures["low_birth_weight"] == {"numerator": 0, "denominator": 2}
    assert figures["by_attendant_role"]["midwife"]["births"] == 2
