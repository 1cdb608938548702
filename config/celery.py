"""The Celery application: ``celery -A config worker`` and ``celery -A config beat``."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("registry")


@app.on_configure.connect
def _settings_checked(**_: Any) -> None:
    """The first read of the configuration loads the settings: a bad one is one line, exit 4."""
    from config.environment import settings_or_exit

    settings_or_exit()


app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
