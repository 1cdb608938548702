"""``make bench BENCH=realtime``, ``backlog`` and ``bodymemory``: real-time traffic's cost.

**realtime**, in one run against the same web and worker processes (gunicorn's ASGI worker,
two processes; one Celery worker process):

* a 2,000-course batch, then 480 single-course submissions from 16 clients (each with its
  own practice's key, on a connection it keeps, as nginx keeps its connections to the web:
  deploy/nginx/registry.conf), each until every ingestion is completed;
* the first web runs with the defaults: a single's message is published 1 s after its commit
  (``REGISTRY_SINGLES_GATHER_SECONDS``), so the practice's singles submitted meanwhile come
  along in its claim; then the same singles once more, against a second web started with
  ``REGISTRY_SINGLES_GATHER_SECONDS=0`` (the same worker): each published at once;
* for each: CPU per course of the web, the worker and PostgreSQL, the rate at which courses
  complete, SQL statements and transactions per course, Celery task runs per course; for
  the singles, the submit p50, p95 and p99; then the p50 of 60 singles from one client.

CPU is read from ``/proc`` (user + system): the web's and the worker's processes, and the
bench database's PostgreSQL backends, those alive at the end and those that ended meanwhile
(each counted process notes its backend's CPU when it closes the connection:
:mod:`bench.counting`). The bench's own backend is left out. The PostgreSQL postmaster's
reaped-children time is shown too, but it counts every database's backends on the server
(other jobs' included), so it is an upper bound, not the figure. SQL statements are counted
in the processes themselves (psycopg's execute, executemany and copy), not by PostgreSQL.

**backlog**: 2,000 single-course submissions (64 practices) queue up with no worker running
while the beat runs its recovery every 5 s (``REGISTRY_REQUEUE_AFTER_SECONDS=10``); then a
worker starts and drains them. Each ingestion the recovery publishes again is a task run
more than needed: the figure is those over the ingestions. (Before the worker combined
singles, every ingestion had one message and one run; now a practice's waiting singles
share one message, so runs are fewer than ingestions and only the republished count.)

With ``BENCH_PROFILE=1``, py-spy samples a web process and the worker's pool process during
the singles (``bench/results/{web,worker}-profile-singles.txt``; the sampling costs CPU, so
take the figures from a run without it).

**bodymemory**: the web process's peak resident size while it takes a 60 MB batch (three
times) and a 600 MB one (limit raised to 700 MB), no worker running.
"""

from __future__ import annotations

import http.client
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.counting import backend_cpu_seconds, read_counts
from bench.run import (
    BIN,
    RESULTS,
    SUBMIT,
    PeakMemory,
    Service,
    _free_port,
    _percentiles,
    _post,
    _practice_token,
    _row,
    profiled,
    section,
    service,
    warm_up,
    web,
    worker,
)

BATCH_COURSES = 2_000
CLIENTS = 16
PER_CLIENT = 30
ONE_CLIENT = 60
GATHER_SECONDS = 1.0  # REGISTRY_SINGLES_GATHER_SECONDS's default, as the first web runs
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
        import psutil

        cpu: dict[str, float] = {}
        for s in self.services:
            total = 0.0
            for pid in s.pids():
                try:
                    times = psutil.Process(pid).cpu_times()
                except psutil.NoSuchProcess:
                    continue
                total += times.user + times.system
            cpu[s.name] = total
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


def _fresh_counts(name: str) -> str:
    directory = COUNTS / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return str(directory)


@contextmanager
def counted_web(port: int, workers: int = 2, **env: str) -> Any:
    with web(
        port,
        app="bench.counting:application",
        workers=str(workers),
        BENCH_COUNTED="web",
        BENCH_COUNT_DIR=_fresh_counts("web"),
        **env,
    ) as running:
        yield running


@contextmanager
def counted_worker(name: str = "worker1", **env: str) -> Any:
    with worker(
        1,
        app="bench.counting",
        name=name,
        BENCH_COUNTED="worker",
        BENCH_COUNT_DIR=_fresh_counts(name),
        **env,
    ) as running:
        yield running


@contextmanager
def beat(**env: str) -> Any:
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


# -- realtime ------------------------------------------------------------------------------------


def _single_bodies(prefix: str, clients: int, per_client: int) -> list[list[bytes]]:
    import orjson

    from bench.courses import course

    return [
        [
            orjson.dumps(course(500_000 + c * 1_000 + n, chart_prefix=f"{prefix}{c}-"))
            for n in range(per_client)
        ]
        for c in range(clients)
    ]


def submit_all(port: int, tokens: list[str], bodies: list[list[bytes]]) -> list[float]:
    """Each client posts its bodies one after another, with its key; all clients at once."""

    def client(index: int) -> list[float]:
        timings = []
        for n, body in enumerate(bodies[index]):
            token = tokens[(index + n * len(bodies)) % len(tokens)]
            status, _, elapsed = _post(port, token, body)
            if status != 202:
                raise RuntimeError(f"submit answered {status}")
            timings.append(elapsed)
        return timings

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return [t for timings in pool.map(client, range(len(bodies))) for t in timings]


def batch_run(port: int, meter: Meter) -> dict[str, Any]:
    from bench.courses import batch_bytes

    practice, token = _practice_token("rt-batch")
    body = batch_bytes(BATCH_COURSES, chart_prefix="RTB")
    print(f"bench: realtime, one batch of {BATCH_COURSES} courses", flush=True)
    before = meter.read()
    started = datetime.now(UTC)
    status, _, _ = _post(port, token, body)
    if status != 202:
        raise RuntimeError(f"submit answered {status}")
    last = wait_finished([practice.id])
    after = meter.read()
    seconds = (last - started).total_seconds()
    figures = costs(before, after, BATCH_COURSES, "web")
    figures.update(courses=BATCH_COURSES, seconds=round(seconds, 2))
    figures["courses_per_second"] = round(BATCH_COURSES / seconds, 1)
    return figures


def singles_run(port: int, meter: Meter, prefix: str = "rt-single") -> dict[str, Any]:
    practices = [_practice_token(f"{prefix}-{i}") for i in range(CLIENTS)]
    bodies = _single_bodies(f"{prefix}-", CLIENTS, PER_CLIENT)
    courses = CLIENTS * PER_CLIENT
    print(f"bench: realtime, {courses} singles from {CLIENTS} clients", flush=True)
    web_service, worker_service = meter.services
    before = meter.read()
    started = datetime.now(UTC)
    with (
        profiled(web_service, "web-profile-singles", enabled=True),
        profiled(worker_service, "worker-profile-singles", enabled=True),
    ):
        timings = submit_all_per_practice(port, [t for _, t in practices], bodies)
        last = wait_finished([p.id for p, _ in practices])
    after = meter.read()
    seconds = (last - started).total_seconds()
    figures = costs(before, after, courses, "web")
    figures.update(courses=courses, seconds=round(seconds, 2))
    figures["courses_per_second"] = round(courses / seconds, 1)
    figures["submit"] = _percentiles(timings)
    return figures


def submit_all_per_practice(port: int, tokens: list[str], bodies: list[list[bytes]]) -> list[float]:
    """Client i posts its bodies with key i (one practice per client), on one connection it
    keeps, as nginx keeps its connections to the web (deploy/nginx/registry.conf)."""

    def client(index: int) -> list[float]:
        timings = []
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        for body in bodies[index]:
            status, _, elapsed = _post(port, tokens[index], body, connection)
            if status != 202:
                raise RuntimeError(f"submit answered {status}")
            timings.append(elapsed)
        connection.close()
        return timings

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return [t for timings in pool.map(client, range(len(bodies))) for t in timings]


def one_client_run(port: int) -> dict[str, Any]:
    practice, token = _practice_token("rt-one")
    bodies = _single_bodies("RT1-", 1, ONE_CLIENT)
    print(f"bench: realtime, {ONE_CLIENT} singles from one client", flush=True)
    timings = submit_all_per_practice(port, [token], bodies)
    wait_finished([practice.id])
    return _percentiles(timings)


def realtime() -> dict[str, Any]:
    port = _free_port()
    load_before = os.getloadavg()
    with counted_worker() as worker_service:
        with counted_web(port) as web_service:
            warm_up(port)
            meter = Meter(web_service, worker_service)
            batch = batch_run(port, meter)
            singles = singles_run(port, meter)
            one = one_client_run(port)
        port = _free_port()
        with counted_web(port, REGISTRY_SINGLES_GATHER_SECONDS="0") as at_once_web:
            warm_up(port)
            print("bench: realtime, the same singles published at once", flush=True)
            at_once = singles_run(port, Meter(at_once_web, worker_service), prefix="rt-now")
    load_after = os.getloadavg()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "batch": batch,
        "singles_16_clients": singles,
        "singles_1_client_submit": one,
        "singles_16_clients_at_once": at_once,
        "ratios": ratios(batch, singles, one, at_once),
    }


def ratios(
    batch: dict[str, Any], singles: dict[str, Any], one: dict[str, Any], at_once: dict[str, Any]
) -> dict[str, Any]:
    return {
        **_over_batch("singles", singles, batch),
        **_over_batch("at_once_singles", at_once, batch),
        "submit_p50_16_over_1_client": round(singles["submit"]["p50_ms"] / one["p50_ms"], 1),
    }


def _over_batch(name: str, run: dict[str, Any], batch: dict[str, Any]) -> dict[str, Any]:
    """A run's CPU per course and completion rate as multiples of the batch's."""
    b, r = batch["cpu_ms_per_course"], run["cpu_ms_per_course"]
    cpu = {part: round(r[part] / b[part], 1) if b[part] else None for part in b}
    return {
        f"cpu_{name}_over_batch": cpu,
        f"completion_rate_{name}_over_batch": round(
            run["courses_per_second"] / batch["courses_per_second"], 3
        ),
    }


def print_realtime(results: dict[str, Any]) -> None:
    print()
    load = results["load_average_before_after"]
    print(f"Real time ({results['date']}; load average {load[0]} before, {load[1]} after)")
    print()
    header = ("", "courses/s", "web ms", "worker ms", "PostgreSQL ms", "total ms")
    print(_row(*header, "statements (web, worker)", "tasks"))
    print(_row("---", *["---:"] * 7))
    rows = (
        ("batch of 2,000", "batch"),
        (f"singles, 16 clients (held {GATHER_SECONDS:g} s)", "singles_16_clients"),
        ("the same, published at once", "singles_16_clients_at_once"),
    )
    for label, key in rows:
        f = results[key]
        cpu = f["cpu_ms_per_course"]
        statements = f["statements_per_course"]
        print(
            _row(
                label,
                f["courses_per_second"],
                cpu["web"],
                cpu["worker"],
                cpu["postgres"],
                cpu["total"],
                f"{statements.get('web')}, {statements.get('worker1')}",
                f["task_runs_per_course"],
            )
        )
    r = results["ratios"]
    singles = results["singles_16_clients"]["submit"]
    one = results["singles_1_client_submit"]
    print()
    print(f"CPU per course, singles over batch: {r['cpu_singles_over_batch']}")
    print(f"Completion rate, singles over batch: {r['completion_rate_singles_over_batch']}")
    print(
        f"Published at once (REGISTRY_SINGLES_GATHER_SECONDS=0): CPU per course over batch "
        f"{r['cpu_at_once_singles_over_batch']}; completion rate over batch "
        f"{r['completion_rate_at_once_singles_over_batch']}"
    )
    print(
        f"Submit at 16 clients: p50 {singles['p50_ms']} ms, p95 {singles['p95_ms']}, "
        f"p99 {singles['p99_ms']}; at 1 client: p50 {one['p50_ms']} ms, p99 {one['p99_ms']} "
        f"({r['submit_p50_16_over_1_client']}x)"
    )


def realtime_main() -> dict[str, Any]:
    return section("realtime", realtime, print_realtime)


# -- backlog -------------------------------------------------------------------------------------

BACKLOG = 2_000
BACKLOG_KEYS = 64  # at most 120 submissions a minute per key
RECOVERY = {
    "REGISTRY_RECOVERY_INTERVAL_SECONDS": "5",
    "REGISTRY_REQUEUE_AFTER_SECONDS": "10",
    "REGISTRY_RECOVERY_GRACE_SECONDS": "10",
}


def _queue_length() -> int:
    import redis

    from bench.run import REDIS_URL

    return int(redis.Redis.from_url(REDIS_URL).llen("celery"))


def backlog(**worker_env: str) -> dict[str, Any]:
    port = _free_port()
    practices = [_practice_token(f"backlog-{i}") for i in range(BACKLOG_KEYS)]
    per_client = BACKLOG // CLIENTS
    bodies = _single_bodies("BL", CLIENTS, per_client)
    with counted_web(port) as web_service, beat(**RECOVERY):
        print(f"bench: backlog of {BACKLOG} singles, no worker yet", flush=True)
        started = time.monotonic()
        submit_all(port, [t for _, t in practices], bodies)
        submitted = time.monotonic() - started
        time.sleep(max(0.0, 15 - submitted))  # the first ones are older than 10 s
        depth = _queue_length()
        with counted_worker("worker-backlog", **RECOVERY, **worker_env) as worker_service:
            meter = Meter(web_service, worker_service)
            before = meter.read()
            drain_started = time.monotonic()
            wait_finished([p.id for p, _ in practices])
            drained = time.monotonic() - drain_started
            after = meter.read()
            time.sleep(12)  # two more recovery runs: anything they republish is counted
            final = read_counts(COUNTS / "worker-backlog")
    runs = final["tasks"].get(PROCESS_TASK, 0)
    republished = final["tasks"].get("republished", 0)
    figures = costs(before, after, BACKLOG, "web")
    return {
        "ingestions": BACKLOG,
        "submitted_seconds": round(submitted, 1),
        "queue_length_when_worker_started": depth,
        "drain_seconds": round(drained, 1),
        "process_task_runs": runs,
        "recovery_runs": final["tasks"].get("ingestion.tasks.recover_ingestions", 0),
        "republished": republished,
        # A republished message is one task run more than the ingestion needed.
        "extra_task_runs_percent": round(100 * republished / BACKLOG, 2),
        "worker_cpu_ms_per_course": figures["cpu_ms_per_course"]["worker"],
        "worker_statements_per_course": figures["statements_per_course"]["worker-backlog"],
    }


def print_backlog(results: dict[str, Any]) -> None:
    print()
    print(_row("Backlog of 2,000 singles", "value"))
    print(_row("---", "---:"))
    for name, value in results.items():
        print(_row(name, value))


def backlog_main() -> dict[str, Any]:
    return section("backlog", backlog, print_backlog)


# -- body memory --------------------------------------------------------------------------------

BODY_LIMIT = 700_000_000


def _write_batch(path: Path, courses: int) -> int:
    """A batch body written entry by entry, so the bench never holds it whole."""
    import orjson

    from bench.courses import course

    with path.open("wb") as out:
        out.write(b'{"resourceType":"Bundle","type":"batch","entry":[')
        for index in range(courses):
            entry = {"fullUrl": f"urn:uuid:mem-{index}", "resource": course(index)}
            out.write((b"," if index else b"") + orjson.dumps(entry))
        out.write(b"]}")
    return path.stat().st_size


def _post_file(port: int, token: str, path: Path) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/fhir+json",
        "Content-Length": str(path.stat().st_size),
    }
    with path.open("rb") as body:
        connection.request("POST", SUBMIT, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
    return response.status


def _rss_mb(service_: Service) -> float:
    import psutil

    sizes = [psutil.Process(pid).memory_info().rss for pid in service_.pids()]
    return round(max(sizes) / 2**20, 1)


def bodymemory() -> dict[str, Any]:
    port = _free_port()
    _, token = _practice_token("body-memory")
    bodies = {"60MB": 9_500, "600MB": 95_000}
    paths = {}
    for label, courses in bodies.items():
        print(f"bench: body memory, writing a {label} batch ({courses} courses)", flush=True)
        paths[label] = RESULTS / f"body-{label}.json"
        _write_batch(paths[label], courses)
    figures: dict[str, Any] = {}
    try:
        with counted_web(port, workers=1, REGISTRY_MAX_BODY_BYTES=str(BODY_LIMIT)) as web_service:
            warm_up_web(port, token)
            runs = [("60MB", 1), ("60MB", 2), ("60MB", 3), ("600MB", 1)]
            for label, n in runs:
                before = _rss_mb(web_service)
                with PeakMemory(web_service) as memory:
                    status = _post_file(port, token, paths[label])
                if status != 202:
                    raise RuntimeError(f"{label}: submit answered {status}")
                peak = round(memory.peak["web"]["largest_process_mb"], 1)
                size_mb = paths[label].stat().st_size / 2**20
                figures[f"{label}_{n}"] = {
                    "body_mb": round(size_mb, 1),
                    "rss_before_mb": before,
                    "peak_rss_mb": peak,
                    "peak_over_body": round((peak - before) / size_mb, 2),
                    "rss_after_mb": _rss_mb(web_service),
                }
                print(f"bench: body memory {label} #{n}: {figures[f'{label}_{n}']}", flush=True)
    finally:
        for path in paths.values():
            path.unlink(missing_ok=True)
    return figures


def warm_up_web(port: int, token: str) -> None:
    import orjson

    from bench.courses import course

    for n in range(4):
        _post(port, token, orjson.dumps(course(n, chart_prefix="WARMMEM")))


def print_bodymemory(results: dict[str, Any]) -> None:
    print()
    print(_row("Web process, one body", "body MB", "RSS before", "peak RSS", "growth / body"))
    print(_row("---", "---:", "---:", "---:", "---:"))
    for label, f in results.items():
        cells = (f["body_mb"], f["rss_before_mb"], f["peak_rss_mb"], f["peak_over_body"])
        print(_row(label, *cells))


def bodymemory_main() -> dict[str, Any]:
    return section("bodymemory", bodymemory, print_bodymemory)
