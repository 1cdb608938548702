"""The web: hosts, HTTPS and proxies, request limits, the REST framework and OpenAPI, sign-in
and its throttles, the Content-Security-Policy and mail."""

from __future__ import annotations

from typing import Any

from csp import constants as csp

from config.environment import ConfigurationError, host_names, networks, origins, refuse
from config.settings.base import env

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
# Peers whose X-Forwarded-For is believed (lib/client.py): addresses or CIDR networks.
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

# --- REST framework and OpenAPI -------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["ingestion.api.renderers.FhirJsonRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "ingestion.api.renderers.FhirOnlyNegotiation",
    "EXCEPTION_HANDLER": "ingestion.api.handler.fhir_exception_handler",
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
AXES_CLIENT_IP_CALLABLE = "lib.client.client_address"
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
# Mails per account and requesting address: whoever asks spends only their own budget, so a
# stranger who knows an account's address cannot use up its owner's. The budget per account
# (all addresses together) is only a backstop against a flood from many addresses.
REGISTRY_RESET_REQUESTER_RATE = env.str(
    "REGISTRY_RESET_REQUESTER_RATE", default="3/h", pattern=_RATE, accepted=_RATE_ACCEPTED
)
REGISTRY_RESET_ACCOUNT_RATE = env.str(
    "REGISTRY_RESET_ACCOUNT_RATE", default="20/h", pattern=_RATE, accepted=_RATE_ACCEPTED
)
PASSWORD_RESET_TIMEOUT = 3600  # seconds: a reset link works for an hour, and once
# Invitations (registry/members/): a link works once, for this many days; invitations are
# counted per practice and per inviter (past either, the invitation is refused, 429).
REGISTRY_INVITATION_DAYS = env.int("REGISTRY_INVITATION_DAYS", default=7, minimum=1, maximum=90)
REGISTRY_INVITATION_PRACTICE_RATE = env.str(
    "REGISTRY_INVITATION_PRACTICE_RATE", default="20/h", pattern=_RATE, accepted=_RATE_ACCEPTED
)
REGISTRY_INVITATION_INVITER_RATE = env.str(
    "REGISTRY_INVITATION_INVITER_RATE", default="100/h", pattern=_RATE, accepted=_RATE_ACCEPTED
)

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/settings/key/"
LOGOUT_REDIRECT_URL = "/accounts/login/"


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
# The site's origin in links sent by mail, never the request's Host header (which a client
# chooses, port included). By default the first ALLOWED_HOSTS entry, with the scheme
# REGISTRY_HTTPS implies; a pattern there (".example.org", "*") names no site.
_PUBLIC_URL_ACCEPTED = "an origin such as https://registry.example.org"
_ORIGIN = r"https?://[^/\s?#@]+/?"
REGISTRY_PUBLIC_URL = env.str(
    "REGISTRY_PUBLIC_URL", default="", pattern=_ORIGIN, accepted=_PUBLIC_URL_ACCEPTED
).rstrip("/")
if not REGISTRY_PUBLIC_URL and ALLOWED_HOSTS and ALLOWED_HOSTS[0][:1] not in (".", "*"):
    REGISTRY_PUBLIC_URL = f"{'https' if REGISTRY_HTTPS else 'http'}://{ALLOWED_HOSTS[0]}"
if REGISTRY_PASSWORD_RESET and not REGISTRY_PUBLIC_URL:
    raise refuse(
        "REGISTRY_PUBLIC_URL",
        "is needed for the links in mail when the first ALLOWED_HOSTS entry is a pattern",
        _PUBLIC_URL_ACCEPTED,
    )
SERVER_EMAIL = DEFAULT_FROM_EMAIL
