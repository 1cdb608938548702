"""``make bench BENCH=backlog``: what the recovery adds while queued singles drain.

2,000 single-course submissions (64 practices) queue up with no worker running
while the beat runs its recovery every 5 s (``REGISTRY_REQUEUE_AFTER_SECONDS=10``); then a
worker starts and drains them. Each ingestion the recovery publishes again is a task run
more than needed: the figure is those over the ingestions. (Before the worker combined
singles, every ingestion had one message and one run; now a practice's waiting singles
share one message, so runs are fewer than ingestions and only the republished count.)
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.client import post, practice_token
from bench.counting import read_counts
from bench.harness import REDIS_URL, free_port
from bench.metering import (
    COUNTS,
    PROCESS_TASK,
    Meter,
    beat,
    costs,
    counted_web,
    counted_worker,
    single_bodies,
    wait_finished,
)
from bench.report import row, section

CLIENTS = 16
BACKLOG = 2_000
BACKLOG_KEYS = 64  # at most 120 submissions a minute per key
RECOVERY = {
    "REGISTRY_RECOVERY_INTERVAL_SECONDS": "5",
    "REGISTRY_REQUEUE_AFTER_SECONDS": "10",
    "REGISTRY_RECOVERY_GRACE_SECONDS": "10",
}


def _queue_length() -> int:
    import redis

    return int(redis.Redis.from_url(REDIS_URL).llen("celery"))


def submit_all(port: int, tokens: list[str], bodies: list[list[bytes]]) -> list[float]:
    """Each client posts its bodies one after another, with its key; all clients at once."""

    def client(index: int) -> list[float]:
        timings = []
        for n, body in enumerate(bodies[index]):
            token = tokens[(index + n * len(bodies)) % len(tokens)]
            status, _, elapsed = post(port, token, body)
            if status != 202:
                raise RuntimeError(f"submit answered {status}")
            timings.append(elapsed)
        return timings

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return [t for timings in pool.map(client, range(len(bodies))) for t in timings]


def backlog(**worker_env: str) -> dict[str, Any]:
    port = free_port()
    practices = [practice_token(f"backlog-{i}") for i in range(BACKLOG_KEYS)]
    per_client = BACKLOG // CLIENTS
    bodies = single_bodies("BL", CLIENTS, per_client)
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
    print(row("Backlog of 2,000 singles", "value"))
    print(row("---", "---:"))
    for name, value in results.items():
        print(row(name, value))


def main() -> dict[str, Any]:
    return section("backlog", backlog, print_backlog)
