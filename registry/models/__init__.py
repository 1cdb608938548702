"""The registry's tables: practices, members, records and their history (core.py), and
invitations with the record of membership changes (members.py)."""

from registry.models.core import (
    CHILD_COLUMNS,
    COUNT_FIELDS,
    SLUG_PATTERN,
    Attendance,
    BirthCount,
    Child,
    MatchKey,
    Membership,
    Practice,
    Provider,
    Record,
    RecordVersion,
    ReviewDecision,
    Timeliness,
    Transfer,
    slug_validator,
)
from registry.models.members import Invitation, MembershipEvent

__all__ = [
    "CHILD_COLUMNS",
    "COUNT_FIELDS",
    "SLUG_PATTERN",
    "Attendance",
    "BirthCount",
    "Child",
    "Invitation",
    "MatchKey",
    "Membership",
    "MembershipEvent",
    "Practice",
    "Provider",
    "Record",
    "RecordVersion",
    "ReviewDecision",
    "Timeliness",
    "Transfer",
    "slug_validator",
]
