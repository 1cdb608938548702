from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.sandbox.services import NotASandbox, sandbox_reset
from registry.management.lookup import practice_or_error


class Command(BaseCommand):
    help = (
        "Delete all of a sandbox practice's data (ingestions, records and all derived from "
        "them, providers, kept counts); the practice, its members and its key stay. Refuses "
        "a practice that is not a sandbox: reset_sandbox SLUG"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the sandbox practice's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        practice = practice_or_error(options["slug"])
        try:
            done = sandbox_reset(practice=practice, by="command")
        except NotASandbox as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Reset sandbox {practice.slug}: {done.ingestions} ingestion(s), {done.records} "
            f"record(s) and {done.providers} provider(s) deleted."
        )
