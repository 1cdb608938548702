"""Chart numbers that look identical are one chart: NFC, no format characters."""

from __future__ import annotations

import pytest

from ingestion.fhir.chart import normalise_chart_number, read_chart_number


@pytest.mark.parametrize(
    "spelling",
    [
        "C-\u00e9",  # NFC
        "C-e\u0301",  # NFD
        "\ufeffC-\u00e9",  # a byte-order mark
        "C-\u200b\u00e9",  # a zero-width space
        "C-\u00e9\u200d",  # a zero-width joiner
        "\u200eC-\u00e9 ",  # a left-to-right mark, a trailing space
    ],
)
def test_spellings_that_look_identical_read_as_one_chart_number(spelling: str) -> None:
    assert read_chart_number(spelling, "x") == "C-\u00e9"


def test_a_chart_number_of_format_characters_only_is_missing() -> None:
    problem = read_chart_number("\u200b\ufeff", "x")
    assert isinstance(problem, dict)
    assert problem["code"] == "required"


def test_ascii_chart_numbers_are_only_stripped() -> None:
    assert normalise_chart_number(" C-9 ") == "C-9"
