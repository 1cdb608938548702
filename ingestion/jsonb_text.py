"""JSON text as PostgreSQL's ``jsonb::text`` writes it, for the receipts read on SQLite.

On PostgreSQL a receipt's entries are spliced in as the database writes them (keys ordered
shorter first then bytewise, ``", "`` and ``": "`` between items, non-ASCII as is); on the
embedded SQLite default they are written here the same way, so that a receipt's bytes do not
depend on the database (a sender comparing or hashing receipts sees one form).
"""

from __future__ import annotations

import json
from typing import Any


def jsonb_text(value: Any) -> str:
    return json.dumps(_in_jsonb_order(value), ensure_ascii=False, separators=(", ", ": "))


def _in_jsonb_order(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: (len(key.encode()), key.encode()))
        return {key: _in_jsonb_order(value[key]) for key in keys}
    if isinstance(value, list):
        return [_in_jsonb_order(item) for item in value]
    return value
