"""The beat's task that keeps the scorecard's registry totals warm.

The registry's side of a scorecard sums every live practice's day rows
(:func:`registry.statistics.scorecard.registry_totals`); the answer is cached, and this task
(every ``TOTALS_REFRESH_SECONDS``, config/settings/pipeline.py) recomputes the current months'
before the cached answer expires, so the statistics page and the registry office's scorecard
read it from the cache instead of paying the scan. config/celery.py has Celery discover it.
"""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from registry.statistics.scorecard import months_ending, registry_totals


@shared_task(name="registry.statistics.refresh_scorecard_totals", acks_late=True)
def refresh_scorecard_totals() -> None:
    registry_totals(months_ending(timezone.now().date()), fresh=True)
