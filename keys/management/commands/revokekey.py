from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from keys.models import KeyEvent
from keys.services import key_revoke
from registry.management.lookup import practice_or_error


class Command(BaseCommand):
    help = "Revoke the practice's active API key; it is refused from the next request on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the practice's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        practice = practice_or_error(options["slug"])
        key = key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)
        if key is None:
            self.stdout.write(f"{practice.slug} has no active key; nothing to revoke.")
        else:
            self.stdout.write(f"Revoked {key.prefix}… of {practice.slug}.")
