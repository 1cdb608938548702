"""``make bench [BENCH=section ...]``: every section, or the ones named.

* ``pipeline``: end to end through gunicorn and Celery, the floor, latency (bench.run).
* ``flood``: a same-fingerprint flood against as many unique courses (bench.flood).
* ``million``: the reviewer's admin and the statistics with a million records on file
  (bench.million, bench.statistics).
* ``reliability``: receipt memory and latency under slow clients (bench.reliability), also
  part of ``pipeline``.
* ``realtime``: single-course submissions from 16 clients against one batch: CPU per course
  of the web, the worker and PostgreSQL, SQL statements, submit latency (bench.realtime).
* ``backlog``: extra task runs while 2,000 queued singles drain (bench.realtime).
* ``bodymemory``: the web's peak memory for a 60 MB and a 600 MB body (bench.realtime).
* ``bodies``: the worst bodies by shape at each door, and /healthz meanwhile (bench.bodies).
"""

import subprocess
import sys

from bench import bodies, flood, million, realtime, run

SECTIONS = {
    "pipeline": run.main,
    "realtime": realtime.realtime_main,
    "backlog": realtime.backlog_main,
    "bodymemory": realtime.bodymemory_main,
    "flood": flood.main,
    "million": million.main,
    "reliability": run.reliability_main,
    "bodies": bodies.main,
}

# pipeline includes reliability
names = sys.argv[1:] or ["pipeline", "realtime", "backlog", "bodymemory", "flood", "million"]
unknown = [name for name in names if name not in SECTIONS]
if unknown:
    sys.exit(f"bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
if len(names) == 1:
    SECTIONS[names[0]]()
else:
    # Each section in a process of its own: each sets Django up on its own database.
    for name in names:
        subprocess.run([sys.executable, "-m", "bench", name], check=True)
