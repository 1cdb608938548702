"""Which database errors are a record's own fault, and which are passing.

Only an error caused by a record's own values may reject that record: PostgreSQL's data
exceptions (SQLSTATE class 22, a number out of range, a string too long) and integrity
violations (class 23). Anything else says nothing about the record: a cancelled statement,
a lost connection, a deadlock or a serialization failure rolls the chunk back, and the chunk
is tried again (:func:`retry_transient`). A chunk whose retries run out fails the attempt, and
the task's own retry takes over; nothing is rejected for a fault that is not the record's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, DataError, IntegrityError, InterfaceError, OperationalError
from django.db import connection as default_connection

log = logging.getLogger(__name__)

T = TypeVar("T")

RECORD_FAULT_CLASSES = frozenset({"22", "23"})
# Connection exception, transaction rollback (serialization failure, deadlock), insufficient
# resources, operator intervention (query cancelled, admin shutdown), system error.
TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57", "58"})
TRANSIENT_STATES = frozenset({"55P03", "55006"})  # lock not available, object in use
# A statement sent after an error in the same transaction: the error that matters came first.
IN_FAILED_TRANSACTION = "25P02"


def sqlstate(error: BaseException) -> str | None:
    """The SQLSTATE of the driver error behind ``error`` (Django wraps psycopg's)."""
    seen: BaseException | None = error
    aborted = None
    while seen is not None:
        state = getattr(seen, "sqlstate", None) or getattr(seen, "pgcode", None)
        if isinstance(state, str) and len(state) == 5:
            if state != IN_FAILED_TRANSACTION:
                return state
            aborted = state  # only the echo of an earlier error: look for that error
        seen = seen.__cause__ or seen.__context__
    return aborted


def is_record_fault(error: BaseException) -> bool:
    """True when the database refused a value of the record itself."""
    state = sqlstate(error)
    if state is not None:
        return state[:2] in RECORD_FAULT_CLASSES
    return isinstance(error, DataError | IntegrityError)


def is_transient(error: BaseException) -> bool:
    """True when trying the same work again may well succeed."""
    if not isinstance(error, DatabaseError) or is_record_fault(error):
        return False
    state = sqlstate(error)
    if state is not None and (state[:2] in TRANSIENT_CLASSES or state in TRANSIENT_STATES):
        return True
    return isinstance(error, OperationalError | InterfaceError)


def retry_transient(work: Callable[[], T], *, what: str) -> T:
    """Run ``work``; after a transient error (its transaction rolled back), run it again.

    ``work`` must be a whole transaction (or a single statement), so a retry starts clean.
    Waits 0.05 s, 0.1 s, 0.2 s ... between tries, up to ``REGISTRY_TRANSIENT_RETRIES`` tries.
    """
    tries = settings.REGISTRY_TRANSIENT_RETRIES
    for attempt in range(1, tries + 1):
        try:
            return work()
        except DatabaseError as error:
            if attempt >= tries or not is_transient(error):
                raise
            log.warning(
                "%s rolled back (%s, sqlstate %s); try %d of %d",
                what,
                type(error).__name__,
                sqlstate(error),
                attempt + 1,
                tries,
            )
            default_connection.close_if_unusable_or_obsolete()
            time.sleep(min(0.05 * 2 ** (attempt - 1), 2.0))
    raise AssertionError("unreachable")  # pragma: no cover
