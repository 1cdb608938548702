"""How long the pure mapping takes per course of care.

``python -m bench.mapping`` prints the median cost in microseconds of ``map_single`` for
(a) a realistic ten-resource course built here and (b) large documents of the BFDR corpus
(the copy in ``tests/fixtures/bfdr-examples``). Figures
only: nothing asserts on time.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from ingestion.fhir import CourseOfCare, map_single, practice_fingerprint_key

CORPUS = Path(__file__).resolve().parents[1] / "tests/fixtures/bfdr-examples"
CORPUS_FILES = ("BasicBirthRecord.json", "BirthRecordBabyGQuinn.json", "FetalDeathReport.json")
VR = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition"
ROUNDS, CALLS_PER_ROUND = 41, 250


def realistic_course() -> dict[str, Any]:
    """Composition, mother, child, four Observations, Practitioner, Encounter, Consent."""
    child = "urn:uuid:child-1"
    midwife = "urn:uuid:practitioner-1"
    resources = [
        {"resourceType": "Composition", "status": "final"},
        _patient("mother", "1988-04-02", family="Fernández", given=["Ana", "María"]),
        _patient("child", "2024-03-09"),
        _observation("8339-4", {"value": 3.41, "unit": "kg", "code": "kg"}),
        _observation("11884-4", {"value": 39, "unit": "wk", "code": "wk"}),
        _observation("9272-6", {"value": 8, "code": "{score}"}),
        _observation("9274-2", {"value": 9, "code": "{score}"}),
        {
            "resourceType": "Practitioner",
            "id": "p1",
            "identifier": [
                {"system": "http://hl7.org/fhir/sid/us-npi", "value": "1234567893"},
                {"system": "https://practice.example/staff", "value": "MW-0042"},
            ],
            "name": [{"family": "Okafor", "given": ["Grace"], "suffix": ["CNM"]}],
            "qualification": [{"code": {"text": "Certified Nurse Midwife"}}],
        },
        {
            "resourceType": "Encounter",
            "participant": [
                {"type": [{"coding": [{"code": "ATND"}]}], "individual": {"reference": midwife}}
            ],
        },
        {"resourceType": "Consent", "status": "active", "dateTime": "2024-03-01T10:00:00Z"},
    ]
    full_urls = [f"urn:uuid:r{i}" for i in range(len(resources))]
    full_urls[2], full_urls[7] = child, midwife
    return {
        "resourceType": "Bundle",
        "type": "document",
        "identifier": {"value": "CHART-2024-0001"},
        "meta": {"lastUpdated": "2024-03-10T08:15:00.123+01:00"},
        "entry": [
            {"fullUrl": url, "resource": resource}
            for url, resource in zip(full_urls, resources, strict=True)
        ],
    }


def _patient(role: str, born: str, **name: Any) -> dict[str, Any]:
    patient: dict[str, Any] = {
        "resourceType": "Patient",
        "meta": {"profile": [f"{VR}/Patient-{role}-vr|2.0.0"]},
        "birthDate": born,
        "gender": "female",
    }
    if name:
        patient["name"] = [{"use": "official", **name}]
        patient["address"] = [{"postalCode": "84116"}]
    return patient


def _observation(code: str, quantity: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "code": {"coding": [{"system": "http://loinc.org", "code": code}]},
        "subject": {"reference": "urn:uuid:child-1"},
        "valueQuantity": quantity,
    }


def median_microseconds(bundle: dict[str, Any], key: bytes) -> float:
    # timing a Rejection (say, from the exception guard) would flatter the figures
    result = map_single(bundle, fingerprint_key=key)
    if not isinstance(result, CourseOfCare):
        raise RuntimeError(f"the bench Bundle did not map to a course of care: {result}")
    rounds = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(CALLS_PER_ROUND):
            map_single(bundle, fingerprint_key=key)
        rounds.append((time.perf_counter() - started) / CALLS_PER_ROUND * 1e6)
    return round(statistics.median(rounds), 1)


def run() -> dict[str, Any]:
    key = practice_fingerprint_key(b"bench-master-key", 1)
    course = realistic_course()
    figures: dict[str, Any] = {
        "realistic_course": {
            "resources": len(course["entry"]),
            "microseconds": median_microseconds(course, key),
        }
    }
    for name in CORPUS_FILES:
        path = CORPUS / name
        if path.exists():
            bundle = json.loads(path.read_text())
            figures[name] = {
                "resources": len(bundle.get("entry", [])),
                "microseconds": median_microseconds(bundle, key),
            }
    return figures


if __name__ == "__main__":
    for label, figure in run().items():
        print(f"{label:40} {figure['resources']:3d} resources  {figure['microseconds']:8.1f} µs")
