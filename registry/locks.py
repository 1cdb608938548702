"""The practice lock: whoever changes a practice's records holds it for the transaction.

The ingestion pipeline (applying a chunk) and the review actions (keep, void, merge) both
take it, so concurrent changes to one practice's records happen in a serial order and no
duplicate flag or voiding is lost. Different practices never wait for each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection

# pg_advisory_xact_lock(namespace, practice id): one namespace for "changing a practice".
PRACTICE_LOCK_NAMESPACE = 0x52_47_4B  # "RGK"


# The lock's statement, with the practice as ``%(practice)s``: a caller may send it after its
# own statements, in the same round trip.
LOCK_PRACTICE = f"SELECT pg_advisory_xact_lock({PRACTICE_LOCK_NAMESPACE}, %(practice)s)"


def lock_practice(practice_id: int) -> None:
    """Take the practice's transaction-scoped advisory lock (PostgreSQL); must be in atomic()."""
    if connection.vendor != "postgresql":
        return  # the embedded default (SQLite) serialises every write anyway
    with connection.cursor() as cursor:
        cursor.execute(LOCK_PRACTICE, {"practice": practice_id})


def rows_then_lock_practice(
    statement: str, parameters: Mapping[str, Any], *, practice_id: int
) -> list[tuple[Any, ...]]:
    """The rows of the caller's ``statement`` (PostgreSQL), then the practice's lock, in one
    round trip: a caller that locks its own rows first need not wait twice on the network."""
    with connection.cursor() as cursor:
        cursor.execute(f"{statement};\n{LOCK_PRACTICE}", {**parameters, "practice": practice_id})
        return cursor.fetchall()
