"""Deciding: the record lifecycle of spec section 3, replayed in memory on a chunk's records.

A chunk's records are read (and, to be written, row-locked) once; the lifecycle table is
then replayed in entry order on the records as the chunk sees them, so the same chart twice
in one batch applies in order. Nothing is written here: :mod:`ingestion.lifecycle.storing`
writes what was decided, and the ``$validate`` preview (:mod:`ingestion.lifecycle.preview`)
stops before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from django.utils import timezone

from ingestion.fhir import CourseOfCare, Rejection, Result, Retraction, Void
from ingestion.fhir.model import Provider as FhirProvider
from ingestion.fhir.outcome import error_outcome, operation_outcome
from ingestion.lifecycle.entries import AcceptedEntry, ChunkOutcome, rejection_entry, void_entry
from ingestion.lifecycle.rows import Row, Tracked, charts_named, records_on_file
from registry.matching import ChunkMatching, Keys, match_keys
from registry.models import CHILD_COLUMNS, Practice, RecordVersion

STALE_UPDATE = "Stale update ignored"


class Lifecycle:
    """A chunk's records as the lifecycle leaves them, with its receipt entries and versions."""

    def __init__(self, practice: Practice) -> None:
        self.practice = practice
        self.ingestion_id: UUID | None = None  # the part being replayed
        self.now = timezone.now()
        self.tracked: dict[str, Tracked] = {}
        self.matching = ChunkMatching(practice.pk)
        # (record, version, change, values, ingestion)
        self.versions: list[tuple[UUID, int, str, dict[str, Any], UUID | None]] = []
        self.providers: dict[str, FhirProvider] = {}  # every course's, the latest last
        self.outcome = ChunkOutcome()
        self._keys: dict[int, tuple[CourseOfCare, Keys]] = {}  # by id(): see keys()

    def keys(self, course: CourseOfCare) -> Keys:
        """The course's match keys, worked out once: loading, flagging and filing each ask."""
        known = self._keys.get(id(course))
        if known is not None and known[0] is course:
            return known[1]
        keys = _keys(course)
        self._keys[id(course)] = (course, keys)  # the course is held, so its id is not reused
        return keys

    def load(self, results: Sequence[Result], *, lock: bool = True) -> None:
        """The records the results name, and the match keys matching needs to see."""
        charts = charts_named(results)
        for values in records_on_file(self.practice.pk, charts, lock=lock):
            self.tracked[values["external_record_id"]] = Tracked(Row(**values), is_new=False)
        asked = {key for r in results if isinstance(r, CourseOfCare) for key in self.keys(r)}
        # Matching sees the touched records as the chunk changes them, the rest as on file.
        self.matching.load(touched=[t.row.id for t in self.tracked.values()], asked=asked)

    def replay(self, results: Sequence[Result], *, ingestion_id: UUID | None) -> ChunkOutcome:
        """One ingestion's results, after those replayed before: its own receipt entries."""
        self.ingestion_id, self.outcome = ingestion_id, ChunkOutcome()
        self.decide(results)
        return self.outcome

    def plan(self, results: Sequence[Result]) -> ChunkOutcome:
        """The outcome applying would have, from what is on file, with nothing locked."""
        self.load(results, lock=False)
        self.decide(results)
        return self.outcome

    def decide(self, results: Sequence[Result]) -> None:
        """The lifecycle table, in entry order, on the records as this chunk sees them."""
        for result in results:
            if isinstance(result, Rejection):
                self.outcome.rejected.append(
                    rejection_entry(
                        result.reference, result.external_record_id, result.operation_outcome
                    )
                )
            elif isinstance(result, Retraction):
                self._retract(result)
            elif isinstance(result, Void):
                self._void(result)
            else:
                self._submit(result)

    # -- the lifecycle table ---------------------------------------------------------------

    def _submit(self, course: CourseOfCare) -> None:
        tracked = self.tracked.get(course.external_record_id)
        if tracked is None:
            self._create(course)
        elif tracked.row.voided:
            self._revive(tracked, course)
        else:
            self._amend(tracked, course)

    def _create(self, course: CourseOfCare) -> None:
        row = Row(id=uuid4(), external_record_id=course.external_record_id, created_at=self.now)
        row.timeliness = course.timeliness  # the first receipt's: amendments keep it
        tracked = Tracked(row, is_new=True)
        self.tracked[course.external_record_id] = tracked
        self._flag_if_resembling(row, self.keys(course))
        self._take(tracked, course, RecordVersion.Change.CREATED)
        self._accept(course, row, amended=False)

    def _amend(self, tracked: Tracked, course: CourseOfCare) -> None:
        row = tracked.row
        stored, incoming = row.source_updated_at, course.source_updated_at
        if stored is not None and incoming is not None and incoming < stored:
            self._reject_stale(course, stored=stored, incoming=incoming)
            return
        if self._would_duplicate_another(row, self.keys(course)):
            self._reject_conflict(
                course,
                "The correction would make this record a duplicate of a different record "
                "on file (same mother and newborn birth date); it was not merged.",
            )
            return
        row.version += 1
        self._take(tracked, course, RecordVersion.Change.AMENDED)
        self._accept(course, row, amended=True)

    def _revive(self, tracked: Tracked, course: CourseOfCare) -> None:
        """A voided chart sent again comes back as a further version of the same record.

        A record a reviewer merged into another comes back unmerged (and, if it still
        resembles the survivor, flagged for review again): the sender says it stands.
        """
        row = tracked.row
        row.voided, row.voided_at, row.merged_into_id = False, None, None
        row.version += 1
        self._flag_if_resembling(row, self.keys(course))
        self._take(tracked, course, RecordVersion.Change.REVIVED)
        self._accept(course, row, amended=True)

    def _retract(self, retraction: Retraction) -> None:
        tracked = self.tracked.get(retraction.external_record_id)
        if tracked is None:
            self.outcome.rejected.append(
                rejection_entry(
                    retraction.reference,
                    retraction.external_record_id,
                    error_outcome(
                        "not-found",
                        "No record with this chart number is on file for this practice; "
                        "nothing was retracted.",
                        expression=retraction.reference,
                    ),
                )
            )
            return
        row = tracked.row
        self._void_row(tracked)
        self.outcome.accepted.append(
            {
                "reference": retraction.reference,
                "submission_uuid": str(row.id),
                "external_record_id": row.external_record_id,
                "voided": True,
            }
        )

    def _void(self, void: Void) -> None:
        """An NVSS void: every record of the block on file is voided; the rest is no error."""
        found = [self.tracked[c] for c in void.chart_numbers if c in self.tracked]
        for tracked in found:
            self._void_row(tracked)
        self.outcome.accepted.append(void_entry(void, [t.row for t in found]))

    def _void_row(self, tracked: Tracked) -> None:
        row = tracked.row
        if row.voided:  # retracting a voided record again changes nothing
            return
        self.matching.put(row.id, frozenset())
        row.voided, row.voided_at, row.updated_at = True, self.now, self.now
        tracked.changed = True
        voided = {"voided": True}
        self.versions.append(
            (row.id, row.version, RecordVersion.Change.VOIDED, voided, self.ingestion_id)
        )

    # -- helpers ---------------------------------------------------------------------------

    def _would_duplicate_another(self, row: Row, keys: Keys) -> bool:
        """Spec 3, "not merged": the correction makes the record resemble another live record.

        The test is the flagging test. A record that already resembled another (a flagged
        duplicate being corrected) is not made a duplicate by the correction.
        """
        current = self.matching.keys_of(row.id)
        if keys == current or not self.matching.resembles(row.id, keys):
            return False
        return not self.matching.resembles(row.id, current)

    def _flag_if_resembling(self, row: Row, keys: Keys) -> None:
        if self.matching.resembles(row.id, keys):
            row.suspected_duplicate = True

    def _take(self, tracked: Tracked, course: CourseOfCare, change: str) -> None:
        """The record takes the course's facts, and the version is kept in its history."""
        row = tracked.row
        self.matching.put(row.id, self.keys(course))
        row.fingerprint = course.fingerprint
        row.ig_version = course.ig_version
        row.consent_granted = course.consent_granted
        row.consent_datetime = course.consent_datetime
        row.source_updated_at = course.source_updated_at or row.source_updated_at
        row.birth_year = _earliest_birth_year(course)
        row.mother_age_years = course.mother_age_years
        row.mother_postal_prefix = course.mother_postal_prefix
        row.drew_warning, row.consent_decided = bool(course.warnings), course.consent_decided
        row.updated_at = self.now
        tracked.changed, tracked.course = True, course
        self.providers.update((p.stable_id, p) for p in course.providers)
        self.versions.append((row.id, row.version, change, _snapshot(course), self.ingestion_id))

    def _accept(self, course: CourseOfCare, row: Row, *, amended: bool) -> None:
        entry: AcceptedEntry = {
            "reference": course.reference,
            "submission_uuid": str(row.id),
            "external_record_id": row.external_record_id,
            "amended": amended,
        }
        if amended:
            entry["version"] = row.version
        if row.suspected_duplicate:
            entry["suspected_duplicate"] = True
        if course.warnings:  # plausibility findings: stored as sent, with a word
            entry["operation_outcome"] = operation_outcome(*course.warnings)
        self.outcome.accepted.append(entry)

    def _reject_conflict(self, course: CourseOfCare, diagnostics: str) -> None:
        self.outcome.rejected.append(
            rejection_entry(
                course.reference,
                course.external_record_id,
                error_outcome("conflict", diagnostics, expression=course.reference),
            )
        )

    def _reject_stale(self, course: CourseOfCare, *, stored: datetime, incoming: datetime) -> None:
        """A stale update, with both stamps and what to do: a sender seeing only "stale" may
        have re-used a chart number for another birth, or sent an old copy of this one."""
        self._reject_conflict(course, STALE_UPDATE)
        self.outcome.rejected[-1]["operation_outcome"]["issue"][0]["details"] = {
            "text": stale_update_details(stored=stored, incoming=incoming)
        }


def stale_update_details(*, stored: datetime, incoming: datetime) -> str:
    return (
        f"The record on file for this chart number was last updated at {stored.isoformat()}; "
        f"this Bundle's (its meta.lastUpdated, else its timestamp), {incoming.isoformat()}, is "
        "earlier, so it was not applied. If it is a correction, send it with a later "
        "meta.lastUpdated; if it is another birth, give it a chart number of its own."
    )


def _keys(course: CourseOfCare) -> Keys:
    """The course's match keys: one per child, from its keyed time and declared order."""
    return match_keys(
        course.fingerprint, ((c.birth_time_key, c.multiple_birth) for c in course.children)
    )


def _earliest_birth_year(course: CourseOfCare) -> int | None:
    years = [c.birth_year for c in course.children if c.birth_year is not None]
    return min(years) if years else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _snapshot(course: CourseOfCare) -> dict[str, Any]:
    """The masked values of a version, for the record's history."""
    return {
        "voided": False,
        "fingerprint": course.fingerprint,
        "ig_version": course.ig_version,
        "consent_granted": course.consent_granted,
        "consent_datetime": _iso(course.consent_datetime),
        "source_updated_at": _iso(course.source_updated_at),
        "mother_age_years": course.mother_age_years,
        "mother_postal_prefix": course.mother_postal_prefix,
        "consent_decided": course.consent_decided,
        "drew_warning": bool(course.warnings),
        "children": [
            {name: getattr(c, name) for name in CHILD_COLUMNS[1:]} for c in course.children
        ],
        "attended_by": list(course.attended_by),
        "present": list(course.present),
        "transfers": list(course.transfers),
    }
