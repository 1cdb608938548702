"""The ground every other settings module stands on: the environment reader, the paths,
DEBUG and the embedded default, the secrets, the applications and the static files."""

from __future__ import annotations

from pathlib import Path

from config.environment import StrictEnv, read_env_file
from config.secrets import check_strength, generated_secrets, missing

# config/settings/base.py: the repository root is three levels up.
BASE_DIR = Path(__file__).resolve().parent.parent.parent
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
    "office",
    "config.apps.SiteConfig",  # the deploy checks (config/proxy.py)
]

MIDDLEWARE = [
    # First: every request's id (for its log lines) and its count and time (for /metrics).
    "ingestion.monitoring.requests.request_metrics_middleware",
    # Then: proxy headers from a peer that is not a trusted proxy are dropped.
    "config.proxy.trusted_proxy_middleware",
    "django.middleware.security.SecurityMiddleware",
    "lib.static.StaticFiles",  # WhiteNoise
    "lib.policy.ContentSecurityPolicy",  # the Content-Security-Policy of every page
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

# --- Internationalisation and static files ---------------------------------------------------
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
    # it; lib.static serves them with a year's Cache-Control. make run, the Procfile's web
    # and the tests run collectstatic; in DEBUG pages name the files as they are, from the apps.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_AUTOREFRESH = DEBUG
