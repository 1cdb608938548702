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

from config.environment import ConfigurationError

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
        raise ConfigurationError(
            f"{name} is too weak; accepted: at least {MINIMUM_LENGTH} random characters "
            f"(`manage.py generate_secrets` prints fresh ones)."
        )
    return value


def missing(name: str) -> ConfigurationError:
    return ConfigurationError(
        f"{name} is not set; accepted: at least {MINIMUM_LENGTH} random characters, in the "
        f"environment or in .env (`manage.py generate_secrets --write` adds fresh ones to .env)."
    )


# --- manage.py generate_secrets -----------------------------------------------------------------

# Every secret the service reads: the three it needs, and the token /metrics asks for (without
# it /metrics is 404 and the alerts are blind, so a fresh machine gets one too).
SECRET_NAMES = (
    "SECRET_KEY",
    "REGISTRY_FINGERPRINT_KEY",
    "REGISTRY_PAYLOAD_KEY",
    "REGISTRY_METRICS_TOKEN",
)
USAGE = "manage.py generate_secrets [-h] [--write] [--env-file PATH]"
DESCRIPTION = """Fresh values for SECRET_KEY, REGISTRY_FINGERPRINT_KEY, REGISTRY_PAYLOAD_KEY and
REGISTRY_METRICS_TOKEN, as .env lines. Without --write they are printed. With --write, those the
.env file does not hold yet are appended to it (created with mode 0600); a secret already there
is never replaced: changing REGISTRY_FINGERPRINT_KEY or REGISTRY_PAYLOAD_KEY would orphan the
data made with it."""


def generate_secrets(arguments: list[str], base_dir: Path) -> int:
    """``manage.py generate_secrets``: runs before the settings load, since it makes them."""
    import argparse

    from config.environment import env_file

    parser = argparse.ArgumentParser(
        prog="manage.py generate_secrets",
        usage=USAGE,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--write", action="store_true", help="append to .env what it lacks")
    parser.add_argument(
        "--env-file", type=Path, default=None, metavar="PATH", help="the file (default: .env)"
    )
    options = parser.parse_args(arguments)
    if not options.write:
        for name in SECRET_NAMES:
            print(f"{name}={secrets.token_urlsafe(48)}")
        return 0
    path = options.env_file or env_file(base_dir) or base_dir / ".env"
    present = _names_in(path)
    added = [name for name in SECRET_NAMES if name not in present]
    _append(path, [f"{name}={secrets.token_urlsafe(48)}" for name in added])
    for name in SECRET_NAMES:
        print(f"{name}: {'written to' if name in added else 'kept, already in'} {path}")
    return 0


def _names_in(path: Path) -> set[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return set()
    names = set()
    for line in lines:
        name, equals, value = line.strip().removeprefix("export ").partition("=")
        if equals and value.strip():
            names.add(name.strip())
    return names


def _append(path: Path, lines: list[str]) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.chmod(path, 0o600)  # it holds secrets now, whatever its mode was
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        if lines and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            handle.write("\n")
        handle.writelines(f"{line}\n" for line in lines)
