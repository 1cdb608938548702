"""What the realtime and backlog sections measure: CPU of the processes and of PostgreSQL's
backends, SQL statements and task runs counted in the processes (:mod:`bench.counting`);
the counted web and worker; waiting until ingestions finish.

CPU is read from ``/proc`` (user + system): the web's and the worker's processes, and the
bench database's PostgreSQL backends, those alive at the end and those that ended meanwhile
(each counted process notes its backend's CPU when it closes the connection:
:mod:`bench.counting`). The bench's own backend is left out. The PostgreSQL postmaster's
reaped-children time is shown too, but it counts every database's backends on the server
(other jobs' included), so it is an upper bound, not the figure. SQL statements are counted
in the processes themselves (psycopg's execute, executemany and copy), not by PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.counting import backend_cpu_seconds, read_counts
from bench.harness import BIN, RESULTS, Service, service, web, worker

COUNTS = RESULTS / "counts"
PROCESS_TASK = "ingestion.tasks.process_ingestion"


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Reading:
    wall: float
    cpu: dict[str, float]  # service name -> CPU seconds of its processes
    backends: dict[int, float]  # live bench-database backend -> CPU seconds
    postmaster_reaped: float
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)


class Meter:
    """CPU of the services and of the bench database's backends; the counted processes' counts."""

    def __init__(self, *services: Service) -> None:
        from django.db import connection

        self.services = services
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            own = cursor.fetchone()[0]
        import psutil

        self.postmaster = psutil.Process(own).ppid()

    def read(self) -> Reading:
        cpu = {s.name: s.cpu_seconds() for s in self.services}
        cpu["bench"] = sum(os.times()[:2])
        reading = Reading(time.monotonic(), cpu, self._backends(), self._reaped())
        time.sleep(0.6)  # the counted processes write their counts every 0.2 s
        reading.counts = {s.name: read_counts(COUNTS / s.name) for s in self.services}
        return reading

    def _backends(self) -> dict[int, float]:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
            pids = [row[0] for row in cursor.fetchall()]
        found = {pid: backend_cpu_seconds(pid) for pid in pids}
        return {pid: cpu for pid, cpu in found.items() if cpu is not None}

    def _reaped(self) -> float:
        fields = Path(f"/proc/{self.postmaster}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def postgres_seconds(before: Reading, after: Reading) -> float:
    """The bench database's backends: alive at the end, or ended (noted at close) meanwhile."""
    total = sum(cpu - before.backends.get(pid, 0.0) for pid, cpu in after.backends.items())
    ended_before: set[str] = set()
    ended_after: dict[str, float] = {}
    for name in after.counts:
        ended_before |= set(before.counts[name]["ended"])
        ended_after.update(after.counts[name]["ended"])
    for pid, cpu in ended_after.items():
        if pid not in ended_before and int(pid) not in after.backends:
            total += cpu - before.backends.get(int(pid), 0.0)
    return total


def costs(before: Reading, after: Reading, courses: int, web_name: str) -> dict[str, Any]:
    per = 1000 / courses
    cpu = {name: after.cpu[name] - before.cpu[name] for name in after.cpu}
    postgres = postgres_seconds(before, after)
    workers = [name for name in cpu if name.startswith("worker")]
    worker_seconds = sum(cpu[name] for name in workers)
    figures: dict[str, Any] = {
        "cpu_ms_per_course": {
            "web": round(cpu[web_name] * per, 3),
            "worker": round(worker_seconds * per, 3),
            "postgres": round(postgres * per, 3),
            "total": round((cpu[web_name] + worker_seconds + postgres) * per, 3),
        },
        "bench_clients_ms_per_course": round(cpu["bench"] * per, 3),
        "postgres_reaped_all_databases_ms_per_course": round(
            (after.postmaster_reaped - before.postmaster_reaped) * per, 3
        ),
    }
    for kind in ("statements", "transactions"):
        figures[f"{kind}_per_course"] = {
            name: round((after.counts[name][kind] - before.counts[name][kind]) / courses, 2)
            for name in after.counts
        }
    tasks_after = {k: v for name in workers for k, v in after.counts[name]["tasks"].items()}
    tasks_before = {k: v for name in workers for k, v in before.counts[name]["tasks"].items()}
    runs = tasks_after.get(PROCESS_TASK, 0) - tasks_before.get(PROCESS_TASK, 0)
    figures["task_runs_per_course"] = round(runs / courses, 3)
    return figures


# -- services -----------------------------------------------------------------------------------


def fresh_counts(name: str) -> str:
    directory = COUNTS / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return str(directory)


@contextmanager
def counted_web(port: int, workers: int = 2, **env: str) -> Iterator[Service]:
    with web(
        port,
        app="bench.counting:application",
        workers=str(workers),
        BENCH_COUNTED="web",
        BENCH_COUNT_DIR=fresh_counts("web"),
        **env,
    ) as running:
        yield running


@contextmanager
def counted_worker(name: str = "worker1", **env: str) -> Iterator[Service]:
    with worker(
        1,
        app="bench.counting",
        name=name,
        BENCH_COUNTED="worker",
        BENCH_COUNT_DIR=fresh_counts(name),
        **env,
    ) as running:
        yield running


@contextmanager
def beat(**env: str) -> Iterator[Service]:
    schedule = RESULTS / "beat-schedule"
    schedule.unlink(missing_ok=True)
    log = RESULTS / "beat.log"
    command = [str(BIN / "celery"), "-A", "bench.counting", "beat", "--loglevel=INFO"]
    command += [f"--schedule={schedule}"]
    with service(
        command,
        "beat",
        lambda: log.exists() and "Starting" in log.read_text(errors="replace"),
        BENCH_COUNTED="worker",
        **env,
    ) as running:
        yield running


# -- waiting --------------------------------------------------------------------------------------


def wait_finished(practice_ids: list[int], timeout: float = 900) -> datetime:
    """Until every ingestion of these practices is finished; the last completion time."""
    from django.db.models import Max

    from ingestion.models import Ingestion

    deadline = time.monotonic() + timeout
    mine = Ingestion.objects.filter(practice_id__in=practice_ids)
    while time.monotonic() < deadline:
        if not mine.filter(status__in=[Ingestion.Status.QUEUED, Ingestion.Status.PROCESSING]):
            failed = mine.filter(status=Ingestion.Status.FAILED).count()
            if failed:
                raise RuntimeError(f"{failed} ingestions failed")
            return mine.aggregate(last=Max("completed_at"))["last"]
        time.sleep(0.05)
    raise RuntimeError(f"ingestions not finished after {timeout}s")


def single_bodies(prefix: str, clients: int, per_client: int) -> list[list[bytes]]:
    import orjson

    from bench.courses import course

    return [
        [
            orjson.dumps(course(500_000 + c * 1_000 + n, chart_prefix=f"{prefix}{c}-"))
            for n in range(per_client)
        ]
        for c in range(clients)
    ]
