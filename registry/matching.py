"""Suspected-duplicate matching through an index: no pairwise rows, no scan of a cluster.

docs/decisions.md "What is stored": two records resemble each other when their fingerprints are
equal and at least one pair of their children is compatible; a birth time (to the minute)
or a multiple-birth order rules a pair out only when both children carry it and it differs.

Each child of a live record is stored as one :class:`~registry.models.MatchKey` row:
``(fingerprint, time, birth_order)``, the first two as 60-bit integers cut from the keyed
hashes (the clear birth time is never stored), the order as declared or NULL. A voided
record has no keys, so it never matches.

"Does any other live record resemble this key?" is answered by a fixed set of *probes*, each
an exact seek on an index with ``LIMIT 1``: for a key ``(f, t, o)`` the compatible rows are
those with ``time`` equal to ``t`` or NULL and ``birth_order`` equal to ``o`` or NULL, and an
absent ``t`` (or ``o``) accepts any. That is at most four probes per key, each touching at
most one matching row, whether the fingerprint is shared by one record or by 100,000.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from django.db import connection, transaction

from registry.bulk import insert_rows
from registry.models import MatchKey

DIGEST_HEX_DIGITS: Final = 15  # 60 bits: fits PostgreSQL's signed bigint
ANY: Final = "any"  # a probe that accepts any value in this column

Spec = int | None | str  # a value, NULL (None), or ANY
# The statements below are assembled from this table name and fixed conditions only; every
# value is a bound parameter (hence the S608 waivers).
TABLE = MatchKey._meta.db_table


@dataclass(frozen=True, slots=True)
class Key:
    """One child as matching sees it: its fingerprint, time and order digests."""

    fingerprint: int
    time: int | None
    order: int | None

    def probes(self) -> tuple[Probe, ...]:
        """The index seeks that find every stored key compatible with this one."""
        times: tuple[Spec, ...] = (self.time, None) if self.time is not None else (ANY,)
        orders: tuple[Spec, ...] = (self.order, None) if self.order is not None else (ANY,)
        return tuple(Probe(self.fingerprint, t, o) for t in times for o in orders)

    def found_by(self) -> tuple[Probe, ...]:
        """Every probe that finds this key (the in-memory index files it under each)."""
        return tuple(
            Probe(self.fingerprint, t, o) for t in (self.time, ANY) for o in (self.order, ANY)
        )

    def compatible(self, other: Key) -> bool:
        return (
            self.fingerprint == other.fingerprint
            and _agree(self.time, other.time)
            and _agree(self.order, other.order)
        )


@dataclass(frozen=True, slots=True)
class Probe:
    fingerprint: int
    time: Spec
    order: Spec

    @property
    def shape(self) -> tuple[str, str]:
        return _kind(self.time), _kind(self.order)


Keys = frozenset[Key]
NO_KEYS: Keys = frozenset()


def digest(hex_value: str) -> int:
    """The first 60 bits of a keyed hash (hex), as stored."""
    return int(hex_value[:DIGEST_HEX_DIGITS], 16)


def match_keys(fingerprint: str | None, children: Iterable[tuple[str | None, int | None]]) -> Keys:
    """A record's keys from its fingerprint and its children's ``(time key, order)``.

    No fingerprint, no keys: such a record can resemble nothing. A record without children
    (never from the pipeline) still matches on its fingerprint alone.
    """
    if not fingerprint:
        return NO_KEYS
    f = digest(fingerprint)
    keys = {Key(f, digest(time) if time else None, order) for time, order in children}
    return frozenset(keys or {Key(f, None, None)})


def keys_resemble(ours: Iterable[Key], theirs: Iterable[Key]) -> bool:
    theirs = list(theirs)
    return any(a.compatible(b) for a in ours for b in theirs)


def _agree(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


def _kind(spec: Spec) -> str:
    if spec == ANY:
        return "any"
    return "null" if spec is None else "eq"


# --- Stored keys --------------------------------------------------------------------------------


def stored_keys(record_ids: Iterable[UUID]) -> dict[UUID, Keys]:
    """The keys on file for ``record_ids`` (records without keys are absent)."""
    found: dict[UUID, set[Key]] = defaultdict(set)
    rows = MatchKey.objects.filter(record_id__in=list(record_ids)).values_list(
        "record_id", "fingerprint", "time", "birth_order"
    )
    for record_id, f, t, o in rows:
        found[record_id].add(Key(f, t, o))
    return {record_id: frozenset(keys) for record_id, keys in found.items()}


def match_keys_write(
    *, practice_id: int, keys: Mapping[UUID, Keys], replacing: Iterable[UUID] = ()
) -> None:
    """Store ``keys`` per record, first dropping what ``replacing`` records had on file.

    Runs in the caller's transaction, beside the record changes it describes.
    """
    replaced = list(replacing)
    if replaced:
        MatchKey.objects.filter(record_id__in=replaced).delete()
    insert_rows(
        MatchKey,
        ["record_id", "practice_id", "fingerprint", "time", "birth_order"],
        (
            (record_id, practice_id, key.fingerprint, key.time, key.order)
            for record_id, record_keys in keys.items()
            for key in sorted(record_keys, key=_sort_key)
        ),
    )


def match_keys_forget(*, record_id: UUID) -> None:
    """A record leaves matching (voided, merged): its keys go, in the caller's transaction."""
    MatchKey.objects.filter(record_id=record_id).delete()


def _sort_key(key: Key) -> tuple[int, int, int]:
    return key.fingerprint, key.time or 0, key.order or 0


# --- Probes against the table -------------------------------------------------------------------


def _condition(column: str, spec: Spec, placeholder: str) -> str:
    if spec == ANY:
        return ""
    if spec is None:
        return f" AND m.{column} IS NULL"
    return f" AND m.{column} = {placeholder}"


def probes_hit(*, practice_id: int, probes: Sequence[Probe], excluding: Iterable[UUID]) -> set[int]:
    """Which ``probes`` (by position) find a stored key of a record not in ``excluding``.

    PostgreSQL: one statement. The probes of each shape are passed as arrays and unnested,
    and each is a ``LATERAL (... LIMIT 1)`` seek on an index: the cost is a constant per
    probe, never a function of how many records share the fingerprint.
    """
    if not probes:
        return set()
    excluded = list(excluding)
    if connection.vendor != "postgresql":
        return {i for i, probe in enumerate(probes) if _probe_orm(practice_id, probe, excluded)}
    return {row[0] for row in seek_rows(*probe_statement(practice_id, probes, excluded))}


SEEKS_ON = "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"
SEEKS_OFF = "RESET enable_seqscan; RESET enable_bitmapscan"


def seek_rows(statement: str, parameters: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``statement``, its probes planned as index seeks, whatever the statistics say.

    When one fingerprint holds a large share of a practice's keys (a flood), the planner
    may expect a sequential or bitmap scan to meet a match within a few rows; but where the
    cluster lies in the heap is unknown, and a full bitmap reads the whole cluster. A seek
    that stops at its first row is what makes the cost independent of the cluster size.

    The settings, the statement and, inside a caller's transaction, the reset (the rest of
    it plans as usual) go in one round trip: Django's cursors bind on the client, so the
    text is sent as one simple query. Should the statement fail, PostgreSQL runs nothing
    after it, and the rollback undoes ``SET LOCAL``.
    """
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(statement, parameters)
            return cursor.fetchall()
    inside = connection.in_atomic_block
    sent = f"{SEEKS_ON}; {statement}" + (f"; {SEEKS_OFF}" if inside else "")
    # SET LOCAL needs a transaction; outside the caller's, one of its own ends with it.
    with nullcontext() if inside else transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sent, parameters)
        cursor.nextset()  # past the two settings' empty results
        cursor.nextset()
        return cursor.fetchall()


def probe_statement(
    practice_id: int, probes: Sequence[Probe], excluded: list[UUID]
) -> tuple[str, list[Any]]:
    """The PostgreSQL statement of :func:`probes_hit`: one ``LATERAL`` seek per probe."""
    by_shape: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, probe in enumerate(probes):
        by_shape[probe.shape].append(i)
    parts: list[str] = []
    parameters: list[Any] = []
    for (time_kind, order_kind), positions in by_shape.items():
        time_spec: Spec = ANY if time_kind == "any" else (None if time_kind == "null" else 0)
        order_spec: Spec = ANY if order_kind == "any" else (None if order_kind == "null" else 0)
        parts.append(
            "SELECT k.i FROM unnest(%s::int[], %s::bigint[], %s::bigint[], %s::smallint[]) "  # noqa: S608
            "AS k(i, f, t, o) CROSS JOIN LATERAL ("
            f"SELECT 1 FROM {TABLE} m WHERE m.practice_id = %s AND m.fingerprint = k.f"
            + _condition("time", time_spec, "k.t")
            + _condition("birth_order", order_spec, "k.o")
            + " AND m.record_id <> ALL(%s::uuid[]) LIMIT 1) AS hit"
        )
        chosen = [probes[i] for i in positions]
        parameters += [
            positions,
            [p.fingerprint for p in chosen],
            [p.time if isinstance(p.time, int) else None for p in chosen],
            [p.order if isinstance(p.order, int) else None for p in chosen],
            practice_id,
            excluded,
        ]
    return " UNION ALL ".join(parts), parameters


def _probe_orm(practice_id: int, probe: Probe, excluded: list[UUID]) -> bool:
    """The same seek through the ORM, for the embedded SQLite default."""
    found = MatchKey.objects.filter(practice_id=practice_id, fingerprint=probe.fingerprint)
    for column, spec in (("time", probe.time), ("birth_order", probe.order)):
        if spec != ANY:
            found = found.filter(
                **{column: spec} if spec is not None else {f"{column}__isnull": True}
            )
    return found.exclude(record_id__in=excluded).exists()


@dataclass(frozen=True)
class Resemblance:
    """The records one record resembles, the most relevant first, and how many in all."""

    record_ids: list[UUID]  # at most ``shown``
    total: int
    capped: bool  # there are at least ``total`` (counting stopped at the cap)


def resembling(
    *, practice_id: int, record_id: UUID, keys: Iterable[Key], shown: int = 20, cap: int = 1000
) -> Resemblance:
    """The live records that resemble a record with ``keys``, bounded whatever the cluster.

    Two statements of one index seek per probe: the first ``shown`` record ids of each
    (a probe finding the same time and order ranks before one finding either unknown),
    and a count of at most ``cap`` rows each. The probes of one key find disjoint rows, so
    their counts add up; across keys (twins in one record) the largest sum is taken.
    """
    keys = list(keys)
    probes = sorted({p for key in keys for p in key.probes()}, key=_relevance)
    if not probes:
        return Resemblance([], 0, False)
    found, counts = _probe_rows_and_counts(probes, practice_id, record_id, shown, cap)
    ordered = dict.fromkeys(record for rows in found for record in rows)
    by_probe = dict(zip(probes, counts, strict=True))
    total = max(sum(by_probe[p] for p in key.probes()) for key in keys)
    return Resemblance(
        list(ordered)[:shown], max(total, len(ordered)), any(n >= cap for n in counts)
    )


def _probe_branch(probe: Probe, select: str, limit: int) -> str:
    return (
        f"SELECT {select} FROM {TABLE} m "  # noqa: S608
        "WHERE m.practice_id = %s AND m.fingerprint = %s"
        + _condition("time", probe.time, "%s")
        + _condition("birth_order", probe.order, "%s")
        + f" AND m.record_id <> %s LIMIT {int(limit)}"
    )


def _probe_parameters(probe: Probe, practice_id: int, record_id: UUID) -> list[Any]:
    values = [v for v in (probe.time, probe.order) if isinstance(v, int)]
    return [practice_id, probe.fingerprint, *values, _db_uuid(record_id)]


def _probe_rows_and_counts(
    probes: list[Probe], practice_id: int, record_id: UUID, shown: int, cap: int
) -> tuple[list[list[UUID]], list[int]]:
    """In one statement, for each probe: its first ``shown`` record ids (other than
    ``record_id``), and how many rows it finds, counting no further than ``cap``."""
    rows = [
        f"SELECT 0 AS part, {rank} AS rank, p.record_id, 0 AS n FROM ("  # noqa: S608
        + _probe_branch(probe, "m.record_id", shown)
        + ") AS p"
        for rank, probe in enumerate(probes)
    ]
    counts = [
        f"SELECT 1 AS part, {rank} AS rank, NULL AS record_id, COUNT(*) AS n FROM ("  # noqa: S608
        + _probe_branch(probe, "1", cap)
        + ") AS p"
        for rank, probe in enumerate(probes)
    ]
    parameters = [v for p in probes for v in _probe_parameters(p, practice_id, record_id)]
    found: list[list[UUID]] = [[] for _ in probes]
    counted = [0] * len(probes)
    for part, rank, found_id, n in seek_rows(" UNION ALL ".join(rows + counts), parameters * 2):
        if part == 0:
            found[rank].append(found_id if isinstance(found_id, UUID) else UUID(found_id))
        else:
            counted[rank] = int(n)
    return found, counted


def _relevance(probe: Probe) -> int:
    """Exact values first, then NULLs, then ANY: the closer the match, the earlier."""
    weight = {"eq": 0, "null": 1, "any": 2}
    return weight[_kind(probe.time)] + weight[_kind(probe.order)]


def _db_uuid(value: UUID) -> Any:
    return value if connection.vendor == "postgresql" else value.hex


def resembling_sql(record_id: UUID) -> tuple[str, list[Any]]:
    """SQL selecting the ids of every live record resembling ``record_id`` (unbounded).

    For the admin's "see them all" list, which pages through it with a capped count.
    """
    sql = (
        f"SELECT DISTINCT m.record_id FROM {TABLE} m JOIN {TABLE} r "  # noqa: S608
        "ON r.practice_id = m.practice_id AND r.fingerprint = m.fingerprint "
        "WHERE r.record_id = %s AND m.record_id <> %s "
        "AND (m.time IS NULL OR r.time IS NULL OR m.time = r.time) "
        "AND (m.birth_order IS NULL OR r.birth_order IS NULL OR m.birth_order = r.birth_order)"
    )
    return sql, [_db_uuid(record_id), _db_uuid(record_id)]


# --- A chunk's view: what is on file, and what the chunk has done so far ------------------------


class ChunkMatching:
    """Matching for one chunk of the pipeline, applied in entry order under the practice lock.

    Records the chunk touches (by chart number) are followed in memory, with the keys they
    have at each step; every other live record of the practice is probed once, up front, for
    all the keys the chunk can ask about (they cannot change: the practice lock is held).
    The in-memory index files each key under the probes that find it, so asking is a few
    dictionary look-ups too, however many records of the chunk share a fingerprint.
    """

    def __init__(self, practice_id: int) -> None:
        self.practice_id = practice_id
        self.current: dict[UUID, Keys] = {}
        self.changed: set[UUID] = set()
        self._outside: set[Probe] = set()
        self._index: dict[Probe, set[UUID]] = defaultdict(set)

    def load(self, *, touched: Iterable[UUID], asked: Iterable[Key]) -> None:
        """Take the touched records' keys on file, and probe the others for ``asked``."""
        touched = list(touched)
        for record_id, keys in stored_keys(touched).items():
            self._file(record_id, keys)
        probes = list(
            {p for keys in (*self.current.values(), asked) for key in keys for p in key.probes()}
        )
        hits = probes_hit(practice_id=self.practice_id, probes=probes, excluding=touched)
        self._outside = {probes[i] for i in hits}

    def resembles(self, record_id: UUID, keys: Iterable[Key]) -> bool:
        """Does a live record other than ``record_id`` resemble one with ``keys``?"""
        for key in keys:
            for probe in key.probes():
                if probe in self._outside:
                    return True
                found = self._index.get(probe)
                if found and (len(found) > 1 or record_id not in found):
                    return True
        return False

    def keys_of(self, record_id: UUID) -> Keys:
        return self.current.get(record_id, NO_KEYS)

    def put(self, record_id: UUID, keys: Keys) -> None:
        """``record_id`` now has ``keys`` (none once voided)."""
        if self.current.get(record_id, NO_KEYS) == keys:
            return
        for key in self.current.pop(record_id, NO_KEYS):
            for probe in key.found_by():
                self._index[probe].discard(record_id)
        self._file(record_id, keys)
        self.changed.add(record_id)

    def write(self, *, new: set[UUID]) -> None:
        """Store the changed records' keys: in the chunk's transaction, beside the records."""
        match_keys_write(
            practice_id=self.practice_id,
            keys={r: self.current[r] for r in self.changed if self.current.get(r)},
            replacing=[r for r in self.changed if r not in new],
        )

    def _file(self, record_id: UUID, keys: Keys) -> None:
        if keys:
            self.current[record_id] = keys
        for key in keys:
            for probe in key.found_by():
                self._index[probe].add(record_id)
