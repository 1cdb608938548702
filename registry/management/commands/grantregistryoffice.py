from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.members.commands import delivery_report, origin_argument, origin_of
from registry.members.services import invitation_send, office_grant


class Command(BaseCommand):
    help = (
        "Give the registry-office role (every practice's settings, adding practices, "
        "inviting anyone) to the account with EMAIL, creating it without a password if "
        "missing: grantregistryoffice EMAIL"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email", help="the person's e-mail address")
        origin_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user, created = office_grant(email=options["email"])
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        verb = "Created" if created else "Granted"
        self.stdout.write(f"{verb} {user.get_username()}: registry office")
        if user.has_usable_password():
            return
        # No password yet: a link to set one, as an invitation (mailed, or printed once).
        sent = invitation_send(
            practice=None, email=user.email, role="", by=None, origin=origin_of(options["origin"])
        )
        delivery_report(self.stdout, sent)
