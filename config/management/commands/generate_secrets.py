"""``manage.py generate_secrets``, as Django lists it in ``manage.py help``.

``manage.py`` runs :func:`config.secrets.generate_secrets` before the settings load (they need
its output), so this command is reached only through ``call_command`` or ``manage.py help``;
both end in the same function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.secrets import DESCRIPTION, generate_secrets


class Command(BaseCommand):
    help = DESCRIPTION

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", action="store_true", help="append to .env what it lacks")
        parser.add_argument("--env-file", type=Path, default=None, help="the file to write")

    def handle(self, *args: Any, write: bool, env_file: Path | None, **options: Any) -> None:
        arguments = ["--write"] if write else []
        if env_file is not None:
            arguments += ["--env-file", str(env_file)]
        generate_secrets(arguments, Path(settings.BASE_DIR))
