"""What the pure mapping core returns: small frozen dataclasses, nothing identifying.

A :class:`CourseOfCare` carries only what docs/decisions.md ("What is stored") allows, plus the
keyed fingerprint. Names, full dates, birth times, full postal codes, addresses, telecoms
and patient identifiers never reach these objects; they exist only inside the function
that computes the fingerprint and the mother's age.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Sex = Literal["female", "male", "other", "unknown"]
ChildOutcome = Literal["live_birth", "fetal_death"]
ProviderRole = Literal["midwife", "doula", "nurse", "assistant", "other"]
TransferKind = Literal["maternal_transfer_in", "infant_transfer_out"]
# Days from the (earliest) birth to the day the registry first received the course.
Timeliness = Literal["days_0_5", "days_6_10", "days_over_10"]


@dataclass(frozen=True, slots=True)
class Child:
    birth_order: int  # 1-based
    outcome: ChildOutcome
    sex: Sex | None = None
    birth_year: int | None = None
    birth_weight_grams: int | None = None
    gestational_age_weeks: int | None = None
    gestational_age_days: int | None = None  # 0..6, the days beyond whole weeks
    apgar_1: int | None = None
    apgar_5: int | None = None
    apgar_10: int | None = None
    multiple_birth: int | None = None  # multipleBirthInteger as declared, else None
    # Keyed hash of the fingerprint and the birth minute (masking.birth_time_key), for
    # telling twins apart; the time itself is never kept.
    birth_time_key: str | None = None


@dataclass(frozen=True, slots=True)
class Provider:
    stable_id: str
    role: ProviderRole
    npi: str | None = None
    display_name: str = ""
    credentials: str = ""


@dataclass(frozen=True, slots=True)
class CourseOfCare:
    reference: str  # "Bundle" or "Bundle.entry[<i>]"
    external_record_id: str
    fingerprint: str | None  # hex HMAC-SHA256; None when name or birth date is missing
    children: tuple[Child, ...]
    consent_granted: bool
    ig_version: str | None = None
    source_updated_at: datetime | None = None  # aware; the stale-update guard's stamp
    consent_datetime: datetime | None = None  # aware
    mother_age_years: int | None = None
    mother_postal_prefix: str | None = None  # first three characters only
    providers: tuple[Provider, ...] = ()
    attended_by: tuple[str, ...] = ()  # Provider.stable_id values
    present: tuple[str, ...] = ()  # Provider.stable_id values
    transfers: tuple[TransferKind, ...] = ()
    consent_decided: bool = False  # a Consent stating a decision was sent (consent.py)
    # Data quality: the plausibility findings (OperationOutcome issues, severity warning;
    # ingestion.fhir.plausibility) and the timeliness bucket (None: no birth date, or no
    # day of receipt given to the mapping).
    warnings: tuple[dict[str, Any], ...] = ()
    timeliness: Timeliness | None = None


@dataclass(frozen=True, slots=True)
class Retraction:
    reference: str
    external_record_id: str


@dataclass(frozen=True, slots=True)
class Void:
    """An NVSS void message: retract every record whose chart number is in the block.

    ``chart_numbers`` holds each certificate number of the block as NVSS record ids, padded
    to six digits and unpadded (``2019UT048858`` and ``2019UT48858``), in block order.
    """

    reference: str
    external_record_id: str  # the first number's NVSS record id, padded
    chart_numbers: tuple[str, ...]
    block_count: int


@dataclass(frozen=True, slots=True)
class Rejection:
    reference: str
    operation_outcome: dict[str, Any]
    external_record_id: str | None = None


Result = CourseOfCare | Retraction | Void | Rejection
