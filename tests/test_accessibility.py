"""WCAG 2.1 AA: axe-core over every page people use, at a phone's width and a desktop's.

axe-core comes from the registry package ``axe-playwright-python`` (its bundled axe.min.js,
never downloaded at run time) and runs in Debian's Chromium driven by Playwright
(tests/browser.py). Every page of :data:`PAGES` is opened at 390 and 1280 px as the person who
uses it; a serious or critical violation fails the test, naming the rule, the elements and the
page, and so does a hint that an ``aria-describedby`` names but the page does not hold. A
screenshot of each page at each width lands in tests/artifacts/a11y/ (git-ignored), named
``<page>-<width>.png``, to look at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.test import Client, override_settings
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from keys.models import INGEST_READ, INGEST_WRITE, KeyEvent
from keys.services import key_mint, key_rotate
from registry.members.services import invitation_send
from registry.models import Membership, Practice, Provider, Record, SubmissionCount
from registry.review.services import record_keep
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.config.error_urls")]

WIDTHS = [390, 1280]
SHOTS = ARTIFACTS / "a11y"
BLOCKING = {"serious", "critical"}
AXE = Axe()

Opener = Callable[[Any, dict[str, Any]], None]


@dataclass(frozen=True)
class Page:
    """A page as a person reaches it: who (a username, or nobody) and where (a path, or steps)."""

    name: str
    user: str | None
    path: str = ""
    opener: Opener | None = None

    def open(self, page: Any, data: dict[str, Any]) -> None:
        if self.opener is not None:
            self.opener(page, data)
        else:
            page.goto(self.path.format(**data))


def _key_token(page: Any, data: dict[str, Any]) -> None:
    page.goto("/settings/key/mint/?practice=sandbox")
    page.get_by_role("button", name="Mint key").click()


def _csrf_refused(page: Any, data: dict[str, Any]) -> None:
    page.goto("/accounts/login/")
    page.context.clear_cookies()  # as when the page was open too long: the token is gone
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def _locked_out(page: Any, data: dict[str, Any]) -> None:
    for _ in range(django_settings.AXES_FAILURE_LIMIT + 1):
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill("lou")
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_load_state()


def _selected_confirm(page: Any, data: dict[str, Any]) -> None:
    page.goto("/admin/registry/record/?suspected_duplicate__exact=1&voided__exact=0")
    page.locator("input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("keep_selected")
    page.get_by_role("button", name="Go").click()


def _invitation_link_shown(page: Any, data: dict[str, Any]) -> None:
    page.goto("/settings/members/?practice=st-mary")
    page.get_by_label("Email address").fill("new@example.org")
    with override_settings(REGISTRY_PASSWORD_RESET=False):  # no mail: the link is shown
        page.get_by_role("button", name="Send invitation").click()
        page.wait_for_load_state()


def _practice_new_refused(page: Any, data: dict[str, Any]) -> None:
    page.goto("/settings/practices/new/")
    page.get_by_label("Name").fill("Lakeside")
    page.get_by_label("Code").fill("Not A Code")
    page.get_by_label("First staff member's email address").fill("lu@example.org")
    page.get_by_role("button", name="Add the practice and invite").click()


def _scorecard_open(page: Any, data: dict[str, Any]) -> None:
    page.goto("/settings/statistics/?practice=st-mary")
    page.get_by_test_id("scorecard-details").locator("summary").click()


def _invitation_form(page: Any, data: dict[str, Any]) -> None:
    page.goto(data["nina_link"])


def _invitation_form_refused(page: Any, data: dict[str, Any]) -> None:
    page.goto(data["nina_link"])
    page.get_by_label("First name").fill("Nina")
    page.get_by_label("Last name").fill("Okafor")
    page.get_by_label("Password", exact=True).fill("password")
    page.get_by_label("Password again").fill("password")
    page.get_by_role("button", name="Accept and sign in").click()


def _invitation_for_an_account(page: Any, data: dict[str, Any]) -> None:
    page.goto(data["nadia_link"])


RECORD = "/admin/registry/record/{flagged}/change/"
PAGES = [
    # Public pages
    Page("home", None, "/"),
    Page("sign-in", None, "/accounts/login/"),
    Page("password-reset", None, "/accounts/password_reset/"),
    Page("password-reset-done", None, "/accounts/password_reset/done/"),
    Page("password-reset-confirm", None, "/accounts/reset/{uid}/{token}/"),
    Page("password-reset-complete", None, "/accounts/reset/done/"),
    Page("locked-out", None, opener=_locked_out),
    Page("admin-sign-in", None, "/admin/login/?next=/admin/"),
    Page("api-docs", None, "/docs/"),
    # Error pages
    Page("error-400", None, "/suspicious/"),
    Page("error-403", "rita", "/settings/key/rotate/?practice=st-mary"),
    Page("error-403-csrf", None, opener=_csrf_refused),
    Page("error-404", None, "/no/such/page/"),
    Page("error-500", None, "/boom/"),
    # The settings area
    Page("home-signed-in", "sam", "/"),
    Page("settings-key", "sam", "/settings/key/?practice=st-mary"),
    Page("settings-key-mint", "sam", "/settings/key/mint/?practice=st-mary"),
    Page("settings-key-rotate", "sam", "/settings/key/rotate/?practice=st-mary"),
    Page("settings-key-revoke", "sam", "/settings/key/revoke/?practice=st-mary"),
    Page("settings-key-token", "sam", opener=_key_token),
    Page("settings-statistics", "sam", "/settings/statistics/?practice=st-mary"),
    Page(
        "settings-statistics-range",
        "sam",
        "/settings/statistics/?practice=st-mary&from=2023&to=2024",
    ),
    Page("settings-statistics-scorecard", "sam", opener=_scorecard_open),
    Page("settings-feedback-mail", "sam", "/settings/statistics/feedback-mail/?practice=st-mary"),
    Page("settings-choose-practice", "root", "/settings/practices/"),
    Page("settings-no-practice", "nadia", "/settings/key/"),
    Page("settings-password", "sam", "/settings/password/"),
    Page("settings-password-done", "sam", "/settings/password/done/"),
    Page("settings-sandbox-reset", "sam", "/settings/sandbox/?practice=sandbox"),
    Page("settings-members", "sam", "/settings/members/?practice=st-mary"),
    Page("settings-members-reviewer", "rita", "/settings/members/?practice=st-mary"),
    Page("settings-members-link", "sam", opener=_invitation_link_shown),
    Page("settings-practice-new", "root", "/settings/practices/new/"),
    Page("settings-practice-new-refused", "root", opener=_practice_new_refused),
    # The registry office's console
    Page("registry-console", "root", "/registry/"),
    # Invitations
    Page("invitation-accept", None, opener=_invitation_form),
    Page("invitation-accept-refused", None, opener=_invitation_form_refused),
    Page("invitation-sign-in", None, opener=_invitation_for_an_account),
    Page("invitation-join", "nadia", opener=_invitation_for_an_account),
    Page("invitation-invalid", None, "/accounts/invitation/forged/"),
    # The registry office
    Page("office-scorecard", "root", "/registry/practices/st-mary/scorecard"),
    # The review admin
    Page("admin-home", "rita", "/admin/"),
    Page("admin-records", "rita", "/admin/registry/record/"),
    Page(
        "admin-queue",
        "rita",
        "/admin/registry/record/?suspected_duplicate__exact=1&voided__exact=0",
    ),
    Page("admin-record", "rita", RECORD),
    Page("admin-record-decided", "rita", "/admin/registry/record/{decided}/change/"),
    Page("admin-review-keep", "rita", RECORD.replace("change/", "review/keep/")),
    Page("admin-review-void", "rita", RECORD.replace("change/", "review/void/")),
    Page("admin-review-merge", "rita", RECORD.replace("change/", "review/merge/")),
    Page("admin-review-selected", "rita", opener=_selected_confirm),
    Page("admin-practices", "root", "/admin/registry/practice/"),
    Page("admin-practice", "root", "/admin/registry/practice/{practice}/change/"),
    Page("admin-users", "root", "/admin/auth/user/"),
    Page("admin-user", "root", "/admin/auth/user/{rita_id}/change/"),
    Page("admin-user-add", "root", "/admin/auth/user/add/"),
    Page("admin-memberships", "root", "/admin/registry/membership/"),
    Page("admin-membership-events", "root", "/admin/registry/membershipevent/"),
    Page("admin-invitations", "root", "/admin/registry/invitation/"),
    Page("admin-keys", "root", "/admin/keys/apikey/"),
    Page("admin-key-events", "root", "/admin/keys/keyevent/"),
]


@pytest.fixture
def registry(transactional_db, settings) -> dict[str, Any]:
    """A practice with a few births, a suspected duplicate awaiting review and one decided,
    a key, a sandbox practice, and a person of each kind. Written before the browser starts."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.REGISTRY_PASSWORD_RESET = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    practice = PracticeFactory(slug="st-mary", name="St Mary's Birth Centre")
    sandbox = PracticeFactory(slug="sandbox", name="Sandbox Practice", sandbox=True)
    for year in (2023, 2024):
        for _ in range(6):
            birth(practice, birth_year=year, attended_by=(Provider.Role.MIDWIFE,))
    flagged = _resembling(practice, "CHART-1001", "CHART-1002", "a")
    decided = _resembling(practice, "CHART-2001", "CHART-2002", "b")
    sam = member(practice, "sam", email="sam@example.org")
    member(sandbox, "sam")
    rita = member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)
    record_keep(record=decided, by=rita, note="Twins, not a duplicate: checked with the midwife.")
    User.objects.create_user("nadia", email="nadia@example.org", password=PASSWORD)
    User.objects.create_user("lou", password=PASSWORD)
    User.objects.create_superuser("root", password=PASSWORD)
    SubmissionCount.objects.create(  # the scorecard's: a month of courses sent
        practice=practice,
        day=timezone.now().date(),
        ingestions=2,
        courses=24,
        accepted=21,
        rejected=3,
        last_received_at=timezone.now(),
    )
    key, _ = key_mint(
        practice=practice, scopes=[INGEST_WRITE, INGEST_READ], by=sam, via=KeyEvent.Via.SETTINGS
    )
    key_rotate(practice=practice, expected_prefix=key.prefix, by=sam, via=KeyEvent.Via.SETTINGS)
    invitations = {
        name: invitation_send(practice=practice, email=email, role=role, by=sam, origin="").link
        for name, email, role in [
            ("nina_link", "nina@example.org", Membership.Role.STAFF),
            ("nadia_link", "nadia@example.org", Membership.Role.REVIEWER),
        ]
    }
    return invitations | {
        "flagged": flagged.pk,
        "decided": decided.pk,
        "practice": practice.pk,
        "rita_id": rita.pk,
        "uid": urlsafe_base64_encode(force_bytes(sam.pk)),
        "token": default_token_generator.make_token(sam),
    }


def _resembling(practice: Practice, first: str, second: str, letter: str) -> Record:
    for chart, flagged in ((first, False), (second, True)):
        record = birth(
            practice,
            external_record_id=chart,
            fingerprint=letter * 64,
            suspected_duplicate=flagged,
            attended_by=(Provider.Role.MIDWIFE,),
        )
    return record


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request) -> int:
    return request.param


@pytest.fixture
def browser(live_server, monkeypatch, width) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(live_server.url, monkeypatch) as page:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
        yield page


def signed_in_as(page: Any, username: str, base_url: str) -> None:
    """The session of ``username`` in the browser's cookies, without a sign-in page."""
    client = Client()
    client.force_login(User.objects.get(username=username))
    cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": base_url, "httpOnly": True}]
    )


def blocking_violations(page: Any) -> list[str]:
    """Serious and critical axe-core violations: rule, impact, and the elements at fault.

    axe-core sets inline styles while it measures, which the page's CSP refuses: what the CSP
    watcher (tests/browser.py) hears while axe runs is axe's doing, not the page's. Console
    events arrive in order before the result of the evaluation that caused them.
    """
    watched = page.registry_watcher.problems
    before = len(watched)
    results = AXE.run(page).response
    page.evaluate("0")
    watched[before:] = [p for p in watched[before:] if "style" not in p]
    found = []
    for violation in results["violations"]:
        if violation["impact"] not in BLOCKING:
            continue
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
        found.append(f"{violation['id']} ({violation['impact']}): {targets}")
    return found


DANGLING_HINTS = """() => [...document.querySelectorAll("[aria-describedby]")]
  .flatMap(e => e.getAttribute("aria-describedby").split(/\\s+/)
    .filter(id => id && !document.getElementById(id))
    .map(id => `${e.tagName.toLowerCase()}#${e.id} -> ${id}`))"""


@pytest.mark.parametrize("entry", PAGES, ids=[p.name for p in PAGES])
def test_no_serious_accessibility_violation(entry, registry, browser, live_server, width):
    page = browser
    if entry.user:
        signed_in_as(page, entry.user, live_server.url)
    entry.open(page, registry)
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(SHOTS / f"{entry.name}-{width}.png"), full_page=True)
    found = blocking_violations(page)
    found += [f"hint not on the page: {hint}" for hint in page.evaluate(DANGLING_HINTS)]
    assert not found, f"{entry.name} at {width}px ({page.url}):\n" + "\n".join(found)
