"""make bench keeps running: its sections import, its cheapest section runs at a tiny size,
and it stands on nothing of tests/ (a clone without the tests can still measure)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.services import private_redis

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def drop_database(name: str) -> None:
    """The database a bench section created beside the developer's, dropped."""
    admin = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres"))
    drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    subprocess.run(["psql", admin, "-qc", drop], check=True, capture_output=True)


def test_the_bench_imports_nothing_of_the_tests():
    found = {
        path.relative_to(ROOT).as_posix(): sorted(
            name for name in imported_modules(path) if name.split(".")[0] == "tests"
        )
        for path in (ROOT / "bench").rglob("*.py")
    }
    assert len(found) > 10  # the walk finds the bench's files
    assert not {path: names for path, names in found.items() if names}


def test_every_section_imports_with_the_tests_out_of_reach():
    """In an interpreter where importing ``tests`` fails, ``python -m bench --help`` works."""
    refuse_tests = (
        "import sys\n"
        "class RefuseTests:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tests' or name.startswith('tests.'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, RefuseTests())\n"
        "import runpy\n"
        "sys.argv = ['bench', '--help']\n"
        "runpy.run_module('bench', run_name='__main__')\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", refuse_tests], cwd=ROOT, capture_output=True, text=True, check=True
    )
    from bench.__main__ import SECTIONS

    for section in SECTIONS:
        assert f"``{section}``" in shown.stdout


def test_the_flood_section_runs_at_a_tiny_size(tmp_path):
    """``make bench BENCH=flood`` as make runs it, three courses once: it prints its table and
    saves its figures (in its own database and a Redis of its own, beside the tests')."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    database = urlunsplit(parts._replace(path=parts.path + "_flood"))
    with private_redis() as redis:
        env = dict(
            os.environ,
            DATABASE_URL=database,
            BENCH_REDIS_URL=redis.url,
            BENCH_RESULTS=str(tmp_path),
            BENCH_FLOOD_SIZES="3",
            BENCH_FLOOD_REPEATS="1",
        )
        try:
            run = subprocess.run(
                [sys.executable, "-m", "bench", "flood"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        finally:
            drop_database(f"{parts.path.lstrip('/')}_flood_bench")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "| Flood of N (one birth) vs N unique |" in run.stdout
    saved = json.loads((tmp_path / "latest.json").read_text())["flood"]["3"]
    assert saved["flood_flagged"] == 2  # every course after the first of one birth


def test_the_million_section_runs_from_a_clone_without_collected_static_files(tmp_path):
    """``make bench BENCH=million`` at 20,000 records, with a var/ directory as a fresh clone
    has it (no collected static files): the admin's pages it measures still answer."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    database = urlunsplit(parts._replace(path=parts.path + "_fresh"))
    with private_redis() as redis:
        env = dict(
            os.environ,
            DATABASE_URL=database,
            REDIS_URL=redis.url,
            REGISTRY_VAR_DIR=str(tmp_path / "var"),
            BENCH_RESULTS=str(tmp_path),
            BENCH_MILLION_RECORDS="20000",
        )
        try:
            run = subprocess.run(
                [sys.executable, "-m", "bench", "million"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
        finally:
            drop_database(f"{parts.path.lstrip('/')}_fresh_million")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "| With 20,000 records on file |" in run.stdout
    saved = json.loads((tmp_path / "latest.json").read_text())["million"]
    assert saved["records"] == 20_000


def test_the_open_loop_figures_split_the_singles_by_phase():
    """bench.openloop's arithmetic without processes: each single in the phase its POST fell
    in (the backfill from its first POST to its last completedAt), the quantiles as
    statistics.quantiles has them, CPU per unit and the single over the batch course."""
    import statistics

    from bench.openloop import Single, cpu_per, over, phase_figures, phase_of, quantile

    backfill = (100.0, 160.0)
    assert [phase_of(t, backfill) for t in (99.9, 100.0, 159.9, 160.0)] == [
        "before",
        "during",
        "during",
        "after",
    ]
    values = [float(v) for v in range(1, 98, 3)]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    assert quantile(values, 0.99) == pytest.approx(cuts[98])
    assert quantile(values, 0.5) == pytest.approx(cuts[49])
    assert quantile([], 0.5) is None
    assert quantile([7.0], 0.99) == 7.0

    def single(posted, completion, **kwargs):
        return Single(posted, 0.02, posted + completion, posted + 2.1, 2, **kwargs)

    singles = [single(10.0 + n, 1.0 + n / 100) for n in range(50)]  # before
    singles += [single(120.0, 9.0), single(130.0, 11.0, limited=1)]  # during
    singles += [single(170.0, 1.5), single(171.0, 30.0, failed=True)]  # after
    figures = phase_figures(singles, backfill)
    assert [figures[p]["singles"] for p in ("before", "during", "after")] == [50, 2, 2]
    assert figures["before"]["completion_p50_ms"] == 1245.0
    assert figures["during"]["completion_p50_ms"] == 10000.0
    assert figures["during"]["limited_per_single"] == 0.5
    # a failed single counts in its phase but has no completion time
    assert figures["after"]["failed"] == 1
    assert figures["after"]["completion_p99_ms"] == 1500.0
    assert figures["after"]["seen_p99_ms"] == 2100.0

    single_cpu = cpu_per({"web": 0.5, "worker": 0.25, "postgres": 0.1}, 50)
    assert single_cpu == {
        "web": 10.0,
        "worker": 5.0,
        "postgres": 2.0,
        "web_worker": 15.0,
        "total": 17.0,
    }
    course_cpu = cpu_per({"web": 2.0, "worker": 8.0, "postgres": 0.0}, 20_000)
    ratio = over(single_cpu, course_cpu)
    assert ratio["web"] == 100.0 and ratio["web_worker"] == 30.0
    assert ratio["postgres"] is None  # no batch figure to divide by


def test_the_open_loop_client_reads_answers_by_length_and_by_chunks():
    """bench.asynchttp reads an answer framed by Content-Length or chunked (the web streams a
    finished receipt), keeps the connection unless told to close, and a connection that
    ends mid-answer is Closed (the request is then sent again)."""
    import asyncio

    from bench.asynchttp import Closed, _answer

    def read(data: bytes):
        async def run():
            reader = asyncio.StreamReader()
            reader.feed_data(data)
            reader.feed_eof()
            return await _answer(reader)

        return asyncio.run(run())

    sized = b"HTTP/1.1 202 Accepted\r\nContent-Location: /x/1\r\nContent-Length: 2\r\n\r\n{}NEXT"
    assert read(sized) == (202, {"content-location": "/x/1", "content-length": "2"}, b"{}", True)
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b'3\r\n{"a\r\n5\r\n": 1}\r\n0\r\n\r\n'
    )
    status, _, body, reusable = read(chunked)
    assert (status, body, reusable) == (200, b'{"a": 1}', False)
    with pytest.raises(Closed):
        read(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}")
    with pytest.raises(Closed):
        read(b"")


def test_openloop_compares_the_backfill_with_its_mean_alone():
    """Alone is measured before the singles and after them: the machine's speed moves."""
    from bench.openloop import during_over_alone

    during, alone, again = ({"courses_per_second": c} for c in (800.0, 1200.0, 800.0))
    assert during_over_alone(during, alone, again) == 0.8
    assert during_over_alone(during, alone) == 0.667
