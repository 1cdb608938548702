"""REGISTRY_SILENT_AFTER_DAYS is checked at start, as every setting is."""

from __future__ import annotations

import pytest

from tests.config.test_strict_configuration import (
    MANAGE,
    assert_one_line_refusal,
    production_environment,
    run,
)

BAD = {
    "zero": ("0", ["REGISTRY_SILENT_AFTER_DAYS", "at least 1"]),
    "words": ("three", ["REGISTRY_SILENT_AFTER_DAYS", "whole number"]),
}


@pytest.mark.parametrize("case", BAD, ids=BAD.keys())
def test_a_bad_silence_setting_stops_start_up_with_one_line(case):
    value, words = BAD[case]
    result = run(MANAGE, production_environment(REGISTRY_SILENT_AFTER_DAYS=value))
    assert_one_line_refusal(result, words)
