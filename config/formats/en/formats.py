"""The one date format of the whole service (docs/decisions.md, "One date format").

Django's admin and every template that writes ``|date`` without a format use these, through
``FORMAT_MODULE_PATH``; Python code writes a moment with :func:`registry.dates.when`.
"""

DATE_FORMAT = "j M Y"  # 24 Nov 2026
DATETIME_FORMAT = r"j M Y, H:i \U\T\C"  # 24 Nov 2026, 22:40 UTC (TIME_ZONE is UTC)
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
