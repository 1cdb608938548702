"""A staged chunk's bytes, decoded and mapped: the worker's mapping and ``$validate``'s.

A chunk is either one course of care (a single submission: the Bundle's bytes) or a JSON
array of batch entries. Pure, as the rest of the core: no I/O and no Django, so the web's
preview maps a body exactly as the worker maps what was staged, without loading the worker.
"""

from __future__ import annotations

from datetime import date

import msgspec

from .mapping import map_batch_entry, map_single
from .messages import SubmissionKind
from .model import Rejection, Result
from .outcome import error_outcome
from .shape import too_many_values_rejection, values_over
from .validation import validate_course

_entries_decoder = msgspec.json.Decoder(list[msgspec.Raw])


def map_chunk(
    kind: SubmissionKind | str,
    plaintext: bytes,
    first_index: int,
    key: bytes,
    received_on: date | None = None,
    *,
    validate: bool = False,
    most_values: int | None = None,
) -> list[Result]:
    """Decode a staged chunk and map it.

    ``received_on``: the day the ingestion was queued, for each course's timeliness bucket.
    ``validate``: the optional full FHIR validation (``REGISTRY_FHIR_VALIDATION``).
    ``most_values``: the JSON values an entry (a single: its Bundle) may hold
    (``REGISTRY_MAX_ENTRY_NODES``), counted again here, so that what was stored before the door
    counted (or under a higher limit) is refused, not decoded.
    """
    if kind == "single":
        if most_values is not None and values_over(plaintext, most_values):
            return [too_many_values_rejection("Bundle", most_values)]
        try:
            bundle = msgspec.json.decode(plaintext)
        except (msgspec.DecodeError, ValueError):
            return [_undecodable("Bundle")]
        invalid = validate and validate_course(bundle, reference="Bundle", path="Bundle")
        return [invalid or map_single(bundle, fingerprint_key=key, received_on=received_on)]
    results: list[Result] = []
    for offset, raw in enumerate(_entries_decoder.decode(plaintext)):
        index = first_index + offset
        reference = f"Bundle.entry[{index}]"
        if most_values is not None and values_over(raw, most_values):
            results.append(too_many_values_rejection(reference, most_values))
            continue
        try:
            entry = msgspec.json.decode(raw)
        except (msgspec.DecodeError, ValueError):
            results.append(_undecodable(reference))
            continue
        invalid = validate and _validate_entry(entry, reference)
        result = invalid or map_batch_entry(
            entry, index, fingerprint_key=key, received_on=received_on
        )
        if result is not None:
            results.append(result)
    return results


def chunk_entries(kind: SubmissionKind | str, plaintext: bytes) -> list[bytes]:
    """The entries of a chunk, each alone (a single's chunk is its one course)."""
    if kind == "single":
        return [plaintext]
    return [bytes(raw) for raw in _entries_decoder.decode(plaintext)]


def _validate_entry(entry: object, reference: str) -> Rejection | None:
    resource = entry.get("resource") if isinstance(entry, dict) else None
    if not isinstance(resource, dict) or resource.get("resourceType") != "Bundle":
        return None  # a DELETE or an ignored entry: nothing to validate
    return validate_course(resource, reference=reference, path=f"{reference}.resource")


def _undecodable(reference: str) -> Rejection:
    return Rejection(
        reference=reference,
        operation_outcome=error_outcome(
            "structure", "The entry could not be decoded as JSON.", expression=reference
        ),
    )
