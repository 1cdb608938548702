"""A finished ingestion's receipt, streamed from the stored outcome rows in bounded memory.

The receipt of a batch of a million entries is over half a gigabyte of JSON; built whole it
held the web process at gigabytes. Here it is written piece by piece: the head from the
ingestion row, then ``outcome.accepted`` and ``outcome.rejected`` each read in one pass over
the :class:`~ingestion.models.OutcomeChunk` rows in (seq, part) order, a page of rows at a
time (keyset pagination: no cursor is held between pages, so a client that goes away leaves
nothing open). PostgreSQL hands each chunk's entries over as JSON text, which is spliced in
without being parsed. The bytes are those of :func:`ingestion.receipts.selectors.ingestion_receipt`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any, Literal

import orjson
from asgiref.sync import sync_to_async
from django.db import connection

from ingestion.jsonb_text import jsonb_text
from ingestion.models import Ingestion, OutcomeChunk

ROWS_PER_PAGE = 16
PIECE_BYTES = 256 * 1024

Side = Literal["accepted", "rejected"]


def receipt_whole(ingestion: Ingestion) -> bytes:
    """A small finished receipt (a single's, a small batch's: the poll most often read)
    whole, its stored rows read in one statement rather than three (whether any entries are
    stored, then each side)."""
    if ingestion.outcome_purged or connection.vendor != "postgresql":
        return b"".join(receipt_stream(ingestion))
    table = connection.ops.quote_name(OutcomeChunk._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(WHOLE.format(table=table), {"id": ingestion.id})
        rows: list[tuple[str, str]] = cursor.fetchall()
    return b"".join(receipt_stream(ingestion, rows))


# Every stored row of a small receipt, both sides, as PostgreSQL's JSON text.
WHOLE = """
    SELECT accepted::text, rejected::text FROM {table}
     WHERE ingestion_id = %(id)s
  ORDER BY seq, part
"""


def receipt_stream(
    ingestion: Ingestion, rows: list[tuple[str, str]] | None = None
) -> Iterator[bytes]:
    """The receipt of a finished ingestion, as JSON in pieces of about PIECE_BYTES.

    ``rows``: its stored rows' (accepted, rejected) text, already read (:func:`receipt_whole`);
    without, they are read here a page at a time."""
    head = orjson.dumps(
        {
            "id": str(ingestion.id),
            "status": ingestion.status,
            "accepted": ingestion.accepted_count,
            "rejected": ingestion.rejected_count,
        }
    )
    yield head[:-1]
    failure = ingestion.failure
    if ingestion.outcome_purged or failure is not None:
        has_entries = not ingestion.outcome_purged
    elif rows is None:
        has_entries = _has_entries(ingestion)
    else:
        has_entries = any(_inner(a) or _inner(r) for a, r in rows)
    if not has_entries:
        yield b',"outcome":null'
    else:
        yield b',"outcome":{"accepted":['
        yield from _entries(_side(ingestion, "accepted", rows))
        yield b'],"rejected":['
        extra = [{"reference": "Bundle", "operation_outcome": failure}] if failure else []
        yield from _entries(_side(ingestion, "rejected", rows), extra=extra)
        yield b"]}"
    finished_at = ingestion.finished_at.isoformat() if ingestion.finished_at else None
    yield b',"completedAt":' + orjson.dumps(finished_at)
    if ingestion.receipt_purged_at is not None:  # past its retention (ingestion.receipts.retention)
        yield b',"outcomePurgedAt":' + orjson.dumps(ingestion.receipt_purged_at.isoformat())
    yield b"}"


async def pieces_async(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    """``pieces`` one at a time, for ASGI: each read runs on the request's own thread.

    Thread-sensitive, so the reads share the thread, and the database connection, that the
    view ran on; Django closes that connection when the response is closed.
    """
    following = sync_to_async(_next_piece, thread_sensitive=True)
    while (piece := await following(pieces)) is not None:
        yield piece


def _next_piece(pieces: Iterator[bytes]) -> bytes | None:
    return next(pieces, None)


def _has_entries(ingestion: Ingestion) -> bool:
    stored = OutcomeChunk.objects.filter(ingestion=ingestion)
    return stored.exclude(accepted=[], rejected=[]).exists()


def _inner(text: str) -> str:
    """A stored side's entries without its brackets (empty for ``[]``)."""
    return text.strip()[1:-1].strip()


def _side(ingestion: Ingestion, side: Side, rows: list[tuple[str, str]] | None) -> Iterable[str]:
    if rows is None:
        return _pages(ingestion, side)
    return [row[0 if side == "accepted" else 1] for row in rows]


PAGE = """
    SELECT seq, part, {side}::text
      FROM {table}
     WHERE ingestion_id = %(id)s AND (seq, part) > (%(seq)s, %(part)s)
  ORDER BY seq, part
     LIMIT %(limit)s
"""


def _pages(ingestion: Ingestion, side: Side) -> Iterator[str]:
    """Each stored chunk's entries of one side, as a JSON array's text."""
    if connection.vendor != "postgresql":  # the embedded SQLite default: small receipts
        return _written_pages(ingestion, side)
    return _stored_pages(ingestion, side)


def _written_pages(ingestion: Ingestion, side: Side) -> Iterator[str]:
    """As :func:`_stored_pages` reads them from PostgreSQL, written here (jsonb's text)."""
    stored = OutcomeChunk.objects.filter(ingestion=ingestion).order_by("seq", "part")
    for values in stored.values_list(side):
        yield jsonb_text(values[0])


def _stored_pages(ingestion: Ingestion, side: Side) -> Iterator[str]:
    """PostgreSQL's own text of each chunk's entries, a page of rows at a time."""
    statement = PAGE.format(side=side, table=connection.ops.quote_name(OutcomeChunk._meta.db_table))
    seq, part = -1, -1
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                statement, {"id": ingestion.id, "seq": seq, "part": part, "limit": ROWS_PER_PAGE}
            )
            rows = cursor.fetchall()
        yield from (text for _, _, text in rows)
        if len(rows) < ROWS_PER_PAGE:
            return
        seq, part = rows[-1][0], rows[-1][1]


def _entries(texts: Iterable[str], extra: list[Any] | None = None) -> Iterator[bytes]:
    """The entries of every chunk, comma-separated, in pieces of about PIECE_BYTES."""
    piece: list[bytes] = []
    size, first = 0, True
    for text in texts:
        inner = _inner(text).encode()
        if not inner:
            continue
        piece.append(inner if first else b", " + inner)
        first = False
        size += len(inner)
        if size >= PIECE_BYTES:
            yield b"".join(piece)
            piece, size = [], 0
    for entry in extra or []:
        written = jsonb_text(entry).encode()  # in the same form as the stored entries
        piece.append(written if first else b", " + written)
        first = False
    if piece:
        yield b"".join(piece)
