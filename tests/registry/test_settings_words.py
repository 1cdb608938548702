"""The settings area's words: every hint wired to its field, one date format."""

from __future__ import annotations

import datetime
from html.parser import HTMLParser

import pytest
from django.template import Context, Template

from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.dates import day, when
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, birth, member

pytestmark = pytest.mark.django_db


class References(HTMLParser):
    """The ids on a page, and the ids its aria-describedby and aria-labelledby point at."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.pointed: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        for name in ("aria-describedby", "aria-labelledby"):
            for target in (values.get(name) or "").split():
                self.pointed.append((f"<{tag} {name}>", target))


def dangling(html: str) -> list[tuple[str, str]]:
    page = References()
    page.feed(html)
    return [(where, target) for where, target in page.pointed if target not in page.ids]


SETTINGS_PAGES = [
    "/settings/key/",
    "/settings/key/rotate/",
    "/settings/key/revoke/",
    "/settings/statistics/",
    "/settings/statistics/?from=2025&to=2020",  # with errors
    "/settings/password/",
    "/settings/sandbox/",
]


def test_every_hint_points_at_an_id_on_the_page():
    sandbox = PracticeFactory(slug="try-it", name="Try it", sandbox=True)
    user = member(sandbox, "sam")
    key_mint(practice=sandbox, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    birth(sandbox, birth_year=2024)
    client = signed_in(user)
    checked = 0
    for path in SETTINGS_PAGES:
        response = client.get(path)
        assert response.status_code in (200, 400), (path, response.status_code)
        html = response.content.decode()
        assert not dangling(html), (path, dangling(html))
        checked += html.count("aria-describedby")
    bad = client.post("/settings/password/", {"old_password": "wrong"})
    assert not dangling(bad.content.decode())
    keyless = signed_in(member(PracticeFactory(), "kim"))  # no key yet: the mint form
    html = keyless.get("/settings/key/mint/").content.decode()
    assert "Mint key" in html
    assert not dangling(html)
    refused = keyless.post("/settings/key/mint/", {}).content.decode()  # no scope chosen
    assert "Choose at least one scope." in refused
    assert not dangling(refused)
    assert checked >= 6  # the password hints, the scopes, the year range


def test_the_password_rules_are_wired_to_the_new_password():
    client = signed_in(member(PracticeFactory(), "sam"))
    html = client.get("/settings/password/").content.decode()
    assert 'aria-describedby="id_new_password1_helptext"' in html
    assert 'id="id_new_password1_helptext"' in html


def test_one_date_format_for_a_moment_and_for_a_day():
    moment = datetime.datetime(2026, 11, 24, 22, 32, tzinfo=datetime.UTC)
    assert when(moment) == "24 Nov 2026, 22:32 UTC"
    assert day(datetime.date(2026, 11, 4)) == "4 Nov 2026"
    eastern = moment.astimezone(datetime.timezone(datetime.timedelta(hours=-5)))
    assert when(eastern) == "24 Nov 2026, 22:32 UTC"  # always said in UTC
    rendered = Template("{% load dates %}{{ moment|when }}").render(Context({"moment": moment}))
    assert rendered == '<time datetime="2026-11-24T22:32:00+00:00">24 Nov 2026, 22:32 UTC</time>'


def test_the_key_page_says_every_date_one_way():
    practice = PracticeFactory()
    key, _ = key_mint(practice=practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    html = signed_in(member(practice, "sam")).get("/settings/key/").content.decode()
    shown = when(key.created_at)
    assert html.count(shown) == 2  # created, and the history's row
