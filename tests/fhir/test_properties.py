"""Properties of the mapping: total over any JSON, and never leaking identifying data.

Totality is checked strictly: a result whose OperationOutcome has code ``exception`` means
the last-resort guard caught a bug, so it fails the property just like a raise would.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import date, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.fhir import (
    CourseOfCare,
    Rejection,
    Result,
    Retraction,
    Void,
    entry_head,
    map_batch_entry,
    map_single,
    submission_kind,
)
from tests.fhir import builders as b

CORPUS = Path(__file__).resolve().parents[1] / "fixtures/bfdr-examples"
CORPUS_SAMPLES = (
    "BasicBirthRecord2.json",
    "BirthRecordSubmissionMessage.json",
    "BatchSingleBirthMessage.json",
    "FetalDeathReport.json",
    "BirthRecordVoidMessage.json",
)
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Keys and strings the mapping reads, so that random JSON reaches past the first check.
FHIR_KEYS = [
    "resourceType", "type", "identifier", "value", "meta", "profile", "lastUpdated",
    "timestamp", "entry", "fullUrl", "resource", "request", "method", "url", "code", "coding",
    "system", "subject", "reference", "valueQuantity", "unit", "valueInteger", "participant",
    "individual", "hospitalization", "admitSource", "dischargeDisposition", "provision",
    "status", "dateTime", "birthDate", "_birthDate", "extension", "valueDateTime", "valueCode",
    "name", "family", "given", "suffix", "text", "display", "qualification", "id", "gender",
    "multipleBirthInteger", "address", "postalCode", "eventUri", "eventCoding", "focus",
]  # fmt: skip
FHIR_STRINGS = [
    "Bundle", "Patient", "Observation", "Practitioner", "Encounter", "Consent",
    "Composition", "MessageHeader", "message", "document", "batch", "DELETE", "active",
    "deny", "entered-in-error", "8339-4", "11884-4", "9272-6", "ATND", "hosp-trans",
    "other-hcf", "g", "kg", "wk", "d", "[lb_av]", "official", "female", "Patient/c",
    "Practitioner/p", "urn:uuid:c", "Bundle?identifier=x|C-1", "Bundle/C-1",
    "2024-03-09", "2024-03-09T10:00:00Z", "http://nchs.cdc.gov/birth_submission",
    b.MOTHER_PROFILE, b.CHILD_PROFILE, b.FETUS_PROFILE, f"{b.MOTHER_PROFILE}|2.0.0",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(FHIR_STRINGS),
)
keys = st.one_of(st.sampled_from(FHIR_KEYS), st.text(max_size=8))
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(keys, children, max_size=6),
    ),
    max_leaves=40,
)


def walk_results(value: Any) -> Any:
    """Every scalar reachable from a result: dataclass fields, containers, dict keys."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from walk_results(getattr(value, field.name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from walk_results(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from walk_results(item)
    else:
        yield value


def assert_a_proper_result(result: object, reference: str) -> None:
    assert isinstance(result, CourseOfCare | Retraction | Void | Rejection), result
    assert result.reference == reference
    if isinstance(result, Rejection):
        codes = [issue["code"] for issue in result.operation_outcome["issue"]]
        assert "exception" not in codes, result  # the guard caught a bug


def map_as_the_worker_does(bundle: object) -> list[Result]:
    entries = b_entries(bundle)
    kind = submission_kind(
        bundle.get("type") if isinstance(bundle, dict) else None,
        [entry_head(entry) for entry in entries],
    )
    if kind == "single":
        result = map_single(bundle, fingerprint_key=b.KEY)
        assert_a_proper_result(result, "Bundle")
        return [result]
    results = []
    for index, entry in enumerate(entries):
        found = map_batch_entry(entry, index, fingerprint_key=b.KEY)
        if found is not None:
            assert_a_proper_result(found, f"Bundle.entry[{index}]")
            results.append(found)
    return results


def b_entries(bundle: object) -> list[Any]:
    entries = bundle.get("entry") if isinstance(bundle, dict) else None
    return entries if isinstance(entries, list) else []


# (1) totality


@PROPERTY
@given(json_values)
def test_any_json_value_maps_to_a_result_without_raising(value: object) -> None:
    assert_a_proper_result(map_single(value, fingerprint_key=b.KEY), "Bundle")
    entry = map_batch_entry(value, 3, fingerprint_key=b.KEY)
    if entry is not None:
        assert_a_proper_result(entry, "Bundle.entry[3]")
    entry_head(value)


@PROPERTY
@given(st.lists(json_values, max_size=6), st.sampled_from(["document", "batch", "message", 3]))
def test_any_entries_in_any_bundle_map_without_raising(entries: list, bundle_type: object) -> None:
    map_as_the_worker_does({"resourceType": "Bundle", "type": bundle_type, "entry": entries})


small_json = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=8,
)
junk_resources = st.builds(
    lambda kind, fields: {**fields, "resourceType": kind},
    st.sampled_from(FHIR_STRINGS[:8]),
    st.dictionaries(st.sampled_from(FHIR_KEYS), small_json, max_size=8),
)


@PROPERTY
@given(st.lists(junk_resources, max_size=8))
def test_resources_with_junk_fields_map_without_raising(resources: list) -> None:
    map_as_the_worker_does(b.document(*resources))


def all_paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix]
    if isinstance(tree, dict):
        for key, item in tree.items():
            paths += all_paths(item, (*prefix, key))
    elif isinstance(tree, list):
        for index, item in enumerate(tree):
            paths += all_paths(item, (*prefix, index))
    return paths


def rich_course() -> dict:
    return b.course(
        b.weight(3.4, "kg"),
        b.observation("9272-6", valueInteger=8),
        b.qualified("p1", "Certified Nurse Midwife"),
        b.encounter(b.participant("Practitioner/p1", "ATND"), admit_source="hosp-trans"),
        b.consent("active", provision={"type": "permit", "provision": [{"type": "deny"}]}),
        meta={"lastUpdated": "2024-03-10T08:15:00Z"},
    )


def base_bundles() -> list[dict]:
    bases = [rich_course(), b.message(rich_course()), b.batch(b.delete("Bundle/C-1"))]
    return bases + [orjson.loads((CORPUS / name).read_bytes()) for name in CORPUS_SAMPLES]


def read_paths(tree: Any) -> list[tuple]:
    """Paths ending at an element the mapping reads (or an array item), where bugs would hide."""
    read = set(FHIR_KEYS)
    return [
        path
        for path in all_paths(tree)
        if not path or path[-1] in read or isinstance(path[-1], int)
    ]


BASES = [(base, read_paths(base)) for base in base_bundles()]
BASE_BYTES = [orjson.dumps(base) for base, _ in BASES]


def replace(tree: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return tree


@PROPERTY
@given(st.data())
def test_corpus_and_built_bundles_with_random_subtrees_replaced_map_without_raising(
    data: st.DataObject,
) -> None:
    which = data.draw(st.integers(min_value=0, max_value=len(BASES) - 1))
    bundle = orjson.loads(BASE_BYTES[which])  # a fresh copy to mutate
    paths = BASES[which][1]
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        path = paths[data.draw(st.integers(min_value=0, max_value=len(paths) - 1))]
        try:
            bundle = replace(bundle, path, data.draw(json_values))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    map_as_the_worker_does(bundle)


WRONG_TYPES = (None, True, 0, -1, 1e308 * 10, math.nan, "", "x" * 100_000, [], [None], {}, {"x": 1})


@pytest.mark.parametrize("which", range(len(BASES)), ids=lambda i: f"base{i}")
def test_every_read_element_replaced_by_each_wrong_type_maps_without_raising(which: int) -> None:
    """Exhaustive single-point mutation: what random mutation only reaches by luck."""
    bundle = orjson.loads(BASE_BYTES[which])
    for path in BASES[which][1]:
        if not path:
            continue
        parent = bundle
        for step in path[:-1]:
            parent = parent[step]
        original = parent[path[-1]]
        for wrong in WRONG_TYPES:
            parent[path[-1]] = wrong
            map_as_the_worker_does(bundle)
        parent[path[-1]] = original


# (2) no leak

letters = st.text(alphabet="abcdefghijklmnoprstuvwyéöñçåÆß", min_size=2, max_size=10)
marker_names = letters.map(lambda tail: "Zqx" + tail)
birth_dates = st.dates(min_value=date(1950, 1, 1), max_value=date(2040, 12, 31))
postal_codes = st.from_regex(r"[QXZ][0-9]{4}(-[0-9]{4})?", fullmatch=True)
clock_times = st.from_regex(r"[01][0-9]:[0-5][0-9]:[0-5][0-9]", fullmatch=True)
STAMP = "2099-06-01T12:00:00Z"  # far from every generated birth date


@st.composite
def identifying_bundles(draw: st.DrawFn) -> tuple[dict, list[str]]:
    family, given, child_given = draw(marker_names), draw(marker_names), draw(marker_names)
    mother_born, child_born = draw(birth_dates), draw(birth_dates)
    postal_code, birth_time = draw(postal_codes), draw(clock_times)
    mother_id, child_id = f"pid-{draw(marker_names)}", f"pid-{draw(marker_names)}"
    mother = b.mother(
        id=mother_id,
        name=[{"use": "official", "family": family, "given": [given], "text": f"{given} {family}"}],
        birthDate=mother_born.isoformat(),
        address=[{"line": [f"1 {family} Street"], "postalCode": postal_code}],
        telecom=[{"system": "phone", "value": f"tel-{given}"}],
        identifier=[{"system": "urn:mrn", "value": f"mrn-{family}"}],
    )
    birth_time_value = f"{child_born.isoformat()}T{birth_time}-05:00"
    child = b.child(
        child_id,
        name=[{"family": family, "given": [child_given]}],
        birthDate=child_born.isoformat(),
        _birthDate={"extension": [{"url": b.BIRTH_TIME, "valueDateTime": birth_time_value}]},
    )
    resources = [b.composition(), mother, child, b.weight(3000, subject=f"Patient/{child_id}")]
    resources += draw(st.sampled_from(BREAKAGES))(mother, child)
    bundle = b.document(*resources, chart="chart-abc", timestamp=STAMP)
    if draw(st.booleans()):
        bundle = b.message(bundle)
    secrets = [family, given, child_given, mother_id, child_id, postal_code, birth_time]
    secrets += [mother_born.isoformat(), child_born.isoformat(), birth_time_value]
    secrets += [f"tel-{given}", f"mrn-{family}", family.casefold()]
    return bundle, secrets


BREAKAGES = [
    lambda mother, child: [],  # a valid course
    lambda mother, child: [dict(mother, id="second")],  # two mothers
    lambda mother, child: [b.consent("active", dateTime=child["birthDate"] + "T99")],
    lambda mother, child: [
        b.practitioner("p1", name=[{"text": "Grace Okafor"}]),
        b.encounter(b.participant(f"Patient/{mother['id']}", "ATND")),
    ],
    lambda mother, child: [b.observation("8339-4", subject=mother["id"], valueInteger=1)],
]


def leaked(results: list[Result], secrets: list[str]) -> list[tuple[str, str]]:
    found = []
    for value in (v for result in results for v in walk_results(result)):
        text = value.isoformat() if isinstance(value, datetime) else value
        if isinstance(text, str):
            found += [(secret, text) for secret in secrets if secret and secret in text]
    return found


@PROPERTY
@given(identifying_bundles())
def test_no_result_field_holds_a_name_full_date_postal_code_or_patient_id(
    case: tuple[dict, list[str]],
) -> None:
    bundle, secrets = case
    assert leaked(map_as_the_worker_does(bundle), secrets) == []


@PROPERTY
@given(identifying_bundles(), st.sampled_from(["identifier", "timestamp", "entry"]))
def test_rejections_never_echo_identifying_values(
    case: tuple[dict, list[str]], element: str
) -> None:
    bundle, secrets = case
    bundle[element] = secrets[0] if element != "entry" else [{"resource": secrets[5]}]
    results = map_as_the_worker_does(bundle)
    assert leaked(results, secrets) == []


def test_the_leak_walk_would_see_a_leak() -> None:
    # guards the property above against a walk that silently finds nothing
    planted = Rejection("Bundle", {"issue": [{"diagnostics": "Zqxabc"}]})
    assert leaked([planted], ["Zqxabc"]) == [("Zqxabc", "Zqxabc")]
