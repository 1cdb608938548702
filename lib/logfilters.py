"""Logs carry the kind of an error and where it happened, never its message or traceback.

An exception's message, and the source lines and locals a traceback can show, may quote
submitted data (a chart number, a name, a database row in an IntegrityError's DETAIL).
:class:`KindOnly` sits on every handler: a record with ``exc_info`` keeps its own message
and gains ``(KindOfError at module:line)`` of the innermost frame instead of the traceback.
"""

from __future__ import annotations

import logging
import os
import re
import sysconfig
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

# Where a file is named from in a log line: the project's, a library's and the standard
# library's files by their path inside those, never by where the machine keeps them (an
# absolute path tells a reader of the logs about the host, and says nothing more).
_PROJECT = str(Path(__file__).resolve().parent.parent) + os.sep
_STANDARD_LIBRARY = sysconfig.get_paths()["stdlib"] + os.sep


def relative_file(filename: str) -> str:
    """``filename`` relative to the project, its site-packages or the standard library."""
    if f"{os.sep}site-packages{os.sep}" in filename:
        return filename.rsplit(f"{os.sep}site-packages{os.sep}", 1)[-1]
    for root in (_PROJECT, _STANDARD_LIBRARY):
        if filename.startswith(root):
            return filename[len(root) :]
    return os.path.basename(filename)


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    if not frames:
        return "unknown"
    last = frames[-1]
    return f"{relative_file(last.filename)}:{last.lineno}"


class KindOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(error).__name__} at {_where(error)})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        record.stack_info = None
        return True


# What a log line is about, set where it is known: the web's request (config's middleware,
# ingestion.monitoring.requests), the ingestion a request or a task works on. A filter on
# every handler copies them onto each record, so a JSON line (LOG_FORMAT=json) carries them.
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
ingestion_id: ContextVar[str | None] = ContextVar("ingestion_id", default=None)


@contextmanager
def about_ingestion(identifier: object) -> Iterator[None]:
    """Log lines inside are about this ingestion."""
    token = ingestion_id.set(str(identifier))
    try:
        yield
    finally:
        ingestion_id.reset(token)


class Context(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for name, variable in (("request_id", request_id), ("ingestion_id", ingestion_id)):
            value = variable.get()
            if value is not None and not hasattr(record, name):
                setattr(record, name, value)
        return True


# --- Paths in logs -------------------------------------------------------------------------------
# A path a client typed may hold what identifies someone (a patient id after the FHIR base) or
# works as a key (a password-reset token). Access and request logs write it with those masked:
# the FHIR base's known route shapes with their ids masked, anything else after it masked
# whole, the reset link's uid and token masked, and elsewhere every segment with a digit in
# it (an id, a key, a token). deploy/nginx/registry.conf masks its access log the same way.

FHIR_BASE = "/api/registry/fhir/"
RESET = "/accounts/reset/"
MASK = ":id"
_FHIR_SHAPES = re.compile(r"(?:metadata|Bundle(?:/\$validate)?)?")
_FHIR_WITH_ID = re.compile(r"(Bundle|ingestions)/[^/]+")
_REQUEST_LINE = re.compile(r"(?P<method>\S+) (?P<path>/\S*)(?P<rest> HTTP/\S+)?")


def logged_path(path: str) -> str:
    """``path`` as a log may show it (the query string is never logged)."""
    path = path.split("?", 1)[0]
    if path.startswith(FHIR_BASE):
        rest = path[len(FHIR_BASE) :]
        if _FHIR_SHAPES.fullmatch(rest):
            return path
        shape = _FHIR_WITH_ID.fullmatch(rest)
        return f"{FHIR_BASE}{shape[1]}/{MASK}" if shape else f"{FHIR_BASE}{MASK}"
    if path.startswith(RESET) and path != f"{RESET}done/":
        return f"{RESET}{MASK}/"
    if path.startswith("/static/"):
        return path
    return "/".join(MASK if any(c.isdigit() for c in part) else part for part in path.split("/"))


def logged_request_line(line: str) -> str:
    """``GET /path HTTP/1.1`` with its path as :func:`logged_path` gives it."""
    found = _REQUEST_LINE.fullmatch(line)
    if found is None:
        return line
    return f"{found['method']} {logged_path(found['path'])}{found['rest'] or ''}"


class MaskedPaths(logging.Filter):
    """Django's request logs (``Not Found: /path``, the development server's request lines)
    name the path with ids and tokens masked, and carry no request object (a JSON line would
    print its path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith(("django.request", "django.server", "django.security")):
            if isinstance(record.args, tuple):
                record.args = tuple(_masked(arg) for arg in record.args)
            if hasattr(record, "request"):
                record.request = None
        return True


def _masked(value: object) -> object:
    if not isinstance(value, str):
        return value
    if value.startswith("/"):
        return logged_path(value)
    return logged_request_line(value)
