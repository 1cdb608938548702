"""What every section of ``make bench`` stands on: its own database and Redis database, and
the registry's processes (gunicorn, Celery) started in production shape and sampled.

A section's run uses ``<name>_bench`` (recreated each run) and Redis database 15
(``BENCH_REDIS_URL`` to choose another); its figures and the processes' logs go to
``bench/results/`` (``BENCH_RESULTS`` to choose another directory).
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(os.environ.get("BENCH_RESULTS") or ROOT / "bench" / "results")
BIN = Path(sys.executable).parent


# -- environment -----------------------------------------------------------------------------


def bench_urls() -> tuple[str, str]:
    """The bench's database (``<name>_bench``) and Redis database, beside the developer's."""
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry")
    parts = urlsplit(database)
    bench_database = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_bench"))
    redis = os.environ.get("BENCH_REDIS_URL") or urlunsplit(
        urlsplit(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))._replace(path="/15")
    )
    return bench_database, redis


DATABASE_URL, REDIS_URL = bench_urls()


def environment(**extra: str) -> dict[str, str]:
    """The started processes' environment: the bench's stores, this process's secrets."""
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


def recreate_database() -> None:
    parts = urlsplit(DATABASE_URL)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    for statement in (
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        f'CREATE DATABASE "{name}"',
    ):
        subprocess.run(["psql", admin, "-qc", statement], check=True, capture_output=True)


def setup_django() -> None:
    """Django on the bench's database, migrated, with an empty Redis database."""
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


def free_port() -> int:
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

    def cpu_seconds(self) -> float:
        """User + system CPU of the service's processes alive now, from /proc."""
        import psutil

        total = 0.0
        for pid in self.pids():
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

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
        env=environment(**env),
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
