"""``make bench``: what users feel, against the floor and against a naive baseline.

Runs the production shape on this machine: gunicorn serving the API, real Celery worker
processes, PostgreSQL and Redis. It prints figures and never passes or fails on time.

* End to end: POST of a 1,000- and a 10,000-course batch until ``completed``, with one
  worker process and with two; the same 10,000 batch with full fhir.resources validation
  switched on (the naive baseline).
* The floor, in the same run: orjson parsing the same bytes plus PostgreSQL COPY of the rows
  those courses store.
* Submit latency of a single course at 1 and 16 concurrent clients (several practices'
  keys, so the 120/minute limit is respected), and poll latency.
* Peak RSS of the worker and the web processes during the 10,000 batch.
* The per-course cost of the pure mapping core.

It uses its own database (``<name>_bench``, recreated each run) and Redis database 15, and
writes ``bench/results/latest.json``. With ``BENCH_PROFILE=1`` it also samples the worker
with py-spy during the 10,000-course run (slightly slowing that run) and writes the hottest
functions to ``bench/results/worker-profile-10000-w1.txt``; ``BENCH_PROFILE=gil`` samples
only the thread holding the GIL (CPU spent in Python, not waits).
"""

from __future__ import annotations

import gc
import http.client
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
SUBMIT = "/api/registry/fhir/Bundle"
PROJECT = ("ingestion/", "registry/", "keys/")


# -- environment -----------------------------------------------------------------------------


def _bench_urls() -> tuple[str, str]:
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry")
    parts = urlsplit(database)
    bench_database = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_bench"))
    redis = os.environ.get("BENCH_REDIS_URL") or urlunsplit(
        urlsplit(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))._replace(path="/15")
    )
    return bench_database, redis


DATABASE_URL, REDIS_URL = _bench_urls()


def _environment(**extra: str) -> dict[str, str]:
    from django.conf import settings

    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=REDIS_URL,
        CELERY_BROKER_URL=REDIS_URL,
        SECRET_KEY=settings.SECRET_KEY,
        REGISTRY_FINGERPRINT_KEY=settings.REGISTRY_FINGERPRINT_KEY,
        REGISTRY_PAYLOAD_KEY=settings.REGISTRY_PAYLOAD_KEY,
        REGISTRY_DEV_SECRETS="false",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _recreate_database() -> None:
    parts = urlsplit(DATABASE_URL)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    for statement in (
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        f'CREATE DATABASE "{name}"',
    ):
        subprocess.run(["psql", admin, "-qc", statement], check=True, capture_output=True)


def _setup_django() -> None:
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["CELERY_BROKER_URL"] = REDIS_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- processes ---------------------------------------------------------------------------------


class Service:
    def __init__(self, process: subprocess.Popen[bytes], name: str) -> None:
        self.process = process
        self.name = name

    def pids(self) -> list[int]:
        import psutil

        try:
            parent = psutil.Process(self.process.pid)
            return [parent.pid] + [child.pid for child in parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


@contextmanager
def service(
    command: list[str], name: str, ready: Callable[[], bool], **env: str
) -> Iterator[Service]:
    log = (RESULTS / f"{name}.log").open("wb")
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=_environment(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    running = Service(process, name)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start; see {log.name}")
            time.sleep(0.2)
        yield running
    finally:
        running.stop()
        log.close()


def healthz_answers(port: int) -> Callable[[], bool]:
    """Whether the web server on ``port`` answers /healthz with 200: a service's readiness."""

    def answers() -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    return answers


@contextmanager
def web(
    port: int, app: str = "config.asgi:application", workers: str = "2", **env: str
) -> Iterator[Service]:
    command = [
        str(BIN / "gunicorn"),
        app,
        "--config",
        "config/gunicorn.py",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        workers,
        "--access-logfile",
        "/dev/null",
    ]
    with service(command, "web", healthz_answers(port), **env) as running:
        yield running


@contextmanager
def worker(
    processes: int, app: str = "config", name: str | None = None, **env: str
) -> Iterator[Service]:
    name = name or f"worker{processes}" + ("-validating" if env else "")
    log_path = RESULTS / f"{name}.log"
    command = [
        str(BIN / "celery"),
        "-A",
        app,
        "worker",
        "--pool=prefork",
        f"--concurrency={processes}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel=INFO",
    ]
    with service(
        command, name, lambda: " ready." in log_path.read_text(errors="replace"), **env
    ) as running:
        yield running


class PeakMemory:
    """Samples the RSS of a service's processes; keeps the largest single process and sum."""

    def __init__(self, *services: Service) -> None:
        self.services = services
        self.peak: dict[str, dict[str, float]] = {
            s.name: {"largest_process_mb": 0.0, "all_processes_mb": 0.0} for s in services
        }
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psutil

        while not self._stop.is_set():
            for s in self.services:
                sizes = []
                for pid in s.pids():
                    try:
                        sizes.append(psutil.Process(pid).memory_info().rss / 2**20)
                    except psutil.NoSuchProcess:
                        continue
                peak = self.peak[s.name]
                peak["largest_process_mb"] = max(peak["largest_process_mb"], max(sizes, default=0))
                peak["all_processes_mb"] = max(peak["all_processes_mb"], sum(sizes))
            time.sleep(0.02)


# -- the API from a client's side ----------------------------------------------------------------


def _practice_token(slug: str) -> tuple[Any, str]:
    from keys.models import SCOPES, KeyEvent
    from keys.services import key_mint
    from registry.models import Practice

    practice = Practice.objects.create(slug=slug)
    return practice, key_mint(practice=practice, scopes=list(SCOPES), via=KeyEvent.Via.COMMAND)[1]


def _post(
    port: int, token: str, body: bytes, connection: http.client.HTTPConnection | None = None
) -> tuple[int, str, float]:
    """One submission: on ``connection`` if given (kept for the next), else a new one."""
    connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    connection.request(
        "POST",
        SUBMIT,
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"},
    )
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - started
    return response.status, response.getheader("Content-Location") or "", elapsed


def _get(port: int, token: str, path: str) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
    return time.perf_counter() - started


def _wait_completed(ingestion_id: str, timeout: float = 900) -> Any:
    from ingestion.models import Ingestion

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ingestion = Ingestion.objects.get(id=ingestion_id)
        if ingestion.finished:
            return ingestion
        time.sleep(0.01)
    raise RuntimeError(f"ingestion {ingestion_id} did not finish in {timeout}s")


def warm_up(port: int) -> None:
    """A few small submissions first, so no figure includes a cold process or connection."""
    import orjson

    from bench.courses import course

    _, token = _practice_token(f"warm-up-{time.monotonic_ns()}")
    for n in range(8):
        status, location, _ = _post(port, token, orjson.dumps(course(n, chart_prefix="WARM")))
        assert status == 202, status
    _wait_completed(location.rsplit("/", 1)[-1])


@contextmanager
def profiled(target: Service, name: str, enabled: bool) -> Iterator[None]:
    """With BENCH_PROFILE=1, sample ``target`` (and its children) with py-spy meanwhile."""
    mode = os.environ.get("BENCH_PROFILE", "")
    if not enabled or mode not in ("1", "gil"):
        yield
        return
    raw = RESULTS / f"{name}.raw"
    pool = target.pids()[1:] or target.pids()  # the prefork child that runs the tasks
    command = [str(BIN / "py-spy"), "record", "--pid", str(pool[0])]
    command += ["--format", "raw", "--rate", "1000", "--nonblocking", "--output", str(raw)]
    if mode == "gil":  # only samples holding the GIL: where the process spends CPU in Python
        command.append("--gil")
    sampler = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # let it attach
    try:
        yield
    finally:
        sampler.send_signal(signal.SIGINT)
        sampler.wait(timeout=60)
        summary = summarize_profile(raw)
        (RESULTS / f"{name}.txt").write_text(summary)
        print(summary, flush=True)


def summarize_profile(raw: Path, top: int = 25) -> str:
    """py-spy's collapsed stacks as inclusive and self time per function, the largest first."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = [
            frame.split(" (")[0] + " " + frame.split(" (")[-1].split(":")[0].rstrip(")")
            for frame in stack.split(";")
            if frame
        ]
        total += count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + count
    ours = {f: c for f, c in inclusive.items() if f.split(" ")[-1].startswith(PROJECT)}
    lines = [f"{raw.stem}: {total} samples (py-spy; native code counts in its caller)"]
    for title, table in (("inclusive, project code", ours), ("self", own)):
        lines.append(f"-- {title} --")
        for frame, count in sorted(table.items(), key=lambda item: -item[1])[:top]:
            lines.append(f"{100 * count / max(total, 1):5.1f}%  {frame}")
    return "\n".join(lines) + "\n"


def end_to_end(port: int, body: bytes, count: int, label: str) -> dict[str, Any]:
    """POST a batch and wait until it is completed: courses per second, wall clock."""
    practice, token = _practice_token(f"e2e-{label}")
    started = datetime.now(UTC)
    status, location, post_seconds = _post(port, token, body)
    if status != 202:
        raise RuntimeError(f"submit answered {status}")
    ingestion = _wait_completed(location.rsplit("/", 1)[-1])
    seconds = (ingestion.completed_at - started).total_seconds()
    if ingestion.accepted_count + ingestion.rejected_count != count:
        raise RuntimeError(f"{label}: {ingestion.accepted_count} accepted of {count}")
    return {
        "courses": count,
        "megabytes": round(len(body) / 1e6, 1),
        "seconds": round(seconds, 2),
        "courses_per_second": round(count / seconds),
        "submit_seconds": round(post_seconds, 2),
        "accepted": ingestion.accepted_count,
        "rejected": ingestion.rejected_count,
        "practice_id": practice.id,
    }


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": round(cuts[49] * 1000, 1),
        "p95_ms": round(cuts[94] * 1000, 1),
        "p99_ms": round(cuts[98] * 1000, 1),
        "samples": len(ordered),
    }


def submit_latency(port: int, clients: int, per_client: int) -> dict[str, float]:
    """Single-course submits; each client has its own practice key (under 120/minute)."""
    import orjson as _orjson

    from bench.courses import course

    tokens = [_practice_token(f"latency-{clients}-{i}")[1] for i in range(clients)]

    def client(index: int) -> list[float]:
        timings = []
        for n in range(per_client):
            body = _orjson.dumps(course(index * 100_000 + n, chart_prefix=f"L{clients}-{index}"))
            status, _, elapsed = _post(port, tokens[index], body)
            assert status == 202, status
            timings.append(elapsed)
        return timings

    with ThreadPoolExecutor(max_workers=clients) as pool:
        samples = [t for timings in pool.map(client, range(clients)) for t in timings]
    return _percentiles(samples)


def poll_latency(port: int, requests: int) -> dict[str, float]:
    import orjson as _orjson

    from bench.courses import course

    _, token = _practice_token("poll")
    _, location, _ = _post(port, token, _orjson.dumps(course(1, chart_prefix="POLL")))
    ingestion_id = location.rsplit("/", 1)[-1]
    _wait_completed(ingestion_id)
    path = urlsplit(location).path
    samples = [_get(port, token, path) for _ in range(requests)]
    return _percentiles(samples)


# -- the floor and the naive baseline ------------------------------------------------------------

FLOOR_TABLES = [
    ("registry_record", "practice_id = {practice}"),
    (
        "registry_child",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    (
        "registry_attendance",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    (
        "registry_recordversion",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    ("registry_matchkey", "practice_id = {practice}"),
]


def floor(body: bytes, practice_id: int) -> dict[str, float]:
    """orjson over the same bytes, plus COPY of the rows those courses store."""
    import orjson
    from django.db import connection

    # The floor is the best case: no cyclic GC re-scanning millions of new containers.
    gc.disable()
    try:
        started = time.perf_counter()
        orjson.loads(body)
        parse = time.perf_counter() - started
    finally:
        gc.enable()
    copy = 0.0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        for table, condition in FLOOR_TABLES:
            exported = bytearray()
            selection = condition.format(practice=practice_id)
            query = f"COPY (SELECT * FROM {table} WHERE {selection}) TO STDOUT"
            with raw.copy(query) as out:
                for block in out:
                    exported += block
            raw.execute(f"CREATE TEMP TABLE floor_{table} (LIKE {table} INCLUDING ALL)")
            started = time.perf_counter()
            with raw.copy(f"COPY floor_{table} FROM STDIN") as into:
                into.write(bytes(exported))
            copy += time.perf_counter() - started
            raw.execute(f"DROP TABLE floor_{table}")
    return {
        "orjson_parse_seconds": round(parse, 3),
        "copy_seconds": round(copy, 3),
        "seconds": round(parse + copy, 3),
    }


def mapping_costs(sample: int = 300) -> dict[str, Any]:
    """µs per course: our pure mapping, and full fhir.resources validation of the same."""
    from fhir.resources.R4B.bundle import Bundle

    from bench import mapping
    from bench.courses import course
    from ingestion.fhir import map_single, practice_fingerprint_key

    key = practice_fingerprint_key(b"bench", 1)
    courses = [course(i) for i in range(sample)]
    started = time.perf_counter()
    for c in courses:
        map_single(c, fingerprint_key=key)
    ours = (time.perf_counter() - started) / sample
    started = time.perf_counter()
    for c in courses[:100]:
        Bundle.model_validate(c)
    validation = (time.perf_counter() - started) / 100
    return {
        "bench_course_us": round(ours * 1e6, 1),
        "fhir_resources_validation_us": round(validation * 1e6, 1),
        "core": mapping.run(),
    }


# -- the run ---------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import psutil
    from django.db import connection

    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        postgres = cursor.fetchone()[0]
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "postgresql": postgres,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def reliability() -> dict[str, Any]:
    """docs/reliability.md: receipt memory, and latency under slow clients."""
    from bench import reliability as figures

    port = _free_port()
    with web(port) as web_service:
        receipts = figures.receipts(port, web_service, PeakMemory)
    return {"receipts": receipts, "slow_clients": figures.slow_client_latency()}


def main() -> dict[str, Any]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    print(
        f"bench: database {urlsplit(DATABASE_URL).path.lstrip('/')}, redis {REDIS_URL}", flush=True
    )
    _recreate_database()
    _setup_django()
    from bench.courses import batch_bytes

    results: dict[str, Any] = {"machine": machine()}
    print("bench: building batches", flush=True)
    batches = {n: batch_bytes(n, chart_prefix=f"E{n}") for n in (1_000, 10_000)}
    port = _free_port()
    end_to_end_results: dict[str, Any] = {}
    with web(port) as web_service:
        for processes in (1, 2):
            with worker(processes) as worker_service:
                warm_up(port)
                for count, body in batches.items():
                    label = f"{count}-w{processes}"
                    print(
                        f"bench: end to end, {count} courses, {processes} worker process(es)",
                        flush=True,
                    )
                    with (
                        PeakMemory(worker_service, web_service) as memory,
                        profiled(worker_service, f"worker-profile-{label}", label == "10000-w1"),
                    ):
                        end_to_end_results[label] = end_to_end(port, body, count, label)
                    if count == 10_000:
                        end_to_end_results[label]["peak_rss_mb"] = memory.peak
                if processes == 1:
                    print("bench: submit and poll latency", flush=True)
                    results["submit_latency"] = {
                        "clients_1": submit_latency(port, clients=1, per_client=100),
                        "clients_16": submit_latency(port, clients=16, per_client=60),
                    }
                    results["poll_latency"] = poll_latency(port, requests=100)
        print("bench: naive baseline (fhir.resources validation on), 10,000 courses", flush=True)
        with worker(1, REGISTRY_FHIR_VALIDATION="true"):
            warm_up(port)
            end_to_end_results["10000-w1-validating"] = end_to_end(
                port, batches[10_000], 10_000, "10000-w1-validating"
            )
    results["end_to_end"] = end_to_end_results
    print("bench: floor (orjson + COPY of the stored rows)", flush=True)
    results["floor"] = floor(batches[10_000], end_to_end_results["10000-w1"]["practice_id"])
    print("bench: mapping cost", flush=True)
    results["mapping"] = mapping_costs()
    ours = end_to_end_results["10000-w1"]["seconds"]
    print("bench: reliability (receipt memory, slow clients)", flush=True)
    results["reliability"] = reliability()
    results["ratios"] = {
        "end_to_end_over_floor": round(ours / results["floor"]["seconds"], 2),
        "speedup_over_naive": round(end_to_end_results["10000-w1-validating"]["seconds"] / ours, 2),
    }
    for name, figures in results.items():
        save_section(name, figures)
    print_table(results)
    return results


def section(
    name: str, measure: Callable[[], dict[str, Any]], show: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """One section of ``make bench`` on a freshly created bench database: measured, saved into
    ``latest.json`` and printed."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    _recreate_database()
    _setup_django()
    results = measure()
    save_section(name, results)
    show(results)
    return results


def reliability_main() -> dict[str, Any]:
    """``make bench BENCH=reliability``: the figures of docs/reliability.md alone."""
    return section("reliability", reliability, print_reliability)


def save_section(name: str, results: dict[str, Any]) -> None:
    """Put one section's figures into ``latest.json``, keeping the other sections'."""
    latest = RESULTS / "latest.json"
    saved = json.loads(latest.read_text()) if latest.exists() else {}
    saved[name] = results
    latest.write_text(json.dumps(saved, indent=2) + "\n")


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def print_reliability(figures: dict[str, Any]) -> None:
    print()
    print(_row("Receipt (streamed)", "MB", "seconds", "web process peak RSS MB"))
    print(_row("---", "---:", "---:", "---:"))
    for label, row in figures["receipts"].items():
        print(_row(label, row["mb"], row["seconds"], row["web_peak_rss_mb"]))
    print()
    print(_row("Latency (make run's server)", "requests", "p50 ms", "max ms", "over 1 s"))
    print(_row("---", "---:", "---:", "---:", "---:"))
    for when, probes in figures["slow_clients"].items():
        for path, row in probes.items():
            cells = (row["requests"], row["p50_ms"], row["max_ms"], row["over_1s"])
            print(_row(f"{when}: {path}", *cells))


def print_table(results: dict[str, Any]) -> None:
    if "reliability" in results:
        print_reliability(results["reliability"])
    m, e2e, f, r = results["machine"], results["end_to_end"], results["floor"], results["ratios"]
    print()
    print(
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, Python {m['python']}, "
        f"PostgreSQL {m['postgresql']}, {m['date']}"
    )
    print()
    print(_row("End to end (POST to completed)", "courses/s", "seconds", "submit s"))
    print(_row("---", "---:", "---:", "---:"))
    for label, figures in e2e.items():
        print(
            _row(
                label,
                figures["courses_per_second"],
                figures["seconds"],
                figures["submit_seconds"],
            )
        )
    print()
    print(
        f"Floor for 10,000 courses: {f['seconds']} s (orjson {f['orjson_parse_seconds']} s + "
        f"COPY {f['copy_seconds']} s); end to end is {r['end_to_end_over_floor']}x the floor."
    )
    print(
        f"Naive baseline (fhir.resources validation on): we are {r['speedup_over_naive']}x faster."
    )
    for label, figures in e2e.items():
        if "peak_rss_mb" not in figures:
            continue
        peak = figures["peak_rss_mb"]
        worker_peak = peak[f"worker{label[-1]}"]
        print(
            f"Peak RSS during {label}: worker {worker_peak['largest_process_mb']:.0f} MB "
            f"(all worker processes {worker_peak['all_processes_mb']:.0f} MB), "
            f"web {peak['web']['largest_process_mb']:.0f} MB "
            f"(all web processes {peak['web']['all_processes_mb']:.0f} MB)"
        )
    print()
    print(_row("Latency", "p50 ms", "p95 ms", "p99 ms", "samples"))
    print(_row("---", "---:", "---:", "---:", "---:"))
    for label, figures in [
        ("submit, 1 client", results["submit_latency"]["clients_1"]),
        ("submit, 16 clients", results["submit_latency"]["clients_16"]),
        ("poll", results["poll_latency"]),
    ]:
        cells = (figures[k] for k in ("p50_ms", "p95_ms", "p99_ms", "samples"))
        print(_row(label, *cells))
    mapping = results["mapping"]
    core = mapping["core"]["realistic_course"]
    print()
    print(
        f"Mapping (pure core): {core['microseconds']} µs per {core['resources']}-resource course, "
        f"{mapping['bench_course_us']} µs per 6 KB bench course; full fhir.resources validation "
        f"of the same: {mapping['fhir_resources_validation_us']} µs."
    )
    print(f"Results: {RESULTS / 'latest.json'}")
