"""What the invitation commands share: the site's origin for links, and the link's delivery."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import CommandParser, OutputWrapper

from registry.members.services import SentInvitation


def origin_argument(parser: CommandParser) -> None:
    parser.add_argument(
        "--origin",
        default="",
        help="scheme and host the link starts with, e.g. https://registry.example.org "
        "(default: the first of CSRF_TRUSTED_ORIGINS, else http://localhost:PORT)",
    )


def origin_of(given: str) -> str:
    if given:
        return given.rstrip("/")
    trusted = settings.CSRF_TRUSTED_ORIGINS
    return trusted[0].rstrip("/") if trusted else f"http://localhost:{settings.PORT}"


def delivery_report(stdout: OutputWrapper, sent: SentInvitation) -> None:
    """Say where the link went: mailed, or printed here once to pass on."""
    email = sent.invitation.email
    if sent.mailed:
        stdout.write(f"Invitation mailed to {email}")
        return
    stdout.write(f"No mail sent: pass this link to {email} (shown once, works once):")
    stdout.write(sent.link)
