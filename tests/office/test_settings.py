"""REGISTRY_SILENT_AFTER_DAYS is checked at start, as every setting is."""

from __future__ import annotations

from tests.config.test_strict_configuration import (
    MANAGE,
    assert_one_line_refusal,
    production_environment,
    run,
)


def test_a_bad_silence_setting_stops_start_up_with_one_line():
    result = run(MANAGE, production_environment(REGISTRY_SILENT_AFTER_DAYS="0"))
    assert_one_line_refusal(result, ["REGISTRY_SILENT_AFTER_DAYS", "whole number of at least 1"])
