"""Deep nesting is refused at the door (400 structure) before any parser recurses into it."""

from __future__ import annotations

import logging
import sys

import pytest

from ingestion.intake.submission import MAX_NESTING, NotABundle, check_nesting

pytestmark = pytest.mark.django_db


def nested(depth: int) -> bytes:
    inner = b"[" * (depth - 4) + b"]" * (depth - 4)  # under four outer levels
    return (
        b'{"resourceType":"Bundle","type":"batch","entry":[{"resource":{"resourceType":"Bundle",'
        b'"entry":' + inner + b"}}]}"
    )


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 958, 5000, 200_000])
def test_a_body_nested_deeper_than_the_limit_is_400_structure(api, depth, caplog):
    response = api.submit(nested(depth))
    assert response.status_code == 400, response.content
    issue = response.json()["issue"][0]
    assert issue["code"] == "structure"
    assert f"deeper than {MAX_NESTING} levels" in issue["diagnostics"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_body_at_the_limit_is_taken(api):
    assert api.submit(nested(MAX_NESTING)).status_code == 202


def test_brackets_inside_strings_do_not_count():
    check_nesting(b'{"a":"[[[[\\"[{{{{","b":[1,{"c":"]]]}}"}],"d":"x\\\\","e":"[","f":"}"}')


def test_brackets_that_do_not_match_are_invalid_json():
    with pytest.raises(NotABundle, match="brackets do not match"):
        check_nesting(b'{"entry":' + b"[" * 100_000)


def test_no_traceback_or_value_reaches_the_log():
    """The console handler logs an error's kind and place only (lib.logfilters)."""
    from lib.logfilters import KindOnly

    (handler,) = [
        h for h in logging.getLogger().handlers if any(isinstance(f, KindOnly) for f in h.filters)
    ]
    try:
        raise ValueError("chart C-secret-123")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed for %s", ("batch",), exc_info=sys.exc_info()
        )
    for log_filter in handler.filters:
        log_filter.filter(record)  # type: ignore[union-attr]
    line = handler.format(record)
    assert "failed for batch (ValueError at" in line
    assert "C-secret-123" not in line
    assert "Traceback" not in line


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 64])
def test_the_body_is_read_in_blocks_with_escapes_across_their_edges(monkeypatch, block):
    """A backslash at the end of one block escapes the first character of the next."""
    from ingestion.intake import submission

    tricky = b'{"a":"\\\\\\"[[","b":"x\\\\","c":["\\"]",{"d":"\\\\"}]}'
    deep = b'{"e":"\\"' + b'"' + b"[" * 70 + b"]" * 70 + b"}"
    unclosed = b'{"f":"\\\\"' + b"[" * 3 + b"}"
    monkeypatch.setattr(submission, "BLOCK_BYTES", block)
    check_nesting(tricky)
    with pytest.raises(NotABundle, match="deeper"):
        check_nesting(deep)
    with pytest.raises(NotABundle, match="do not match"):
        check_nesting(unclosed)
