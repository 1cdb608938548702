"""Logging: structured enough to grep, never a payload (docs/reliability.md)."""

from __future__ import annotations

from config.environment import LOG_LEVELS
from config.settings.base import env

# --- Logging: structured enough to grep, never a payload ------------------------------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO", choices=LOG_LEVELS)
# plain: one readable line per event; json: one JSON object per line, with the ingestion id
# and the web's request id as fields (lib.logfilters.Context).
LOG_FORMAT = env.str("LOG_FORMAT", default="plain", choices=["plain", "json"])
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    # No traceback in any log: the kind of error and where, never its message
    # (docs/reliability.md). Context: the request and ingestion the line is about.
    "filters": {
        "kind_only": {"()": "lib.logfilters.KindOnly"},
        "masked_paths": {"()": "lib.logfilters.MaskedPaths"},
        "context": {"()": "lib.logfilters.Context"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["kind_only", "context", "masked_paths"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
    },
}
