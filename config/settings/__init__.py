"""Settings, read from the environment through django-environ.

Two shapes share this file:

* the embedded default (``DATABASE_URL`` and ``REDIS_URL`` unset): SQLite under ``var/``,
  Celery tasks run in-process, a local-memory cache, secrets generated into ``var/``;
* production (both set): PostgreSQL, Redis as cache and broker, a separate Celery worker,
  and every secret supplied by the environment.

Every read goes through a strict ``env`` (config/environment.py): a bad value stops start-up
with one line naming the variable. Values may also come from ``.env`` at the repository root;
the environment wins. Every setting is documented in docs/operations.md ("Configuration").

The settings are split by topic, as cookiecutter-django splits its own: ``base`` (the reader,
paths, secrets, applications, static files), ``web``, ``data``, ``pipeline`` and ``logs``,
read in that order. ``DJANGO_SETTINGS_MODULE`` stays ``config.settings``.
"""

# ruff: noqa: I001  (the order is the order of reading, not the alphabet's)
from config.settings.base import *  # noqa: F403
from config.settings.web import *  # noqa: F403
from config.settings.data import *  # noqa: F403
from config.settings.pipeline import *  # noqa: F403
from config.settings.logs import *  # noqa: F403
