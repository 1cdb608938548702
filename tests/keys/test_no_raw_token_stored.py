"""A raw token lives only in the response that minted it: not in the database, not in logs."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import subprocess

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.http import HttpRequest
from django.test import Client
from rest_framework.exceptions import AuthenticationFailed

from keys.authentication import ApiKeyAuthentication
from keys.models import SCOPES, ApiKey, KeyEvent
from keys.services import key_revoke, key_rotate
from registry.models import Membership, Practice

TOKEN = re.compile(r"rgk_[0-9A-Za-z]{40}")


def mint_every_way() -> list[str]:
    """Mint, rotate and revoke through the command, the settings page and the admin."""
    tokens = []
    for slug in ["by-command", "by-settings", "by-admin"]:
        Practice.objects.create(slug=slug)

    out = io.StringIO()
    call_command("mintkey", "by-command", stdout=out, stderr=io.StringIO())
    call_command("mintkey", "by-command", "--rotate", stdout=out, stderr=io.StringIO())
    tokens += out.getvalue().split()

    member = User.objects.create_user("sam", password="correct horse battery staple")
    Membership.objects.create(user=member, practice=Practice.objects.get(slug="by-settings"))
    client = Client()
    assert client.login(
        request=HttpRequest(), username="sam", password="correct horse battery staple"
    )
    page = client.post("/settings/key/mint/?practice=by-settings", {"scopes": list(SCOPES)})
    tokens += TOKEN.findall(page.content.decode())
    key = ApiKey.objects.get(practice__slug="by-settings", revoked_at__isnull=True)
    page = client.post("/settings/key/rotate/", {"scopes": list(SCOPES), "key": key.prefix})
    tokens += TOKEN.findall(page.content.decode())

    User.objects.create_superuser("root", password="correct horse battery staple")
    admin = Client()
    assert admin.login(
        request=HttpRequest(), username="root", password="correct horse battery staple"
    )
    practice = Practice.objects.get(slug="by-admin")
    page = admin.post(
        "/admin/registry/practice/",
        {
            "action": "mint_key",
            "_selected_action": [practice.pk],
            "confirmed": "yes",
            "scopes": list(SCOPES),
        },
    )
    tokens += TOKEN.findall(page.content.decode())
    _, token = key_rotate(practice=practice, via=KeyEvent.Via.COMMAND)
    tokens.append(token)
    key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)

    assert len(set(tokens)) == 6
    assert ApiKey.objects.count() == 6
    return tokens


@pytest.mark.django_db(transaction=True)
def test_a_dumpdata_after_minting_contains_no_raw_token():
    tokens = mint_every_way()
    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)
    text = dump.getvalue()
    assert all(key.digest in text for key in ApiKey.objects.all())  # the keys are in it
    for token in tokens:
        assert token not in text
        assert token[12:] not in text  # nor the secret part alone


@pytest.mark.django_db(transaction=True)
def test_a_pg_dump_after_minting_contains_no_raw_token():
    tokens = mint_every_way()
    db = connection.settings_dict
    command = ["pg_dump", "--no-owner", "--dbname", db["NAME"]]
    for flag, value in [("--host", db["HOST"]), ("--port", db["PORT"]), ("--username", db["USER"])]:
        if value:
            command += [flag, str(value)]
    env = {**os.environ, "PGPASSWORD": db["PASSWORD"] or ""}
    dump = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    assert "keys_apikey" in dump
    assert all(key.digest in dump for key in ApiKey.objects.all())
    assert "django_session" in dump
    for token in tokens:
        assert token not in dump
        assert token[12:] not in dump


@pytest.mark.django_db(transaction=True)
def test_no_log_record_contains_a_raw_token(caplog, rf):
    caplog.set_level(logging.DEBUG)
    tokens = mint_every_way()
    for token in [*tokens, tokens[0][:-1] + "x"]:  # revoked, active, and a wrong secret
        request = rf.get("/", HTTP_AUTHORIZATION=f"Bearer {token}")
        with contextlib.suppress(AuthenticationFailed):
            ApiKeyAuthentication().authenticate(request)
    logged = caplog.text + " ".join(str(record.args) for record in caplog.records)
    assert "rgk_" in logged  # prefixes are logged
    for token in tokens:
        assert token not in logged
