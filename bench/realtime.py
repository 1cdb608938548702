"""``make bench BENCH=realtime``: what real-time traffic costs.

In one run against the same web and worker processes (gunicorn's ASGI worker, two
processes; one Celery worker process):

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

CPU, statements and task runs are measured as :mod:`bench.metering` says.

With ``BENCH_PROFILE=1``, py-spy samples a web process and the worker's pool process during
the singles (``bench/results/{web,worker}-profile-singles.txt``; the sampling costs CPU, so
take the figures from a run without it).
"""

from __future__ import annotations

import http.client
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from bench.client import percentiles, post, practice_token, warm_up
from bench.harness import free_port
from bench.metering import Meter, costs, counted_web, counted_worker, single_bodies, wait_finished
from bench.profiling import profiled
from bench.report import row, section

BATCH_COURSES = 2_000
CLIENTS = 16
PER_CLIENT = 30
ONE_CLIENT = 60
GATHER_SECONDS = 1.0  # REGISTRY_SINGLES_GATHER_SECONDS's default, as the first web runs


def batch_run(port: int, meter: Meter) -> dict[str, Any]:
    from bench.courses import batch_bytes

    practice, token = practice_token("rt-batch")
    body = batch_bytes(BATCH_COURSES, chart_prefix="RTB")
    print(f"bench: realtime, one batch of {BATCH_COURSES} courses", flush=True)
    before = meter.read()
    started = datetime.now(UTC)
    status, _, _ = post(port, token, body)
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
    practices = [practice_token(f"{prefix}-{i}") for i in range(CLIENTS)]
    bodies = single_bodies(f"{prefix}-", CLIENTS, PER_CLIENT)
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
    figures["submit"] = percentiles(timings)
    return figures


def submit_all_per_practice(port: int, tokens: list[str], bodies: list[list[bytes]]) -> list[float]:
    """Client i posts its bodies with key i (one practice per client), on one connection it
    keeps, as nginx keeps its connections to the web (deploy/nginx/registry.conf)."""

    def client(index: int) -> list[float]:
        timings = []
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        for body in bodies[index]:
            status, _, elapsed = post(port, tokens[index], body, connection)
            if status != 202:
                raise RuntimeError(f"submit answered {status}")
            timings.append(elapsed)
        connection.close()
        return timings

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return [t for timings in pool.map(client, range(len(bodies))) for t in timings]


def one_client_run(port: int) -> dict[str, Any]:
    practice, token = practice_token("rt-one")
    bodies = single_bodies("RT1-", 1, ONE_CLIENT)
    print(f"bench: realtime, {ONE_CLIENT} singles from one client", flush=True)
    timings = submit_all_per_practice(port, [token], bodies)
    wait_finished([practice.id])
    return percentiles(timings)


def realtime() -> dict[str, Any]:
    port = free_port()
    load_before = os.getloadavg()
    with counted_worker() as worker_service:
        with counted_web(port) as web_service:
            warm_up(port)
            meter = Meter(web_service, worker_service)
            batch = batch_run(port, meter)
            singles = singles_run(port, meter)
            one = one_client_run(port)
        port = free_port()
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
    print(row(*header, "statements (web, worker)", "tasks"))
    print(row("---", *["---:"] * 7))
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
            row(
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


def main() -> dict[str, Any]:
    return section("realtime", realtime, print_realtime)
