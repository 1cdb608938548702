"""ASGI entry point, as `make run` and the Procfile serve it (config/gunicorn.py, front.py)."""

from __future__ import annotations

from config.environment import settings_or_exit

settings_or_exit()  # a bad setting: one line and exit status 4, before anything else

import django  # noqa: E402
from django.conf import settings  # noqa: E402

django.setup(set_prefix=False)

from config.front import OneHandOffHandler, RequestLimits  # noqa: E402  (after Django is set up)
from config.head import HeadWithoutBody  # noqa: E402
from ingestion.monitoring.inflight import RequestsInFlight  # noqa: E402

# Outermost, so a request counts as in flight from its first event, body upload included.
application = RequestsInFlight(
    RequestLimits(
        HeadWithoutBody(OneHandOffHandler(threads=settings.REGISTRY_WEB_THREADS)),
        limit=settings.REGISTRY_MAX_BODY_BYTES,
        idle=settings.REGISTRY_BODY_IDLE_SECONDS,
        total=settings.REGISTRY_BODY_TIMEOUT_SECONDS,
    )
)
