"""Strict configuration: a bad value stops every real command with one line, no traceback.

Each kind of setting (boolean, whole number, number, URL, list, network, secret) is given a
bad value, and manage.py, gunicorn (with config/gunicorn.py, and bare on config.asgi) and
Celery are started for real in a subprocess: each must stop at once, non-zero, with one line
on stderr naming the variable and saying what is accepted.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from config.environment import ConfigurationError, StrictEnv
from tests.services import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
STRONG = "k3Jd9-xQ2mZp7vL0aB4nR8tY1uW6eC5sH_fG"
SECRETS = {"SECRET_KEY": STRONG, "REGISTRY_FINGERPRINT_KEY": STRONG, "REGISTRY_PAYLOAD_KEY": STRONG}
GENERATED = [*SECRETS, "REGISTRY_METRICS_TOKEN"]  # every secret the service reads


def production_environment(**overrides: str) -> dict[str, str]:
    """The shell's environment without the service's settings, in production shape."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("REGISTRY_", "DATABASE_URL", "REDIS_URL", "CELERY_", "DEBUG"))
        and key not in SECRETS
    }
    env = {
        **kept,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/registry_not_reached",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "REGISTRY_ENV_FILE": "",  # no .env: only what the test sets
        **SECRETS,
        **overrides,
    }
    return {key: value for key, value in env.items() if value is not None}


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=90, check=False
    )


MANAGE = [str(BIN / "python"), "manage.py", "check"]
GUNICORN = [str(BIN / "gunicorn"), "config.asgi:application", "--config", "config/gunicorn.py"]
CELERY_WORKER = [str(BIN / "celery"), "-A", "config", "worker", "--loglevel=INFO"]
COMMANDS = {"manage.py": MANAGE, "gunicorn": GUNICORN, "celery worker": CELERY_WORKER}

# (variable, bad value, words the one line must hold)
BAD_VALUES = {
    "bool": ("DEBUG", "maybe", ["DEBUG", "'maybe' is not a boolean", "yes/no", "on/off"]),
    "bool, cookie": ("SECURE_COOKIES", "yes-please", ["SECURE_COOKIES", "true/false"]),
    "int": ("REGISTRY_MAX_BODY_BYTES", "abc", ["REGISTRY_MAX_BODY_BYTES", "whole number"]),
    "float": ("REGISTRY_BODY_IDLE_SECONDS", "soon", ["REGISTRY_BODY_IDLE_SECONDS", "a number"]),
    "url": ("REDIS_URL", "http://cache:6379/0", ["REDIS_URL", "http://", "redis://"]),
    "hold": (
        "REGISTRY_SINGLES_GATHER_SECONDS",
        "45",
        ["REGISTRY_SINGLES_GATHER_SECONDS", "not below REGISTRY_REQUEUE_AFTER_SECONDS", "30"],
    ),
    "list": ("ALLOWED_HOSTS", "https://registry.example.org", ["ALLOWED_HOSTS", "host name"]),
    "network": (
        "REGISTRY_TRUSTED_PROXIES",
        "10.0.0.0/8,proxy.internal",
        ["REGISTRY_TRUSTED_PROXIES", "'proxy.internal'", "CIDR"],
    ),
}


def assert_one_line_refusal(result: subprocess.CompletedProcess[str], words: list[str]) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Configuration error: ")
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize("kind", BAD_VALUES, ids=BAD_VALUES.keys())
def test_a_bad_value_stops_each_command_with_one_line(kind, command):
    name, value, words = BAD_VALUES[kind]
    env = production_environment(**{name: value}, PORT=str(free_port()))
    result = run(command, env)
    assert_one_line_refusal(result, [*words, "accepted"])


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_missing_secret_stops_each_command_with_one_line(command):
    env = production_environment(REGISTRY_PAYLOAD_KEY=None, PORT=str(free_port()))
    result = run(command, env)
    assert_one_line_refusal(result, ["REGISTRY_PAYLOAD_KEY is not set", "generate_secrets"])


def test_celery_beat_and_a_bare_gunicorn_stop_too():
    """Without config/gunicorn.py the settings load in gunicorn's worker: the exit status
    makes gunicorn halt instead of restarting workers for ever."""
    env = production_environment(DEBUG="maybe")
    beat = run([str(BIN / "celery"), "-A", "config", "beat"], env)
    assert_one_line_refusal(beat, ["DEBUG"])
    port = free_port()
    bare = run([str(BIN / "gunicorn"), "config.asgi:application", "-b", f"127.0.0.1:{port}"], env)
    assert bare.returncode != 0
    assert "Traceback" not in bare.stderr
    assert bare.stderr.count("Configuration error: DEBUG: 'maybe' is not a boolean") == 1
    assert "App failed to load" in bare.stderr


def test_good_values_start():
    env = production_environment(
        DEBUG="Off",
        SECURE_COOKIES="YES",
        REGISTRY_MAX_BODY_BYTES="1000000",
        REGISTRY_BODY_IDLE_SECONDS="2.5",
        ALLOWED_HOSTS="registry.example.org, .example.org",
        REGISTRY_TRUSTED_PROXIES="10.0.0.0/8, 192.0.2.7, ::1",
    )
    code = (
        "from config.environment import settings_or_exit; settings_or_exit(); "
        "from django.conf import settings as s; "
        "print(s.DEBUG, s.SECURE_COOKIES, s.REGISTRY_MAX_BODY_BYTES, "
        "s.REGISTRY_BODY_IDLE_SECONDS, s.ALLOWED_HOSTS, s.REGISTRY_TRUSTED_PROXIES)"
    )
    result = run([str(BIN / "python"), "-c", code], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "False True 1000000 2.5 ['registry.example.org', '.example.org'] "
        "['10.0.0.0/8', '192.0.2.7', '::1']"
    )


# --- The reader itself ------------------------------------------------------------------------


def reader(**values: str) -> StrictEnv:
    env = StrictEnv()
    env.ENVIRON = values
    return env


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("true", True), ("TRUE", True), ("1", True), ("Yes", True), ("on", True)],
        *[("false", False), ("0", False), ("no", False), ("OFF", False), ("", True)],
    ],
)
def test_booleans_accept_only_the_usual_words(text, expected):
    assert reader(FLAG=text).bool("FLAG", default=True) is expected


@pytest.mark.parametrize("text", ["maybe", "yes-please", "2", "y", "ok", "truee", "-1"])
def test_anything_else_is_not_a_boolean(text):
    with pytest.raises(
        ConfigurationError, match=r"FLAG: .* is not a boolean; accepted: true/false"
    ):
        reader(FLAG=text).bool("FLAG", default=False)


@pytest.mark.parametrize("text", ["abc", "1.5", "1e3", "12abc", "0x10"])
def test_a_whole_number_is_digits(text):
    with pytest.raises(ConfigurationError, match=r"COUNT: .* is not a whole number"):
        reader(COUNT=text).int("COUNT", default=1)


def test_a_whole_number_below_its_minimum_is_refused():
    assert reader(COUNT="  7 ").int("COUNT", default=1, minimum=1) == 7
    with pytest.raises(
        ConfigurationError, match="COUNT: 0 is out of range; accepted: a whole number"
    ):
        reader(COUNT="0").int("COUNT", default=1, minimum=1)
    with pytest.raises(ConfigurationError, match="from 1 to 65535"):
        reader(PORT="70000").int("PORT", default=80, minimum=1, maximum=65535)


@pytest.mark.parametrize("text", ["soon", "1,5", "nan", "inf", "-2"])
def test_a_number_is_a_finite_decimal(text):
    with pytest.raises(ConfigurationError, match="SECONDS: "):
        reader(SECONDS=text).float("SECONDS", default=1.0)


def test_a_rate_and_a_log_level_are_checked_against_their_forms():
    from django.conf import settings

    assert settings.REGISTRY_AUTH_FAILURE_RATE == "30/m"
    env = reader(RATE="30 per minute", LEVEL="info")
    with pytest.raises(ConfigurationError, match=r"RATE: .*accepted: a count per period"):
        env.str(
            "RATE", default="30/m", pattern=r"[1-9]\d*/\d*[smhd]", accepted="a count per period"
        )
    with pytest.raises(ConfigurationError, match="LEVEL: 'info' is not one of the choices"):
        env.str("LEVEL", default="INFO", choices=("DEBUG", "INFO"))


@pytest.mark.parametrize(
    "url",
    ["mysql://db/registry", "postgres://db:port/registry", "postgres://db:5432/", "registry"],
)
def test_a_database_url_must_be_one_the_service_can_use(url):
    with pytest.raises(ConfigurationError, match="DATABASE_URL: ") as refused:
        reader(DATABASE_URL=url).db("DATABASE_URL")
    assert url not in str(refused.value)  # a URL may hold a password: never repeated


def test_a_url_with_a_password_is_never_repeated():
    with pytest.raises(ConfigurationError, match="REDIS_URL") as refused:
        reader(REDIS_URL="redis://:hunter2@cache:port/0").str("REDIS_URL", schemes=("redis",))
    assert "hunter2" not in str(refused.value)


# --- .env -------------------------------------------------------------------------------------


def test_a_dot_env_file_configures_a_terminal_that_sets_nothing(tmp_path):
    """The second terminal of the issue: without DATABASE_URL it used the embedded SQLite."""
    dot_env = tmp_path / ".env"
    dot_env.write_text(
        "# registry\n"
        "DATABASE_URL=postgres://postgres@127.0.0.1:5432/registry_from_file\n"
        "export LOG_LEVEL=WARNING\n"
        f"SECRET_KEY='{STRONG}'\n"
        "REGISTRY_MAX_BODY_BYTES=5000\n"
    )
    env = production_environment(REGISTRY_ENV_FILE=str(dot_env), REGISTRY_MAX_BODY_BYTES="7000")
    del env["DATABASE_URL"], env["SECRET_KEY"]
    code = (
        "from config.environment import settings_or_exit; settings_or_exit(); "
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['NAME'], s.LOG_LEVEL, s.SECRET_KEY == "
        f"'{STRONG}', s.REGISTRY_MAX_BODY_BYTES)"
    )
    result = run([str(BIN / "python"), "-c", code], env)
    assert result.returncode == 0, result.stderr
    # The file fills what the environment does not set; the environment wins.
    assert result.stdout.split() == ["registry_from_file", "WARNING", "True", "7000"]


def test_a_bad_line_in_dot_env_is_one_line_too(tmp_path):
    dot_env = tmp_path / ".env"
    dot_env.write_text("DEBUG=false\nthis is not a setting\n")
    result = run(MANAGE, production_environment(REGISTRY_ENV_FILE=str(dot_env)))
    assert_one_line_refusal(result, [".env line 2", "NAME=value"])


def test_a_bad_value_in_dot_env_names_its_variable(tmp_path):
    dot_env = tmp_path / ".env"
    dot_env.write_text("REGISTRY_TRUSTED_PROXIES=10.0.0.0/33\n")
    result = run(MANAGE, production_environment(REGISTRY_ENV_FILE=str(dot_env)))
    assert_one_line_refusal(result, ["REGISTRY_TRUSTED_PROXIES", "'10.0.0.0/33'"])


# --- Secrets ----------------------------------------------------------------------------------


def generate(*arguments: str, env: dict[str, str] | None = None):
    command = [str(BIN / "python"), "manage.py", "generate_secrets", *arguments]
    return run(command, env or production_environment(SECRET_KEY=None))


def test_generate_secrets_prints_fresh_lines_without_any_settings():
    first, second = generate(), generate()
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [line.split("=", 1)[0] for line in lines] == GENERATED
    assert all(len(line.split("=", 1)[1]) >= 60 for line in lines)
    assert set(lines).isdisjoint(second.stdout.splitlines())


def test_generate_secrets_writes_what_dot_env_lacks_and_never_replaces_a_secret(tmp_path):
    dot_env = tmp_path / ".env"
    dot_env.write_text(f"DEBUG=false\nREGISTRY_FINGERPRINT_KEY={STRONG}")  # no final newline
    dot_env.chmod(0o644)
    result = generate("--write", "--env-file", str(dot_env))
    assert result.returncode == 0, result.stderr
    assert "REGISTRY_FINGERPRINT_KEY: kept" in result.stdout
    written = dot_env.read_text()
    assert written.startswith(f"DEBUG=false\nREGISTRY_FINGERPRINT_KEY={STRONG}\n")
    assert written.count("SECRET_KEY=") == 1 and written.count("REGISTRY_PAYLOAD_KEY=") == 1
    assert written.count("REGISTRY_METRICS_TOKEN=") == 1
    assert stat.S_IMODE(dot_env.stat().st_mode) == 0o600
    generate("--write", "--env-file", str(dot_env))
    assert dot_env.read_text() == written

    # The written file is enough for a terminal that sets no secret.
    env = production_environment(REGISTRY_ENV_FILE=str(dot_env))
    for name in SECRETS:
        del env[name]
    assert run(MANAGE, env).returncode == 0


def test_generate_secrets_creates_dot_env_private(tmp_path):
    dot_env = tmp_path / "fresh.env"
    env = production_environment(REGISTRY_ENV_FILE=str(dot_env))
    result = generate("--write", env=env)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(dot_env.stat().st_mode) == 0o600
    assert sorted(line.split("=")[0] for line in dot_env.read_text().splitlines()) == sorted(
        GENERATED
    )


def test_generate_secrets_makes_the_metrics_token_the_service_reads(tmp_path):
    dot_env = tmp_path / "fresh.env"
    generate("--write", env=production_environment(REGISTRY_ENV_FILE=str(dot_env)))
    token = dict(line.split("=", 1) for line in dot_env.read_text().splitlines())
    env = production_environment(REGISTRY_ENV_FILE=str(dot_env))
    for name in SECRETS:
        del env[name]
    read = "from django.conf import settings; print(settings.REGISTRY_METRICS_TOKEN)"
    check = [*MANAGE[:-1], "shell", "-c", read]
    shown = run(check, env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1] == token["REGISTRY_METRICS_TOKEN"]


def test_generate_secrets_help_says_usage_once_and_manage_py_help_lists_it():
    shown = generate("--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("usage:") == 1
    assert "REGISTRY_METRICS_TOKEN" in shown.stdout
    listed = run([*MANAGE[:-1], "help"], production_environment())
    assert listed.returncode == 0, listed.stderr
    assert "    generate_secrets\n" in listed.stdout


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("LOG_FORMAT", "xml", ["LOG_FORMAT", "'xml'", "plain", "json"]),
        ("REGISTRY_METRICS_TOKEN", "metrics", ["REGISTRY_METRICS_TOKEN is too weak"]),
        (
            "REGISTRY_WORKER_HEARTBEAT_SECONDS",
            "60",
            ["REGISTRY_WORKER_HEARTBEAT_SECONDS must be below", "MAX_AGE_SECONDS"],
        ),
        ("REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS", "0", ["REGISTRY_PIPELINE_MAX_QUEUE_AGE"]),
    ],
    ids=["log format", "weak metrics token", "heartbeat not below its max age", "queue age 0"],
)
def test_the_monitoring_settings_are_checked_at_start(variable, value, words):
    result = run(MANAGE, production_environment(**{variable: value}))
    assert_one_line_refusal(result, words)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (
            {"REGISTRY_PUBLIC_URL": "registry.example.org"},
            ["REGISTRY_PUBLIC_URL", "'registry.example.org'", "an origin such as https://"],
        ),
        ({"REGISTRY_RESET_REQUESTER_RATE": "3 an hour"}, ["REGISTRY_RESET_REQUESTER_RATE"]),
        (
            {"EMAIL_URL": "smtp://127.0.0.1:25", "ALLOWED_HOSTS": ".example.org"},
            ["REGISTRY_PUBLIC_URL", "first ALLOWED_HOSTS entry is a pattern"],
        ),
    ],
    ids=["public url not an origin", "requester rate", "no site to name in a link"],
)
def test_the_reset_mail_settings_are_checked_at_start(overrides, words):
    result = run(MANAGE, production_environment(**overrides))
    assert_one_line_refusal(result, words)
