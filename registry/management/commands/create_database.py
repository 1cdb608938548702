from __future__ import annotations

import warnings
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connections

INSUFFICIENT_PRIVILEGE = "42501"


class Command(BaseCommand):
    help = (
        "Create the PostgreSQL database that DATABASE_URL names when it does not exist yet "
        "(make run does this before migrating). The embedded SQLite file needs nothing."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections["default"]
        if connection.vendor != "postgresql":
            self.stdout.write("The embedded SQLite database is created when first used.")
            return
        params = connection.settings_dict
        name = params["NAME"]
        try:
            with warnings.catch_warnings():  # "no 'postgres' database, using ...": said below
                warnings.simplefilter("ignore", RuntimeWarning)
                with connection._nodb_cursor() as cursor:
                    cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
                    if cursor.fetchone():
                        self.stdout.write(f"Database {name} exists.")
                        return
                    cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
        except DatabaseError as error:
            raise CommandError(_failure(error, params)) from None
        self.stdout.write(f"Created database {name}.")


def _failure(error: DatabaseError, params: dict[str, Any]) -> str:
    sqlstate = getattr(error.__cause__, "sqlstate", None)
    where = f"{params.get('HOST') or 'localhost'}:{params.get('PORT') or 5432}"
    if sqlstate is None:
        said = " ".join(str(error).split()) or type(error).__name__  # names no password
        return f"Cannot connect to PostgreSQL at {where}: {said}"
    reason = "not allowed" if sqlstate == INSUFFICIENT_PRIVILEGE else f"SQLSTATE {sqlstate}"
    return (
        f"Could not create database {params['NAME']} ({reason}). Create it as a role that may "
        f"create databases: {createdb_command(params)}"
    )


def createdb_command(params: dict[str, Any]) -> str:
    parts = ["createdb"]
    for flag, key in (("-h", "HOST"), ("-p", "PORT")):
        if params.get(key):
            parts += [flag, str(params[key])]
    if params.get("USER"):
        parts += ["-O", str(params["USER"])]
    return " ".join([*parts, str(params["NAME"])])
