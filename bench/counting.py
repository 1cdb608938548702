"""The bench's counted processes: the web and the worker as they run, with counters added.

``gunicorn bench.counting:application`` and ``celery -A bench.counting worker`` serve the
registry's own ASGI application and Celery app; importing this module with
``BENCH_COUNT_DIR`` set adds, in each process:

* every SQL statement the process sends (psycopg's ``execute``, ``executemany`` and
  ``copy``, so COPY and raw cursors count too) and every transaction (a COMMIT or ROLLBACK,
  or a statement sent in autocommit);
* each Celery task run, by task name, and the ingestions the recovery published again;
* the CPU time of each PostgreSQL backend at the moment the process closes its connection
  (``/proc/<backend pid>/schedstat``; the server runs on this machine), so backends that end
  during a measurement are counted: the worker used to open one per task.

Each process writes its counts to ``BENCH_COUNT_DIR/<pid>.json`` a few times a second;
:func:`read_counts` adds them up. Nothing here is imported by the registry itself.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIRECTORY = os.environ.get("BENCH_COUNT_DIR", "")
FLUSH_SECONDS = 0.2


def backend_cpu_seconds(pid: int) -> float | None:
    """The CPU time of a single-threaded process (a PostgreSQL backend), in nanoseconds'
    precision: /proc/<pid>/schedstat. (/proc/<pid>/stat counts in 10 ms ticks, truncated,
    which reads a backend that lived for one task as zero.)"""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class _Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statements = 0
        self.transactions = 0
        self.tasks: dict[str, int] = {}
        self.ended: dict[str, float] = {}  # backend pid -> its CPU seconds when closed
        self.changed = False
        self.writer_pid = 0

    def add(self, statements: int = 0, transactions: int = 0) -> None:
        with self.lock:
            self.statements += statements
            self.transactions += transactions
            self.changed = True
        self._ensure_writer()

    def task(self, name: str, count: int = 1) -> None:
        with self.lock:
            self.tasks[name] = self.tasks.get(name, 0) + count
            self.changed = True
        self._ensure_writer()

    def backend_ended(self, pid: int) -> None:
        cpu = backend_cpu_seconds(pid)
        if cpu is None:
            return
        with self.lock:
            self.ended[str(pid)] = cpu
            self.changed = True
        self._ensure_writer()

    def _ensure_writer(self) -> None:
        # One writer thread per process, started in the process itself (prefork children
        # do not inherit their parent's threads).
        if self.writer_pid == os.getpid():
            return
        self.writer_pid = os.getpid()
        threading.Thread(target=self._write_forever, daemon=True, name="bench-counts").start()

    def _write_forever(self) -> None:
        path = Path(DIRECTORY) / f"{os.getpid()}.json"
        while True:
            time.sleep(FLUSH_SECONDS)
            with self.lock:
                if not self.changed:
                    continue
                self.changed = False
                figures = {
                    "statements": self.statements,
                    "transactions": self.transactions,
                    "tasks": dict(self.tasks),
                    "ended": dict(self.ended),
                }
            partial = path.with_suffix(".tmp")
            partial.write_text(json.dumps(figures))
            partial.replace(path)


COUNTS = _Counts()


def _counted_statement(method: Callable[..., Any]) -> Callable[..., Any]:
    def counted(cursor: Any, *args: Any, **kwargs: Any) -> Any:
        autocommit = bool(getattr(cursor.connection, "autocommit", False))
        COUNTS.add(statements=1, transactions=int(autocommit))
        return method(cursor, *args, **kwargs)

    return counted


def _counted_transaction(method: Callable[..., Any]) -> Callable[..., Any]:
    def counted(connection: Any, *args: Any, **kwargs: Any) -> Any:
        COUNTS.add(transactions=1)
        return method(connection, *args, **kwargs)

    return counted


def _noting_backend_cpu(method: Callable[..., Any]) -> Callable[..., Any]:
    def close(connection: Any, *args: Any, **kwargs: Any) -> Any:
        if not connection.closed:
            COUNTS.backend_ended(connection.info.backend_pid)
        return method(connection, *args, **kwargs)

    return close


def install() -> None:
    import psycopg

    if getattr(psycopg.Cursor.execute, "counted", False):
        return
    for name in ("execute", "executemany", "copy"):
        setattr(psycopg.Cursor, name, _counted_statement(getattr(psycopg.Cursor, name)))
    for name in ("commit", "rollback"):
        setattr(psycopg.Connection, name, _counted_transaction(getattr(psycopg.Connection, name)))
    psycopg.Connection.close = _noting_backend_cpu(psycopg.Connection.close)  # type: ignore[method-assign]
    psycopg.Cursor.execute.counted = True  # type: ignore[attr-defined]


def read_counts(directory: Path) -> dict[str, Any]:
    """The counts of every process that wrote some, added up (``ended`` merged by pid)."""
    total: dict[str, Any] = {"statements": 0, "transactions": 0, "tasks": {}, "ended": {}}
    for path in directory.glob("*.json"):
        try:
            figures = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        total["statements"] += figures["statements"]
        total["transactions"] += figures["transactions"]
        for name, runs in figures["tasks"].items():
            total["tasks"][name] = total["tasks"].get(name, 0) + runs
        total["ended"].update(figures["ended"])
    return total


if DIRECTORY:
    install()

if os.environ.get("BENCH_COUNTED") == "web":
    from config.asgi import application

    __all__ = ["application"]
elif os.environ.get("BENCH_COUNTED") == "worker":
    from celery.signals import task_postrun, task_prerun

    from config.celery import app

    @task_prerun.connect
    def _count_task(sender: Any = None, **_: Any) -> None:
        COUNTS.task(getattr(sender, "name", "unknown"))

    @task_postrun.connect
    def _count_republished(sender: Any = None, retval: Any = None, **_: Any) -> None:
        if getattr(sender, "name", "") == "ingestion.tasks.recover_ingestions":
            COUNTS.task("republished", int(retval or 0))

    __all__ = ["app"]
