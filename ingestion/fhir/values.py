"""Total accessors for decoded JSON: every function accepts any value and never raises.

The mapping walks plain dicts produced by a JSON decoder, and a submitted Bundle may hold
anything anywhere. Reading through these helpers keeps the walk total without a
``try``/``except`` around each step: a wrong type simply reads as absent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})

# Beyond this magnitude an integer is junk for every quantity we read, and float() of a
# very large int raises OverflowError, so it is refused before conversion.
_INT_LIMIT = 10**15

# What no column or JSON document of ours can hold: C0 and C1 control characters
# (PostgreSQL text refuses NUL) and lone surrogates (not encodable as UTF-8).
UNSTORABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

LOINC_SYSTEMS = frozenset({"http://loinc.org", "urn:oid:2.16.840.1.113883.6.1"})


def as_dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else EMPTY


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def dicts(value: object) -> list[Mapping[str, Any]]:
    """The dict items of a JSON array (other items skipped)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def first_dict(value: object) -> Mapping[str, Any]:
    """The first dict item of a JSON array, else an empty mapping."""
    for item in as_list(value):
        if isinstance(item, dict):
            return item
    return EMPTY


def finite_number(value: object) -> float | None:
    """A JSON number as a finite float; booleans, NaN, infinities and huge ints are None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value) if -_INT_LIMIT < value < _INT_LIMIT else None
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def whole_number(value: object) -> int | None:
    """A JSON number with no fractional part (7 or 7.0), else None."""
    number = finite_number(value)
    if number is None or not number.is_integer():
        return None
    return int(number)


def has_code(codeable_concept: object, code: str) -> bool:
    """Whether any coding carries ``code``, whatever its system."""
    if not isinstance(codeable_concept, dict):
        return False
    for coding in as_list(codeable_concept.get("coding")):
        if isinstance(coding, dict) and coding.get("code") == code:
            return True
    return False


def is_loinc(system: object) -> bool:
    """A LOINC system (a coding with no system is taken as LOINC)."""
    return system is None or (isinstance(system, str) and system in LOINC_SYSTEMS)


def clean_key(value: object, limit: int) -> str | None:
    """A string stripped of surrounding whitespace; None when empty or longer than ``limit``.

    For keys (ids, chart numbers): cutting one short could make two distinct keys equal.
    """
    if not isinstance(value, str) or len(value) > limit * 4:
        return None
    text = value.strip()
    if UNSTORABLE.search(text):
        return None  # a key is kept exactly or not at all
    return text if 0 < len(text) <= limit else None


def short_text(value: object, limit: int) -> str | None:
    """A string with whitespace collapsed and cut to ``limit`` characters; None when empty.

    For labels shown to people (display names), where a cut value is still useful.
    """
    if not isinstance(value, str):
        return None
    text = " ".join(UNSTORABLE.sub(" ", value[: limit * 4]).split())[:limit].strip()
    return text or None
