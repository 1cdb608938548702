"""Real Celery worker processes for the tests that need them (no stubs, no eager mode)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
CELERY = Path(sys.executable).with_name("celery")


def test_database_url() -> str:
    """The URL of the database the tests run in (pytest-django's test_* database)."""
    params = connection.settings_dict
    user = params.get("USER") or "postgres"
    host = params.get("HOST") or "127.0.0.1"
    port = params.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{params['NAME']}"


# Commits to the suite's own PostgreSQL return without waiting for the WAL to reach the disk
# (each waited some 4 ms on a busy machine). What a commit makes visible is unchanged; only a
# crash of that server could lose the last commits, and no test crashes it: the fault tests
# stop private servers (tests/services.py), whose connections keep the default.
NO_COMMIT_WAIT = "-c synchronous_commit=off"


def worker_environment(**overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=test_database_url(),
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        SECRET_KEY=settings.SECRET_KEY,
        REGISTRY_FINGERPRINT_KEY=settings.REGISTRY_FINGERPRINT_KEY,
        REGISTRY_PAYLOAD_KEY=settings.REGISTRY_PAYLOAD_KEY,
        REGISTRY_DEV_SECRETS="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(overrides)
    if _server(env["DATABASE_URL"]) == _server(test_database_url()):
        env["PGOPTIONS"] = f"{env.get('PGOPTIONS', '')} {NO_COMMIT_WAIT}".strip()
    return env


def _server(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return (parts.hostname or "127.0.0.1", parts.port or 5432)


class Worker:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no cleanup, no acknowledgement, the transaction in flight is lost."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is not None:
            # It died (killed, or crashed): its embedded beat may still run in its group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@contextmanager
def celery_worker(
    tmp_path: Path, name: str, *, beat: bool = False, app: str = "config", **environment: str
) -> Iterator[Worker]:
    log = tmp_path / f"{name}.log"
    command = [
        str(CELERY),
        "-A",
        app,
        "worker",
        "--pool=solo",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        f"--hostname={name}@%h",
        "--loglevel=INFO",
    ]
    if beat:
        command += ["--beat", f"--schedule={tmp_path / f'{name}-beat'}"]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=worker_environment(**environment),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    worker = Worker(process, log)
    try:
        _wait_until_ready(worker)
        yield worker
    finally:
        worker.stop()


def _wait_until_ready(worker: Worker, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if " ready." in worker.output():
            return
        if worker.process.poll() is not None:
            raise RuntimeError(f"worker exited at start-up:\n{worker.output()[-3000:]}")
        time.sleep(0.1)
    raise RuntimeError(f"worker not ready after {timeout}s:\n{worker.output()[-3000:]}")


def wait_for(condition, timeout: float = 120, interval: float = 0.05, message: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message or condition}")
