"""A web process never loads the worker: it publishes the tasks by name.

Checked in a fresh interpreter, as gunicorn starts one: the URLs and the API's views (the
submit service and ``$validate`` among them) load, and neither the tasks, nor the pipeline,
nor the lifecycle's writing side is among the modules imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

WEB_IMPORTS = """
import json, sys
import django
django.setup()
import config.urls
import ingestion.api.views
print(json.dumps(sorted(name for name in sys.modules if name.startswith("ingestion"))))
"""

WORKER_ONLY = (
    "ingestion.tasks",
    "ingestion.pipeline",
    "ingestion.lifecycle.applying",
    "ingestion.lifecycle.storing",
)


def modules_a_web_process_loads() -> list[str]:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", WEB_IMPORTS],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=environment,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_web_imports_neither_the_tasks_nor_the_pipeline():
    loaded = modules_a_web_process_loads()
    assert "ingestion.api.views" in loaded
    worker_side = [m for m in loaded if m.startswith(WORKER_ONLY)]
    assert worker_side == []
