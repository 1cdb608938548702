"""Private PostgreSQL and Redis servers for fault tests: started here, stopped, hung, torn down.

The shared servers on 5432 and 6379 are never touched: a test that needs a database or a
cache to go down or hang starts its own on a free port, in a temporary directory, and the
context manager removes it whatever happens.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(*command: str) -> list[str]:
    if os.geteuid() != 0:
        return list(command)
    return ["runuser", "-u", "postgres", "--", *command]


@dataclass
class PrivatePostgres:
    data: Path
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/registry"

    def start(self) -> None:
        subprocess.run(
            _as_postgres(
                "pg_ctl",
                "-D",
                str(self.data),
                "-l",
                str(self.log),
                "-o",
                f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off",
                "-w",
                "start",
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        subprocess.run(
            _as_postgres("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"),
            check=False,
            capture_output=True,
        )


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL of our own, with an empty ``registry`` database, trusted on 127.0.0.1."""
    root = Path(tempfile.mkdtemp(prefix="registry-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    server = PrivatePostgres(data, free_port(), root / "postgres.log")
    try:
        subprocess.run(
            _as_postgres("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"),
            check=True,
            capture_output=True,
        )
        server.start()
        subprocess.run(
            _as_postgres(
                "createdb", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", "registry"
            ),
            check=True,
            capture_output=True,
        )
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class PrivateRedis:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def hang(self) -> None:
        """SIGSTOP our own redis-server: connections are accepted by the kernel, never answered."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    port = free_port()
    process = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = PrivateRedis(process, port)
    try:
        _wait_for_port(port)
        yield server
    finally:
        os.kill(process.pid, signal.SIGCONT)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_for_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port} after {timeout}s")


ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"


@dataclass
class Stack:
    """The production shape against private services: manage.py and a gunicorn of its own."""

    env: dict[str, str]
    tmp: Path

    def manage(self, *arguments: str) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *arguments],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def practice_with_key(self, slug: str = "st-mary") -> str:
        self.manage("createpractice", slug)
        return self.manage("mintkey", slug)

    @contextmanager
    def web(self, **overrides: str) -> Iterator[WebServer]:
        port = free_port()
        log = self.tmp / f"gunicorn-{port}.log"
        env = {**self.env, "PORT": str(port), "WEB_CONCURRENCY": "1", **overrides}
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    str(BIN / "gunicorn"),
                    "config.asgi:application",
                    "--config",
                    "config/gunicorn.py",
                ],
                cwd=ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = WebServer(f"http://127.0.0.1:{port}", log, process)
        try:
            _wait_for_port(port, timeout=60)
            yield server
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


@dataclass
class WebServer:
    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def stack(tmp: Path, *, database_url: str, redis_url: str, **overrides: str) -> Stack:
    from tests.workers import worker_environment

    env = worker_environment(DATABASE_URL=database_url, REDIS_URL=redis_url, **overrides)
    result = Stack(env, tmp)
    result.manage("migrate", "--noinput")
    return result
