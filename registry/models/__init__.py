"""The registry's tables: practices, members, records and their history (core.py), and
invitations with the record of membership changes (members.py), and the registry
office's counts per practice and day (activity.py), and the monthly feedback mail's
claims (feedback.py)."""

from registry.models.activity import ReceivedCount, SubmissionCount
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
    RecordCounts,
    RecordVersion,
    ReviewDecision,
    Timeliness,
    Transfer,
    slug_validator,
)
from registry.models.feedback import FeedbackMail
from registry.models.members import Invitation, MembershipEvent

__all__ = [
    "CHILD_COLUMNS",
    "COUNT_FIELDS",
    "SLUG_PATTERN",
    "Attendance",
    "BirthCount",
    "Child",
    "FeedbackMail",
    "Invitation",
    "MatchKey",
    "Membership",
    "MembershipEvent",
    "Practice",
    "Provider",
    "ReceivedCount",
    "Record",
    "RecordCounts",
    "RecordVersion",
    "ReviewDecision",
    "SubmissionCount",
    "Timeliness",
    "Transfer",
    "slug_validator",
]
