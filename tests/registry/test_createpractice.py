import pytest
from django.core.management import CommandError, call_command

from registry.models import Practice

pytestmark = pytest.mark.django_db


def test_createpractice_creates_a_practice(capsys):
    call_command("createpractice", "st-mary", "--name", "St Mary's")
    practice = Practice.objects.get(slug="st-mary")
    assert practice.name == "St Mary's"
    assert "Created st-mary" in capsys.readouterr().out


def test_createpractice_is_idempotent(capsys):
    call_command("createpractice", "st-mary")
    call_command("createpractice", "st-mary")
    assert Practice.objects.filter(slug="st-mary").count() == 1
    assert "already exists" in capsys.readouterr().out


@pytest.mark.parametrize("slug", ["St Mary", "st_mary", "st-", "st--mary", "", "x" * 51, "é"])
def test_createpractice_refuses_a_bad_slug_with_a_clear_error(slug):
    with pytest.raises(CommandError, match="not a valid practice slug"):
        call_command("createpractice", slug)
    assert not Practice.objects.exists()
