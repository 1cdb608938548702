"""ASGI entry point, as `make run` and the Procfile serve it (config/gunicorn.py, front.py)."""

from __future__ import annotations

from config.environment import settings_or_exit

settings_or_exit()  # a bad setting: one line and exit status 4, before anything else

from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

django_application = get_asgi_application()

from config.front import RequestLimits  # noqa: E402  (after Django is set up)

application = RequestLimits(
    django_application,
    limit=settings.REGISTRY_MAX_BODY_BYTES,
    idle=settings.REGISTRY_BODY_IDLE_SECONDS,
    total=settings.REGISTRY_BODY_TIMEOUT_SECONDS,
)
