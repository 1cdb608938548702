"""Attendance and transfers of care from Encounters (spec 2.4).

Attending: only a participant typed ``ATND`` (HL7 v3 ParticipationType, any system) whose
``individual`` resolves to a Practitioner of the Bundle. Every other resolved participant
is present, including BFDR's own attendant marker (LOINC ``87286-1``): nothing else
promotes a practitioner to attendant.

Transfers: ``hospitalization.admitSource`` coded ``hosp-trans`` is a maternal transfer in;
``hospitalization.dischargeDisposition`` coded ``other-hcf`` an infant transfer out (any
system). Spec 2.4 rule 3 says such an Encounter "records a transfer of care instead"; we
read that as instead of an attendance: the participants of a transfer Encounter, even one
typed ``ATND``, are recorded as present, not attending, since whoever appears there cared
for the mother or infant around the transfer, not necessarily at the birth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import TransferKind
from .values import as_dict, dicts, has_code

ATTENDING_CODE = "ATND"
_TRANSFER_CODES: tuple[tuple[str, str, TransferKind], ...] = (
    ("admitSource", "hosp-trans", "maternal_transfer_in"),
    ("dischargeDisposition", "other-hcf", "infant_transfer_out"),
)

Resolver = Callable[[object], str | None]


@dataclass(slots=True)
class Attendance:
    """What the Encounters of one course of care say, accumulated in document order."""

    attended_by: dict[str, None] = field(default_factory=dict)  # ordered set of stable ids
    present: dict[str, None] = field(default_factory=dict)
    transfers: dict[TransferKind, None] = field(default_factory=dict)

    def read(self, encounter: Mapping[str, Any], resolve: Resolver) -> None:
        transfers = transfers_of(encounter)
        for kind in transfers:
            self.transfers[kind] = None
        for stable_id, typed_attending in _participants(encounter, resolve):
            if typed_attending and not transfers:
                self.attended_by[stable_id] = None
            else:
                self.present[stable_id] = None

    def mark_present(self, stable_id: str) -> None:
        self.present[stable_id] = None

    def present_only(self) -> tuple[str, ...]:
        """Present practitioners, less those who attended: attending says more."""
        return tuple(sid for sid in self.present if sid not in self.attended_by)


def transfers_of(encounter: Mapping[str, Any]) -> list[TransferKind]:
    hospitalization = as_dict(encounter.get("hospitalization"))
    return [
        kind
        for element, code, kind in _TRANSFER_CODES
        if has_code(hospitalization.get(element), code)
    ]


def _participants(encounter: Mapping[str, Any], resolve: Resolver) -> Iterator[tuple[str, bool]]:
    for participant in dicts(encounter.get("participant")):
        stable_id = resolve(as_dict(participant.get("individual")).get("reference"))
        if stable_id is not None:
            typed_attending = any(
                has_code(kind, ATTENDING_CODE) for kind in dicts(participant.get("type"))
            )
            yield stable_id, typed_attending
