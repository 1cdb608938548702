"""Settings, read from the environment through django-environ.

Two shapes share this file:

* the embedded default (``DATABASE_URL`` and ``REDIS_URL`` unset): SQLite under ``var/``,
  Celery tasks run in-process, a local-memory cache, secrets generated into ``var/``;
* production (both set): PostgreSQL, Redis as cache and broker, a separate Celery worker,
  and every secret supplied by the environment.

Every read goes through a strict ``env`` (config/environment.py): a bad value stops start-up
with one line naming the variable. Values may also come from ``.env`` at the repository root;
the environment wins. Every setting is documented in docs/operations.md ("Configuration").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from csp import constants as csp
from redis.backoff import NoBackoff
from redis.retry import Retry

from config.environment import (
    BROKER_SCHEMES,
    LOG_LEVELS,
    REDIS_SCHEMES,
    ConfigurationError,
    StrictEnv,
    host_names,
    networks,
    origins,
    read_env_file,
    refuse,
)
from config.secrets import check_strength, generated_secrets, missing

BASE_DIR = Path(__file__).resolve().parent.parent

read_env_file(BASE_DIR)
env = StrictEnv()
VAR_DIR = Path(env.str("REGISTRY_VAR_DIR", default=str(BASE_DIR / "var")))

DEBUG = env.bool("DEBUG", default=False)
EMBEDDED = not env.str("DATABASE_URL", default="") and not env.str("REDIS_URL", default="")

# --- Secrets --------------------------------------------------------------------------------
_SECRET_NAMES = ("SECRET_KEY", "REGISTRY_FINGERPRINT_KEY", "REGISTRY_PAYLOAD_KEY")
USE_GENERATED_SECRETS = env.bool("REGISTRY_DEV_SECRETS", default=DEBUG or EMBEDDED)
_generated = generated_secrets(VAR_DIR, _SECRET_NAMES) if USE_GENERATED_SECRETS else {}


def _secret(name: str) -> str:
    value = env.str(name, default="") or _generated.get(name, "")
    if not value:
        raise missing(name)
    return check_strength(name, value)


SECRET_KEY = _secret("SECRET_KEY")
REGISTRY_FINGERPRINT_KEY = _secret("REGISTRY_FINGERPRINT_KEY")
REGISTRY_PAYLOAD_KEY = _secret("REGISTRY_PAYLOAD_KEY")

# --- HTTP -----------------------------------------------------------------------------------
ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"], check=host_names
)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[], check=origins)
# Served over HTTPS (docs/operations.md "Behind a reverse proxy, over TLS"): HSTS for a year,
# plain HTTP redirected (but /healthz, for a load balancer's probe), Secure cookies.
REGISTRY_HTTPS = env.bool("REGISTRY_HTTPS", default=False)
# Secure cookies alone, for a site on HTTPS that is not ready for HSTS (implied by the above).
SECURE_COOKIES = env.bool("SECURE_COOKIES", default=False)
SESSION_COOKIE_SECURE = SECURE_COOKIES or REGISTRY_HTTPS
CSRF_COOKIE_SECURE = SECURE_COOKIES or REGISTRY_HTTPS
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if REGISTRY_HTTPS:
    SECURE_HSTS_SECONDS = 365 * 24 * 3600
    # The registry's host name is its own: no name under it may be served over plain HTTP
    # (a sibling on HTTP could set cookies the registry would read). Not preloaded: the
    # preload list takes whole registrable domains, the organisation's call, not the
    # registry's (security.W021, silenced below).
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz(/|$)"]
SILENCED_SYSTEM_CHECKS = ["security.W021"]
# Peers whose X-Forwarded-For is believed (config/client.py): addresses or CIDR networks.
# X-Forwarded-Proto and X-Forwarded-Host too, and from them only (config/proxy.py).
REGISTRY_TRUSTED_PROXIES = env.list("REGISTRY_TRUSTED_PROXIES", default=[], check=networks)
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)
if REGISTRY_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if env.str("SECURE_PROXY_SSL_HEADER", default=""):  # believed anyone's X-Forwarded-Proto
    raise ConfigurationError(
        "SECURE_PROXY_SSL_HEADER is no longer read: list the proxy in REGISTRY_TRUSTED_PROXIES "
        "(its X-Forwarded-Proto is then believed, and nobody else's)"
    )

REGISTRY_MAX_BODY_BYTES = env.int("REGISTRY_MAX_BODY_BYTES", default=64 * 1024 * 1024, minimum=1)
# Django refuses to read a body above this; the API answers 413 itself before that point.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(REGISTRY_MAX_BODY_BYTES, 2_621_440)
# JSON values a body, and each of its entries (a single Bundle: the whole body), may hold,
# counted on the bytes before anything decodes them (ingestion/fhir/shape.py); more is 413.
# The BFDR examples spend 22 to 95 bytes a value, the test factories' compact courses 15.7:
# at one value per 8 bytes a full body of either passes.
REGISTRY_MAX_BODY_NODES = env.int(
    "REGISTRY_MAX_BODY_NODES", default=max(REGISTRY_MAX_BODY_BYTES // 8, 1), minimum=1
)
REGISTRY_MAX_ENTRY_NODES = env.int("REGISTRY_MAX_ENTRY_NODES", default=50_000, minimum=1)
# The web front (config/front.py): a connection's request headers must be complete this long
# after it opens; a body may pause this long between pieces, and must be whole in this time.
REGISTRY_HEADER_TIMEOUT_SECONDS = env.float("REGISTRY_HEADER_TIMEOUT_SECONDS", default=10.0)
REGISTRY_BODY_IDLE_SECONDS = env.float("REGISTRY_BODY_IDLE_SECONDS", default=15.0)
REGISTRY_BODY_TIMEOUT_SECONDS = env.float("REGISTRY_BODY_TIMEOUT_SECONDS", default=120.0)
# gunicorn (config/gunicorn.py): port, processes, open connections per process, and how long
# a worker may take over one request before it is restarted (0: no limit).
PORT = env.int("PORT", default=8000, minimum=1, maximum=65535)
WEB_CONCURRENCY = env.int("WEB_CONCURRENCY", default=2, minimum=1)
WEB_CONNECTIONS = env.int("WEB_CONNECTIONS", default=1000, minimum=1)
WEB_TIMEOUT = env.int("WEB_TIMEOUT", default=120)
# Threads per web process that run requests' synchronous code (config/front.py); a request
# beyond them waits, as a coroutine, for one to be free.
REGISTRY_WEB_THREADS = env.int("REGISTRY_WEB_THREADS", default=8, minimum=1)

# --- Applications ---------------------------------------------------------------------------
INSTALLED_APPS = [
    "config.apps.RegistryAdminConfig",  # django.contrib.admin, with the registry's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "registry",
    "keys",
    "ingestion",
]

MIDDLEWARE = [
    # First: every request's id (for its log lines) and its count and time (for /metrics).
    "ingestion.monitoring.requests.request_metrics_middleware",
    # Then: proxy headers from a peer that is not a trusted proxy are dropped.
    "config.proxy.trusted_proxy_middleware",
    "django.middleware.security.SecurityMiddleware",
    "config.static.StaticFiles",  # WhiteNoise
    "config.policy.ContentSecurityPolicy",  # the Content-Security-Policy of every page
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it answers a locked-out sign-in.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "registry.navigation.site_navigation",
            ],
        },
    },
]

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
            # Django's, with one pool and one client per process (config/cache.py).
            "BACKEND": "config.cache.RedisCache",
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
# A single's message is published this long after its commit (ingestion/gathering.py), so the
# practice's singles submitted meanwhile are claimed with it as one chunk: less CPU per single,
# each completed up to this much later. 0: published at once. Below the requeue age, or the
# recovery would publish again what is only being held; by default 1 s, or half the requeue
# age if that is shorter.
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
# After a failed cache or broker call, skip that service for this long (config.breaker).
REGISTRY_REDIS_BREAKER_SECONDS = env.float("REGISTRY_REDIS_BREAKER_SECONDS", default=5)
# /healthz answers from a verdict at most this old, so pollers cost nothing in an outage.
REGISTRY_HEALTH_VERDICT_SECONDS = env.float("REGISTRY_HEALTH_VERDICT_SECONDS", default=5)
REGISTRY_POLL_RETRY_AFTER_SECONDS = env.int("REGISTRY_POLL_RETRY_AFTER_SECONDS", default=2)
# Retry-After of the 503 answered while the database cannot be reached.
REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS = env.int(
    "REGISTRY_UNAVAILABLE_RETRY_AFTER_SECONDS", default=5
)
# A finished ingestion's per-record outcome is kept this many days, then purged by the beat
# (ingestion.retention, every REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS): the receipt keeps its
# counts and says when its outcome was purged.
REGISTRY_RECEIPT_RETENTION_DAYS = env.int("REGISTRY_RECEIPT_RETENTION_DAYS", default=90, minimum=1)
REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS = env.float(
    "REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS", default=600, minimum=1
)

# --- Monitoring (ingestion.monitoring, docs/operations.md "Monitoring") --------------------
# /metrics answers only with `Authorization: Bearer <this>`; unset, /metrics is 404.
REGISTRY_METRICS_TOKEN = env.str("REGISTRY_METRICS_TOKEN", default="")
if REGISTRY_METRICS_TOKEN:
    check_strength("REGISTRY_METRICS_TOKEN", REGISTRY_METRICS_TOKEN)
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
}

# --- REST framework and OpenAPI -------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["ingestion.api.renderers.FhirJsonRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "ingestion.api.renderers.FhirOnlyNegotiation",
    "EXCEPTION_HANDLER": "ingestion.api.errors.fhir_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "Birth Registry Ingestion API",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Without deep links, an operation's path is text inside its toggle button, not a link
    # nested in it (axe-core's nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "ingestion.api.schema.add_components",
    ],
}

# --- Auth, static, i18n ---------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"
# Sign-in throttling (django-axes) on /accounts/login/ and /admin/login/
# (registry/signin/lockout.py): AXES_FAILURE_LIMIT failures lock the pair (username, client
# address), never the username alone; REGISTRY_SIGN_IN_ADDRESS_LIMIT failures lock the
# address for every username. Both for AXES_COOLOFF_TIME hours after the last failure.
# Unlock: `manage.py axes_reset_username <name>`, `manage.py axes_reset_ip <address>` or
# `manage.py axes_reset` (docs/operations.md).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5, minimum=1)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_TIME", default=0.25)  # hours: 15 minutes
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
REGISTRY_SIGN_IN_ADDRESS_LIMIT = env.int("REGISTRY_SIGN_IN_ADDRESS_LIMIT", default=20, minimum=1)
AXES_HANDLER = "registry.signin.lockout.PairAndAddressHandler"
AXES_CLIENT_IP_CALLABLE = "config.client.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "registry.signin.lockout.lockout_response"
AXES_VERBOSE = False  # its log lines then mask the username and the address
# Failed API authentications (401) per client address; past it, 429 instead of 401. Asked
# only once authentication has failed: a request with a valid key never waits on it.
_RATE = r"[1-9]\d*/\d*[smhd]"  # django-ratelimit's form
_RATE_ACCEPTED = "a count per period, such as 30/m, 100/h or 10/5m"
REGISTRY_AUTH_FAILURE_RATE = env.str(
    "REGISTRY_AUTH_FAILURE_RATE", default="30/m", pattern=_RATE, accepted=_RATE_ACCEPTED
)
# Password reset by mail (registry/signin/): offered only when EMAIL_URL is set. Requests
# per client address (past it, 429), and mails per account (past it, none is sent).
REGISTRY_RESET_ADDRESS_RATE = env.str(
    "REGISTRY_RESET_ADDRESS_RATE", default="5/15m", pattern=_RATE, accepted=_RATE_ACCEPTED
)
REGISTRY_RESET_ACCOUNT_RATE = env.str(
    "REGISTRY_RESET_ACCOUNT_RATE", default="3/h", pattern=_RATE, accepted=_RATE_ACCEPTED
)
PASSWORD_RESET_TIMEOUT = 3600  # seconds: a reset link works for an hour, and once

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/settings/key/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# One date format everywhere, the admin included (config/formats/en/formats.py).
FORMAT_MODULE_PATH = ["config.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise expects it, even when empty
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed names (collectstatic writes them, with a manifest), each with .gz and .br beside
    # it; config.static serves them with a year's Cache-Control. make run, the Procfile's web
    # and the tests run collectstatic; in DEBUG pages name the files as they are, from the apps.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- Content-Security-Policy (django-csp) ---------------------------------------------------
# Scripts and style sheets come only from the registry's own static files: no inline <script>,
# no on*= attribute, no <style> block, no eval. The one exception is style="..." attributes
# (style-src-attr): the statistics' bar charts set each bar's length as a percentage in one
# (the only pages that need it; without it their bars would all be empty). An attribute can
# only restyle the element it is on; it cannot load or read anything, so the charts keep it
# rather than a class per percentage. Images may also be data: URLs (Swagger UI's icons are
# SVG data URLs in its CSS).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.SELF],
        "script-src": [csp.SELF],
        "style-src": [csp.SELF],
        "style-src-attr": [csp.UNSAFE_INLINE],
        "img-src": [csp.SELF, "data:"],
        "object-src": [csp.NONE],
        "base-uri": [csp.SELF],
        "form-action": [csp.SELF],
        "frame-ancestors": [csp.NONE],
    }
}

# --- Mail (docs/operations.md "Mail") ----------------------------------------------------
# django-environ's URL form: smtp://user:password@host:587, smtp+tls://... (STARTTLS),
# smtp+ssl://... (TLS from the start), consolemail:// (printed by the worker). Unset: no
# mail, and no password reset by mail (the sign-in page says to ask an administrator).
# (The URL itself is not kept as a setting: it may hold the password.)
REGISTRY_PASSWORD_RESET = bool(env.str("EMAIL_URL", default=""))
if REGISTRY_PASSWORD_RESET:
    _email = env.email_url("EMAIL_URL")
    EMAIL_BACKEND = _email["EMAIL_BACKEND"]
    EMAIL_HOST = _email["EMAIL_HOST"] or "localhost"
    EMAIL_PORT = _email["EMAIL_PORT"] or 25
    EMAIL_HOST_USER = _email["EMAIL_HOST_USER"] or ""
    EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"] or ""
    EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS", False)
    EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = 10  # seconds: a mail server that hangs holds a worker no longer than this
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="registry@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- Logging: structured enough to grep, never a payload ------------------------------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO", choices=LOG_LEVELS)
# plain: one readable line per event; json: one JSON object per line, with the ingestion id
# and the web's request id as fields (config.logfilters.Context).
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
        "kind_only": {"()": "config.logfilters.KindOnly"},
        "context": {"()": "config.logfilters.Context"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["kind_only", "context"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
    },
}
