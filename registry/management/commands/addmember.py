from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.members.commands import delivery_report, origin_argument, origin_of
from registry.members.services import invitation_send
from registry.models import Membership, Practice
from registry.review.services import reviewer_admin_access_grant
from registry.services import membership_add


class Command(BaseCommand):
    help = (
        "Invite someone to a practice by e-mail (addmember SLUG EMAIL [--role staff|reviewer]), "
        "or make an existing user a member at once, or change their role "
        "(addmember SLUG USERNAME [--role ...] [--create-user])"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the practice's slug")
        parser.add_argument(
            "username",
            metavar="EMAIL_OR_USERNAME",
            help="an e-mail address to invite, or an existing Django user's username",
        )
        parser.add_argument(
            "--role",
            default=Membership.Role.STAFF,
            choices=Membership.Role.values,
            help=(
                "staff manage the API key; reviewers see it read-only and review suspected "
                "duplicates in the admin, which this grants them staff status for (default staff)"
            ),
        )
        parser.add_argument(
            "--create-user",
            action="store_true",
            help="with a username: create the user (without a password or an e-mail address, "
            "so it cannot reset one by mail; prefer inviting by e-mail)",
        )
        origin_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        slug, username = options["slug"], options["username"]
        practice = Practice.objects.filter(slug=slug).first()
        if practice is None:
            raise CommandError(f"No practice {slug!r}; create it with: createpractice {slug}")
        if "@" in username:
            self._invite(practice, username, options)
            return
        user = self._user(username, create=options["create_user"])
        try:
            membership, created = membership_add(practice=practice, user=user, role=options["role"])
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        verb = "Added" if created else "Updated"
        self.stdout.write(f"{verb} {user.get_username()} in {practice.slug} as {membership.role}")
        if membership.role == Membership.Role.REVIEWER and reviewer_admin_access_grant(user=user):
            self.stdout.write(
                f"{user.get_username()} may now sign in to /admin/ to review suspected duplicates"
            )

    def _invite(self, practice: Practice, email: str, options: dict[str, Any]) -> None:
        origin = origin_of(options["origin"])
        try:
            sent = invitation_send(
                practice=practice, email=email, role=options["role"], by=None, origin=origin
            )
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        invited = f"{sent.invitation.email} to {practice.slug} as {options['role']}"
        self.stdout.write(f"Invited {invited}")
        delivery_report(self.stdout, sent)

    def _user(self, username: str, *, create: bool) -> User:
        user = User.objects.filter(username=username).first()
        if user is not None:
            return user
        if not create:
            raise CommandError(
                f"No user {username!r}; invite by e-mail (addmember SLUG EMAIL), "
                "or pass --create-user."
            )
        user = User.objects.create_user(username)  # unusable password until changepassword
        self.stdout.write(
            f"Created user {username}; set a password with: changepassword {username}"
        )
        return user
