"""The only module that reads identifying elements, and what it derives from them.

Names, full birth dates, birth times and postal codes are read here and nowhere else. What
leaves this module is already masked: a keyed fingerprint (hex), a birth year, the mother's
age in whole years, a three-character postal prefix, the bucket of days from the birth to its
receipt, and a newborn's birth date that the caller passes straight back into
:func:`fingerprint`, :func:`mother_age_as_sent` and :func:`timeliness` and never stores.

Fingerprint (docs/decisions.md): HMAC-SHA256 under the practice key over
``family 0x1F given 0x1F YYYY-MM-DD``, where the name is the mother's ``official`` name
(else her first name), each part folded to letters only (NFKD, combining marks dropped,
casefolded, non-letters dropped; the given names are concatenated), and the date is the
earliest newborn's birth date. A name with neither family nor given falls back to its
``text`` as the family part. The birth time is never part of the message: senders differ in
whether they send it, and a duplicate must not hide behind that.

Birth time key (docs/decisions.md "What is stored"): HMAC-SHA256 under the same practice key over
``birth-time 0x1F fingerprint 0x1F YYYY-MM-DDThh:mm``, the newborn's time from the
``patient-birthTime`` extension on ``_birthDate`` converted to UTC and truncated to the
minute. It lets matching tell twins apart by their times without storing any time: equal
keys mean the same birth minute of the same fingerprint, and nothing else can be read.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any

from .dates import parse_date, parse_datetime
from .model import Timeliness
from .values import as_dict, as_list, dicts

_FINGERPRINT_CONTEXT = b"registry-fingerprint/v1/practice/"
_BIRTH_TIME = "http://hl7.org/fhir/StructureDefinition/patient-birthTime"
_BIRTH_TIME_CONTEXT = "birth-time"  # not a folded name (letters only), so never a fingerprint
_SEPARATOR = "\x1f"  # keeps "ab"+"c" and "a"+"bc" apart
_NAME_LIMIT = 1000  # characters per name part; longer parts are junk, not names
_YOUNGEST_MOTHER, _OLDEST_MOTHER = 5, 80
_PROMPT_DAYS, _TIMELY_DAYS = 5, 10  # the timeliness buckets' bounds, in days after the birth


def practice_fingerprint_key(master_key: bytes, practice_id: int) -> bytes:
    """The per-practice HMAC key, so fingerprints never match across practices."""
    if not master_key:
        raise ValueError("the fingerprint master key is empty")
    message = _FINGERPRINT_CONTEXT + str(int(practice_id)).encode()
    return hmac.digest(master_key, message, "sha256")


def birth_year(patient: Mapping[str, Any]) -> int | None:
    """The year of ``birthDate`` given as ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``."""
    value = patient.get("birthDate")
    if not isinstance(value, str) or len(value) not in (4, 7, 10):
        return None
    moment = parse_date(value) if len(value) == 10 else parse_datetime(value)
    return moment.year if moment is not None else None


def newborn_date(patient: Mapping[str, Any]) -> date | None:
    """The full birth date: ``birthDate``, else the date part of the birthTime extension."""
    found = parse_date(patient.get("birthDate"))
    if found is not None:
        return found
    for extension in dicts(as_dict(patient.get("_birthDate")).get("extension")):
        if extension.get("url") == _BIRTH_TIME:
            value = extension.get("valueDateTime")
            return parse_date(value[:10]) if isinstance(value, str) else None
    return None


def fingerprint(mother: Mapping[str, Any], first_birth: date | None, key: bytes) -> str | None:
    """Keyed hash of the mother's folded name and the earliest birth date; None if either lacks."""
    if first_birth is None:
        return None
    family, given = _folded_name(mother)
    if not family and not given:
        return None
    message = _SEPARATOR.join((family, given, first_birth.isoformat()))
    keyed = _keyed_hash(key).copy()
    keyed.update(message.encode())
    return keyed.hexdigest()


def birth_time_key(
    patient: Mapping[str, Any], fingerprint_hex: str | None, key: bytes
) -> str | None:
    """Keyed hash of the fingerprint and the child's UTC birth minute; None without a time."""
    moment = _birth_time(patient)
    if fingerprint_hex is None or moment is None:
        return None
    minute = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")
    keyed = _keyed_hash(key).copy()
    keyed.update(_SEPARATOR.join((_BIRTH_TIME_CONTEXT, fingerprint_hex, minute)).encode())
    return keyed.hexdigest()


def _birth_time(patient: Mapping[str, Any]) -> datetime | None:
    """The birthTime extension's value when it carries a time of day (a date alone is none)."""
    for extension in dicts(as_dict(patient.get("_birthDate")).get("extension")):
        if extension.get("url") == _BIRTH_TIME:
            value = extension.get("valueDateTime")
            if isinstance(value, str) and "T" in value:
                return parse_datetime(value)
            return None
    return None


def mother_age_years(age_as_sent: int | None) -> int | None:
    """The mother's age as stored: whole years at the birth; None when absurd or unknown."""
    if age_as_sent is None or not _YOUNGEST_MOTHER <= age_as_sent <= _OLDEST_MOTHER:
        return None
    return age_as_sent


def mother_age_as_sent(mother: Mapping[str, Any], first_birth: date | None) -> int | None:
    """Whole years from the mother's birth date to the birth, however implausible."""
    born = parse_date(mother.get("birthDate"))
    if born is None or first_birth is None:
        return None
    return (
        first_birth.year
        - born.year
        - ((first_birth.month, first_birth.day) < (born.month, born.day))
    )


def timeliness(first_birth: date | None, received_on: date | None) -> Timeliness | None:
    """How many days after the birth the registry first received the course, as a bucket.

    Only the bucket leaves this module (docs/decisions.md, "Data quality"): the delay in days
    with the day of receipt would give the birth date back. A birth dated one day after the
    day of receipt is time zones (a local birth date, a UTC day of receipt) and counts as no
    delay; a later birth date is no delay at all (None).
    """
    if first_birth is None or received_on is None:
        return None
    days = (received_on - first_birth).days
    if days < -1:
        return None
    if days <= _PROMPT_DAYS:
        return "days_0_5"
    return "days_6_10" if days <= _TIMELY_DAYS else "days_over_10"


def postal_prefix(mother: Mapping[str, Any]) -> str | None:
    """First three characters of the first postal code.

    A code of three characters or fewer gives None: its "prefix" would be the whole code.
    """
    for address in dicts(mother.get("address")):
        code = address.get("postalCode")
        if isinstance(code, str):
            code = code.strip()
            prefix = code[:3]
            return prefix.upper() if len(code) > 3 and prefix.isalnum() else None
    return None


@lru_cache(maxsize=64)  # one per practice in flight; copying a keyed HMAC beats re-keying
def _keyed_hash(key: bytes) -> hmac.HMAC:
    return hmac.new(key, digestmod=hashlib.sha256)


def _folded_name(mother: Mapping[str, Any]) -> tuple[str, str]:
    names = list(dicts(mother.get("name")))
    chosen = next((name for name in names if name.get("use") == "official"), None)
    name = chosen or (names[0] if names else {})
    family = _fold(name.get("family"))
    given = "".join(_fold(part) for part in as_list(name.get("given")))
    if not family and not given:
        family = _fold(name.get("text"))
    return family, given


def _fold(value: object) -> str:
    if not isinstance(value, str) or len(value) > _NAME_LIMIT:
        return ""
    folded = value.casefold()
    if not folded.isascii():
        # casefolding can itself produce decomposable characters, hence NFKD after it too;
        # combining marks are not letters, so the isalpha filter drops them
        folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", value).casefold())
    return "".join(filter(str.isalpha, folded))
