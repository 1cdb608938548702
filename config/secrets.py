"""Secrets for the embedded default and local development.

Outside DEBUG and the embedded default, every secret must come from the environment. For a
first look (no DATABASE_URL and no REDIS_URL) and in DEBUG, a secret the environment does not
set is generated once into ``var/secrets.json`` and reused, so sessions, fingerprints and
staged payloads survive a restart.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Values that look like secrets but are not: placeholders people copy from examples.
_PLACEHOLDERS = {"changeme", "change-me", "secret", "password", "dev", "development", "test"}
MINIMUM_LENGTH = 32


def generated_secrets(var_dir: Path, names: tuple[str, ...]) -> dict[str, str]:
    """Read ``var/secrets.json``, creating it (mode 0600) with fresh values when missing."""
    path = var_dir / "secrets.json"
    var_dir.mkdir(parents=True, exist_ok=True)
    try:
        stored: dict[str, str] = json.loads(path.read_text())
    except FileNotFoundError:
        stored = {}
    missing = [name for name in names if not stored.get(name)]
    if missing:
        stored.update({name: secrets.token_urlsafe(48) for name in missing})
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            json.dump(stored, handle)
        os.replace(temporary, path)
    return stored


def check_strength(name: str, value: str) -> str:
    """Refuse a secret that is short, a known placeholder or Django's insecure default."""
    lowered = value.lower()
    weak = (
        len(value) < MINIMUM_LENGTH
        or lowered in _PLACEHOLDERS
        or lowered.startswith("django-insecure")
        or len(set(value)) < 10
    )
    if weak:
        raise ImproperlyConfigured(
            f"{name} is too weak: set it to at least {MINIMUM_LENGTH} random characters, "
            f"for example the output of: python -c 'import secrets; "
            f"print(secrets.token_urlsafe(48))'"
        )
    return value


def missing(name: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(
        f"{name} is not set. Set the environment variable {name} (at least {MINIMUM_LENGTH} "
        f"random characters), or run with DEBUG=true to use generated development secrets."
    )
