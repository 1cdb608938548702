"""Static files through WhiteNoise: hashed names, brotli and gzip, cached for a year.

Pages name each file by a hash of its content (collectstatic's manifest), the API docs'
Swagger UI files included; the real server (gunicorn, as make run starts it) answers a hashed
name with the compressed copy the client accepts and a year's Cache-Control.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path

import brotli
import httpx
import pytest
from django.test import Client

from tests import workers
from tests.services import Stack

HASHED = re.compile(r"/static/[\w/.-]+\.[0-9a-f]{12}\.(?:css|js)")
ONE_YEAR = 365 * 24 * 60 * 60


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/admin/login/", "/static/admin/css/base."),
        ("/docs/", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle."),
        ("/docs/", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui."),
        ("/accounts/login/", "/static/settings/settings."),
    ],
)
def test_pages_name_static_files_by_their_hash(path, expected):
    page = Client().get(path).content.decode()
    names = HASHED.findall(page)
    assert [name for name in names if name.startswith(expected)], names


@pytest.mark.django_db
def test_no_page_names_a_static_file_without_its_hash():
    for path in ("/", "/accounts/login/", "/admin/login/", "/docs/"):
        page = Client().get(path).content.decode()
        named = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
        assert named and all(HASHED.fullmatch(name) or "favicon" in name for name in named), named


@pytest.fixture(scope="module")
def served(tmp_path_factory, django_db_setup, django_db_blocker) -> Iterator[tuple[str, str]]:
    """The real server, and the hashed name of Swagger UI's bundle as /docs/ names it."""
    with django_db_blocker.unblock():
        env = workers.worker_environment()
    with Stack(env, tmp_path_factory.mktemp("static")).web() as web:
        page = httpx.get(f"{web.url}/docs/", timeout=30).text
        [bundle] = [name for name in HASHED.findall(page) if "swagger-ui-bundle" in name]
        yield web.url, bundle


def fetch(url: str, encoding: str) -> tuple[httpx.Response, bytes]:
    """The answer and its body as sent (httpx would decode br and gzip)."""
    headers = {"Accept-Encoding": encoding}
    with httpx.Client(timeout=30) as client, client.stream("GET", url, headers=headers) as answer:
        return answer, b"".join(answer.iter_raw())


@pytest.mark.django_db
def test_a_hashed_file_is_sent_brotli_or_gzip_as_asked_and_cached_for_a_year(served):
    base, bundle = served
    plain, original = fetch(base + bundle, "identity")
    assert plain.status_code == 200
    assert len(original) > 500_000  # Swagger UI's bundle: the largest file of the docs page

    for encoding, decode in (("br", brotli.decompress), ("gzip", gzip.decompress)):
        answer, sent = fetch(base + bundle, f"{encoding}, deflate")
        assert answer.headers["Content-Encoding"] == encoding
        assert answer.headers["Vary"] == "Accept-Encoding"
        assert decode(sent) == original
        assert len(sent) < len(original) / 3
        assert f"max-age={ONE_YEAR}" in answer.headers["Cache-Control"]
        assert "immutable" in answer.headers["Cache-Control"]
    assert "Content-Encoding" not in plain.headers


@pytest.mark.django_db
def test_a_page_itself_is_not_cached_for_a_year(served):
    base, _ = served
    answer = httpx.get(f"{base}/docs/", timeout=30)
    assert f"max-age={ONE_YEAR}" not in answer.headers.get("Cache-Control", "")


@pytest.mark.django_db
def test_the_api_docs_travel_compressed(served):
    """Swagger UI is 2.3 MB as files; with brotli the page and its assets are a fraction."""
    base, _ = served
    page = httpx.get(f"{base}/docs/", timeout=30).text
    assets = sorted(set(HASHED.findall(page)))
    assert len(assets) >= 4  # Swagger UI's bundle, preset and stylesheet, and ours
    plain = sum(len(fetch(base + asset, "identity")[1]) for asset in assets)
    sent = sum(len(fetch(base + asset, "br")[1]) for asset in assets)
    print(f"/docs/ assets: {plain} bytes as files, {sent} bytes sent with brotli")
    assert plain > 2_000_000 and sent < 600_000


def test_a_static_html_file_carries_the_sites_security_headers(served):
    from django.conf import settings

    url, _ = served
    manifest = json.loads((Path(settings.STATIC_ROOT) / "staticfiles.json").read_text())
    html = [name for name in manifest["paths"].values() if name.endswith(".html")]
    assert html, "Swagger UI's oauth2-redirect.html is among the static files"
    answer = httpx.get(f"{url}/static/{html[0]}", timeout=30)
    assert answer.status_code == 200
    policy = Client().get("/accounts/login/")["Content-Security-Policy"]
    directives = set(answer.headers["content-security-policy"].split("; "))
    assert directives == set(policy.split("; "))  # the same policy, in any order
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff"
