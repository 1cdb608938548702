"""Bundle modes, and FHIR messages (NVSS) unwrapped to the document they carry.

A Bundle of type ``message`` is one course of care: the document Bundle it carries (the
entry MessageHeader.focus points at, else the first entry whose resource is a Bundle).
NVSS void messages retract records (:mod:`ingestion.fhir.voids`). NVSS also sends messages
that carry no course of care: acknowledgements, extraction errors, status, coding responses
and aliases. Those are recognised by the last segment of the MessageHeader's event and
answered with ``not-supported`` in our own words (the submitted event is never echoed). A
message with no MessageHeader or no event is still unwrapped when it carries a document:
validation is structural only (spec 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .outcome import error_outcome
from .values import as_dict, as_list, as_str, dicts

SubmissionKind = Literal["single", "batch"]

_RETRACT_HINT = (
    " To add or amend a record, send its document Bundle (or an NVSS submission message"
    " carrying it); to retract one, send its chart number in a Bundle whose Composition has"
    " status entered-in-error, or as a batch entry with request.method DELETE and"
    " request.url Bundle?identifier=<chart number>, or send an NVSS void message."
)
_EVENT_KINDS = re.compile(r"(acknowledg)|(error)|(status)|(coding)|(alias)")
_EVENT_NAMES = (
    "an NVSS acknowledgement message",
    "an NVSS extraction error message",
    "an NVSS status message",
    "an NVSS coding response message",
    "an NVSS alias message",
)
_EVENT_TAIL = 200  # an event's last segment is short; a longer tail is not an event name


class Unwrapped:
    """The document a message carries, with the FHIRPath prefix that reaches it."""

    __slots__ = ("document", "path")

    def __init__(self, document: Mapping[str, Any], path: str) -> None:
        self.document = document
        self.path = path


def is_delete(method: object) -> bool:
    return isinstance(method, str) and method.strip().upper() == "DELETE"


def entry_head(entry: object) -> tuple[object, object]:
    """(entry.resource.resourceType, entry.request.method) as found, for submission_kind."""
    entry = as_dict(entry)
    resource_type = as_dict(entry.get("resource")).get("resourceType")
    method = as_dict(entry.get("request")).get("method")
    return resource_type, method


def submission_kind(
    bundle_type: object, entry_heads: Iterable[tuple[object, object]]
) -> SubmissionKind:
    """A batch when any entry is a Bundle or a DELETE; a message is always single.

    The web layer computes the heads cheaply while validating the body, the worker obeys.
    """
    if bundle_type == "message":
        return "single"
    for head in entry_heads:
        if isinstance(head, tuple | list) and len(head) == 2:
            resource_type, method = head
            if resource_type == "Bundle" or is_delete(method):
                return "batch"
    return "single"


def unwrap_message(message: Mapping[str, Any], path: str) -> Unwrapped | dict[str, Any]:
    """The carried document, or an OperationOutcome saying why there is none."""
    entries = as_list(message.get("entry"))
    header_index, header = _message_header(entries)
    refused = _refused_event(header, f"{path}.entry[{header_index}].resource")
    if refused is not None:
        return refused
    index = _document_index(entries, header)
    if index is None:
        return error_outcome(
            "not-supported",
            "The message carries no document Bundle, so there is no course of care in it."
            + _RETRACT_HINT,
            expression=f"{path}.entry",
        )
    return Unwrapped(entries[index]["resource"], f"{path}.entry[{index}].resource")


def message_event(message: Mapping[str, Any]) -> str | None:
    """The last segment of the message's event (``birth_submission_void``), lower case."""
    _, header = _message_header(as_list(message.get("entry")))
    found = _event_of(header)
    if found is None:
        return None
    return found[0].rstrip("/").rpartition("/")[2][-_EVENT_TAIL:].lower()


def _event_of(header: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the event, the element it came from): ``eventUri``, else ``eventCoding.code``."""
    event = as_str(header.get("eventUri"))
    if event is not None:
        return event, "eventUri"
    event = as_str(as_dict(header.get("eventCoding")).get("code"))
    return (event, "eventCoding.code") if event is not None else None


def _message_header(entries: list[Any]) -> tuple[int, Mapping[str, Any]]:
    for index, entry in enumerate(entries):
        resource = as_dict(as_dict(entry).get("resource"))
        if resource.get("resourceType") == "MessageHeader":
            return index, resource
    return 0, {}


def _refused_event(header: Mapping[str, Any], header_path: str) -> dict[str, Any] | None:
    found = _event_of(header)
    if found is None:
        return None
    event, element = found
    match = _EVENT_KINDS.search(event.rstrip("/").rpartition("/")[2][-_EVENT_TAIL:].lower())
    if match is None:
        return None
    received = _EVENT_NAMES[match.lastindex - 1 if match.lastindex else 0]
    return error_outcome(
        "not-supported",
        f"The submission is {received}, which carries no course of care." + _RETRACT_HINT,
        expression=f"{header_path}.{element}",
    )


def _document_index(entries: list[Any], header: Mapping[str, Any]) -> int | None:
    bundles = [
        index
        for index, entry in enumerate(entries)
        if as_dict(as_dict(entry).get("resource")).get("resourceType") == "Bundle"
    ]
    focus = {ref for ref in (as_str(item.get("reference")) for item in _focus(header)) if ref}
    for index in bundles:
        if focus & _names_of(entries[index]):
            return index
    return bundles[0] if bundles else None


def _focus(header: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    focus = header.get("focus")
    return [focus] if isinstance(focus, dict) else list(dicts(focus))


def _names_of(entry: Mapping[str, Any]) -> set[str]:
    """How a MessageHeader.focus may name this entry: its fullUrl or Bundle/<id>."""
    names = set()
    full_url = as_str(entry.get("fullUrl"))
    if full_url:
        names.add(full_url)
    resource_id = as_str(entry["resource"].get("id"))
    if resource_id:
        names.add(f"Bundle/{resource_id}")
    return names
