from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.services import practice_create


class Command(BaseCommand):
    help = "Create a practice (idempotent): createpractice SLUG [--name NAME]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="lowercase letters, digits and hyphens, e.g. st-mary")
        parser.add_argument("--name", default="", help="display name (defaults to the slug)")

    def handle(self, *args: Any, **options: Any) -> None:
        slug: str = options["slug"]
        try:
            practice, created = practice_create(slug=slug, name=options["name"])
        except ValidationError as error:
            reason = error.messages[0]
            raise CommandError(f"{slug!r} is not a valid practice slug: {reason}") from None
        verb = "Created" if created else "Practice already exists:"
        self.stdout.write(f"{verb} {practice.slug} ({practice.name})")
