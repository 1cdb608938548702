"""``make bench [BENCH=section ...]``: every section, or the ones named; one file each.

* ``pipeline``: end to end through gunicorn and Celery, the floor, latency (bench.pipeline).
* ``flood``: a same-fingerprint flood against as many unique courses (bench.flood).
* ``million``: the reviewer's admin and the statistics with a million records on file
  (bench.million, bench.statistics).
* ``reliability``: receipt memory and latency under slow clients (bench.reliability), also
  part of ``pipeline``.
* ``realtime``: single-course submissions from 16 clients against one batch: CPU per course
  of the web, the worker and PostgreSQL, SQL statements, submit latency (bench.realtime).
* ``backlog``: extra task runs while 2,000 queued singles drain (bench.backlog).
* ``bodymemory``: the web's peak memory for a 60 MB and a 600 MB body (bench.bodymemory).
* ``bodies``: the worst bodies by shape at each door, and /healthz meanwhile (bench.bodies).
* ``office``: the registry console, a Members page and a statistics page with 1,000
  practices and 10 million records on file (bench.office; ``BENCH_OFFICE_RECORDS``).
* ``requests``: the web's CPU per request by kind (/healthz, metadata, a keyed 404, a single's
  POST, the poll of a completed single): the floor under the open loop's CPU per single
  (bench.requestcost).
* ``openloop``: singles from 50 practices at a fixed offered rate (Poisson, open loop), polled
  as the docs say, with a 20,000-course backfill in the middle: completion before, during and
  after, the backfill's throughput against alone, CPU per single against a batch course
  (bench.openloop).

What they share: bench.harness (the bench's database, the started processes), bench.client
(the API from a client's side), bench.metering (CPU and statement counts), bench.report.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

from bench import (
    backlog,
    bodies,
    bodymemory,
    flood,
    million,
    office,
    openloop,
    pipeline,
    realtime,
    reliability,
    requestcost,
)

SECTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "pipeline": pipeline.main,
    "realtime": realtime.main,
    "backlog": backlog.main,
    "bodymemory": bodymemory.main,
    "flood": flood.main,
    "million": million.main,
    "reliability": reliability.main,
    "bodies": bodies.main,
    "office": office.main,
    "openloop": openloop.main,
    "requests": requestcost.main,
}
# pipeline includes reliability
EVERY = [
    "pipeline",
    "realtime",
    "backlog",
    "bodymemory",
    "flood",
    "million",
    "requests",
    "openloop",
]


def main(names: list[str]) -> None:
    if {"-h", "--help"} & set(names):
        print(__doc__)
        return
    names = names or EVERY
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        sys.exit(
            f"bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}"
        )
    if len(names) == 1:
        SECTIONS[names[0]]()
        return
    # Each section in a process of its own: each sets Django up on its own database.
    for name in names:
        subprocess.run([sys.executable, "-m", "bench", name], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
