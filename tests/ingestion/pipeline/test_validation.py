"""REGISTRY_FHIR_VALIDATION: full fhir.resources validation, off by default."""

from __future__ import annotations

import pytest

from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from registry.models import Record
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def run(api, body):
    ingestion_id = ingestion_id_of(api.submit(body))
    ingestion_process(Ingestion.objects.get(id=ingestion_id).id)
    return api.receipt(ingestion_id).json()


def invalid_course(chart):
    body = course(chart)
    body["entry"][0]["resource"]["gender"] = 42  # Patient.gender must be a code
    return body


def test_by_default_structure_only_is_checked(api):
    receipt = run(api, invalid_course("C-1"))
    assert receipt["accepted"] == 1


def test_with_validation_an_invalid_course_is_rejected_naming_the_element(api, settings):
    settings.REGISTRY_FHIR_VALIDATION = True
    receipt = run(api, batch(course("C-1"), invalid_course("C-2")))
    assert (receipt["accepted"], receipt["rejected"]) == (1, 1)
    rejected = receipt["outcome"]["rejected"][0]
    assert rejected["reference"] == "Bundle.entry[1]"
    assert rejected["external_record_id"] == "C-2"
    issue = rejected["operation_outcome"]["issue"][0]
    assert issue["code"] == "structure"
    assert issue["expression"] == ["Bundle.entry[1].resource.entry[0].resource.gender"]
    assert "42" not in issue["diagnostics"]
    assert list(Record.objects.values_list("external_record_id", flat=True)) == ["C-1"]
