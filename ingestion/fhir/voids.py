"""NVSS void messages (``birth_submission_void``, ``fd_submission_void``) as retractions.

A void names records the way NVSS names them: event year, jurisdiction and certificate
number, carried in the message's Parameters (``event_year``, ``jurisdiction_id``,
``cert_no``), the same three parts that make the submission's document identifier
(``2019UT48858``). ``block_count`` voids that many consecutive certificate numbers from
``cert_no`` on (absent or 0 means one). Senders write the certificate number both padded to
six digits and unpadded (the corpus has ``2020NY087366`` and ``2019UT48858``), so both
spellings are tried. Numbers of a block that are not on file are no error (NVSS voids
unused numbers too); the registry side decides what was on file, not this module.

A block is capped at :data:`MAX_BLOCK_COUNT` numbers: a void is one request, and a typo in
``block_count`` must not sweep a practice's records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .messages import message_event
from .model import Rejection, Void
from .outcome import error_outcome, issue, operation_outcome
from .values import as_dict, as_list, as_str

VOID_EVENTS = frozenset({"birth_submission_void", "fd_submission_void"})
MAX_BLOCK_COUNT = 1000
CERTIFICATE_DIGITS = 6
_JURISDICTION = re.compile(r"[A-Z]{2}")
_INTEGER_VALUES = ("valueUnsignedInt", "valuePositiveInt", "valueInteger", "valueString")


def is_void_message(message: Mapping[str, Any]) -> bool:
    return message_event(message) in VOID_EVENTS


def read_void(message: Mapping[str, Any], reference: str, path: str) -> Void | Rejection:
    """The Void a void message asks for, or a Rejection naming what is missing or wrong."""
    index, parameters = _parameters(message)
    if index is None:
        outcome = error_outcome(
            "required",
            "The NVSS void message carries no Parameters resource, so it names no record "
            "(event_year, jurisdiction_id and cert_no are required).",
            expression=f"{path}.entry",
        )
        return Rejection(reference, outcome)
    at = f"{path}.entry[{index}].resource"
    cert_no = _integer(parameters, "cert_no")
    year = _integer(parameters, "event_year")
    jurisdiction = (as_str(parameters.get("jurisdiction_id")) or "").strip().upper()
    block = _integer(parameters, "block_count")
    unreadable_block = parameters.get("block_count") is not None and block is None
    problems = _problems(cert_no, year, jurisdiction, unreadable_block, at)
    if problems or cert_no is None or year is None:
        return Rejection(reference, operation_outcome(*problems))
    count = max(1, block or 0)
    if count > MAX_BLOCK_COUNT:
        outcome = error_outcome(
            "too-costly",
            f"block_count is {count}; a void message may void at most {MAX_BLOCK_COUNT} "
            "certificate numbers. Send larger blocks as several messages.",
            expression=f"{at}.parameter",
        )
        return Rejection(reference, outcome)
    numbers = range(cert_no, cert_no + count)
    return Void(
        reference=reference,
        external_record_id=record_id(year, jurisdiction, cert_no),
        chart_numbers=tuple(c for n in numbers for c in spellings(year, jurisdiction, n)),
        block_count=count,
    )


def record_id(year: int, jurisdiction: str, cert_no: int) -> str:
    """The NVSS record identifier, certificate number padded to six digits."""
    return f"{year:04d}{jurisdiction}{cert_no:0{CERTIFICATE_DIGITS}d}"


def spellings(year: int, jurisdiction: str, cert_no: int) -> tuple[str, ...]:
    """Padded first, then unpadded when that differs."""
    padded, plain = record_id(year, jurisdiction, cert_no), f"{year:04d}{jurisdiction}{cert_no}"
    return (padded,) if padded == plain else (padded, plain)


def _parameters(message: Mapping[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """The first Parameters resource, as {name: parameter}."""
    for index, entry in enumerate(as_list(message.get("entry"))):
        resource = as_dict(as_dict(entry).get("resource"))
        if resource.get("resourceType") == "Parameters":
            named = {}
            for parameter in as_list(resource.get("parameter")):
                name = as_str(as_dict(parameter).get("name"))
                if name and name not in named:
                    named[name] = _value(as_dict(parameter))
            return index, named
    return None, {}


def _value(parameter: Mapping[str, Any]) -> object:
    for key in (*_INTEGER_VALUES, "valueCode"):
        if key in parameter:
            return parameter[key]
    return None


def _integer(parameters: Mapping[str, Any], name: str) -> int | None:
    value = parameters.get(name)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        return int(value.strip())
    return None


def _problems(
    cert_no: int | None, year: int | None, jurisdiction: str, unreadable_block: bool, at: str
) -> list[dict[str, Any]]:
    expression = f"{at}.parameter"
    found = []
    if cert_no is None:
        found.append("cert_no (a whole number) is missing or not a number")
    if year is None or not 1900 <= year <= 9999:
        found.append("event_year (a four-digit year) is missing or not a year")
    if not _JURISDICTION.fullmatch(jurisdiction):
        found.append("jurisdiction_id (two letters, e.g. UT) is missing or malformed")
    if unreadable_block:
        found.append("block_count is not a whole number")
    return [
        issue(
            "required",
            f"The NVSS void message's Parameters: {problem}; the record to void is named by "
            "event year, jurisdiction and certificate number.",
            expression=expression,
        )
        for problem in found
    ]
