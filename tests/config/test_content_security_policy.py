"""Content-Security-Policy on every page, and every page still working under it.

The header is checked on each kind of answer; Debian's Chromium then opens the pages that the
other browser tests do not (the API docs, the admin's key pages, the lock-out page), and
tests/browser.py fails any test whose pages report a violation or a resource that did not
load. The widths, key and review browser tests cover the settings area and the review admin
under the same watch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.browser import ARTIFACTS, Watcher, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, member

REQUIRED = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
]


def directives(header: str) -> list[str]:
    return [part.strip() for part in header.split(";")]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/", 200),
        ("/accounts/login/", 200),
        ("/admin/login/", 200),
        ("/docs/", 200),
        ("/docs/?script", 200),
        ("/settings/key/", 302),
        ("/no/such/page/", 404),
        ("/api/registry/fhir/metadata", 200),
    ],
)
def test_every_answer_carries_the_policy(path, status):
    response = Client().get(path)
    assert response.status_code == status
    policy = directives(response["Content-Security-Policy"])
    assert set(REQUIRED) <= set(policy), policy
    # Nothing weakens scripts: no inline, no eval, no other origin.
    assert not [part for part in policy if part.startswith("script-src") and part != REQUIRED[1]]
    assert "unsafe-eval" not in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_api_docs_page_has_no_inline_script_or_style_block():
    page = Client().get("/docs/").content.decode()
    assert "<style" not in page
    assert "<script>" not in page.replace(" ", "")
    assert 'src="/docs/?script=' in page
    script = Client().get("/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in script.content


# --- In the browser ----------------------------------------------------------------------------


@pytest.fixture
def people(transactional_db) -> dict[str, Any]:
    practice = PracticeFactory(slug="st-mary", name="St Mary's")
    member(practice, "sam")
    User.objects.create_superuser("root", password=PASSWORD)
    return {"practice": practice}


@pytest.fixture
def browser_page(people, live_server, monkeypatch) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


def sign_in(page: Any, username: str, path: str) -> None:
    page.goto(f"/accounts/login/?next={path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def test_the_api_docs_work_under_the_policy(browser_page):
    page = browser_page
    page.goto("/docs/")
    submit = page.locator(".opblock-summary", has_text="/api/registry/fhir/Bundle").first
    submit.wait_for()  # Swagger UI ran: its bundle, its preset and the split script loaded
    submit.click()
    page.get_by_text("Example Value").first.wait_for()
    page.get_by_role("button", name="Try it out").first.click()
    page.get_by_role("button", name="Execute").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "csp-docs.png"), full_page=False)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(250, 250, 250)"  # its own style sheet, not a <style> block


def test_the_admin_key_pages_work_under_the_policy(browser_page):
    page = browser_page
    sign_in(page, "root", "/admin/")
    page.goto("/admin/registry/practice/")
    page.locator("input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("mint_key")
    page.get_by_role("button", name="Go").click()
    page.get_by_role("button", name="Mint").first.click()
    token = page.locator("input[data-select-on-focus]").first
    page.wait_for_load_state()  # its deferred script has run
    token.focus()  # the page's script, not an onfocus attribute, selects it
    selected = token.evaluate("e => e.value.substring(e.selectionStart, e.selectionEnd)")
    assert selected.startswith("rgk_") and len(selected) == 44
    page.screenshot(path=str(ARTIFACTS / "csp-admin-token.png"), full_page=True)
    page.goto("/admin/keys/keyevent/")
    page.get_by_text("mint").first.wait_for()


def test_the_sign_in_pages_work_under_the_policy(browser_page, settings):
    page = browser_page
    page.goto("/")
    page.goto("/admin/login/")
    page.goto("/accounts/password_reset/")  # no mail configured: a page saying whom to ask
    settings.REGISTRY_PASSWORD_RESET = True
    page.goto("/accounts/password_reset/")
    page.get_by_role("button").first.wait_for()
    page.goto("/accounts/password_reset/done/")
    page.goto("/accounts/reset/done/")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill("sam")
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_load_state()
    page.get_by_text("Too many attempts. Try again in 15 minutes.").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "csp-locked-out.png"), full_page=True)


def test_the_watcher_sees_a_violation_and_a_missing_asset(live_server, monkeypatch):
    """The check above cannot pass by seeing nothing: a page that breaks the policy the
    service sends, and names a static file that is not there, is reported three times."""
    from csp.utils import build_policy

    probe = f"{live_server.url}/csp-probe/"
    body = (
        "<!doctype html><title>probe</title><style>p{color:red}</style>"
        "<script>document.title = 'ran'</script>"
        '<script src="/static/no-such-file.js"></script><p>probe</p>'
    )
    headers = {"Content-Security-Policy": build_policy(), "Content-Type": "text/html"}
    with chromium_page(live_server.url, monkeypatch) as page:
        page.route(probe, lambda route: route.fulfill(status=200, headers=headers, body=body))
        watcher: Watcher = page.registry_watcher
        page.goto(probe)
        page.wait_for_load_state("networkidle")
        assert page.title() == "probe"  # the inline script did not run
        seen = list(watcher.problems)
        watcher.problems.clear()  # seen here: not a failure of this test
    assert any("style-src" in problem for problem in seen), seen
    assert any("script-src" in problem for problem in seen), seen
    assert any("404 for script" in problem and "no-such-file.js" in problem for problem in seen)


# -- The header kept per process (lib/policy.py) ------------------------------------------


def _answered(response: Any, request: Any = None) -> Any:
    from django.test import RequestFactory

    from lib.policy import ContentSecurityPolicy

    request = request or RequestFactory().get("/")
    middleware = ContentSecurityPolicy(lambda _: response)
    middleware.process_request(request)
    return middleware(request)


def test_the_kept_header_is_django_csps_own():
    from csp.middleware import CSPMiddleware
    from django.http import HttpResponse
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    theirs = CSPMiddleware(lambda _: HttpResponse("x"))
    theirs.process_request(request)
    expected = theirs(request)["Content-Security-Policy"]
    assert _answered(HttpResponse("x"))["Content-Security-Policy"] == expected
    assert "Content-Security-Policy-Report-Only" not in _answered(HttpResponse("x"))


def test_a_changed_setting_changes_the_kept_header(settings):
    from django.http import HttpResponse

    before = _answered(HttpResponse("x"))["Content-Security-Policy"]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert _answered(HttpResponse("x"))["Content-Security-Policy"] == "default-src 'none'"
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    answered = _answered(HttpResponse("x"))
    assert "img-src 'self'" in directives(answered["Content-Security-Policy-Report-Only"])
    assert before != answered["Content-Security-Policy"]


def test_a_views_own_policy_and_a_nonce_go_through_django_csp(settings):
    import csp
    from django.http import HttpResponse
    from django.test import RequestFactory

    updated = HttpResponse("x")
    updated._csp_update = {"img-src": ["https://example.org"]}  # as @csp_update sets it
    assert "https://example.org" in _answered(updated)["Content-Security-Policy"]

    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": [csp.constants.NONCE]}}
    request = RequestFactory().get("/")

    def page(_: Any) -> HttpResponse:
        return HttpResponse(f"<script nonce='{request.csp_nonce}'></script>")

    from lib.policy import ContentSecurityPolicy

    middleware = ContentSecurityPolicy(page)
    middleware.process_request(request)
    answered = middleware(request)
    assert f"'nonce-{request._csp_nonce}'" in answered["Content-Security-Policy"]


def test_a_nonce_asked_for_after_the_kept_header_is_an_error():
    from csp.exceptions import CSPNonceError
    from django.http import HttpResponse
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    _answered(HttpResponse("x"), request)
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)
