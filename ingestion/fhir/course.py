"""One course of care: a document Bundle (or a message carrying one) to a Result.

One pass over the entries sorts out the resources the spec reads (2.2); everything else is
ignored. Then, in order: the chart number; a Composition ``entered-in-error`` makes the
Bundle a retraction (it needs no mother or child); otherwise the structural rules (exactly
one mother, at least one child), the chart number and the stale-guard stamp are all
checked, and every failure is reported in one OperationOutcome.

Stamp: the document's ``meta.lastUpdated``, else its ``timestamp``; inside a message with
neither, the message's own. A stamp that is present but does not parse rejects the record
(``invalid``): guessing would defeat the stale-update guard.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, NamedTuple

from . import plausibility
from .chart import read_chart_number
from .consent import consent_decided, consent_decision
from .dates import parse_datetime
from .encounters import Attendance
from .masking import (
    birth_time_key,
    birth_year,
    fingerprint,
    mother_age_as_sent,
    mother_age_years,
    newborn_date,
    postal_prefix,
    timeliness,
)
from .messages import Unwrapped, unwrap_message
from .model import Child, CourseOfCare, Provider, Rejection, Result, Retraction, Sex
from .observations import (
    Measure,
    apgar_as_sent,
    gestation_days_as_sent,
    measure_of,
    plausible_apgar,
    plausible_gestation,
    plausible_weight,
    weight_as_sent,
)
from .outcome import error_outcome, issue, operation_outcome
from .plausibility import Reading
from .practitioners import carries_attendant_marker, provider_from
from .references import ReferenceIndex
from .roles import PatientRole, patient_role
from .values import as_dict, as_list, whole_number
from .voids import is_void_message, read_void

_SEXES: frozenset[Sex] = frozenset({"female", "male", "other", "unknown"})
_MOST_BIRTHS = 20  # a larger multipleBirthInteger is not a birth order

Entry = Mapping[str, Any]
Resource = Mapping[str, Any]


@dataclass(slots=True)
class Contents:
    """The resources of a document that the mapping reads, in document order.

    Patients and Observations keep their entry's index: warnings name their elements.
    """

    patients: list[tuple[int, Entry, Resource]] = field(default_factory=list)
    observations: list[tuple[int, Resource]] = field(default_factory=list)
    practitioners: list[tuple[Entry, Resource]] = field(default_factory=list)
    encounters: list[Resource] = field(default_factory=list)
    consent: Resource | None = None
    retracted: bool = False

    def add(self, index: int, entry: Entry, resource: Resource) -> None:
        kind = resource.get("resourceType")
        if kind == "Observation":
            self.observations.append((index, resource))
        elif kind == "Patient":
            self.patients.append((index, entry, resource))
        elif kind == "Practitioner":
            self.practitioners.append((entry, resource))
        elif kind == "Encounter":
            self.encounters.append(resource)
        elif kind == "Consent" and self.consent is None:
            self.consent = resource
        elif kind == "Composition" and resource.get("status") == "entered-in-error":
            self.retracted = True


@dataclass(slots=True)
class Cast:
    """The Patients with a role: the mother(s) and the children, in document order."""

    mothers: list[Resource] = field(default_factory=list)
    mother_entry: Entry | None = None
    mother_index: int = 0
    children: list[tuple[Entry, Resource, PatientRole]] = field(default_factory=list)
    ig_version: str | None = None

    def add(self, index: int, entry: Entry, patient: Resource) -> None:
        role, version = patient_role(patient)
        if role is None:
            return
        if self.ig_version is None:
            self.ig_version = version
        if role == "mother":
            self.mothers.append(patient)
            self.mother_entry, self.mother_index = entry, index
        else:
            self.children.append((entry, patient, role))

    def issues(self, entries_path: str) -> list[dict[str, Any]]:
        found = []
        if not self.mothers:
            found.append("no mother Patient: exactly one is required")
        elif len(self.mothers) > 1:
            found.append(f"{len(self.mothers)} mother Patients; exactly one is required")
        if not self.children:
            found.append("no child Patient: at least one is required")
        return [
            issue(
                "structure",
                f"The course of care has {problem} (roles are read from Patient.meta.profile).",
                expression=entries_path,
            )
            for problem in found
        ]


class Context(NamedTuple):
    """What the mapping is told besides the Bundle: the practice's key, the day of receipt."""

    fingerprint_key: bytes
    received_on: date | None = None  # the day the registry first received it (timeliness)


def map_course(bundle: object, *, reference: str, path: str, context: Context) -> Result:
    """Map a submitted Bundle (a document, or a message carrying one) at ``path``."""
    if as_dict(bundle).get("resourceType") != "Bundle":
        outcome = error_outcome(
            "structure",
            "The course of care is not a FHIR Bundle.",
            expression=f"{path}.resourceType",
        )
        return Rejection(reference, outcome)
    document = as_dict(bundle)
    if document.get("type") != "message":
        return map_document(document, reference, path, context)
    if is_void_message(document):
        return read_void(document, reference, path)
    unwrapped = unwrap_message(document, path)
    if not isinstance(unwrapped, Unwrapped):
        return Rejection(reference, unwrapped)
    fallback = _stamp_field(document, path)
    return map_document(unwrapped.document, reference, unwrapped.path, context, fallback)


def map_document(
    document: Resource,
    reference: str,
    path: str,
    context: Context,
    fallback_stamp: tuple[object, str] | None = None,
) -> Result:
    chart_number = read_chart_number(
        as_dict(document.get("identifier")).get("value"), f"{path}.identifier.value"
    )
    contents = _scan(document)
    if contents.retracted:
        if isinstance(chart_number, dict):
            return Rejection(reference, operation_outcome(chart_number))
        return Retraction(reference, chart_number)
    cast = Cast()
    for index, entry, patient in contents.patients:
        cast.add(index, entry, patient)
    stamp = _read_stamp(_stamp_field(document, path) or fallback_stamp)
    issues = [found for found in (chart_number, stamp) if isinstance(found, dict)]
    issues += cast.issues(f"{path}.entry")
    if isinstance(chart_number, dict) or isinstance(stamp, dict) or issues:
        known = chart_number if isinstance(chart_number, str) else None
        return Rejection(reference, operation_outcome(*issues), external_record_id=known)
    return _course(Where(reference, path), chart_number, stamp, cast, contents, context)


def _scan(document: Resource) -> Contents:
    contents = Contents()
    for index, entry in enumerate(as_list(document.get("entry"))):
        if isinstance(entry, dict):
            resource = entry.get("resource")
            if isinstance(resource, dict):
                contents.add(index, entry, resource)
    return contents


def _stamp_field(bundle: Resource, path: str) -> tuple[object, str] | None:
    last_updated = as_dict(bundle.get("meta")).get("lastUpdated")
    if last_updated is not None:
        return last_updated, f"{path}.meta.lastUpdated"
    timestamp = bundle.get("timestamp")
    if timestamp is not None:
        return timestamp, f"{path}.timestamp"
    return None


def _read_stamp(found: tuple[object, str] | None) -> datetime | dict[str, Any] | None:
    if found is None:
        return None
    value, expression = found
    stamp = parse_datetime(value)
    if stamp is not None:
        return stamp
    return issue(
        "invalid",
        "The stamp used by the stale-update guard is not a valid FHIR instant.",
        expression=expression,
    )


class Where(NamedTuple):
    """Where the course sits: its receipt reference, and the FHIRPath of its document."""

    reference: str
    path: str


def _course(
    where: Where,
    chart_number: str,
    stamp: datetime | None,
    cast: Cast,
    contents: Contents,
    context: Context,
) -> CourseOfCare:
    mother = cast.mothers[0]
    births = [newborn_date(patient) for _, patient, _ in cast.children]
    first_birth = min((born for born in births if born is not None), default=None)
    providers, attendance = _attribution(contents)
    consent_granted, consent_datetime = consent_decision(contents.consent)
    keyed = fingerprint(mother, first_birth, context.fingerprint_key)
    measured = _measured(cast, contents.observations)
    keying = Keying(keyed, context.fingerprint_key)
    mother_age = mother_age_as_sent(mother, first_birth)
    return CourseOfCare(
        reference=where.reference,
        external_record_id=chart_number,
        fingerprint=keyed,
        children=tuple(
            _child(position, patient, role, measured[position].fields, keying)
            for position, (_, patient, role) in enumerate(cast.children)
        ),
        consent_granted=consent_granted,
        ig_version=cast.ig_version,
        source_updated_at=stamp,
        consent_datetime=consent_datetime,
        mother_age_years=mother_age_years(mother_age),
        mother_postal_prefix=postal_prefix(mother),
        providers=providers,
        attended_by=tuple(attendance.attended_by),
        present=attendance.present_only(),
        transfers=tuple(attendance.transfers),
        consent_decided=consent_decided(contents.consent),
        warnings=_warnings(measured, cast, mother_age, where),
        timeliness=timeliness(first_birth, context.received_on),
    )


def _warnings(
    measured: list[Measured], cast: Cast, mother_age: int | None, where: Where
) -> tuple[dict[str, Any], ...]:
    """The plausibility findings: the mother's age, then each child's measures."""
    found = []
    if mother_age is not None:
        mother: Reading = (mother_age, cast.mother_index, "birthDate", cast.mothers[0])
        found += plausibility.findings({plausibility.MOTHER_AGE: mother}, where.path)
    for child in measured:
        if child.readings:
            found += plausibility.findings(child.readings, where.path)
    return tuple(found)


def _attribution(contents: Contents) -> tuple[tuple[Provider, ...], Attendance]:
    """The Bundle's providers (first of each stable id) and who attended or was present."""
    providers: dict[str, Provider] = {}
    index: ReferenceIndex[str] = ReferenceIndex("Practitioner")
    attendance = Attendance()
    marked = []
    for entry, practitioner in contents.practitioners:
        provider = provider_from(practitioner)
        if provider is not None:
            providers.setdefault(provider.stable_id, provider)
            index.add(entry, practitioner, provider.stable_id)
            if carries_attendant_marker(practitioner):
                marked.append(provider.stable_id)
    for encounter in contents.encounters:
        attendance.read(encounter, index.resolve)
    for stable_id in marked:
        attendance.mark_present(stable_id)
    return tuple(providers.values()), attendance


_MOTHER = -1


@dataclass(frozen=True, slots=True)
class Keying:
    """What a child's birth time key is computed under: the course's fingerprint and key."""

    fingerprint: str | None
    key: bytes


@dataclass(slots=True)
class Measured:
    """A child's measures: the values kept (``fields``) and the first read of each as sent."""

    fields: dict[str, int] = field(default_factory=dict)
    readings: dict[str, Reading] = field(default_factory=dict)


def _measured(cast: Cast, observations: list[tuple[int, Resource]]) -> list[Measured]:
    """Each child's measures from the Observations whose subject is that child.

    A gestational age whose subject is the mother (as some senders record "gestational age
    at delivery") belongs to the delivery, so it applies to every child that has none of
    its own: children of one delivery share it.
    """
    index: ReferenceIndex[int] = ReferenceIndex("Patient")
    for position, (entry, patient, _) in enumerate(cast.children):
        index.add(entry, patient, position)
    if cast.mother_entry is not None and len(cast.mothers) == 1:
        index.add(cast.mother_entry, cast.mothers[0], _MOTHER)
    measured = [Measured() for _ in cast.children]
    delivery = Measured()
    for entry_index, observation in observations:
        measure = measure_of(observation)
        if measure is None:
            continue
        subject = index.resolve(as_dict(observation.get("subject")).get("reference"))
        if subject == _MOTHER:
            if measure == "gestational_age":
                _measure(delivery, measure, observation, entry_index)
        elif subject is not None:
            _measure(measured[subject], measure, observation, entry_index)
    for child in measured:
        if "gestational_age_weeks" not in child.fields:
            child.fields.update(delivery.fields)
        for name, reading in delivery.readings.items():
            child.readings.setdefault(name, reading)
    return measured


def _measure(child: Measured, measure: Measure, observation: Resource, entry: int) -> None:
    """Read one Observation's value: the first read of each measure is checked by the rules,
    and the first value within the kept windows is stored."""
    fields, readings = child.fields, child.readings
    if measure == "gestational_age":
        days = gestation_days_as_sent(observation)
        if days is None:
            return
        if plausibility.GESTATIONAL_AGE not in readings:
            weeks = days // 7  # the rules read completed weeks
            readings[plausibility.GESTATIONAL_AGE] = (weeks, entry, "valueQuantity", observation)
        age = None if "gestational_age_weeks" in fields else plausible_gestation(days)
        if age is not None:
            fields["gestational_age_weeks"], fields["gestational_age_days"] = age
        return
    if measure == "birth_weight_grams":
        value, element = weight_as_sent(observation), "valueQuantity"
        kept = plausible_weight(value)
    else:
        sent = apgar_as_sent(observation)
        value, element = sent if sent is not None else (None, "")
        kept = plausible_apgar(value)
    if value is None:
        return
    if measure not in readings:
        readings[measure] = (value, entry, element, observation)
    if kept is not None and measure not in fields:
        fields[measure] = kept


def _child(
    position: int, patient: Resource, role: PatientRole, fields: dict[str, int], keying: Keying
) -> Child:
    gender = patient.get("gender")
    declared = _declared_order(patient)
    return Child(
        birth_order=declared or position + 1,
        outcome="fetal_death" if role == "fetal_child" else "live_birth",
        sex=gender if isinstance(gender, str) and gender in _SEXES else None,
        birth_year=birth_year(patient),
        birth_weight_grams=fields.get("birth_weight_grams"),
        gestational_age_weeks=fields.get("gestational_age_weeks"),
        gestational_age_days=fields.get("gestational_age_days"),
        apgar_1=fields.get("apgar_1"),
        apgar_5=fields.get("apgar_5"),
        apgar_10=fields.get("apgar_10"),
        multiple_birth=declared,
        birth_time_key=birth_time_key(patient, keying.fingerprint, keying.key),
    )


def _declared_order(patient: Resource) -> int | None:
    """multipleBirthInteger when sane (the stored birth order falls back to the position)."""
    order = whole_number(patient.get("multipleBirthInteger"))
    return order if order is not None and 1 <= order <= _MOST_BIRTHS else None
