"""The invitation settings are checked at start, as every setting is."""

from __future__ import annotations

import pytest

from tests.config.test_strict_configuration import (
    MANAGE,
    assert_one_line_refusal,
    production_environment,
    run,
)

BAD = {
    "days, zero": ("REGISTRY_INVITATION_DAYS", "0", ["from 1 to 90"]),
    "days, words": ("REGISTRY_INVITATION_DAYS", "a week", ["REGISTRY_INVITATION_DAYS"]),
    "practice rate": ("REGISTRY_INVITATION_PRACTICE_RATE", "lots", ["30/m"]),
    "inviter rate": ("REGISTRY_INVITATION_INVITER_RATE", "5 an hour", ["30/m"]),
}


@pytest.mark.parametrize("case", BAD, ids=BAD.keys())
def test_a_bad_invitation_setting_stops_start_up_with_one_line(case):
    name, value, words = BAD[case]
    result = run(MANAGE, production_environment(**{name: value}))
    assert_one_line_refusal(result, [name, *words])
