"""The example Bundles of the OpenAPI document, the README and docs/integrators.md.

Each is valid FHIR R4 (``tests/api/test_examples.py`` checks them with fhir.resources and
fhirclient's R4 models) and shaped as BFDR sends it: a provider live birth report whose
Composition comes first, the mother and child Patients with their BFDR profiles,
Observations by LOINC code, the attendant as an Encounter participant and a Consent.
Every one of them is accepted by the service as it stands (the tests submit each one).
"""

from __future__ import annotations

import copy
from typing import Any

CHART_SYSTEM = "urn:example:chart"
NVSS_RECORD_ID = "http://nchs.cdc.gov/bfdr_id"
VRCL = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition"
BFDR = "http://hl7.org/fhir/us/bfdr/StructureDefinition"
LOINC = "http://loinc.org"
UCUM = "http://unitsofmeasure.org"
ACT_CODE = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
PARTICIPATION = "http://terminology.hl7.org/CodeSystem/v3-ParticipationType"


def _loinc(code: str, display: str) -> dict[str, Any]:
    return {"coding": [{"system": LOINC, "code": code, "display": display}]}


def _entry(resource: dict[str, Any]) -> dict[str, Any]:
    return {"fullUrl": f"urn:uuid:{_UUIDS[resource['id']]}", "resource": resource}


_UUIDS = {
    "report": "6f0a3c1e-2b7d-4e59-9a1c-000000000001",
    "mother": "6f0a3c1e-2b7d-4e59-9a1c-000000000002",
    "child": "6f0a3c1e-2b7d-4e59-9a1c-000000000003",
    "weight": "6f0a3c1e-2b7d-4e59-9a1c-000000000004",
    "gestation": "6f0a3c1e-2b7d-4e59-9a1c-000000000005",
    "apgar5": "6f0a3c1e-2b7d-4e59-9a1c-000000000006",
    "midwife": "6f0a3c1e-2b7d-4e59-9a1c-000000000007",
    "birth": "6f0a3c1e-2b7d-4e59-9a1c-000000000008",
    "consent": "6f0a3c1e-2b7d-4e59-9a1c-000000000009",
}


def _composition(status: str) -> dict[str, Any]:
    return {
        "resourceType": "Composition",
        "id": "report",
        "meta": {"profile": [f"{BFDR}/Composition-provider-live-birth-report"]},
        "status": status,
        "type": _loinc("68998-4", "Hospital Live birth report"),
        "subject": {"reference": "Patient/child"},
        "date": "2026-11-20T14:05:00+00:00",
        "author": [{"reference": "Practitioner/midwife"}],
        "title": "Provider live birth report",
    }


def _patients(family: str) -> list[dict[str, Any]]:
    mother = {
        "resourceType": "Patient",
        "id": "mother",
        "meta": {"profile": [f"{VRCL}/Patient-mother-vr|2.0.0"]},
        "name": [{"use": "official", "family": family, "given": ["Alex"]}],
        "gender": "female",
        "birthDate": "1994-03-02",
        "address": [{"postalCode": "84101", "country": "US"}],
    }
    child = {
        "resourceType": "Patient",
        "id": "child",
        "meta": {"profile": [f"{VRCL}/Patient-child-vr|2.0.0"]},
        "gender": "female",
        "birthDate": "2026-11-19",
        "multipleBirthBoolean": False,
    }
    return [mother, child]


def _observations() -> list[dict[str, Any]]:
    child = {"reference": "Patient/child"}
    return [
        {
            "resourceType": "Observation",
            "id": "weight",
            "status": "final",
            "code": _loinc("8339-4", "Birth weight Measured"),
            "subject": child,
            "valueQuantity": {"value": 3320, "unit": "g", "system": UCUM, "code": "g"},
        },
        {
            "resourceType": "Observation",
            "id": "gestation",
            "status": "final",
            "code": _loinc("11884-4", "Gestational age Estimated"),
            "subject": child,
            "valueQuantity": {"value": 39, "unit": "wk", "system": UCUM, "code": "wk"},
        },
        {
            "resourceType": "Observation",
            "id": "apgar5",
            "status": "final",
            "code": _loinc("9274-2", "5 minute Apgar Score"),
            "subject": child,
            "valueQuantity": {"value": 9, "unit": "{score}", "system": UCUM, "code": "{score}"},
        },
    ]


def _care() -> list[dict[str, Any]]:
    midwife = {
        "resourceType": "Practitioner",
        "id": "midwife",
        "identifier": [
            {"system": "urn:example:staff", "value": "MW-0042"},
            {"system": "http://hl7.org/fhir/sid/us-npi", "value": "1234567893"},
        ],
        "name": [{"text": "Sam Rivera", "family": "Rivera", "given": ["Sam"], "suffix": ["CNM"]}],
        "qualification": [{"code": {"text": "Certified Nurse Midwife"}}],
    }
    birth = {
        "resourceType": "Encounter",
        "id": "birth",
        "status": "finished",
        "class": {"system": ACT_CODE, "code": "IMP", "display": "inpatient encounter"},
        "subject": {"reference": "Patient/mother"},
        "participant": [
            {
                "type": [{"coding": [{"system": PARTICIPATION, "code": "ATND"}]}],
                "individual": {"reference": "Practitioner/midwife"},
            }
        ],
    }
    consent = {
        "resourceType": "Consent",
        "id": "consent",
        "status": "active",
        "scope": {
            "coding": [
                {
                    "system": "http://terminology.hl7.org/CodeSystem/consentscope",
                    "code": "patient-privacy",
                }
            ]
        },
        "category": [_loinc("59284-0", "Patient Consent")],
        "patient": {"reference": "Patient/mother"},
        "dateTime": "2026-11-19T08:00:00+00:00",
        "policyRule": {"coding": [{"system": ACT_CODE, "code": "OPTIN"}]},
    }
    return [midwife, birth, consent]


def course_document(
    chart: str, *, system: str = CHART_SYSTEM, family: str = "Example"
) -> dict[str, Any]:
    """One course of care as a BFDR document Bundle, under chart number ``chart``."""
    resources = [_composition("final"), *_patients(family), *_observations(), *_care()]
    return {
        "resourceType": "Bundle",
        "meta": {"lastUpdated": "2026-11-20T14:05:00+00:00"},
        "identifier": {"system": system, "value": chart},
        "type": "document",
        "timestamp": "2026-11-20T14:05:00+00:00",
        "entry": [_entry(resource) for resource in resources],
    }


SINGLE_COURSE = course_document("2026-000123")

BATCH = {
    "resourceType": "Bundle",
    "type": "batch",
    "entry": [
        {
            "fullUrl": "urn:uuid:6f0a3c1e-2b7d-4e59-9a1c-0000000000b1",
            "resource": course_document("2026-000123"),
            "request": {"method": "POST", "url": "Bundle"},
        },
        {
            "fullUrl": "urn:uuid:6f0a3c1e-2b7d-4e59-9a1c-0000000000b2",
            "resource": course_document("2026-000124", family="Sample"),
            "request": {"method": "POST", "url": "Bundle"},
        },
    ],
}

RETRACTION_BY_COMPOSITION = {
    "resourceType": "Bundle",
    "meta": {"lastUpdated": "2026-11-21T09:00:00+00:00"},
    "identifier": {"system": CHART_SYSTEM, "value": "2026-000123"},
    "type": "document",
    "timestamp": "2026-11-21T09:00:00+00:00",
    "entry": [_entry(_composition("entered-in-error"))],
}

RETRACTION_BY_DELETE = {
    "resourceType": "Bundle",
    "type": "transaction",
    "entry": [
        {
            "request": {
                "method": "DELETE",
                "url": f"Bundle?identifier={CHART_SYSTEM}|2026-000123",
            }
        }
    ],
}


def nvss_message(event: str, parameters: list[dict[str, Any]], document: Any = None) -> Any:
    """An NVSS FHIR message: MessageHeader, Parameters and (for submissions) the document."""
    header: dict[str, Any] = {
        "resourceType": "MessageHeader",
        "id": "header",
        "eventUri": f"http://nchs.cdc.gov/{event}",
        "destination": [{"endpoint": "http://nchs.cdc.gov/bfdr_submission"}],
        "source": {"endpoint": "https://ehr.example.org/nvss"},
    }
    entries = [
        {"fullUrl": "urn:uuid:6f0a3c1e-2b7d-4e59-9a1c-0000000000c1", "resource": header},
        {
            "fullUrl": "urn:uuid:6f0a3c1e-2b7d-4e59-9a1c-0000000000c2",
            "resource": {"resourceType": "Parameters", "id": "ids", "parameter": parameters},
        },
    ]
    if document is not None:
        document_url = "urn:uuid:6f0a3c1e-2b7d-4e59-9a1c-0000000000c3"
        header["focus"] = [{"reference": document_url}]
        entries.append({"fullUrl": document_url, "resource": document})
    return {
        "resourceType": "Bundle",
        "type": "message",
        "timestamp": "2026-11-20T14:06:00+00:00",
        "entry": entries,
    }


def nvss_parameters(cert_no: int, *, block_count: int | None = None) -> list[dict[str, Any]]:
    parameters: list[dict[str, Any]] = [
        {"name": "cert_no", "valueUnsignedInt": cert_no},
        {"name": "event_year", "valueUnsignedInt": 2026},
        {"name": "jurisdiction_id", "valueString": "UT"},
    ]
    if block_count is not None:
        parameters.append({"name": "block_count", "valueUnsignedInt": block_count})
    return parameters


NVSS_SUBMISSION = nvss_message(
    "birth_submission",
    nvss_parameters(123),
    course_document("2026UT000123", system=NVSS_RECORD_ID),
)

NVSS_VOID = nvss_message("birth_submission_void", nvss_parameters(123, block_count=2))

SUBMISSIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "One course of care": (
        "A BFDR provider live birth report: a document Bundle holding one course of care.",
        SINGLE_COURSE,
    ),
    "Batch": (
        "A batch: each entry's resource is a document Bundle holding one course of care.",
        BATCH,
    ),
    "Retraction by Composition": (
        "Voids chart 2026-000123: a document whose Composition is entered-in-error.",
        RETRACTION_BY_COMPOSITION,
    ),
    "Retraction by DELETE": (
        "Voids chart 2026-000123: a transaction entry with request.method DELETE.",
        RETRACTION_BY_DELETE,
    ),
    "NVSS submission message": (
        "An NVSS birth_submission message carrying the document (chart 2026UT000123).",
        NVSS_SUBMISSION,
    ),
    "NVSS void message": (
        "An NVSS birth_submission_void: voids certificates 123 and 124 of UT 2026.",
        NVSS_VOID,
    ),
}


def example(name: str) -> dict[str, Any]:
    """A deep copy of the named submission example, safe to change."""
    return copy.deepcopy(SUBMISSIONS[name][1])
