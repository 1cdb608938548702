from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from keys.models import SCOPES, KeyEvent
from keys.services import ActiveKeyExists, key_mint, key_rotate
from registry.management.lookup import practice_or_error


class Command(BaseCommand):
    help = (
        "Mint the practice's API key and print only the raw token on stdout (it is shown "
        "once and cannot be recovered): mintkey SLUG [--scopes ingest:write,ingest:read] "
        "[--rotate]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the practice's slug")
        parser.add_argument(
            "--scopes",
            default=None,
            help=(
                f"comma-separated scopes (default {','.join(SCOPES)}; with --rotate, the old key's)"
            ),
        )
        parser.add_argument(
            "--rotate",
            action="store_true",
            help="revoke the active key and mint its successor in one step",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        practice = practice_or_error(options["slug"])
        scopes = re.split(r"[,\s]+", options["scopes"]) if options["scopes"] is not None else None
        try:
            if options["rotate"]:
                key, token = key_rotate(practice=practice, scopes=scopes, via=KeyEvent.Via.COMMAND)
            else:
                key, token = key_mint(
                    practice=practice, scopes=scopes or SCOPES, via=KeyEvent.Via.COMMAND
                )
        except ActiveKeyExists as error:
            raise CommandError(f"{error} Use --rotate to replace it.") from None
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        # stdout carries the token alone, so `TOKEN=$(manage.py mintkey ...)` just works.
        self.stderr.write(f"Minted {key.prefix}… for {practice.slug} ({', '.join(key.scopes)})")
        self.stdout.write(token)
