"""Masks: ``none``, ``causal`` (query i may attend to keys j ≤ i), or a 0/1 matrix
n_query × n_key with 1 = may attend, given as nested lists or pasted text (any format
``paste.parse_matrix`` reads; ``true``/``false`` read as 1/0). Returns a bool tensor,
True = may attend, or None.

``parse_mask`` reads a mask before the token counts are known (the API reads every paste
under its cell cap first); ``build_mask`` reads it and checks it against n_q × n_k with the
engine's own ``check_mask``, the one place for those messages."""

from __future__ import annotations

import re
from typing import Any

import torch

from app.attention.base import check_mask
from app.attention.errors import InputError

from .paste import as_tensor

WORDS = ("none", "causal")


def parse_mask(mask: Any, *, max_cells: int | None = None) -> torch.Tensor | str | None:
    """None for no mask, ``"causal"`` as it is, else the matrix as a tensor (a bool mask
    passes through; anything else is read as float64 [rows, columns], not yet checked
    against n_q × n_k)."""
    if mask is None or (isinstance(mask, str) and mask == "none"):
        return None
    if isinstance(mask, str) and mask == "causal":
        return mask
    if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
        return mask
    if isinstance(mask, str) and not re.search(r"[\d\[]|true|false", mask, re.IGNORECASE):
        raise InputError("options.mask", f"{', '.join(WORDS)}, or a 0/1 matrix n_query × n_key",
                         repr(mask[:40]))
    return as_tensor(mask, "options.mask", max_cells=max_cells)


def build_mask(mask: Any, n_q: int, n_k: int, *,
               max_cells: int | None = None) -> torch.Tensor | None:
    """The mask as bool [n_q, n_k] (True = may attend), or None for no mask."""
    m = parse_mask(mask, max_cells=max_cells)
    if m is None:
        return None
    if isinstance(m, str):  # causal
        return torch.ones(n_q, n_k, dtype=torch.bool).tril()
    return check_mask(m, n_q, n_k)
