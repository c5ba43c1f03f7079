"""Parse a pasted matrix. (JSON nested lists for now; other formats follow.)"""

from __future__ import annotations

import json

from app.attention.errors import InputError


def parse_matrix(text: str, field: str) -> list[list[float]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(field, "a matrix as JSON nested lists", f"unparseable text ({e})") from e
    return value
