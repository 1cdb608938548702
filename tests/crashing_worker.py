"""``celery -A tests.crashing_worker``: the real worker, which dies outright (``os._exit``,
as a segfault or the OOM killer would kill it) whenever it applies the chart CRASH-ME, alone
or among the singles of a combined claim."""

from __future__ import annotations

import os
from typing import Any

from celery.signals import task_prerun

from config.celery import app

__all__ = ["app"]

CRASHING_CHART = "CRASH-ME"


def _charts(results: Any) -> set[Any]:
    return {getattr(r, "external_record_id", None) for r in results}


@task_prerun.connect
def _arm(**_: Any) -> None:
    from ingestion.pipeline import chunks, isolation, singles

    if getattr(chunks.records_apply, "armed", False):
        return
    original, original_parts = chunks.records_apply, singles.records_apply_parts

    def records_apply(**kwargs: Any) -> Any:
        if CRASHING_CHART in _charts(kwargs["results"]):
            os._exit(70)
        return original(**kwargs)

    def records_apply_parts(**kwargs: Any) -> Any:
        if any(CRASHING_CHART in _charts(part.results) for part in kwargs["parts"]):
            os._exit(70)
        return original_parts(**kwargs)

    records_apply.armed = True  # type: ignore[attr-defined]
    # Where the pipeline calls them: the chunk loop, the isolation, the combined singles.
    chunks.records_apply = records_apply  # type: ignore[assignment]
    isolation.records_apply = records_apply  # type: ignore[assignment]
    singles.records_apply_parts = records_apply_parts  # type: ignore[assignment]
