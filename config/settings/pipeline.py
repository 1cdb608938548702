"""The worker side: Celery, the ingestion pipeline's bounds, monitoring and the beat."""

from __future__ import annotations

from config.environment import BROKER_SCHEMES, ConfigurationError, refuse
from config.secrets import check_strength
from config.settings.base import EMBEDDED, env
from config.settings.data import REDIS_URL

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = (
    env.str("CELERY_BROKER_URL", default=REDIS_URL, schemes=BROKER_SCHEMES) or "memory://"
)
CELERY_TASK_ALWAYS_EAGER = EMBEDDED and not env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only when it has finished, and redelivered if its worker dies; the
# tasks are safe to run twice (see ingestion.tasks).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Publishing must not hang a web request when the broker is down: the periodic recovery
# re-enqueues whatever was not published.
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600, minimum=1),
    "socket_connect_timeout": 1,
    # Bounds a publish from a web request; the worker's BRPOP waits in its event loop.
    "socket_timeout": 1,
    "retry_on_timeout": False,
}
# A Redis result backend, should one be configured, gets the same bounds.
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 1
CELERY_REDIS_SOCKET_TIMEOUT = 1
CELERY_REDIS_RETRY_ON_TIMEOUT = False
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# The worker keeps its database connection across tasks (config/celery.py): Celery's Django
# fixup closes it only every this many tasks; CONN_MAX_AGE and health checks apply between.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000, minimum=1)

# --- The ingestion pipeline (docs/reliability.md) -------------------------------------------
REGISTRY_CHUNK_ENTRIES = env.int("REGISTRY_CHUNK_ENTRIES", default=250, minimum=1)
REGISTRY_CHUNK_BYTES = env.int("REGISTRY_CHUNK_BYTES", default=4 * 1024 * 1024, minimum=1)
REGISTRY_LEASE_SECONDS = env.int("REGISTRY_LEASE_SECONDS", default=120, minimum=1)
# A worker claiming a single-course ingestion takes up to this many waiting singles of the
# same practice and applies them as one chunk (1: each alone).
REGISTRY_CLAIM_SINGLES = env.int("REGISTRY_CLAIM_SINGLES", default=50, minimum=1)
# A batch is applied in turns (ingestion/pipeline/turns.py): between its chunks the waiting
# singles are served, another batch waiting ends the turn after a chunk, and any other
# message waiting ends it once it has lasted this long (the batch goes behind it).
REGISTRY_TURN_SECONDS = env.float("REGISTRY_TURN_SECONDS", default=10, minimum=0)
# The thread that maps a batch's next chunk runs this much nicer than its worker process, so
# that on a full machine it yields the CPU (ingestion/pipeline/chunks.py); 0: as nice as it.
REGISTRY_MAPPING_NICENESS = env.int("REGISTRY_MAPPING_NICENESS", default=10, minimum=0, maximum=19)
REGISTRY_MAX_ATTEMPTS = env.int("REGISTRY_MAX_ATTEMPTS", default=5, minimum=1)
# Tries of a chunk rolled back by a transient database error before the attempt fails.
REGISTRY_TRANSIENT_RETRIES = env.int("REGISTRY_TRANSIENT_RETRIES", default=8)
# A chunk is applied one entry at a time after this many claims in a row applied nothing,
# and an entry in flight at this many crashes is rejected (docs/reliability.md).
REGISTRY_ISOLATE_AFTER_CLAIMS = env.int("REGISTRY_ISOLATE_AFTER_CLAIMS", default=2, minimum=1)
REGISTRY_ENTRY_CRASH_LIMIT = env.int("REGISTRY_ENTRY_CRASH_LIMIT", default=2, minimum=1)
REGISTRY_RECOVERY_INTERVAL_SECONDS = env.float("REGISTRY_RECOVERY_INTERVAL_SECONDS", default=30)
REGISTRY_RECOVERY_GRACE_SECONDS = env.int("REGISTRY_RECOVERY_GRACE_SECONDS", default=30)
# A queued ingestion no worker has claimed this long is published again (tasks are safe to
# run twice): a web process that died between its commit and its publish costs 30 to 60 s.
REGISTRY_REQUEUE_AFTER_SECONDS = env.int("REGISTRY_REQUEUE_AFTER_SECONDS", default=30)
# A single's message is published this long after its commit
# (ingestion/messaging/gathering.py), so the practice's singles submitted meanwhile are
# claimed with it as one chunk: less CPU per single, each completed up to this much later.
# 0: published at once. Below the requeue age, or the recovery would publish again what is
# only being held; by default 1 s, or half the requeue age if that is shorter.
requeue_floor = max(1, REGISTRY_REQUEUE_AFTER_SECONDS)  # as the singles flag's expiry
gather_seconds = env.float(
    "REGISTRY_SINGLES_GATHER_SECONDS", default=min(1.0, requeue_floor / 2), minimum=0
)
if gather_seconds >= requeue_floor:
    raise refuse(
        "REGISTRY_SINGLES_GATHER_SECONDS",
        f"{gather_seconds:g} is not below REGISTRY_REQUEUE_AFTER_SECONDS",
        f"a number from 0 to below {requeue_floor}",
    )
REGISTRY_SINGLES_GATHER_SECONDS = gather_seconds
# Full fhir.resources validation of every course before mapping: for comparison only.
REGISTRY_FHIR_VALIDATION = env.bool("REGISTRY_FHIR_VALIDATION", default=False)
REGISTRY_RATE_LIMIT = "120/m"  # spec section 8: per key, per endpoint
# Bundle/$validate maps and plans a body while the caller waits: at most this many entries
# (a larger body is 413, "validate it in parts"; submitting has no such limit).
REGISTRY_VALIDATE_MAX_ENTRIES = env.int("REGISTRY_VALIDATE_MAX_ENTRIES", default=1000, minimum=1)
# API keys are read from a cache in Redis this long (keys/cache.py; a revocation overwrites
# the entry at once); 0 reads every request's key from the database.
REGISTRY_KEY_CACHE_SECONDS = env.int("REGISTRY_KEY_CACHE_SECONDS", default=60, minimum=0)
RATELIMIT_FAIL_OPEN = True
# After a failed cache or broker call, skip that service for this long (lib.breaker).
REGISTRY_REDIS_BREAKER_SECONDS = env.float("REGISTRY_REDIS_BREAKER_SECONDS", default=5)
# /healthz answers from a verdict at most this old, so pollers cost nothing in an outage.
REGISTRY_HEALTH_VERDICT_SECONDS = env.float("REGISTRY_HEALTH_VERDICT_SECONDS", default=5)
REGISTRY_POLL_RETRY_AFTER_SECONDS = env.int("REGISTRY_POLL_RETRY_AFTER_SECONDS", default=2)
# Retry-After of the 503 answered while the database cannot be reached.
REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS = env.int(
    "REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS", default=5
)
# A finished ingestion's per-record outcome is kept this many days, then purged by the beat
# (ingestion.receipts.retention, every REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS): the receipt
# keeps its counts and says when its outcome was purged.
REGISTRY_RECEIPT_RETENTION_DAYS = env.int("REGISTRY_RECEIPT_RETENTION_DAYS", default=90, minimum=1)
REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS = env.float(
    "REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS", default=600, minimum=1
)

# --- Monitoring (ingestion.monitoring, docs/operations.md "Monitoring") --------------------
# /metrics answers only with `Authorization: Bearer <this>`; unset, /metrics is 404.
REGISTRY_METRICS_TOKEN = env.str("REGISTRY_METRICS_TOKEN", default="")
if REGISTRY_METRICS_TOKEN:
    check_strength("REGISTRY_METRICS_TOKEN", REGISTRY_METRICS_TOKEN)
# Silent hospitals (registry/silence.py): a practice that usually sends and has sent nothing
# for this many days counts in registry_practices_silent and comes first in the console.
REGISTRY_SILENT_AFTER_DAYS = env.int("REGISTRY_SILENT_AFTER_DAYS", default=3, minimum=1)
# /healthz/pipeline is 503 once the oldest queued ingestion is this old, or no worker's
# heartbeat (written every REGISTRY_WORKER_HEARTBEAT_SECONDS) is younger than the max age.
REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS = env.int(
    "REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS", default=300, minimum=1
)
REGISTRY_WORKER_HEARTBEAT_SECONDS = env.float(
    "REGISTRY_WORKER_HEARTBEAT_SECONDS", default=10, minimum=0.1
)
REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS = env.float(
    "REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS", default=60, minimum=1
)
if REGISTRY_WORKER_HEARTBEAT_SECONDS >= REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS:
    raise ConfigurationError(
        "REGISTRY_WORKER_HEARTBEAT_SECONDS must be below REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS "
        "(a live worker would look silent between its beats)"
    )

CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "recover-ingestions": {
        "task": "ingestion.tasks.recover_ingestions",
        "schedule": REGISTRY_RECOVERY_INTERVAL_SECONDS,
    },
    "purge-receipts": {
        "task": "ingestion.tasks.purge_receipts",
        "schedule": REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS,
    },
    # Last month's feedback mail to each practice that has not had it (registry/feedback/):
    # hourly, so a beat or mail server down on the first only delays it; sent once regardless.
    "send-feedback-mails": {
        "task": "registry.feedback.send_feedback_mails",
        "schedule": 3600,
    },
    # The scorecard's registry totals, recomputed before their cached copy expires
    # (registry/statistics/tasks.py): no statistics page pays the scan of every day row.
    "refresh-scorecard-totals": {
        "task": "registry.statistics.refresh_scorecard_totals",
        "schedule": 240,
    },
}
