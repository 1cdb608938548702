"""Small builders for synthetic BFDR Bundles, for the cases the corpus lacks.

Every builder returns plain dicts, as a JSON decoder would. ``course()`` is a minimal valid
course of care (one mother, one child); pass extra resources or overrides to vary it.
"""

from __future__ import annotations

from typing import Any

from ingestion.fhir import (
    Child,
    CourseOfCare,
    Rejection,
    Result,
    map_single,
    practice_fingerprint_key,
)

VR = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition"
BFDR = "http://hl7.org/fhir/us/bfdr/StructureDefinition"
MOTHER_PROFILE = f"{VR}/Patient-mother-vr"
CHILD_PROFILE = f"{VR}/Patient-child-vr"
FETUS_PROFILE = f"{BFDR}/Patient-decedent-fetus"
LOINC = "http://loinc.org"
NPI = "http://hl7.org/fhir/sid/us-npi"
BIRTH_TIME = "http://hl7.org/fhir/StructureDefinition/patient-birthTime"
KEY = practice_fingerprint_key(b"test-master-key", 7)

Resource = dict[str, Any]


def mother(**fields: Any) -> Resource:
    patient: Resource = {
        "resourceType": "Patient",
        "id": "mother-1",
        "meta": {"profile": [MOTHER_PROFILE]},
        "name": [{"use": "official", "family": "Quinn", "given": ["Jada", "Ann"]}],
        "birthDate": "1990-05-20",
        "address": [{"postalCode": "84116"}],
    }
    patient.update(fields)
    return patient


def child(patient_id: str = "child-1", *, profile: str = CHILD_PROFILE, **fields: Any) -> Resource:
    patient: Resource = {
        "resourceType": "Patient",
        "id": patient_id,
        "meta": {"profile": [profile]},
        "birthDate": "2024-03-09",
        "gender": "female",
    }
    patient.update(fields)
    return patient


def observation(code: str, *, subject: str = "Patient/child-1", **value: Any) -> Resource:
    """An Observation coded with LOINC ``code``; pass valueQuantity=..., valueInteger=..."""
    return {
        "resourceType": "Observation",
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": code}]},
        "subject": {"reference": subject},
        **value,
    }


def quantity(value: Any, code: str | None = None, unit: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"value": value}
    if code is not None:
        found["code"] = code
    if unit is not None:
        found["unit"] = unit
    return found


def weight(value: Any, code: str | None = "g", **fields: Any) -> Resource:
    return observation("8339-4", valueQuantity=quantity(value, code), **fields)


def practitioner(practitioner_id: str | None = "p1", **fields: Any) -> Resource:
    resource: Resource = {"resourceType": "Practitioner", **fields}
    if practitioner_id is not None:
        resource["id"] = practitioner_id
    return resource


def qualified(practitioner_id: str, text: str, **fields: Any) -> Resource:
    """A Practitioner whose qualification reads ``text``."""
    return practitioner(practitioner_id, qualification=[{"code": {"text": text}}], **fields)


def participant(reference: str, *codes: str, system: str | None = None) -> dict[str, Any]:
    coding = [
        {"code": code} if system is None else {"system": system, "code": code} for code in codes
    ]
    found: dict[str, Any] = {"individual": {"reference": reference}}
    if coding:
        found["type"] = [{"coding": coding}]
    return found


def encounter(
    *participants: dict[str, Any],
    admit_source: str | None = None,
    discharge_disposition: str | None = None,
) -> Resource:
    resource: Resource = {"resourceType": "Encounter", "participant": list(participants)}
    hospitalization: dict[str, Any] = {}
    if admit_source is not None:
        hospitalization["admitSource"] = {"coding": [{"code": admit_source}]}
    if discharge_disposition is not None:
        hospitalization["dischargeDisposition"] = {"coding": [{"code": discharge_disposition}]}
    if hospitalization:
        resource["hospitalization"] = hospitalization
    return resource


def consent(status: str = "active", **fields: Any) -> Resource:
    return {"resourceType": "Consent", "status": status, **fields}


def composition(status: str = "final") -> Resource:
    return {"resourceType": "Composition", "status": status}


def entry(resource: Any, full_url: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"resource": resource}
    if full_url is not None:
        found["fullUrl"] = full_url
    return found


def document(*items: Any, chart: Any = "CHART-1", **fields: Any) -> Resource:
    """A document Bundle; items are resources (given a urn:uuid fullUrl) or ready entries."""
    entries = [
        item if _is_entry(item) else entry(item, f"urn:uuid:entry-{index}")
        for index, item in enumerate(items)
    ]
    bundle: Resource = {"resourceType": "Bundle", "type": "document", "entry": entries}
    if chart is not None:
        bundle["identifier"] = {"system": "urn:example:charts", "value": chart}
    bundle.update(fields)
    return bundle


def course(*extra: Any, mother_patient: Any = None, **fields: Any) -> Resource:
    """A minimal valid course: composition, mother, child ``child-1``, then ``extra``."""
    return document(composition(), mother_patient or mother(), child(), *extra, **fields)


def message(
    carried: Resource | None,
    *,
    event: str | None = "http://nchs.cdc.gov/birth_submission",
    focus: str | None = "urn:uuid:document-1",
) -> Resource:
    header: Resource = {"resourceType": "MessageHeader", "id": "header-1"}
    if event is not None:
        header["eventUri"] = event
    if focus is not None:
        header["focus"] = [{"reference": focus}]
    entries = [entry(header, "urn:uuid:header-1"), entry({"resourceType": "Parameters"})]
    if carried is not None:
        entries.append(entry(carried, "urn:uuid:document-1"))
    return {"resourceType": "Bundle", "type": "message", "entry": entries}


def batch(*entries: Any, bundle_type: str = "batch") -> Resource:
    return {"resourceType": "Bundle", "type": bundle_type, "entry": list(entries)}


def delete(url: Any, resource: Any = None) -> dict[str, Any]:
    found: dict[str, Any] = {"request": {"method": "DELETE", "url": url}}
    if resource is not None:
        found["resource"] = resource
    return found


def mapped(bundle: Any) -> Result:
    return map_single(bundle, fingerprint_key=KEY)


def course_of(bundle: Any) -> CourseOfCare:
    result = mapped(bundle)
    assert isinstance(result, CourseOfCare), result
    return result


def rejection_of(bundle: Any) -> Rejection:
    result = mapped(bundle)
    assert isinstance(result, Rejection), result
    return result


def only_child(bundle: Any) -> Child:
    (found,) = course_of(bundle).children
    return found


def issues(rejection: Rejection) -> list[dict[str, Any]]:
    return list(rejection.operation_outcome["issue"])


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and "resourceType" not in item
