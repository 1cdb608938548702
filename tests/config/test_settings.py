"""Start-up rules for secrets, checked in a fresh interpreter with a controlled environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRONG = "k3Jd9-xQ2mZp7vL0aB4nR8tY1uW6eC5sH_fG"


def start(env_overrides, tmp_path=None):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("REGISTRY_", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG"))
    }
    env["REGISTRY_ENV_FILE"] = ""  # no .env: only what the test sets
    env.update(env_overrides)
    code = "import django; django.setup(); from django.conf import settings; print('started')"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


PRODUCTION = {
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/registry",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def test_outside_debug_a_missing_secret_stops_start_up_naming_the_variable():
    result = start(PRODUCTION)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


@pytest.mark.parametrize("name", ["REGISTRY_FINGERPRINT_KEY", "REGISTRY_PAYLOAD_KEY"])
def test_each_registry_secret_is_required(name):
    secrets = {
        "SECRET_KEY": STRONG,
        "REGISTRY_FINGERPRINT_KEY": STRONG,
        "REGISTRY_PAYLOAD_KEY": STRONG,
    }
    del secrets[name]
    result = start({**PRODUCTION, **secrets})
    assert result.returncode != 0
    assert f"{name} is not set" in result.stderr


@pytest.mark.parametrize("weak", ["changeme", "short", "django-insecure-" + "a" * 40, "a" * 60])
def test_a_weak_secret_stops_start_up(weak):
    env = {**PRODUCTION, "SECRET_KEY": weak}
    env.update({"REGISTRY_FINGERPRINT_KEY": STRONG, "REGISTRY_PAYLOAD_KEY": STRONG})
    result = start(env)
    assert result.returncode != 0
    assert "SECRET_KEY is too weak" in result.stderr


def test_strong_secrets_from_the_environment_start():
    env = {**PRODUCTION, "SECRET_KEY": STRONG}
    env.update({"REGISTRY_FINGERPRINT_KEY": STRONG, "REGISTRY_PAYLOAD_KEY": STRONG})
    result = start(env)
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


def test_the_embedded_default_generates_secrets_once_and_reuses_them(tmp_path):
    from config.secrets import generated_secrets

    names = ("SECRET_KEY", "REGISTRY_PAYLOAD_KEY")
    first = generated_secrets(tmp_path, names)
    second = generated_secrets(tmp_path, names)
    assert first == second
    assert all(len(value) >= 32 for value in first.values())
    path = tmp_path / "secrets.json"
    assert json.loads(path.read_text()) == first
    assert path.stat().st_mode & 0o777 == 0o600


def test_the_embedded_default_starts_with_no_configuration():
    result = start({})
    assert result.returncode == 0, result.stderr
