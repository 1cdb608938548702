"""make run in production shape creates its PostgreSQL database when it is missing.

Against a private PostgreSQL (tests/services.py), never the shared one: the database is
created once, found the next time, and a role that may not create databases is told the one
command that does.
"""

from __future__ import annotations

import subprocess

from tests.config.test_strict_configuration import BIN, production_environment, run
from tests.services import private_postgres


def create_database(url: str) -> subprocess.CompletedProcess[str]:
    env = production_environment(DATABASE_URL=url)
    return run([str(BIN / "python"), "manage.py", "create_database"], env)


def psql(port: int, statement: str) -> str:
    command = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "registry"]
    done = subprocess.run([*command, "-tAc", statement], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_missing_database_is_created_then_found_and_migrate_works():
    with private_postgres() as server:
        url = f"postgres://postgres@127.0.0.1:{server.port}/registry_fresh"
        created = create_database(url)
        assert created.returncode == 0, created.stderr
        assert created.stdout.strip() == "Created database registry_fresh."
        assert create_database(url).stdout.strip() == "Database registry_fresh exists."
        env = production_environment(DATABASE_URL=url)
        migrate = run([str(BIN / "python"), "manage.py", "migrate", "--noinput"], env)
        assert migrate.returncode == 0, migrate.stderr


def test_a_role_that_may_not_create_databases_is_told_the_command_that_does():
    with private_postgres() as server:
        psql(server.port, "CREATE ROLE clerk LOGIN NOCREATEDB")
        refused = create_database(f"postgres://clerk@127.0.0.1:{server.port}/registry_clerk")
        assert refused.returncode != 0
        assert "Traceback" not in refused.stderr
        assert "not allowed" in refused.stderr
        assert f"createdb -h 127.0.0.1 -p {server.port} -O clerk registry_clerk" in refused.stderr
