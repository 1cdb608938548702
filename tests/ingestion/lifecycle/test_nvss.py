"""NVSS messaging end to end, with the corpus' submission, update and void messages.

An EHR that speaks NVSS FHIR messaging can point at this service unchanged: a submission
stores the record under its NVSS record id, an update amends it, and a void retracts the
records of its block (numbers of the block not on file are no error).
"""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from registry.models import Record
from tests.factories import course
from tests.ingestion.lifecycle.test_lifecycle import ingest, only_accepted

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[2] / "fixtures/bfdr-examples"


def load(name: str) -> dict:
    return orjson.loads((CORPUS / name).read_bytes())


def void(**changes) -> dict:
    """The corpus' birth void (2019 UT 48858, block_count 10) with parameters changed."""
    message = copy.deepcopy(load("BirthRecordVoidMessage.json"))
    parameters = message["entry"][1]["resource"]["parameter"]
    for name, value in changes.items():
        parameters[:] = [p for p in parameters if p["name"] != name]
        if value is not None:
            parameters.append({"name": name, "valueUnsignedInt": value})
    return message


def test_a_submission_message_then_an_update_message_amends_the_record(api):
    created = only_accepted(ingest(api, load("BirthRecordSubmissionMessage.json")))
    assert (created["external_record_id"], created["amended"]) == ("2019UT48858", False)
    updated = only_accepted(ingest(api, load("BirthRecordUpdateMessage.json")))
    assert updated["external_record_id"] == "2019UT48858"
    assert (updated["amended"], updated["version"]) == (True, 2)
    assert updated["submission_uuid"] == created["submission_uuid"]
    assert Record.objects.get().version == 2


def test_the_corpus_void_retracts_the_submitted_record(api):
    created = only_accepted(ingest(api, load("BirthRecordSubmissionMessage.json")))
    entry = only_accepted(ingest(api, load("BirthRecordVoidMessage.json")))
    assert entry["voided"] is True
    assert entry["voided_count"] == 1
    assert entry["voided_records"] == [
        {"external_record_id": "2019UT48858", "submission_uuid": created["submission_uuid"]}
    ]
    assert entry["external_record_id"] == "2019UT48858"
    assert Record.objects.get().voided


def test_block_count_voids_that_many_consecutive_numbers_padded_or_not(api):
    for chart in ("2019UT48858", "2019UT048860", "2019UT48862", "2019UT48863"):
        only_accepted(ingest(api, course(chart)))
    entry = only_accepted(ingest(api, void(block_count=5)))  # 48858..48862
    assert entry["voided_count"] == 3
    voided = [r["external_record_id"] for r in entry["voided_records"]]
    assert voided == ["2019UT48858", "2019UT048860", "2019UT48862"]
    assert set(
        Record.objects.filter(voided=True).values_list("external_record_id", flat=True)
    ) == set(voided)
    assert not Record.objects.get(external_record_id="2019UT48863").voided


def test_without_block_count_only_the_named_record_is_voided(api):
    for chart in ("2019UT48858", "2019UT48859"):
        only_accepted(ingest(api, course(chart)))
    entry = only_accepted(ingest(api, void(block_count=None)))
    assert entry["voided_count"] == 1
    assert list(
        Record.objects.filter(voided=True).values_list("external_record_id", flat=True)
    ) == ["2019UT48858"]


def test_a_void_of_numbers_not_on_file_is_accepted_and_says_nothing_was_voided(api):
    entry = only_accepted(ingest(api, load("BirthRecordVoidMessage.json")))
    assert entry["voided_count"] == 0
    assert entry["voided_records"] == []
    assert "voided" not in entry and "submission_uuid" not in entry
    (warning,) = entry["operation_outcome"]["issue"]
    assert (warning["severity"], warning["code"]) == ("warning", "not-found")
    assert "nothing was voided" in warning["diagnostics"]


def test_a_repeated_void_changes_nothing_and_answers_the_same(api):
    only_accepted(ingest(api, load("BirthRecordSubmissionMessage.json")))
    first = only_accepted(ingest(api, load("BirthRecordVoidMessage.json")))
    again = only_accepted(ingest(api, load("BirthRecordVoidMessage.json")))
    assert first == again
    assert Record.objects.get().versions.filter(change="voided").count() == 1


def test_a_fetal_death_update_then_void_by_unpadded_certificate_number(api):
    only_accepted(ingest(api, load("FetalDeathUpdateMessage.json")))  # chart 2020NY087366
    message = copy.deepcopy(load("FetalDeathVoidMessage.json"))
    message["entry"][1]["resource"]["parameter"] = [
        {"name": "jurisdiction_id", "valueString": "NY"},
        {"name": "cert_no", "valueUnsignedInt": 87366},
        {"name": "event_year", "valueUnsignedInt": 2020},
    ]
    entry = only_accepted(ingest(api, message))
    assert entry["voided_count"] == 1
    assert entry["external_record_id"] == "2020NY087366"
    assert Record.objects.get().voided


def test_a_void_never_reaches_another_practice(api, other_api):
    only_accepted(ingest(other_api, load("BirthRecordSubmissionMessage.json")))
    entry = only_accepted(ingest(api, load("BirthRecordVoidMessage.json")))
    assert entry["voided_count"] == 0
    assert not Record.objects.get().voided
