"""The pure FHIR mapping core: decoded BFDR Bundles in, masked results out.

No I/O and no Django: functions from plain dicts (as a JSON decoder produces them) to the
frozen dataclasses of :mod:`ingestion.fhir.model`. Every public function is total: any
JSON value yields a result, never an exception.
"""

from .mapping import map_batch_entry, map_single
from .masking import practice_fingerprint_key
from .messages import SubmissionKind, entry_head, submission_kind
from .model import Child, CourseOfCare, Provider, Rejection, Result, Retraction, Void

__all__ = [
    "Child",
    "CourseOfCare",
    "Provider",
    "Rejection",
    "Result",
    "Retraction",
    "SubmissionKind",
    "Void",
    "entry_head",
    "map_batch_entry",
    "map_single",
    "practice_fingerprint_key",
    "submission_kind",
]
