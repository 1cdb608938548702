"""``make bench [BENCH=section ...]``: every section, or the ones named.

* ``pipeline``: end to end through gunicorn and Celery, the floor, latency (bench.run).
* ``flood``: a same-fingerprint flood against as many unique courses (bench.flood).
* ``million``: the reviewer's admin and the statistics with a million records on file
  (bench.million, bench.statistics).
* ``reliability``: receipt memory and latency under slow clients (bench.reliability), also
  part of ``pipeline``.
"""

import subprocess
import sys

from bench import flood, million, run

SECTIONS = {
    "pipeline": run.main,
    "flood": flood.main,
    "million": million.main,
    "reliability": run.reliability_main,
}

names = sys.argv[1:] or ["pipeline", "flood", "million"]  # pipeline includes reliability
unknown = [name for name in names if name not in SECTIONS]
if unknown:
    sys.exit(f"bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
if len(names) == 1:
    SECTIONS[names[0]]()
else:
    # Each section in a process of its own: each sets Django up on its own database.
    for name in names:
        subprocess.run([sys.executable, "-m", "bench", name], check=True)
