"""Data quality: how complete, how plausible and how timely a practice's records are.

Each figure is a rate over the kept counts of all births (group ``all``), shaped as a benchmark
figure and put beside the registry under the same suppression rules
(:func:`registry.statistics.benchmarks.benchmarks`):

* ``completeness.<field>``: the share of live births with a birth weight, a gestational age, a
  5-minute Apgar score, an attending provider, and a consent decision;
* ``plausibility``: the share of records whose current version drew a plausibility warning
  (lower is better);
* ``timeliness.within_5_days`` and ``.within_10_days``: the share of records first received
  within 5 and within 10 days of the birth, among the records whose delay is known.

docs/decisions.md ("Data quality") says how each is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from registry.statistics.benchmarks import ALL, Cells, Figure, benchmarks


@dataclass(frozen=True)
class Section:
    """A part of ``data_quality``: its key, its words, and whether a higher rate is better."""

    key: str
    label: str
    figures: tuple[Figure, ...]
    higher_is_better: bool = True


COMPLETENESS = Section(
    "completeness",
    "Complete",
    (
        Figure("birth_weight", "Birth weight", "known_birth_weight", "live_births"),
        Figure("gestational_age", "Gestational age", "known_gestational_age", "live_births"),
        Figure("apgar_5", "5-minute Apgar", "known_apgar5", "live_births"),
        Figure("attending_provider", "Attending provider", "live_births_attended", "live_births"),
        Figure(
            "consent_decision", "Consent decision", "live_births_consent_decided", "live_births"
        ),
    ),
)
PLAUSIBILITY = Section(
    "plausibility",
    "Plausible",
    (Figure("plausibility", "Records with a warning", "with_warning", "births"),),
    higher_is_better=False,
)
TIMELINESS = Section(
    "timeliness",
    "Timely",
    (
        Figure("within_5_days", "Within 5 days", "received_within_5_days", "timeliness_known"),
        Figure("within_10_days", "Within 10 days", "received_within_10_days", "timeliness_known"),
    ),
)
SECTIONS = (COMPLETENESS, PLAUSIBILITY, TIMELINESS)
FIGURES: list[Figure] = [figure for section in SECTIONS for figure in section.figures]

# What each figure counts, in words (the JSON's ``definitions`` and the page's details).
DEFINITIONS: dict[str, tuple[str, str]] = {
    "birth_weight": ("live-born children with a birth weight", "live-born children"),
    "gestational_age": ("live-born children with a gestational age", "live-born children"),
    "apgar_5": ("live-born children with a 5-minute Apgar score", "live-born children"),
    "attending_provider": (
        "live-born children whose birth names an attending provider (any role)",
        "live-born children",
    ),
    "consent_decision": (
        "live-born children whose course of care carries a Consent stating a decision "
        "(active or rejected)",
        "live-born children",
    ),
    "plausibility": (
        "births (courses of care) whose current version drew a plausibility warning",
        "births (courses of care)",
    ),
    "within_5_days": (
        "births first received within 5 days of the birth",
        "births whose birth date and first receipt are known",
    ),
    "within_10_days": (
        "births first received within 10 days of the birth",
        "births whose birth date and first receipt are known",
    ),
}


def data_quality(
    *,
    cells: Cells,
    years: Iterable[int],
    contributors: Mapping[tuple[str, str], int],
    **scope: Any,
) -> dict[str, Any]:
    """``data_quality``: each figure's practice side beside the registry's (or why not).

    ``completeness`` and ``timeliness`` hold a figure per key; ``plausibility`` is a figure.
    ``scope``: the rest of :func:`registry.statistics.benchmarks.benchmarks`'s arguments
    (the practice's own years, the practices counted, a comparison withheld).
    """
    compared = benchmarks(
        cells=cells, years=years, contributors=contributors, roles=[ALL], figures=FIGURES, **scope
    )[ALL]
    shaped: dict[str, Any] = {
        section.key: {figure.name: compared[figure.name] for figure in section.figures}
        for section in SECTIONS
    }
    shaped[PLAUSIBILITY.key] = compared[PLAUSIBILITY.figures[0].name]
    return shaped


def _paths() -> list[tuple[str, Figure]]:
    """Each figure's place in the JSON (``data_quality.<section>[.<figure>]``), in page order."""
    paths = []
    for section in SECTIONS:
        if section is PLAUSIBILITY:
            paths.append((f"data_quality.{section.key}", section.figures[0]))
        else:
            paths += [(f"data_quality.{section.key}.{f.name}", f) for f in section.figures]
    return paths


PATHS = _paths()


def definitions() -> dict[str, dict[str, str]]:
    """``data_quality.<path>``: what each figure divides, in words (the JSON's definitions)."""
    return {
        path: dict(zip(("numerator", "denominator"), DEFINITIONS[figure.name], strict=True))
        for path, figure in PATHS
    }


def data_quality_rows(shaped: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(``data_quality.<path>``, {practice, registry}) for every figure, in page order."""
    rows = []
    for path, _ in PATHS:
        found: Any = shaped
        for key in path.split(".")[1:]:
            found = found[key]
        rows.append((path, found))
    return rows
