"""``make bench BENCH=openloop``: real traffic, open loop, with a backfill in the middle.

Hospitals send births as they happen, each on its own clock: an arrival does not wait for
the answers to earlier ones (an open loop). The other sections send from a fixed number of
clients, each after the last answer (a closed loop), which slows the offered load down
exactly when the server is slow and hides the queueing real traffic meets.

In production shape (gunicorn as the Procfile starts it, one Celery worker as the Procfile
starts it: ``celery -A config worker``, its default concurrency, one pool process per core;
PostgreSQL, Redis):

1. **The backfill alone**: one practice sends ``BENCH_OPENLOOP_BACKFILL`` courses (20,000) as
   Bundles of at most 10,000 (under the 64 MiB body limit), one after the other's 202, and
   polls them until both are completed: courses per second from the first POST to the last
   ``completedAt``, and the web's and the worker's CPU per course. Once the singles of 2-3
   are over, a third practice sends it alone again; the backfill during the singles is
   compared with the mean of the two (the shared machine's speed moves between minutes).
2. **Singles, open loop**: ``BENCH_OPENLOOP_PRACTICES`` practices (50), each with its own key,
   send single-course births at ``BENCH_OPENLOOP_RATE`` a second in all (20), Poisson arrivals
   (exponential gaps), each practice chosen at random per arrival. Each single is polled as
   the docs say (docs/integrators.md, "Polling"; ``registry_client``): a GET of the status
   URL after the 202's ``Retry-After``, then every ``Retry-After`` seconds until ``completed``
   or ``failed`` (a server whose 202 has none is polled at once, as before); a 429
   is waited out for its ``Retry-After``. One event loop sends them all, on kept
   connections (bench.asynchttp: httpx's client cost as much CPU as the web's share).
3. ``BENCH_OPENLOOP_BEFORE`` seconds (40) in, another practice sends the same backfill as in
   1; the singles go on; ``BENCH_OPENLOOP_AFTER`` seconds (40) after the backfill's last
   ``completedAt`` the arrivals stop, and the singles still open are polled to the end.

A single belongs to the phase in which it was POSTed: before the backfill's first POST,
during (until its last ``completedAt``), after. For each: completion (POST to the receipt's
``completedAt``, the server's clock, same machine) p50 and p99; the same as the client saw
it (POST to the poll that read ``completed``, which waits on ``Retry-After``); submit (POST
to 202) p50 and p99; polls and 429s per single. The backfill's throughput during the singles
against alone. CPU (``/proc``, user + system, of every process of the web and of the worker,
and of the bench database's PostgreSQL backends alive at the readings) per single, polls
included, over the steady part of "before" (from ``WARMUP_SECONDS`` after the first arrival
to the backfill), against CPU per course of the backfill alone. The load average
(``/proc/loadavg``) at the start and at the end: the machine is shared.

``BENCH_OPENLOOP_TWO=1`` adds a scenario: two practices send the same backfill at the same
moment, no singles: each one's time from its first POST to its last ``completedAt``, and the
later over the earlier. ``BENCH_PROFILE=1`` (or ``gil``) samples a web process and a worker
pool process with py-spy during the singles (``{web,worker}-profile-openloop.txt``; the
sampling costs CPU, so take the figures from a run without it).
"""

from __future__ import annotations

import asyncio
import http.client
import math
import os
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.asynchttp import Client
from bench.client import SUBMIT, practice_token, warm_up
from bench.harness import BIN, RESULTS, Service, free_port, service, web
from bench.profiling import profiled
from bench.report import row, section

RATE = float(os.environ.get("BENCH_OPENLOOP_RATE", "20"))
PRACTICES = int(os.environ.get("BENCH_OPENLOOP_PRACTICES", "50"))
BACKFILL = int(os.environ.get("BENCH_OPENLOOP_BACKFILL", "20000"))
BEFORE_SECONDS = float(os.environ.get("BENCH_OPENLOOP_BEFORE", "40"))
AFTER_SECONDS = float(os.environ.get("BENCH_OPENLOOP_AFTER", "40"))
TWO = os.environ.get("BENCH_OPENLOOP_TWO", "") == "1"
SEED = int(os.environ.get("BENCH_OPENLOOP_SEED", "34"))
BUNDLE_COURSES = 10_000  # a 10,000-course Bundle is just under the 64 MiB body limit
WARMUP_SECONDS = 5.0  # the first seconds of singles are left out of the CPU per single
PHASES = ("before", "during", "after")
FINAL = ("completed", "failed")
DEFAULT_WAIT = 2.0  # registry_client's wait when Retry-After is missing


# -- the arithmetic (no processes: tests/test_bench.py checks it) ----------------------------


@dataclass(frozen=True, slots=True)
class Single:
    """One single-course submission as its client saw it; times are wall-clock seconds."""

    posted: float  # when its POST was sent
    submit: float  # POST to 202, seconds
    completed: float  # the receipt's completedAt
    seen: float  # when the poll read completed (or failed)
    polls: int
    limited: int = 0  # 429s waited out, POST and polls
    retried: int = 0  # requests sent again on a fresh connection (bench.asynchttp)
    failed: bool = False


def quantile(values: list[float], q: float) -> float | None:
    """The q-quantile, linear between the closest ranks (``statistics.quantiles``' inclusive
    method, as bench.client.percentiles has it); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def phase_of(posted: float, backfill: tuple[float, float]) -> str:
    """Before the backfill's first POST, during it (until its last completedAt), or after."""
    started, finished = backfill
    if posted < started:
        return "before"
    return "during" if posted < finished else "after"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def phase_figures(singles: list[Single], backfill: tuple[float, float]) -> dict[str, Any]:
    """Per phase: how many, completion and submit p50/p99 (ms), polls and 429s per single."""
    figures: dict[str, Any] = {}
    for phase in PHASES:
        mine = [s for s in singles if phase_of(s.posted, backfill) == phase]
        completion = [s.completed - s.posted for s in mine if not s.failed]
        seen = [s.seen - s.posted for s in mine]
        submit = [s.submit for s in mine]
        figures[phase] = {
            "singles": len(mine),
            "failed": sum(s.failed for s in mine),
            "completion_p50_ms": _ms(quantile(completion, 0.5)),
            "completion_p99_ms": _ms(quantile(completion, 0.99)),
            "seen_p50_ms": _ms(quantile(seen, 0.5)),
            "seen_p99_ms": _ms(quantile(seen, 0.99)),
            "submit_p50_ms": _ms(quantile(submit, 0.5)),
            "submit_p99_ms": _ms(quantile(submit, 0.99)),
            "polls_per_single": round(sum(s.polls for s in mine) / len(mine), 2) if mine else None,
            "limited_per_single": round(sum(s.limited for s in mine) / len(mine), 3)
            if mine
            else None,
            "retried": sum(s.retried for s in mine),
        }
    return figures


def throughput(courses: int, started: float, finished: float) -> dict[str, Any]:
    seconds = finished - started
    return {
        "courses": courses,
        "seconds": round(seconds, 2),
        "courses_per_second": round(courses / seconds, 1),
    }


def cpu_per(cpu: dict[str, float], count: int) -> dict[str, float]:
    """CPU seconds by part (web, worker, postgres) as milliseconds per unit, with the total
    of the web and the worker (``web_worker``) and of all three (``total``)."""
    per = {part: seconds * 1000 / count for part, seconds in cpu.items()}
    per["web_worker"] = per["web"] + per["worker"]
    per["total"] = per["web_worker"] + per["postgres"]
    return {part: round(ms, 3) for part, ms in per.items()}


def over(single: dict[str, float], course: dict[str, float]) -> dict[str, float | None]:
    """A single's CPU as a multiple of a batch course's, part by part."""
    return {
        part: round(single[part] / course[part], 1) if course.get(part) else None for part in single
    }


# -- measuring ---------------------------------------------------------------------------------


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


@dataclass
class Reading:
    cpu: dict[str, float]  # web, worker, postgres: CPU seconds so far
    bench: float  # this process (the clients)


class Meter:
    """CPU of the web's and the worker's processes (every process of each, as /proc has them)
    and of the bench database's PostgreSQL backends alive at the reading (a backend that
    ends between two readings is lost: the web's pool and the worker keep theirs)."""

    def __init__(self, web_service: Service, worker_service: Service) -> None:
        self.services = {"web": web_service, "worker": worker_service}

    def read(self) -> tuple[Reading, dict[int, float]]:
        from bench.counting import backend_cpu_seconds

        cpu = {name: running.cpu_seconds() for name, running in self.services.items()}
        backends = {pid: backend_cpu_seconds(pid) for pid in self._backends()}
        live = {pid: seconds for pid, seconds in backends.items() if seconds is not None}
        return Reading(cpu, sum(os.times()[:2])), live

    @staticmethod
    def _backends() -> list[int]:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
            return [int(found[0]) for found in cursor.fetchall()]


@dataclass
class Span:
    """CPU between two meter readings."""

    meter: Meter
    start: tuple[Reading, dict[int, float]] = field(init=False)

    def __post_init__(self) -> None:
        self.start = self.meter.read()

    def seconds(self) -> dict[str, float]:
        (before, backends_before), (after, backends_after) = self.start, self.meter.read()
        cpu = {name: after.cpu[name] - before.cpu[name] for name in after.cpu}
        cpu["postgres"] = sum(
            seconds - backends_before.get(pid, 0.0) for pid, seconds in backends_after.items()
        )
        cpu["bench_clients"] = after.bench - before.bench
        return cpu


# -- the processes -------------------------------------------------------------------------------


@contextmanager
def procfile_worker() -> Iterator[Service]:
    """The Procfile's worker as it stands: ``celery -A config worker --loglevel=INFO``."""
    log = RESULTS / "worker-openloop.log"
    command = [str(BIN / "celery"), "-A", "config", "worker", "--loglevel=INFO"]
    ready = lambda: " ready." in log.read_text(errors="replace")  # noqa: E731
    with service(command, "worker-openloop", ready) as running:
        yield running


# -- the clients -------------------------------------------------------------------------------


def retry_after(headers: Any) -> float:
    """``Retry-After`` in seconds, as registry_client reads it."""
    try:
        return max(float(headers.get("retry-after", DEFAULT_WAIT)), 0.0)
    except ValueError:
        return DEFAULT_WAIT


def completed_at(receipt: dict[str, Any]) -> float:
    return datetime.fromisoformat(receipt["completedAt"]).timestamp()


class Arrivals:
    """Single-course births from many practices at a fixed offered rate, Poisson arrivals,
    each polled to the end on its own: an asyncio loop in a thread of its own (the main
    thread runs the backfill and reads the meters meanwhile)."""

    def __init__(self, port: int, tokens: list[str], rate: float, seed: int) -> None:
        self.port = port
        self.tokens = tokens
        self.rate = rate
        self.random = random.Random(seed)
        self.singles: list[Single] = []
        self.errors: list[str] = []
        self.started = 0.0
        self.stopped = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> None:
        self._thread.start()
        while not self.started:
            time.sleep(0.01)

    def stop(self) -> None:
        """No more arrivals; returns once every single sent is finished."""
        self._stop.set()
        self._thread.join()
        if self.errors:
            raise RuntimeError(f"{len(self.errors)} singles went wrong: {self.errors[:3]}")

    def arrivals_between(self, start: float, end: float) -> int:
        return sum(start <= s.posted < end for s in self.singles)

    async def _run(self) -> None:
        import orjson

        from bench.courses import course

        http = Client("127.0.0.1", self.port)
        tasks: set[asyncio.Task[None]] = set()
        loop = asyncio.get_running_loop()
        self.started = time.time()
        due = time.monotonic()
        number = 0
        while not self._stop.is_set():
            due += self.random.expovariate(self.rate)
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if self._stop.is_set():
                break
            practice = self.random.randrange(len(self.tokens))
            body = orjson.dumps(course(1_000_000 + number, chart_prefix=f"OL{practice}-"))
            number += 1
            task = loop.create_task(self._single(http, self.tokens[practice], body))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        self.stopped = time.time()
        if tasks:
            await asyncio.gather(*tasks)
        await http.close()

    async def _single(self, http: Client, token: str, body: bytes) -> None:
        """POST, then the documented poll loop: GET after the 202's Retry-After, then every
        Retry-After seconds."""
        import orjson

        headers = {"Authorization": f"Bearer {token}"}
        submit_headers = {**headers, "Content-Type": "application/fhir+json"}
        limited = resent = 0
        posted = time.time()  # the first attempt's: a 429 waited out is part of the wait
        try:
            while True:
                started = time.perf_counter()
                answer = await http.request("POST", SUBMIT, submit_headers, body)
                submit = time.perf_counter() - started
                resent += answer.resent
                if answer.status != 429:
                    break
                limited += 1
                await asyncio.sleep(retry_after(answer.headers))
            if answer.status != 202:
                self.errors.append(f"POST answered {answer.status}")
                return
            path = urlsplit(answer.headers["content-location"]).path
            if "retry-after" in answer.headers:  # the first poll after the 202's Retry-After
                await asyncio.sleep(retry_after(answer.headers))
            polls = 0
            while True:
                answer = await http.request("GET", path, headers)
                polls += 1
                resent += answer.resent
                if answer.status == 429:
                    limited += 1
                elif answer.status != 200:
                    self.errors.append(f"poll answered {answer.status}")
                    return
                else:
                    receipt = orjson.loads(answer.body)
                    if receipt["status"] in FINAL:
                        break
                await asyncio.sleep(retry_after(answer.headers))
            self.singles.append(
                Single(
                    posted=posted,
                    submit=submit,
                    completed=completed_at(receipt),
                    seen=time.time(),
                    polls=polls,
                    limited=limited,
                    retried=resent,
                    failed=receipt["status"] == "failed",
                )
            )
        except Exception as error:  # reported by stop()
            self.errors.append(f"{type(error).__name__}: {error}")


def backfill_bodies(courses: int) -> list[bytes]:
    """``courses`` courses as Bundles of at most 10,000, each part going on from the last."""
    from bench.courses import batch_bytes

    return [
        batch_bytes(min(BUNDLE_COURSES, courses - first), chart_prefix="BF", first=first)
        for first in range(0, courses, BUNDLE_COURSES)
    ]


def send_backfill(port: int, token: str, bodies: list[bytes]) -> dict[str, Any]:
    """Each Bundle POSTed after the previous one's 202, then all polled as the docs say until
    finished: from the first POST to the last completedAt."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    started = time.time()
    paths = []
    for body in bodies:
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            connection.request("POST", SUBMIT, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            connection.close()
            if response.status != 429:
                break
            time.sleep(retry_after(response.headers))
        if response.status != 202:
            raise RuntimeError(f"backfill POST answered {response.status}")
        paths.append(urlsplit(response.getheader("Content-Location") or "").path)
    receipts = poll_until_finished(port, token, paths)
    failed = [r for r in receipts if r["status"] != "completed"]
    if failed:
        raise RuntimeError(f"{len(failed)} backfill ingestions failed")
    return {
        "started": started,
        "finished": max(completed_at(r) for r in receipts),
        "accepted": sum(r["accepted"] for r in receipts),
        "rejected": sum(r["rejected"] for r in receipts),
    }


def poll_until_finished(port: int, token: str, paths: list[str]) -> list[dict[str, Any]]:
    """registry_client's loop: poll each unfinished one, wait the shortest Retry-After."""
    import orjson

    finished: dict[str, dict[str, Any]] = {}
    while len(finished) < len(paths):
        waits = []
        for path in paths:
            if path in finished:
                continue
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            # The finished receipt of a 10,000-course Bundle is about a megabyte: read whole.
            body = response.read()
            connection.close()
            if response.status == 200:
                receipt = orjson.loads(body)
                if receipt["status"] in FINAL:
                    finished[path] = receipt
                    continue
            elif response.status != 429:
                raise RuntimeError(f"poll answered {response.status}")
            waits.append(retry_after(response.headers))
        if waits:
            time.sleep(min(waits))
    return [finished[path] for path in paths]


# -- the run ---------------------------------------------------------------------------------------


def two_at_once(port: int, bodies: list[bytes]) -> dict[str, Any]:
    """Two practices send the same backfill at the same moment: their finish times."""
    tokens = [practice_token(f"two-{name}")[1] for name in ("a", "b")]
    print(f"bench: openloop, two practices send {BACKFILL} courses each at once", flush=True)
    barrier = threading.Barrier(2)

    def send(token: str) -> dict[str, Any]:
        barrier.wait()
        return send_backfill(port, token, bodies)

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(send, tokens))
    started = min(run["started"] for run in runs)
    seconds = sorted(run["finished"] - started for run in runs)
    return {
        "finish_seconds": [round(s, 2) for s in seconds],
        "later_over_earlier": round(seconds[1] / seconds[0], 2),
    }


def openloop() -> dict[str, Any]:
    from django.conf import settings

    load_start = load_average()
    port = free_port()
    print(f"bench: openloop, building the {BACKFILL}-course backfill", flush=True)
    bodies = backfill_bodies(BACKFILL)
    over_limit = [len(b) for b in bodies if len(b) > settings.REGISTRY_MAX_BODY_BYTES]
    if over_limit:
        raise RuntimeError(f"a backfill Bundle of {over_limit[0]} bytes is over the body limit")
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_start": load_start,
        "settings": {
            "rate_per_second": RATE,
            "practices": PRACTICES,
            "backfill_courses": BACKFILL,
            "backfill_bundles": len(bodies),
            "before_seconds": BEFORE_SECONDS,
            "after_seconds": AFTER_SECONDS,
            "web_processes": settings.WEB_CONCURRENCY,
            "worker_processes": os.cpu_count(),
        },
    }
    with (
        procfile_worker() as worker_service,
        web(port, workers=str(settings.WEB_CONCURRENCY)) as web_service,
    ):
        warm_up(port)
        meter = Meter(web_service, worker_service)

        print(f"bench: openloop, the backfill alone ({BACKFILL} courses)", flush=True)
        _, alone_token = practice_token("backfill-alone")
        span = Span(meter)
        alone = send_backfill(port, alone_token, bodies)
        alone_cpu = span.seconds()
        results["backfill_alone"] = throughput(BACKFILL, alone["started"], alone["finished"])
        results["cpu_ms_per_batch_course"] = cpu_per(_parts(alone_cpu), BACKFILL)

        tokens = [practice_token(f"openloop-{i}")[1] for i in range(PRACTICES)]
        _, backfill_token = practice_token("backfill")
        print(
            f"bench: openloop, singles at {RATE:g}/s from {PRACTICES} practices; the backfill "
            f"after {BEFORE_SECONDS:g} s",
            flush=True,
        )
        arrivals = Arrivals(port, tokens, RATE, SEED)
        with (
            profiled(web_service, "web-profile-openloop", enabled=True),
            profiled(worker_service, "worker-profile-openloop", enabled=True),
        ):
            arrivals.start()
            time.sleep(WARMUP_SECONDS)
            steady = Span(meter)
            steady_started = time.time()
            time.sleep(max(BEFORE_SECONDS - WARMUP_SECONDS, 1.0))
            steady_cpu = steady.seconds()
            during = send_backfill(port, backfill_token, bodies)
            print(f"bench: openloop, backfill done; {AFTER_SECONDS:g} s more singles", flush=True)
            time.sleep(max(AFTER_SECONDS - (time.time() - during["finished"]), 0.0))
            arrivals.stop()
        steady_singles = arrivals.arrivals_between(steady_started, during["started"])
        if not steady_singles:
            raise RuntimeError(
                "no single in the steady part of before: raise BENCH_OPENLOOP_BEFORE or _RATE"
            )
        print("bench: openloop, the backfill alone again, the singles over", flush=True)
        _, again_token = practice_token("backfill-alone-again")
        again = send_backfill(port, again_token, bodies)
        results["backfill_alone_again"] = throughput(BACKFILL, again["started"], again["finished"])
        if TWO:
            results["two_at_once"] = two_at_once(port, bodies)
    window = (during["started"], during["finished"])
    results["singles"] = phase_figures(arrivals.singles, window)
    results["offered_rate_per_second"] = round(
        len(arrivals.singles) / (arrivals.stopped - arrivals.started), 2
    )
    results["backfill_during"] = throughput(BACKFILL, *window)
    results["backfill_during_over_alone"] = during_over_alone(
        results["backfill_during"], results["backfill_alone"], results["backfill_alone_again"]
    )
    single = cpu_per(_parts(steady_cpu), steady_singles)
    results["cpu_ms_per_single"] = {**single, "singles": steady_singles}
    results["cpu_single_over_batch_course"] = over(single, results["cpu_ms_per_batch_course"])
    results["bench_clients_ms_per_single"] = round(
        steady_cpu["bench_clients"] * 1000 / steady_singles, 3
    )
    results["load_average_end"] = load_average()
    return results


def during_over_alone(during: dict[str, Any], *alone: dict[str, Any]) -> float:
    """The backfill's throughput during the singles over its mean alone: alone is measured
    before the singles and again after them, since the shared machine's own speed moves
    between minutes (one practice's backfill alone took 8.5 to 13.3 s in fifteen runs)."""
    mean = sum(a["courses_per_second"] for a in alone) / len(alone)
    return round(during["courses_per_second"] / mean, 3)


def _parts(cpu: dict[str, float]) -> dict[str, float]:
    return {part: cpu[part] for part in ("web", "worker", "postgres")}


def print_openloop(results: dict[str, Any]) -> None:
    s = results["settings"]
    print()
    print(
        f"Open loop ({results['date']}; load average {results['load_average_start']} at the "
        f"start, {results['load_average_end']} at the end): singles at {s['rate_per_second']:g}/s "
        f"offered ({results['offered_rate_per_second']}/s sent) from {s['practices']} practices, "
        f"a {s['backfill_courses']:,}-course backfill ({s['backfill_bundles']} Bundles) in the "
        f"middle; web {s['web_processes']} processes, worker {s['worker_processes']}"
    )
    print()
    phases = results["singles"]
    print(row("Other practices' singles", "before the backfill", "while it is applied", "after"))
    print(row("---", "---:", "---:", "---:"))
    for label, key in (
        ("completion p50 ms (POST to `completedAt`)", "completion_p50_ms"),
        ("completion p99 ms", "completion_p99_ms"),
        ("seen by the poll p50 ms", "seen_p50_ms"),
        ("seen by the poll p99 ms", "seen_p99_ms"),
        ("submit p50 ms", "submit_p50_ms"),
        ("submit p99 ms", "submit_p99_ms"),
        ("polls per single", "polls_per_single"),
        ("429s per single", "limited_per_single"),
        ("requests sent again (connection closed)", "retried"),
        ("singles (failed)", "singles"),
    ):
        cells = [phases[p][key] for p in PHASES]
        if key == "singles":
            cells = [f"{phases[p]['singles']} ({phases[p]['failed']})" for p in PHASES]
        print(row(label, *cells))
    alone, during = results["backfill_alone"], results["backfill_during"]
    again = results["backfill_alone_again"]
    print()
    print(
        f"Backfill: alone {alone['courses_per_second']} courses/s ({alone['seconds']} s) before "
        f"the singles and {again['courses_per_second']} ({again['seconds']} s) after them; "
        f"during the singles {during['courses_per_second']} courses/s ({during['seconds']} s): "
        f"{results['backfill_during_over_alone']} of alone (their mean)"
    )
    single, course = results["cpu_ms_per_single"], results["cpu_ms_per_batch_course"]
    ratio = results["cpu_single_over_batch_course"]
    print()
    print(row("CPU ms", "web", "worker", "web + worker", "PostgreSQL", "all three"))
    print(row("---", "---:", "---:", "---:", "---:", "---:"))
    parts = ("web", "worker", "web_worker", "postgres", "total")
    print(row(f"per single, polls included ({single['singles']})", *[single[p] for p in parts]))
    print(row("per batch course (backfill alone)", *[course[p] for p in parts]))
    print(row("single over batch course", *[ratio[p] for p in parts]))
    print(f"The bench's clients: {results['bench_clients_ms_per_single']} ms CPU per single")
    if "two_at_once" in results:
        two = results["two_at_once"]
        print(
            f"Two backfills at once: finished after {two['finish_seconds'][0]} s and "
            f"{two['finish_seconds'][1]} s ({two['later_over_earlier']}x)"
        )


def main() -> dict[str, Any]:
    return section("openloop", openloop, print_openloop)
