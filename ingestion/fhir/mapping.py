"""The public mapping functions, each guarded so that no input can make it raise.

The mapping is written to be total (see :mod:`ingestion.fhir.values`); the guard is a last
line of defence so that an unforeseen bug costs one record, reported as ``exception``,
rather than the whole ingestion. The guard names the exception class only: an exception's
message may quote a submitted value.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TypeVar

from .course import Context, map_course
from .messages import is_delete
from .model import Rejection, Result
from .outcome import error_outcome
from .retractions import delete_retraction
from .values import as_dict

T = TypeVar("T")


def map_single(
    bundle: object, *, fingerprint_key: bytes, received_on: date | None = None
) -> Result:
    """The whole submitted Bundle as one course of care (reference ``Bundle``).

    ``received_on``: the day the registry received it, for the course's timeliness bucket.
    """
    context = Context(fingerprint_key, received_on)
    return _guarded(
        "Bundle",
        lambda: map_course(bundle, reference="Bundle", path="Bundle", context=context),
    )


def map_batch_entry(
    entry: object, index: int, *, fingerprint_key: bytes, received_on: date | None = None
) -> Result | None:
    """The i-th entry of a batch: a course of care, a DELETE retraction, or None (ignored)."""
    reference = f"Bundle.entry[{index}]"
    context = Context(fingerprint_key, received_on)
    return _guarded(reference, lambda: _map_entry(entry, reference, context))


def _map_entry(entry: object, reference: str, context: Context) -> Result | None:
    entry = as_dict(entry)
    if is_delete(as_dict(entry.get("request")).get("method")):
        return delete_retraction(entry, reference)
    resource = entry.get("resource")
    if as_dict(resource).get("resourceType") != "Bundle":
        return None  # spec 2.1 mode 2: non-Bundle entries are ignored
    return map_course(resource, reference=reference, path=f"{reference}.resource", context=context)


def _guarded(reference: str, mapping: Callable[[], T]) -> T | Rejection:
    try:
        return mapping()
    except Exception as error:  # the last line of defence; see the module docstring
        outcome = error_outcome(
            "exception",
            f"An internal error ({type(error).__name__}) stopped this record from being mapped.",
        )
        return Rejection(reference, outcome)
