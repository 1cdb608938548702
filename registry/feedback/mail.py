"""One recipient's feedback mail: last month's row of the practice's scorecard, in words.

Each recipient's copy is built as the scorecard page would show it to them: the registry's
thresholds hold for the practices *they* belong to none of, so someone in two practices
reading both practices' mails learns no more than from the two pages. The mail names no
person and holds no record's value: only the practice's own monthly counts and rates, and
the registry's where the rules allow (registry/statistics/scorecard.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode

from registry.models import Membership, Practice
from registry.statistics.scorecard import (
    first_day,
    month_label,
    previous_month,
    scorecard_for_practice,
)
from registry.statistics.scorecard_table import mail_lines


@dataclass(frozen=True)
class FeedbackMessage:
    subject: str
    body: str
    month: str  # YYYY-MM
    lines: list[tuple[str, str, str]]
    comparison_withheld: str | None


def recipients(practice: Practice) -> list[Membership]:
    """The practice's staff who receive the mail: active accounts with an address, not
    opted out (reviewers receive none)."""
    return list(
        Membership.objects.filter(
            practice=practice,
            role=Membership.Role.STAFF,
            feedback_mail=True,
            user__is_active=True,
        )
        .exclude(user__email="")
        .select_related("user", "practice")
        .order_by("user__pk")
    )


def _page_url(name: str, practice: Practice) -> str:
    return f"{settings.REGISTRY_PUBLIC_URL}{reverse(name)}?{urlencode({'practice': practice.slug})}"


def feedback_message(*, practice: Practice, viewer: User, today: date) -> FeedbackMessage:
    """The mail ``viewer`` receives (or would) for the month before ``today``'s."""
    members_of = Membership.objects.filter(user=viewer).values_list("practice_id", flat=True)
    card = scorecard_for_practice(practice=practice, members_of=list(members_of), today=today)
    month = previous_month(today)
    lines = mail_lines(card, month_label(month))
    context = {
        "practice": practice,
        "month_name": f"{first_day(month):%B %Y}",
        "lines": lines,
        "withheld": card["comparison_withheld"],
        "statistics_url": _page_url("registry:statistics", practice),
        "preferences_url": _page_url("registry:feedback_mail", practice),
    }
    subject = render_to_string("feedback/subject.txt", context).strip()
    body = render_to_string("feedback/mail.txt", context)
    return FeedbackMessage(subject, body, month_label(month), lines, card["comparison_withheld"])
