"""Bulk inserts: PostgreSQL COPY in production, the ORM on the embedded SQLite default."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import orjson
import psycopg
from django.db import connection, models
from psycopg import sql
from psycopg.types.json import Jsonb

# Below this many rows a plain INSERT beats COPY's extra protocol round trips.
FEW_ROWS = 8


def _json(value: Any) -> Jsonb:
    return Jsonb(value, dumps=_dumps)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


@contextmanager
def server_bound() -> Iterator[psycopg.Cursor[Any]]:
    """A psycopg cursor that sends the values apart from the statement (server-side binding),
    binary where it can, with Django's error wrapping (callers catch ``IntegrityError``).

    Django's cursors bind on the client: every value is quoted into the statement's text,
    which costs the web and the worker more CPU than the statement itself when a value is a
    ciphertext or a row's JSON, and PostgreSQL must parse it all back. Not prepared (Django
    leaves ``prepare_threshold`` unset), so nothing is kept on the server per statement.
    """
    with (
        connection.wrap_database_errors,
        connection.cursor() as wrapper,
        psycopg.Cursor(wrapper.cursor.connection) as cursor,
    ):
        yield cursor


def _insert_few(
    model: type[models.Model],
    fields: Sequence[str],
    rows: list[Sequence[Any]],
    json_positions: list[int],
) -> None:
    statement = _insert_statement(model, tuple(fields), len(rows))
    parameters: list[Any] = []
    for row in rows:
        values = list(row)
        for i in json_positions:
            values[i] = _json(values[i])
        parameters.extend(values)
    with server_bound() as cursor:
        cursor.execute(statement, parameters)


@lru_cache(maxsize=256)
def _insert_statement(model: type[models.Model], fields: tuple[str, ...], rows: int) -> str:
    """``INSERT ... VALUES`` for ``rows`` rows, composed once (composing costs more than
    sending it)."""
    columns = [_column(model, name) for name in fields]
    row_placeholder = sql.SQL("({})").format(sql.SQL(", ").join([sql.Placeholder()] * len(fields)))
    statement = sql.SQL("INSERT INTO {} ({}) VALUES {}").format(
        sql.Identifier(model._meta.db_table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join([row_placeholder] * rows),
    )
    return statement.as_string()


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (values in ``fields`` order) into ``model``'s table, in one round trip.

    COPY skips the per-row SQL and model instances that dominate an ORM bulk insert; on
    other databases the rows go through ``bulk_create``.
    """
    rows = list(rows)
    if not rows:
        return
    meta = model._meta
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows]
        )
        return
    json_positions = [
        i for i, name in enumerate(fields) if isinstance(meta.get_field(name), models.JSONField)
    ]
    if len(rows) <= FEW_ROWS:
        _insert_few(model, fields, rows, json_positions)
        return
    columns = [_column(model, name) for name in fields]
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(meta.db_table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    # The raw psycopg cursor: wrap its errors as Django's, so callers can catch DatabaseError.
    with (
        connection.wrap_database_errors,
        connection.cursor() as cursor,
        cursor.cursor.copy(statement) as copy,
    ):
        for row in rows:
            if json_positions:
                row = list(row)
                for i in json_positions:
                    row[i] = _dumps(row[i])
            copy.write_row(row)


def _column(model: type[models.Model], name: str) -> str:
    return str(model._meta.get_field(name).column)  # type: ignore[union-attr]


def update_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Update ``model`` rows by primary key (``fields[0]``) with the other fields' values.

    On PostgreSQL the rows are copied into a temporary table and applied with one
    ``UPDATE ... FROM``: Django's ``bulk_update`` builds a CASE per field and row, which
    costs seconds of Python for a few hundred rows.
    """
    rows = list(rows)
    if not rows:
        return
    meta = model._meta
    changed = fields[1:]
    if connection.vendor != "postgresql":
        instances = [model(**dict(zip(fields, row, strict=True))) for row in rows]
        model._default_manager.bulk_update(instances, changed)
        return
    columns = [_column(model, name) for name in fields]
    table, staging = sql.Identifier(meta.db_table), sql.Identifier(f"_update_{meta.db_table}")
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    assignments = sql.SQL(", ").join(
        [sql.SQL("{0} = s.{0}").format(sql.Identifier(column)) for column in columns[1:]]
    )
    with connection.wrap_database_errors, connection.cursor() as cursor:
        raw = cursor.cursor
        raw.execute(
            sql.SQL("CREATE TEMP TABLE {} AS SELECT {} FROM {} WITH NO DATA").format(
                staging, names, table
            )
        )
        with raw.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(staging, names)) as copy:
            for row in rows:
                copy.write_row(row)
        raw.execute(
            sql.SQL("UPDATE {} AS t SET {} FROM {} AS s WHERE t.{} = s.{}").format(
                table, assignments, staging, sql.Identifier(columns[0]), sql.Identifier(columns[0])
            )
        )
        raw.execute(sql.SQL("DROP TABLE {}").format(staging))
