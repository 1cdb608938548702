#!/usr/bin/env python
import sys
from pathlib import Path


def main() -> None:
    if sys.argv[1:2] == ["generate_secrets"]:  # before the settings, which need its output
        from config.secrets import generate_secrets

        sys.exit(generate_secrets(sys.argv[2:], Path(__file__).resolve().parent))
    from config.environment import settings_or_exit

    settings_or_exit()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
