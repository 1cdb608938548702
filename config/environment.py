"""Settings read from the environment strictly: a bad value stops start-up with one line.

``config/settings/`` reads every setting through :data:`env`, a django-environ ``Env``
whose typed reads refuse what they cannot use instead of guessing: ``DEBUG=maybe`` is not
silently false, ``REGISTRY_MAX_BODY_BYTES=abc`` is not a 39-line traceback. Each refusal is a
:class:`ConfigurationError` whose message is one line naming the variable, what is wrong and
what is accepted. An empty value counts as unset (the default applies), as in most env files.

The values may also come from a ``.env`` file at the repository root (``REGISTRY_ENV_FILE``
names another file; empty reads none). Real environment variables win over the file, so
every terminal that starts a command in the repository sees the same configuration.

Every entry point (``manage.py``, ``config/gunicorn.py``, ``config.asgi``, ``config.wsgi``,
``celery -A config``) calls :func:`settings_or_exit` before anything else reads a setting:
a refusal is printed on stderr as that one line, and the process exits with status 4.
"""

from __future__ import annotations

import builtins
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
BOOLEAN_ACCEPTED = "true/false, 1/0, yes/no or on/off (any case)"
ENV_FILE_VARIABLE = "REGISTRY_ENV_FILE"
_ENV_LINE = re.compile(r"\A(?:export )?[A-Za-z_][A-Za-z_0-9]*=.*\Z")
NOTSET: Any = environ.Env.NOTSET

DATABASE_SCHEMES = ("postgres", "postgresql", "pgsql", "psql", "sqlite")
REDIS_SCHEMES = ("redis", "rediss", "unix")
BROKER_SCHEMES = (*REDIS_SCHEMES, "sentinel", "amqp", "amqps", "pyamqp", "sqs", "memory")
# gunicorn halts (instead of restarting workers for ever) when a worker exits with its
# "application failed to load" status; the same status everywhere keeps it simple.
EXIT_STATUS = 4
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigurationError(ImproperlyConfigured):
    """A setting cannot be used. The message is one line for whoever starts the service."""


class Invalid(ValueError):
    """Raised by a list check: what is wrong with the value, and what is accepted."""

    def __init__(self, problem: str, accepted: str) -> None:
        super().__init__(problem)
        self.problem, self.accepted = problem, accepted


def refuse(name: str, problem: str, accepted: str) -> ConfigurationError:
    return ConfigurationError(f"{name}: {problem}; accepted: {accepted}.")


class StrictEnv(environ.Env):
    """django-environ's ``Env`` with typed reads that refuse what they cannot use."""

    def _text(self, var: builtins.str) -> builtins.str | None:
        value = self.ENVIRON.get(var, "")
        return value.strip() or None

    def _default(self, var: builtins.str, default: Any) -> Any:
        if default is NOTSET:
            raise ConfigurationError(f"{var} is not set; set it in the environment or in .env.")
        return default

    def bool(self, var: builtins.str, default: Any = NOTSET) -> builtins.bool:
        text = self._text(var)
        if text is None:
            return self._default(var, default)
        word = text.lower()
        if word not in TRUE_WORDS + FALSE_WORDS:
            raise refuse(var, f"{text!r} is not a boolean", BOOLEAN_ACCEPTED)
        return word in TRUE_WORDS

    def int(
        self,
        var: builtins.str,
        default: Any = NOTSET,
        *,
        minimum: builtins.int | None = 0,
        maximum: builtins.int | None = None,
    ) -> builtins.int:
        text = self._text(var)
        if text is None:
            return self._default(var, default)
        accepted = _range_text("a whole number", minimum, maximum)
        if not re.fullmatch(r"[+-]?\d+", text):
            raise refuse(var, f"{text!r} is not a whole number", accepted)
        value = int(text)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise refuse(var, f"{value} is out of range", accepted)
        return value

    def float(
        self, var: builtins.str, default: Any = NOTSET, *, minimum: builtins.float | None = 0.0
    ) -> builtins.float:
        text = self._text(var)
        if text is None:
            return self._default(var, default)
        accepted = _range_text("a number", minimum, None) + ", such as 2.5"
        try:
            value = float(text)
        except ValueError:
            raise refuse(var, f"{text!r} is not a number", accepted) from None
        if not math.isfinite(value):
            raise refuse(var, f"{text!r} is not a finite number", accepted)
        if minimum is not None and value < minimum:
            raise refuse(var, f"{text} is out of range", accepted)
        return value

    def str(
        self,
        var: builtins.str,
        default: Any = NOTSET,
        multiline: builtins.bool = False,
        choices: Sequence[builtins.str] | Any = NOTSET,
        *,
        pattern: builtins.str | None = None,
        accepted: builtins.str = "",
        schemes: Sequence[builtins.str] = (),
    ) -> builtins.str:
        text = self._text(var)
        if text is None:
            return self._default(var, default)
        if choices is not NOTSET and text not in choices:
            raise refuse(var, f"{text!r} is not one of the choices", ", ".join(choices))
        if pattern is not None and not re.fullmatch(pattern, text):
            raise refuse(var, f"{text!r} is not in the expected form", accepted or pattern)
        if schemes:
            check_url(var, text, schemes)
        return text

    def list(
        self,
        var: builtins.str,
        cast: Any = None,
        default: Any = NOTSET,
        *,
        check: Callable[[builtins.list[builtins.str]], object] | None = None,
    ) -> builtins.list[builtins.str]:
        text = self._text(var)
        if text is None:
            return self._default(var, default)
        items = [item.strip() for item in text.split(",") if item.strip()]
        if check is not None:
            try:
                check(items)
            except Invalid as error:
                raise refuse(var, error.problem, error.accepted) from None
            except ValueError as error:
                raise ConfigurationError(f"{var}: {error}.") from None
        return [cast(item) for item in items] if cast else items

    def db_url(
        self, var: builtins.str = "DATABASE_URL", default: Any = NOTSET, engine: Any = None
    ) -> Any:
        text = self._text(var)
        if text is None:
            text = self._default(var, default)
        check_url(var, str(text), DATABASE_SCHEMES)
        try:
            return self.db_url_config(text, engine=engine)
        except (ValueError, ImproperlyConfigured) as error:
            raise refuse(var, f"cannot be read ({type(error).__name__})", _DATABASE) from None

    db = db_url

    def email_url(
        self, var: builtins.str = "EMAIL_URL", default: Any = NOTSET, backend: Any = None
    ) -> Any:
        try:
            return super().email_url(var, default=default, backend=backend)
        except ConfigurationError:
            raise
        except (ValueError, ImproperlyConfigured) as error:
            accepted = "smtp://, smtp+tls://, smtp+ssl:// or consolemail:// URLs"
            raise refuse(var, f"cannot be read ({type(error).__name__})", accepted) from None

    email = email_url


_DATABASE = "postgres://user[:password]@host[:port]/name (or sqlite:///path)"
_URL_FORMS = {
    DATABASE_SCHEMES: _DATABASE,
    REDIS_SCHEMES: "redis://[:password@]host[:port]/number, rediss://... or unix://path",
}


def check_url(var: str, text: str, schemes: Sequence[str]) -> None:
    """A URL whose scheme is one of ``schemes`` and whose port, if any, is a number.

    The message never repeats the URL: it may hold a password.
    """
    listed = ", ".join(f"{scheme}://" for scheme in schemes)
    accepted = _URL_FORMS.get(tuple(schemes), f"URLs starting {listed}")
    first = text.split(";", 1)[0]  # a Celery broker URL may list fail-over brokers
    try:
        parts = urlsplit(first)
        parts.port  # noqa: B018  (parsing the port is the check)
    except ValueError:
        raise refuse(var, "is not a well-formed URL", accepted) from None
    if parts.scheme not in schemes:
        scheme = f"{parts.scheme}://" if parts.scheme else "(none)"
        raise refuse(var, f"the scheme {scheme} is not supported", accepted)
    if parts.scheme in ("postgres", "postgresql", "pgsql", "psql") and not parts.path.strip("/"):
        raise refuse(var, "names no database", accepted)


def _range_text(kind: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} from {minimum:g} to {maximum:g}"
    if minimum is not None:
        return f"{kind} of at least {minimum:g}"
    return kind


# --- Checks for lists -------------------------------------------------------------------------


def host_names(items: Iterable[str]) -> None:
    """``ALLOWED_HOSTS``: names as Django matches them, never URLs."""
    accepted = "comma-separated host names or addresses, such as registry.example.org,.example.org"
    for item in items:
        if "://" in item or "/" in item or " " in item:
            raise Invalid(f"{item!r} is not a host name", accepted)


def origins(items: Iterable[str]) -> None:
    """``CSRF_TRUSTED_ORIGINS``: scheme and host, as browsers send the Origin header."""
    accepted = "comma-separated origins such as https://registry.example.org"
    for item in items:
        parts = urlsplit(item)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
            raise Invalid(f"{item!r} is not an origin", accepted)


def networks(items: Iterable[str]) -> None:
    """``REGISTRY_TRUSTED_PROXIES``: addresses or CIDR networks (lib.client decides)."""
    from lib.client import parse_networks

    try:
        parse_networks(items)
    except ValueError as error:
        accepted = "comma-separated IP addresses or CIDR networks, such as 10.0.0.0/8,192.0.2.7"
        raise Invalid(str(error), accepted) from None


# --- The .env file --------------------------------------------------------------------------


def env_file(base_dir: Path) -> Path | None:
    """The file ``read_env_file`` reads: ``REGISTRY_ENV_FILE``, else ``.env`` at the root."""
    named = os.environ.get(ENV_FILE_VARIABLE)
    if named is None:
        return base_dir / ".env"
    return Path(named) if named.strip() else None


def read_env_file(base_dir: Path) -> None:
    """Add the file's values to the environment; variables already set win."""
    path = env_file(base_dir)
    if path is None or not path.exists():
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{path}: cannot be read ({type(error).__name__}).") from None
    for number, line in enumerate(lines, start=1):
        if line.strip() and not line.lstrip().startswith("#") and not _ENV_LINE.match(line):
            raise refuse(f"{path.name} line {number}", "is not NAME=value", "NAME=value lines")
    environ.Env.read_env(path, overwrite=False)


# --- Entry points -----------------------------------------------------------------------------


def settings_or_exit() -> None:
    """Load the settings now; a refusal is one line on stderr and exit status 4."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018  (reading one setting loads them all)
    except ImproperlyConfigured as error:
        message = " ".join(str(error).split())
        sys.stderr.write(f"Configuration error: {message}\n")
        sys.stderr.flush()
        raise SystemExit(EXIT_STATUS) from None
