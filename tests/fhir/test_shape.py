"""Counting a body's values on its bytes (ingestion/fhir/shape.py): no decoder, any block size."""

from __future__ import annotations

import pytest

from ingestion.fhir.shape import first_over, values_in, values_over


@pytest.mark.parametrize(
    ("text", "values"),
    [
        (b"0", 1),
        (b"[]", 2),  # one for the body, one for its bracket
        (b"[0,1,2]", 4),
        (b'{"a":[1,{"b":2}],"c":3}', 6),
        (b'{"a":"[[,{,\\",[","b":"\\\\"}', 3),  # brackets and commas in strings do not count
    ],
)
def test_values_are_counted_outside_strings(text, values):
    assert values_in(text) == values
    assert values_over(text, values - 1) and not values_over(text, values)


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64])
def test_escapes_across_block_edges_are_counted_as_in_one_block(monkeypatch, block):
    from ingestion.fhir import shape

    text = b'{"a":"\\\\\\"[,","b":"x\\\\","c":["\\",",{"d":"\\\\"}]}'
    whole = values_in(text)
    monkeypatch.setattr(shape, "BLOCK_BYTES", block)
    assert values_in(text) == whole == 7


def test_the_first_entry_over_the_limit_is_named():
    entries = [b"[1,2]", b"[1,2,3,4]", b"[[[[]]]]"]
    assert [values_in(entry) for entry in entries] == [3, 5, 5]
    assert first_over(entries, 4) == 1
    assert first_over(entries, 5) is None


def test_an_unclosed_string_hides_what_follows_it():
    assert values_in(b'["a,[,{') == 2
