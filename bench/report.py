"""One section of ``make bench``: run on a fresh bench database, saved, printed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench.harness import RESULTS, recreate_database, setup_django


def section(
    name: str, measure: Callable[[], dict[str, Any]], show: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """One section of ``make bench`` on a freshly created bench database: measured, saved into
    ``latest.json`` and printed."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    recreate_database()
    setup_django()
    results = measure()
    save_section(name, results)
    show(results)
    return results


def save_section(name: str, results: dict[str, Any]) -> None:
    """Put one section's figures into ``latest.json``, keeping the other sections'."""
    latest = RESULTS / "latest.json"
    saved = json.loads(latest.read_text()) if latest.exists() else {}
    saved[name] = results
    latest.write_text(json.dumps(saved, indent=2) + "\n")


def row(*cells: object) -> str:
    """A row of a Markdown table, as docs/performance.md shows the figures."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"
