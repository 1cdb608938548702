from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.seeding import seed_registry


class Command(BaseCommand):
    help = (
        "Load realistic masked records quickly (COPY) for trying the admin and the statistics "
        "at scale: seed_registry [--records 1000000] [--practices 300] [--seed 0]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--records", type=int, default=1_000_000)
        parser.add_argument("--practices", type=int, default=300)
        parser.add_argument("--seed", type=int, default=0, help="the same seed, the same data")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["records"] < 100 or options["practices"] < 3:
            raise CommandError("Seed at least 100 records over at least 3 practices.")
        started = time.monotonic()
        try:
            seeded = seed_registry(
                records=options["records"],
                practices=options["practices"],
                seed=options["seed"],
                progress=self.stdout.write,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Seeded {seeded.records} records ({seeded.flagged} flagged) in "
            f"{len(seeded.practices)} practices in {time.monotonic() - started:.0f} s."
        )
