"""Logs carry the kind of an error and where it happened, never its message or traceback.

An exception's message, and the source lines and locals a traceback can show, may quote
submitted data (a chart number, a name, a database row in an IntegrityError's DETAIL).
:class:`KindOnly` sits on every handler: a record with ``exc_info`` keeps its own message
and gains ``(KindOfError at module:line)`` of the innermost frame instead of the traceback.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    if not frames:
        return "unknown"
    last = frames[-1]
    return f"{last.filename.rsplit('/site-packages/', 1)[-1]}:{last.lineno}"


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
