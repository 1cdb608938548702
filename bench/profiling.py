"""``BENCH_PROFILE=1`` (or ``gil``): py-spy samples a service's process meanwhile."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.harness import BIN, RESULTS, Service

PROJECT = ("ingestion/", "registry/", "keys/")


@contextmanager
def profiled(target: Service, name: str, enabled: bool) -> Iterator[None]:
    """With BENCH_PROFILE=1, sample ``target`` (and its children) with py-spy meanwhile."""
    mode = os.environ.get("BENCH_PROFILE", "")
    if not enabled or mode not in ("1", "gil"):
        yield
        return
    raw = RESULTS / f"{name}.raw"
    pool = target.pids()[1:] or target.pids()  # the prefork child that runs the tasks
    command = [str(BIN / "py-spy"), "record", "--pid", str(pool[0])]
    command += ["--format", "raw", "--rate", "1000", "--nonblocking", "--output", str(raw)]
    if mode == "gil":  # only samples holding the GIL: where the process spends CPU in Python
        command.append("--gil")
    sampler = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # let it attach
    try:
        yield
    finally:
        sampler.send_signal(signal.SIGINT)
        sampler.wait(timeout=60)
        summary = summarize_profile(raw)
        (RESULTS / f"{name}.txt").write_text(summary)
        print(summary, flush=True)


def summarize_profile(raw: Path, top: int = 25) -> str:
    """py-spy's collapsed stacks as inclusive and self time per function, the largest first."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = [
            frame.split(" (")[0] + " " + frame.split(" (")[-1].split(":")[0].rstrip(")")
            for frame in stack.split(";")
            if frame
        ]
        total += count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + count
    ours = {f: c for f, c in inclusive.items() if f.split(" ")[-1].startswith(PROJECT)}
    lines = [f"{raw.stem}: {total} samples (py-spy; native code counts in its caller)"]
    for title, table in (("inclusive, project code", ours), ("self", own)):
        lines.append(f"-- {title} --")
        for frame, count in sorted(table.items(), key=lambda item: -item[1])[:top]:
            lines.append(f"{100 * count / max(total, 1):5.1f}%  {frame}")
    return "\n".join(lines) + "\n"
