"""Plausibility: published edit rules that a course's values are checked against, never enforced.

Each rule in :data:`RULES` reads one or more named values (a child's birth weight, its
gestational age, an Apgar score, the mother's age) and says whether they are implausible
together. A finding is a ``warning`` issue naming the rule (``details.coding[0].code`` and the
diagnostics) and the element that holds each value (``expression``); the value itself is
stored as sent. docs/recipes.md ("Add a plausibility rule") says how to add one, and
docs/decisions.md ("Data quality") gives the sources of the bounds used here.

A value the sender marks with the BFDR edit flag (the ``BypassEditFlag`` extension on the
element) as queried and verified draws no warning from the rules that read it: the value was
checked at the source. "Edit passed" (``0``), "queried but not verified" (``2``) and the rest
silence nothing.

Cheap on purpose: a rule is a comparison or two, and the edit flag is read only for a value
that failed a rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .outcome import warning_issue
from .values import as_dict, dicts

# The value names a rule may read: a child's measures (as the mapping reads them, in grams,
# completed weeks and points) and the mother's age in whole years at the birth.
BIRTH_WEIGHT = "birth_weight_grams"
GESTATIONAL_AGE = "gestational_age_weeks"
APGAR_1, APGAR_5, APGAR_10 = "apgar_1", "apgar_5", "apgar_10"
MOTHER_AGE = "mother_age_years"

EDIT_FLAG_URL = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition/BypassEditFlag"
# Codes meaning "the edit failed, the value was queried at the source and is correct": ``1`` of
# CodeSystem-vr-edit-flags as BFDR STU2 and the corpus send it, ``editBypass1`` in later
# vital-records releases, and BFDR's own verified codes (birth weight "queried data correct,
# out of range", "edit failed, verified", "queried, and correct") with and without their
# numeric prefix.
VERIFIED_CODES = frozenset(
    {
        "1",
        "editBypass1",
        "1correctOutOfRange",
        "correctOutOfRange",
        "1failedVerified",
        "failedVerified",
        "1queriedCorrect",
        "queriedCorrect",
    }
)


# A value as sent, and where it sits: (value, entry index, element name, resource). A plain
# tuple: one is built for every value of every course, so it must cost next to nothing. The
# expression (``<document>.entry[<entry>].resource.<element>``) and the edit flag are looked
# at only when a rule finds the value implausible.
Reading = tuple[int, int, str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One edit: the values it reads, the test that finds them implausible, and its words."""

    code: str  # stable, in receipts and docs/api.md: lowercase words joined by hyphens
    reads: tuple[str, ...]
    implausible: Callable[..., bool]  # called with the values, in ``reads`` order
    diagnostics: str  # names the rule and its source; never a submitted value


def outside(low: int, high: int) -> Callable[[int], bool]:
    """A test for a value outside ``low``..``high`` (inclusive)."""
    return lambda value: not low <= value <= high


# Alexander GR, Himes JH, Kaufman RB, Mor J, Kogan M. A United States national reference for
# fetal growth. Obstet Gynecol 1996;87:163-8, Table 1: the birth weights (g) taken as plausible
# for each completed week of gestation, 20 to 47 (docs/decisions.md, "Data quality").
# (first week, last week, lowest grams, highest grams)
WEIGHT_FOR_GESTATION: tuple[tuple[int, int, int, int], ...] = (
    (20, 21, 125, 1250),
    (22, 22, 125, 1375),
    (23, 23, 125, 1500),
    (24, 24, 125, 1625),
    (25, 25, 250, 1750),
    (26, 26, 250, 2000),
    (27, 27, 250, 2250),
    (28, 28, 250, 2500),
    (29, 29, 250, 2750),
    (30, 30, 375, 3000),
    (31, 31, 375, 3250),
    (32, 32, 500, 3500),
    (33, 33, 500, 3750),
    (34, 34, 500, 4000),
    (35, 35, 750, 4500),
    (36, 36, 750, 5000),
    (37, 37, 750, 5500),
    (38, 47, 1000, 6000),
)
_WEIGHT_RANGE_BY_WEEK = {
    week: (low, high)
    for first, last, low, high in WEIGHT_FOR_GESTATION
    for week in range(first, last + 1)
}


def weight_implausible_for_gestation(grams: int, weeks: int) -> bool:
    """Outside the table's range for the week; weeks the table lacks are not judged here."""
    bounds = _WEIGHT_RANGE_BY_WEEK.get(weeks)
    return bounds is not None and not bounds[0] <= grams <= bounds[1]


def _apgar_rule(code: str, name: str, minutes: str) -> Rule:
    return Rule(
        code,
        (name,),
        outside(0, 10),
        f"The {minutes}-minute Apgar score is outside 0 to 10 (NCHS edit range).",
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "birth-weight-range",
        (BIRTH_WEIGHT,),
        outside(227, 8165),
        "The birth weight is outside 227 to 8,165 g (NCHS edit range).",
    ),
    Rule(
        "gestational-age-range",
        (GESTATIONAL_AGE,),
        outside(17, 47),
        "The gestational age is outside 17 to 47 completed weeks (NCHS edit range).",
    ),
    _apgar_rule("apgar-1-range", APGAR_1, "1"),
    _apgar_rule("apgar-5-range", APGAR_5, "5"),
    _apgar_rule("apgar-10-range", APGAR_10, "10"),
    Rule(
        "mother-age-range",
        (MOTHER_AGE,),
        outside(9, 64),
        "The mother's age at delivery is outside 9 to 64 years (NCHS imputes ages of 8 and "
        "under and of 65 and over).",
    ),
    Rule(
        "birth-weight-for-gestational-age",
        (BIRTH_WEIGHT, GESTATIONAL_AGE),
        weight_implausible_for_gestation,
        # no author's name here: receipts are searched for patients' names (test_privacy)
        "The birth weight is implausible for the gestational age (the 1996 United States "
        "national reference for fetal growth, Table 1, after which NCHS edits weight against "
        "gestation).",
    ),
)


def _by_first_value(rules: Iterable[Rule]) -> dict[str, list[Rule]]:
    """The rules by the first value they read: a subject is checked against its own only."""
    index: dict[str, list[Rule]] = {}
    for rule in rules:
        index.setdefault(rule.reads[0], []).append(rule)
    return index


_RULES_BY_FIRST_VALUE = _by_first_value(RULES)


def findings(readings: Mapping[str, Reading], document: str) -> list[dict[str, Any]]:
    """The warning issues for one subject's readings (a child's, or the mother's).

    ``document`` is the FHIRPath of the document the readings' entries belong to.
    """
    found = []
    for name, (value, *_) in readings.items():
        for rule in _RULES_BY_FIRST_VALUE.get(name, ()):
            if len(rule.reads) == 1:  # most rules: no list to build for a plausible value
                if rule.implausible(value):
                    found += _finding(rule, [readings[name]], document)
                continue
            used = [readings[read] for read in rule.reads if read in readings]
            if len(used) == len(rule.reads) and rule.implausible(*[r[0] for r in used]):
                found += _finding(rule, used, document)
    return found


def _finding(rule: Rule, used: list[Reading], document: str) -> list[dict[str, Any]]:
    """The rule's warning, unless a value it read is marked as queried and verified."""
    if any(verified(resource, element) for _, _, element, resource in used):
        return []
    expressions = [f"{document}.entry[{entry}].resource.{element}" for _, entry, element, _ in used]
    return [warning_issue(rule.code, rule.diagnostics, expression=expressions)]


def verified(resource: Mapping[str, Any], element: str) -> bool:
    """Whether the element carries a BypassEditFlag saying the value was queried and verified.

    The flag is an extension of the element: in the element itself when it is a complex type
    (``valueQuantity.extension``), in its ``_`` twin when it is a primitive
    (``_valueInteger.extension``, ``_birthDate.extension``).
    """
    return _flag_verified(resource.get(element)) or _flag_verified(resource.get(f"_{element}"))


def _flag_verified(element: object) -> bool:
    for extension in dicts(as_dict(element).get("extension")):
        if extension.get("url") == EDIT_FLAG_URL:
            for coding in dicts(as_dict(extension.get("valueCodeableConcept")).get("coding")):
                code = coding.get("code")
                if isinstance(code, str) and code in VERIFIED_CODES:
                    return True
    return False
