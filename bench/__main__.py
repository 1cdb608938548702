"""``make bench [BENCH=section ...]``: every section, or the ones named.

* ``pipeline``: end to end through gunicorn and Celery, the floor, latency (bench.run).
* ``flood``: a same-fingerprint flood against as many unique courses (bench.flood).
* ``million``: the reviewer's admin with a million records on file (bench.million).
"""

import sys

from bench import flood, million, run

SECTIONS = {"pipeline": run.main, "flood": flood.main, "million": million.main}

names = sys.argv[1:] or list(SECTIONS)
unknown = [name for name in names if name not in SECTIONS]
if unknown:
    sys.exit(f"bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
for name in names:
    SECTIONS[name]()
