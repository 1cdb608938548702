"""Birth weight, gestational age and Apgar scores from Observations, matched by LOINC code.

Observations are recognised by code alone (with or without ``meta.profile``): several
senders omit the profile. A value that is missing (BFDR sends a data-absent extension
instead), not a number, a boolean, NaN, or outside what the registry keeps (weight 1 to
9,999 g, gestation 1 to 50 weeks, Apgar 0 to 10) is dropped, never stored. When a child has
several Observations of one kind, the first value kept wins. Within those windows a value is
stored as sent, however unusual: the plausibility rules warn about it instead.

Units: weight ``g``, ``kg``, ``[lb_av]``, ``[oz_av]`` (UCUM ``code`` first, then the
human ``unit``; a quantity with neither is taken as grams, as the spec says weight is sent
in grams); gestational age ``wk`` or ``d`` (no unit: dropped, since weeks and days are
equally likely); Apgar from ``valueQuantity.value`` or ``valueInteger``, whole numbers only.

The plausibility rules (:mod:`ingestion.fhir.plausibility`) read the values as sent
(``*_as_sent``), before the windows drop anything, so a dropped value still draws its warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from .values import as_dict, as_list, as_str, finite_number, is_loinc, whole_number

Measure = Literal["birth_weight_grams", "gestational_age", "apgar_1", "apgar_5", "apgar_10"]

MEASURES: dict[str, Measure] = {
    "8339-4": "birth_weight_grams",
    "11884-4": "gestational_age",
    "18185-9": "gestational_age",
    "49051-6": "gestational_age",
    "9272-6": "apgar_1",
    "9274-2": "apgar_5",
    "9271-8": "apgar_10",
}

_GRAMS_PER_UNIT = {
    "g": 1.0,
    "gram": 1.0,
    "grams": 1.0,
    "kg": 1000.0,
    "[lb_av]": 453.59237,
    "lb": 453.59237,
    "lbs": 453.59237,
    "[oz_av]": 28.349523125,
    "oz": 28.349523125,
}
_DAYS_PER_UNIT = {"wk": 7, "week": 7, "weeks": 7, "d": 1, "day": 1, "days": 1}
_WEIGHT_GRAMS = (1, 9999)
_GESTATION_DAYS = (7, 50 * 7)  # 1 to 50 whole weeks
_APGAR = (0, 10)


def measure_of(observation: Mapping[str, Any]) -> Measure | None:
    """Which measure an Observation carries, from its first recognised LOINC code."""
    # runs for every Observation of every Bundle, most of them irrelevant: kept flat
    concept = observation.get("code")
    if not isinstance(concept, dict):
        return None
    for coding in as_list(concept.get("coding")):
        if isinstance(coding, dict):
            code = coding.get("code")
            measure = MEASURES.get(code) if isinstance(code, str) else None
            if measure is not None and is_loinc(coding.get("system")):
                return measure
    return None


# --- Values as sent (what the plausibility rules read), and the windows kept ----------------


def weight_as_sent(observation: Mapping[str, Any]) -> int | None:
    """Whole grams of ``valueQuantity`` in a known unit, however implausible."""
    quantity = as_dict(observation.get("valueQuantity"))
    value = finite_number(quantity.get("value"))
    factor = _unit_factor(quantity, _GRAMS_PER_UNIT, default=1.0)
    if value is None or factor is None:
        return None
    return _half_up(value * factor)


def gestation_days_as_sent(observation: Mapping[str, Any]) -> int | None:
    """Whole days of ``valueQuantity`` in weeks or days, however implausible."""
    quantity = as_dict(observation.get("valueQuantity"))
    value = finite_number(quantity.get("value"))
    factor = _unit_factor(quantity, _DAYS_PER_UNIT, default=None)
    if value is None or factor is None:
        return None
    return _half_up(value * factor)


def apgar_as_sent(observation: Mapping[str, Any]) -> tuple[int, str] | None:
    """(score, the element holding it: ``valueInteger`` or ``valueQuantity``), when whole."""
    element = "valueInteger"
    value = observation.get(element)
    if value is None:
        element = "valueQuantity"
        value = as_dict(observation.get(element)).get("value")
    score = whole_number(value)
    return (score, element) if score is not None else None


def plausible_weight(grams: int | None) -> int | None:
    return grams if grams is not None and _WEIGHT_GRAMS[0] <= grams <= _WEIGHT_GRAMS[1] else None


def plausible_gestation(days: int | None) -> tuple[int, int] | None:
    if days is None or not _GESTATION_DAYS[0] <= days <= _GESTATION_DAYS[1]:
        return None
    return divmod(days, 7)


def plausible_apgar(score: int | None) -> int | None:
    return score if score is not None and _APGAR[0] <= score <= _APGAR[1] else None


def _unit_factor(
    quantity: Mapping[str, Any], factors: Mapping[str, float], *, default: float | None
) -> float | None:
    code, unit = as_str(quantity.get("code")), as_str(quantity.get("unit"))
    if code is None and unit is None:
        return default
    for candidate in (code, unit):
        if candidate is not None:
            factor = factors.get(candidate.strip().lower())
            if factor is not None:
                return factor
    return None


def _half_up(value: float) -> int:
    # round() rounds halves to even (2.5 -> 2); people expect 2.5 g -> 3 g
    return math.floor(value + 0.5)
