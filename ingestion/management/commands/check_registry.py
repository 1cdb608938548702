from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from ingestion.monitoring.consistency import registry_check, registry_fix


class Command(BaseCommand):
    help = (
        "Check that what the registry derives from its records agrees with them: the kept "
        "counts, the match keys, the receipts' counts, no staged chunk of a finished ingestion. "
        "Exits 1 naming each inconsistency; with --fix, rebuilds what can be rebuilt first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fix", action="store_true", help="rebuild what disagrees")

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("check_registry needs PostgreSQL (the production shape).")
        if options["fix"]:
            for finding in registry_fix():
                self.stdout.write(f"fixed: {finding.check}: {finding.what}")
        findings = registry_check()
        if findings:
            for finding in findings:
                self.stderr.write(f"{finding.check}: {finding.what}")
            raise CommandError(
                f"{len(findings)} inconsistenc{'y' if len(findings) == 1 else 'ies'} found."
            )
        self.stdout.write("The derived tables agree with the records.")
