"""The Celery application: ``celery -A config worker`` and ``celery -A config beat``.

Database connections in the worker: Celery's Django fixup closes every connection around
every task, which costs a new PostgreSQL backend per task. ``CELERY_DB_REUSE_MAX``
(settings) makes it close them only every so many tasks; between, each task starts as a
Django request does (:func:`django.db.close_old_connections`): a connection older than
``CONN_MAX_AGE`` or left unusable by an error is closed, and with ``CONN_HEALTH_CHECKS`` the
first query of the task checks the connection first, so a database restarted meanwhile
costs a reconnection, not a failed task.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("registry")


@app.on_configure.connect
def _settings_checked(**_: Any) -> None:
    """The first read of the configuration loads the settings: a bad one is one line, exit 4."""
    from config.environment import settings_or_exit

    settings_or_exit()


app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The password reset mail's task and the monthly feedback mail's sit in the rooms they belong
# to, not in registry/tasks.py.
app.autodiscover_tasks(["registry.signin", "registry.feedback", "registry.statistics"])


@task_prerun.connect
def _connections_as_for_a_request(sender: Any = None, **_: Any) -> None:
    if getattr(getattr(sender, "request", None), "is_eager", False):
        return  # run inside the caller's request (the embedded default): its connection
    from django.db import close_old_connections

    close_old_connections()


_heartbeat: Any = None


@worker_ready.connect
def _heartbeat_started(sender: Any = None, **_: Any) -> None:
    """The worker says it is alive while it runs (ingestion.monitoring.heartbeat)."""
    global _heartbeat
    from ingestion.monitoring.heartbeat import Heartbeat

    _heartbeat = Heartbeat(str(getattr(sender, "hostname", None) or os.getpid()))
    _heartbeat.start()


@worker_shutdown.connect
def _heartbeat_stopped(**_: Any) -> None:
    from ingestion.monitoring.aggregate import aggregate

    if _heartbeat is not None:
        _heartbeat.stop()
    aggregate.flush()  # the last second's figures
