"""``celery -A tests.crashing_worker``: the real worker, which dies outright (``os._exit``,
as a segfault or the OOM killer would kill it) whenever it applies the chart CRASH-ME."""

from __future__ import annotations

import os
from typing import Any

from celery.signals import task_prerun

from config.celery import app

__all__ = ["app"]

CRASHING_CHART = "CRASH-ME"


@task_prerun.connect
def _arm(**_: Any) -> None:
    from ingestion import pipeline

    if getattr(pipeline.records_apply, "armed", False):
        return
    original = pipeline.records_apply

    def records_apply(**kwargs: Any) -> Any:
        charts = {getattr(r, "external_record_id", None) for r in kwargs["results"]}
        if CRASHING_CHART in charts:
            os._exit(70)
        return original(**kwargs)

    records_apply.armed = True  # type: ignore[attr-defined]
    pipeline.records_apply = records_apply  # type: ignore[assignment]
