"""Where the data lives: the database (SQLite or PostgreSQL) and the cache (local or Redis)."""

from __future__ import annotations

from redis.backoff import NoBackoff
from redis.retry import Retry

from config.environment import REDIS_SCHEMES
from config.settings.base import VAR_DIR, env
from config.settings.web import SILENCED_SYSTEM_CHECKS

# --- Data -----------------------------------------------------------------------------------
if env.str("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "registry.sqlite3",
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The covering indexes' INCLUDE columns are PostgreSQL's; SQLite builds the same indexes
    # without them, as it should. The warning on every migrate only alarmed a first look.
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "models.W040"]
# The web process (config/gunicorn.py sets REGISTRY_WEB_ASGI): under ASGI each request runs its
# view on a thread of its own, so a connection kept per thread would outlive the thread. Each
# request takes a connection from a per-process pool (PostgreSQL) or opens one, and gives it
# back when it ends.
if env.bool("REGISTRY_WEB_ASGI", default=False):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = False  # the pool checks connections
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 2,
            "max_size": env.int("REGISTRY_WEB_DB_POOL_SIZE", default=16, minimum=2),
            "timeout": 10,
        }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="", schemes=REDIS_SCHEMES)
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's, with one pool and one client per process (lib/cache.py).
            "BACKEND": "lib.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "registry",
            # Fail fast: a cache that hangs would hold every request hostage. No retries:
            # redis-py retries three times by default, four waits where one is enough.
            "OPTIONS": {
                "socket_connect_timeout": 0.5,
                "socket_timeout": 0.5,
                "retry": Retry(NoBackoff(), 0),
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
