"""Commands taken from the docs, so that a test runs what a newcomer copies.

A command is found by a marker: a comment line inside a fenced ``sh`` block of the document.
What follows the marker, up to the first line that does not end in a backslash, is the
command; ``sudo`` in front of it is dropped (the tests run as whoever runs them).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
OPERATIONS = ROOT / "docs" / "operations.md"
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)


def sh_blocks(document: Path) -> list[str]:
    return _BLOCK.findall(document.read_text())


def command_after(document: Path, marker: str) -> str:
    """The command that follows ``marker`` in one of the document's ``sh`` blocks."""
    for block in sh_blocks(document):
        lines = block.splitlines()
        starts = [i for i, line in enumerate(lines) if _is_marker(line, marker)]
        if starts:
            return _one_command(lines[starts[0] + 1 :])
    raise AssertionError(f"{document.name} has no sh block with the marker {marker!r}")


def _is_marker(line: str, marker: str) -> bool:
    return line.strip().startswith("#") and marker in line


def _one_command(lines: list[str]) -> str:
    taken = []
    for line in lines:
        taken.append(line)
        if not line.rstrip().endswith("\\"):
            break
    return re.sub(r"^sudo (-u \S+ )?", "", "\n".join(taken))


def run_sh(command: str, *, env: dict[str, str], cwd: Path = ROOT) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout
