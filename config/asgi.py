"""ASGI entry point, as `make run` and the Procfile serve it (config/gunicorn.py, front.py)."""

from __future__ import annotations

import os

import django
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from config.front import OneHandOffHandler, RequestLimits  # noqa: E402

application = RequestLimits(
    OneHandOffHandler(threads=settings.REGISTRY_WEB_THREADS),
    limit=settings.REGISTRY_MAX_BODY_BYTES,
    idle=settings.REGISTRY_BODY_IDLE_SECONDS,
    total=settings.REGISTRY_BODY_TIMEOUT_SECONDS,
)
