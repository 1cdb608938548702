from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.services import practice_create, slug_check


class Command(BaseCommand):
    help = "Create a practice (idempotent): createpractice SLUG [--name NAME] [--sandbox]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="lowercase letters, digits and hyphens, e.g. st-mary")
        parser.add_argument("--name", default="", help="display name (defaults to the slug)")
        parser.add_argument(
            "--sandbox",
            action="store_true",
            help="a practice for trying the API: keys start rgk_test_, its records never "
            "count in the registry's figures, and its staff may delete all of its data "
            "(an existing practice is switched only while it holds no key, record or "
            "ingestion; without --sandbox an existing practice keeps its kind)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug: str = options["slug"]
        try:
            slug_check(slug)
        except ValidationError as error:
            raise CommandError(
                f"{slug!r} is not a valid practice slug: {error.messages[0]}"
            ) from None
        try:
            practice, created = practice_create(
                slug=slug, name=options["name"], sandbox=True if options["sandbox"] else None
            )
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        verb = "Created" if created else "Practice already exists:"
        kind = " (sandbox)" if practice.sandbox else ""
        self.stdout.write(f"{verb} {practice.slug} ({practice.name}){kind}")
