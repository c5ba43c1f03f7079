"""Masks: ``none``, ``causal`` (query i may attend to keys j ≤ i), or a 0/1 matrix
n_query × n_key with 1 = may attend, given as nested lists or pasted text (any format
``paste.parse_matrix`` reads; ``true``/``false`` read as 1/0). Returns a bool tensor,
True = may attend, or None."""

from __future__ import annotations

import re
from typing import Any

import torch

from app.attention.errors import InputError, shape_words

from .paste import as_matrix

WORDS = ("none", "causal")


def build_mask(mask: Any, n_q: int, n_k: int, *,
               max_cells: int | None = None) -> torch.Tensor | None:
    """The mask as bool [n_q, n_k] (True = may attend), or None for no mask."""
    if mask is None or (isinstance(mask, str) and mask == "none"):
        return None
    if isinstance(mask, str) and mask == "causal":
        return torch.ones(n_q, n_k, dtype=torch.bool).tril()
    if isinstance(mask, str) and not re.search(r"[\d\[]|true|false", mask, re.IGNORECASE):
        raise InputError("options.mask", f"{', '.join(WORDS)}, or a 0/1 matrix n_query × n_key",
                         repr(mask[:40]))
    m = torch.tensor(as_matrix(mask, "options.mask", max_cells=max_cells), dtype=torch.float64)
    if tuple(m.shape) != (n_q, n_k):
        raise InputError("options.mask", f"a {n_q} × {n_k} matrix (n_query × n_key) of 0/1",
                         shape_words(m.shape))
    bad = torch.nonzero((m != 0) & (m != 1))
    if len(bad):
        i, j = bad[0].tolist()
        raise InputError("options.mask", "only 0 (masked) and 1 (may attend)",
                         f"{m[i, j].item():g} at row {i + 1}, column {j + 1}")
    return m == 1
