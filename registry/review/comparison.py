"""The side-by-side comparison on a record's review page: masked facts only, one column per
record, the record under review first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

from registry.dates import day, when
from registry.models import Attendance, Record

BLANK = "\N{EN DASH}"  # an unknown or empty value


@dataclass(frozen=True)
class Cell:
    text: str
    differs: bool = False


@dataclass(frozen=True)
class Row:
    label: str
    cells: list[Cell]


@dataclass(frozen=True)
class Comparison:
    records: list[Record]
    rows: list[Row]


def comparison_table(records: list[Record]) -> Comparison:
    """Masked facts only, one column per record, the record under review first.

    A cell that differs from the first column is marked, so differences stand out.
    """
    first = records[0] if records else None
    children = max((len(r.children.all()) for r in records), default=0)
    facts: list[tuple[str, Any]] = [
        ("State", attrgetter("state")),
        ("Version", lambda r: str(r.version)),
        ("Received", lambda r: _when(r.created_at)),
        ("Last changed", lambda r: _when(r.updated_at)),
        (
            "Same mother and birth date",
            lambda r: (
                BLANK
                if r is first
                else (
                    "Yes"
                    if first and r.fingerprint and r.fingerprint == first.fingerprint
                    else "No"
                )
            ),
        ),
        ("Birth year", lambda r: _text(r.birth_year)),
        ("Mother's age", lambda r: _text(r.mother_age_years)),
        ("Postal code (first 3)", lambda r: _text(r.mother_postal_prefix)),
        ("Consent", _consent),
        ("IG version", lambda r: _text(r.ig_version)),
        *[(f"Child {i + 1}", _child_at(i)) for i in range(children)],
        ("Attended by", _attendants(Attendance.Kind.ATTENDED)),
        ("Present", _attendants(Attendance.Kind.PRESENT)),
        (
            "Transfers",
            lambda r: ", ".join(t.get_kind_display() for t in r.transfers.all()) or BLANK,
        ),
    ]
    rows = []
    for label, fact in facts:
        texts = [fact(r) for r in records]
        compare = label not in {"Received", "Last changed", "Same mother and birth date"}
        rows.append(
            Row(
                label,
                [Cell(t, differs=compare and i > 0 and t != texts[0]) for i, t in enumerate(texts)],
            )
        )
    return Comparison(records, rows)


def _text(value: Any) -> str:
    return BLANK if value is None or value == "" else str(value)


def _when(value: datetime | None) -> str:
    return when(value)


def _consent(record: Record) -> str:
    decision = "Granted" if record.consent_granted else "Not granted"
    if record.consent_datetime:
        return f"{decision} ({day(record.consent_datetime)})"
    return decision


def _child_at(index: int) -> Any:
    def describe(record: Record) -> str:
        children = list(record.children.all())
        if index >= len(children):
            return BLANK
        child = children[index]
        weeks = child.gestational_age_weeks
        parts = [
            child.get_outcome_display(),
            child.sex or "sex unknown",
            f"{child.birth_weight_grams} g" if child.birth_weight_grams else "weight unknown",
            f"{weeks} w {child.gestational_age_days or 0} d"
            if weeks is not None
            else "age unknown",
            _apgar(child),
        ]
        return ", ".join(parts)

    return describe


def _apgar(child: Any) -> str:
    """``Apgar 1 min 8, 5 min 9, 10 min 7``: each score says which minute it is."""
    scores = ((1, child.apgar_1), (5, child.apgar_5), (10, child.apgar_10))
    return "Apgar " + ", ".join(f"{minute} min {_text(score)}" for minute, score in scores)


def _attendants(kind: str) -> Any:
    def describe(record: Record) -> str:
        names = [
            f"{a.provider} ({a.provider.get_role_display().lower()})"
            for a in record.attendances.all()
            if a.kind == kind
        ]
        return ", ".join(names) or BLANK

    return describe
