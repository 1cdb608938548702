"""REGISTRY_HTTPS (HSTS, the HTTPS redirect, Secure cookies) and proxy headers believed only
from a trusted proxy (lib/proxy.py). Through a real nginx: tests/config/test_nginx.py."""

from __future__ import annotations

import json
import os
import secrets
import subprocess

import pytest
from django.test import Client, override_settings

from tests.workers import ROOT

YEAR = 365 * 24 * 3600
BEHIND_A_PROXY = {
    "REGISTRY_TRUSTED_PROXIES": ["10.0.0.1"],
    "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
}


def production(**variables: str) -> dict[str, str]:
    """The environment of a production start: DEBUG off, real secrets, nothing generated."""
    env = {k: v for k, v in os.environ.items() if k not in {"REGISTRY_DEV_SECRETS", "DEBUG"}}
    env.update(
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(48),
        REGISTRY_FINGERPRINT_KEY=secrets.token_urlsafe(48),
        REGISTRY_PAYLOAD_KEY=secrets.token_urlsafe(48),
        REGISTRY_DEV_SECRETS="false",
        **variables,
    )
    return env


def manage(*arguments: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "manage.py", *arguments],
        cwd=ROOT,
        env=production(**variables),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


SHOW = (
    "import json; from django.conf import settings as s; print(json.dumps({n: getattr(s, n, None) "
    "for n in ['SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', "
    "'SECURE_SSL_REDIRECT', 'SECURE_REDIRECT_EXEMPT', 'SESSION_COOKIE_SECURE', "
    "'CSRF_COOKIE_SECURE', 'SECURE_PROXY_SSL_HEADER']}))"
)


def settings_of(**variables: str) -> dict[str, object]:
    done = manage("shell", "-c", SHOW, **variables)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_check_deploy_passes_with_registry_https():
    done = manage("check", "--deploy", "--fail-level", "WARNING", REGISTRY_HTTPS="true")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout + done.stderr


def test_check_deploy_without_it_names_what_is_missing():
    done = manage("check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode != 0
    for warning in ["security.W004", "security.W008", "security.W012", "security.W016"]:
        assert warning in done.stderr


def test_registry_https_sends_hsts_for_a_year_redirects_and_secures_cookies():
    shown = settings_of(REGISTRY_HTTPS="true")
    assert shown["SECURE_HSTS_SECONDS"] == YEAR
    assert shown["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert shown["SECURE_HSTS_PRELOAD"] is False  # the organisation's call (docs/operations.md)
    assert shown["SECURE_SSL_REDIRECT"] is True
    assert shown["SESSION_COOKIE_SECURE"] is True and shown["CSRF_COOKIE_SECURE"] is True
    assert shown["SECURE_PROXY_SSL_HEADER"] is None  # no trusted proxy: nobody is believed


def test_without_it_nothing_is_forced_and_secure_cookies_alone_still_work():
    shown = settings_of()
    assert not shown["SECURE_HSTS_SECONDS"] and not shown["SECURE_SSL_REDIRECT"]
    assert shown["SESSION_COOKIE_SECURE"] is False
    alone = settings_of(SECURE_COOKIES="true")
    assert alone["SESSION_COOKIE_SECURE"] is True and alone["CSRF_COOKIE_SECURE"] is True
    assert not alone["SECURE_HSTS_SECONDS"]


def test_a_trusted_proxy_list_makes_x_forwarded_proto_count():
    shown = settings_of(REGISTRY_TRUSTED_PROXIES="10.0.0.1,192.0.2.0/24")
    assert shown["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_the_old_secure_proxy_ssl_header_is_refused_naming_what_replaces_it():
    done = manage("check", SECURE_PROXY_SSL_HEADER="true")
    assert done.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER is no longer read" in done.stderr
    assert "REGISTRY_TRUSTED_PROXIES" in done.stderr


# -- In the process: the middleware with the settings REGISTRY_HTTPS makes --------------------


@pytest.fixture
def https_site():
    with override_settings(
        SECURE_SSL_REDIRECT=True,
        SECURE_HSTS_SECONDS=YEAR,
        SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
        SECURE_REDIRECT_EXEMPT=[r"^healthz(/|$)"],
        **BEHIND_A_PROXY,
    ):
        yield


@pytest.mark.django_db
def test_https_from_the_trusted_proxy_is_believed(https_site):
    response = Client(REMOTE_ADDR="10.0.0.1").get("/", HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == 200
    assert response["Strict-Transport-Security"] == f"max-age={YEAR}; includeSubDomains"


def test_https_claimed_by_anyone_else_is_not(https_site):
    response = Client(REMOTE_ADDR="198.51.100.7").get("/", HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == 301
    assert response["Location"].startswith("https://")
    assert "Strict-Transport-Security" not in response


@pytest.mark.django_db
def test_plain_http_is_redirected_but_healthz_answers_a_load_balancer(https_site):
    client = Client(REMOTE_ADDR="10.0.0.1")
    assert client.get("/accounts/login/").status_code == 301
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_x_forwarded_host_is_believed_only_from_the_trusted_proxy(settings):
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.1"]
    settings.USE_X_FORWARDED_HOST = True
    settings.ALLOWED_HOSTS = ["registry.example.org", "testserver"]
    forwarded = {"HTTP_X_FORWARDED_HOST": "registry.example.org"}
    trusted = Client(REMOTE_ADDR="10.0.0.1").get("/accounts/login/", **forwarded)
    assert trusted.wsgi_request.get_host() == "registry.example.org"
    other = Client(REMOTE_ADDR="198.51.100.7").get("/accounts/login/", **forwarded)
    assert other.wsgi_request.get_host() == "testserver"
