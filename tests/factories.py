"""Synthetic BFDR Bundles for the API, lifecycle and worker tests (and the benchmark).

Each course of care is a realistic document Bundle: a mother and a child Patient with VRCL
profiles, weight, gestational age and Apgar Observations, a Practitioner, an Encounter with an
ATND participant and a Consent. The mother's name and the child's birth date drive the
duplicate fingerprint; the chart number is ``identifier.value``.
"""

from __future__ import annotations

from typing import Any

import orjson

VR = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition"
LOINC = "http://loinc.org"
BIRTH_TIME = "http://hl7.org/fhir/StructureDefinition/patient-birthTime"


def course(
    chart: str,
    *,
    family: str = "Quinn",
    given: str = "Jada",
    born: str = "2024-03-09",
    last_updated: str | None = None,
    weight_grams: int = 3300,
    weeks: int = 39,
    apgar5: int = 9,
    consent: str | None = "active",
    midwife: str = "MW-1",
    birth_time: str | None = None,
    multiple_birth: int | None = None,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [
        {
            "fullUrl": "urn:uuid:mother",
            "resource": {
                "resourceType": "Patient",
                "id": "mother",
                "meta": {"profile": [f"{VR}/Patient-mother-vr|2.0.0"]},
                "name": [{"use": "official", "family": family, "given": [given]}],
                "birthDate": "1990-05-20",
                "address": [{"postalCode": "84116-1234"}],
            },
        },
        {
            "fullUrl": "urn:uuid:child",
            "resource": child(born=born, birth_time=birth_time, multiple_birth=multiple_birth),
        },
        _observation("8339-4", valueQuantity={"value": weight_grams, "unit": "g", "code": "g"}),
        _observation("11884-4", valueQuantity={"value": weeks, "unit": "wk", "code": "wk"}),
        _observation("9274-2", valueInteger=apgar5),
        {
            "fullUrl": "urn:uuid:practitioner",
            "resource": {
                "resourceType": "Practitioner",
                "id": "practitioner",
                "identifier": [
                    {"system": "urn:example:staff", "value": midwife},
                    {"system": "http://hl7.org/fhir/sid/us-npi", "value": "1234567893"},
                ],
                "name": [{"text": "Sam Rivera", "suffix": ["CNM"]}],
                "qualification": [{"code": {"text": "Certified Nurse Midwife"}}],
            },
        },
        {
            "resource": {
                "resourceType": "Encounter",
                "status": "finished",
                "class": {"code": "IMP"},
                "participant": [
                    {
                        "type": [{"coding": [{"code": "ATND"}]}],
                        "individual": {"reference": "urn:uuid:practitioner"},
                    }
                ],
            }
        },
    ]
    if consent is not None:
        entries.append(
            {
                "resource": {
                    "resourceType": "Consent",
                    "status": consent,
                    "scope": {"coding": [{"code": "patient-privacy"}]},
                    "category": [{"coding": [{"system": LOINC, "code": "59284-0"}]}],
                }
            }
        )
    entries.extend(extra or [])
    bundle: dict[str, Any] = {
        "resourceType": "Bundle",
        "type": "document",
        "identifier": {"system": "urn:example:chart", "value": chart},
        "entry": entries,
    }
    if last_updated is not None:
        bundle["meta"] = {"lastUpdated": last_updated}
    return bundle


def child(
    *,
    born: str = "2024-03-09",
    birth_time: str | None = None,
    multiple_birth: int | None = None,
    patient_id: str = "child",
) -> dict[str, Any]:
    """A newborn Patient; ``birth_time`` (``hh:mm``, local -07:00) goes in the BFDR extension."""
    patient: dict[str, Any] = {
        "resourceType": "Patient",
        "id": patient_id,
        "meta": {"profile": [f"{VR}/Patient-child-vr|2.0.0"]},
        "gender": "female",
        "birthDate": born,
    }
    if birth_time is not None:
        moment = f"{born}T{birth_time}:00-07:00"
        patient["_birthDate"] = {"extension": [{"url": BIRTH_TIME, "valueDateTime": moment}]}
    if multiple_birth is not None:
        patient["multipleBirthInteger"] = multiple_birth
    return patient


def _observation(code: str, **value: Any) -> dict[str, Any]:
    return {
        "resource": {
            "resourceType": "Observation",
            "status": "final",
            "code": {"coding": [{"system": LOINC, "code": code}]},
            "subject": {"reference": "urn:uuid:child"},
            **value,
        }
    }


def retraction_document(chart: str) -> dict[str, Any]:
    """A course of care whose Composition says entered-in-error: it retracts the chart."""
    return {
        "resourceType": "Bundle",
        "type": "document",
        "identifier": {"value": chart},
        "entry": [{"resource": {"resourceType": "Composition", "status": "entered-in-error"}}],
    }


def delete_entry(chart: str, *, form: str = "search") -> dict[str, Any]:
    url = f"Bundle?identifier=urn:example:chart|{chart}" if form == "search" else f"Bundle/{chart}"
    return {"request": {"method": "DELETE", "url": url}}


def batch(*items: dict[str, Any], kind: str = "batch") -> dict[str, Any]:
    """A batch Bundle: Bundles become entries, request-only dicts stay as they are."""
    entries = [
        item if item.get("resourceType") != "Bundle" else {"resource": item} for item in items
    ]
    return {"resourceType": "Bundle", "type": kind, "entry": entries}


def dumps(bundle: dict[str, Any]) -> bytes:
    return orjson.dumps(bundle)


def letters(number: int) -> str:
    """A distinct letters-only name part for ``number``: the fingerprint ignores digits."""
    name = ""
    number += 1
    while number:
        number, remainder = divmod(number - 1, 26)
        name = chr(ord("a") + remainder) + name
    return name.capitalize()
