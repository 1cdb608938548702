"""Logs carry the kind of an error and where it happened, never its message or traceback.

An exception's message, and the source lines and locals a traceback can show, may quote
submitted data (a chart number, a name, a database row in an IntegrityError's DETAIL).
:class:`KindOnly` sits on every handler: a record with ``exc_info`` keeps its own message
and gains ``(KindOfError at module:line)`` of the innermost frame instead of the traceback.
"""

from __future__ import annotations

import logging
import traceback


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
