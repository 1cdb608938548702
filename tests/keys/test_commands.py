from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from keys.models import INGEST_READ, INGEST_WRITE, ApiKey, KeyEvent, is_well_formed, token_digest

pytestmark = pytest.mark.django_db


def mintkey(capsys, *args: str) -> str:
    call_command("mintkey", *args)
    return capsys.readouterr().out


def test_mintkey_prints_only_the_token_on_stdout(capsys, practice):
    out = mintkey(capsys, "st-mary")
    token = out.strip()
    assert out == token + "\n"
    assert is_well_formed(token)
    key = ApiKey.objects.get(practice=practice)
    assert key.digest == token_digest(token)
    assert key.scopes == [INGEST_WRITE, INGEST_READ]
    event = KeyEvent.objects.get()
    assert (event.action, event.via, event.by, event.key_prefix) == (
        "mint",
        "command",
        None,
        key.prefix,
    )


def test_mintkey_takes_scopes(capsys, practice):
    mintkey(capsys, "st-mary", "--scopes", "ingest:read")
    assert ApiKey.objects.get().scopes == [INGEST_READ]


def test_mintkey_refuses_an_unknown_scope(practice):
    with pytest.raises(CommandError, match="Unknown scope ingest:delete"):
        call_command("mintkey", "st-mary", "--scopes", "ingest:read,ingest:delete")
    assert not ApiKey.objects.exists()


def test_mintkey_refuses_a_second_active_key_without_rotate(capsys, practice):
    mintkey(capsys, "st-mary")
    with pytest.raises(CommandError, match=r"already has an active key.*--rotate"):
        call_command("mintkey", "st-mary")
    assert capsys.readouterr().out == ""
    assert ApiKey.objects.count() == 1


def test_mintkey_rotate_replaces_the_active_key(capsys, practice):
    first = mintkey(capsys, "st-mary").strip()
    second = mintkey(capsys, "st-mary", "--rotate").strip()
    assert first != second
    active = ApiKey.objects.get(revoked_at__isnull=True)
    assert active.matches(second)
    assert ApiKey.objects.get(revoked_at__isnull=False).matches(first)
    assert KeyEvent.objects.order_by("-id").first().action == "rotate"


def test_mintkey_names_a_missing_practice(db):
    with pytest.raises(CommandError, match=r"No practice 'nowhere'.*createpractice"):
        call_command("mintkey", "nowhere")


def test_revokekey_revokes_the_active_key(capsys, practice, minted):
    key, _ = minted
    call_command("revokekey", "st-mary")
    assert capsys.readouterr().out == f"Revoked {key.prefix}… of st-mary.\n"
    key.refresh_from_db()
    assert not key.is_active
    assert KeyEvent.objects.filter(action="revoke", via="command", key_prefix=key.prefix).exists()


def test_revokekey_without_an_active_key_says_so(capsys, practice):
    call_command("revokekey", "st-mary")
    assert "no active key" in capsys.readouterr().out
    assert not KeyEvent.objects.exists()


def test_revokekey_names_a_missing_practice(db):
    with pytest.raises(CommandError, match="No practice"):
        call_command("revokekey", "nowhere")


def test_mintkey_rotate_keeps_the_old_scopes_unless_told(capsys, practice):
    mintkey(capsys, "st-mary", "--scopes", "ingest:read")
    mintkey(capsys, "st-mary", "--rotate")
    assert ApiKey.objects.get(revoked_at__isnull=True).scopes == [INGEST_READ]
    mintkey(capsys, "st-mary", "--rotate", "--scopes", "ingest:write ingest:read")
    assert ApiKey.objects.get(revoked_at__isnull=True).scopes == [INGEST_WRITE, INGEST_READ]


def test_mintkey_rotate_without_an_active_key_mints_one(capsys, practice):
    token = mintkey(capsys, "st-mary", "--rotate").strip()
    assert ApiKey.objects.get().matches(token)
