from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.models import Practice
from registry.statistics.counts import counts_differences, counts_rebuild
from registry.statistics.submissions import submissions_differences, submissions_rebuild


class Command(BaseCommand):
    help = (
        "Recount the statistics' kept counts from the records (per birth year and per day "
        "received) and what each practice sent from its ingestions: recount_statistics "
        "[--check]. With --check, change nothing and fail if any count differs from a recount."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare only; exit 1 on a difference"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        differences = counts_differences()
        sent = submissions_differences()
        if options["check"]:
            problems = []
            if differences:
                problems.append(
                    f"{len(differences)} kept count cell(s) differ from a recount "
                    f"(practice ids {sorted({key[0] for key in differences})}); "
                )
            if sent:
                problems.append(
                    f"{len(sent)} day(s) sent differ from a recount of the ingestions "
                    f"(practice ids {sorted({key[0] for key in sent})}); "
                )
            if problems:
                raise CommandError(
                    "".join(problems) + "run recount_statistics without --check to rebuild them."
                )
            self.stdout.write("The kept counts equal a recount.")
            self.stdout.write("The days sent equal a recount of the ingestions.")
            return
        for practice_id in Practice.objects.order_by("id").values_list("id", flat=True):
            counts_rebuild(practice_id=practice_id)
            submissions_rebuild(practice_id=practice_id)
        self.stdout.write(f"Rebuilt the counts; {len(differences)} cell(s) had differed.")
        self.stdout.write(f"Rebuilt the days sent; {len(sent)} day(s) had differed.")
