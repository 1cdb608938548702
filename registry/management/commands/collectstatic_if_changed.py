from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from lib.static import static_files_stale


class Command(BaseCommand):
    help = (
        "Run collectstatic when a static file changed since it last ran (or it never did): "
        "make run and the Procfile's web run this before serving."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not static_files_stale():
            self.stdout.write("Static files are up to date.")
            return
        call_command("collectstatic", interactive=False, verbosity=0)
        self.stdout.write("Static files collected (hashed names, gzip and brotli).")
