"""Masks: ``none``, ``causal`` (query i may attend to keys j ≤ i), or a pasted 0/1 matrix
n_query × n_key with 1 = may attend. Returns a bool tensor, True = may attend, or None."""

from __future__ import annotations

from typing import Any

import torch

from app.attention.errors import InputError, shape_words

from .paste import parse_matrix


def build_mask(mask: Any, n_q: int, n_k: int) -> torch.Tensor | None:
    if mask is None or mask == "none":
        return None
    if mask == "causal":
        return torch.ones(n_q, n_k, dtype=torch.bool).tril()
    if isinstance(mask, str):
        try:
            mask = parse_matrix(mask, "options.mask")
        except InputError:
            raise InputError("options.mask", 'none, causal, or a 0/1 matrix n_query × n_key',
                             repr(mask[:40])) from None
    m = torch.as_tensor(mask, dtype=torch.float64)
    if tuple(m.shape) != (n_q, n_k):
        raise InputError("options.mask", f"a {n_q} × {n_k} matrix (n_query × n_key) of 0/1",
                         shape_words(m.shape))
    bad = torch.nonzero((m != 0) & (m != 1))
    if len(bad):
        i, j = bad[0].tolist()
        raise InputError("options.mask", "only 0 (masked) and 1 (may attend)",
                         f"{m[i, j].item():g} at row {i + 1}, column {j + 1}")
    return m == 1
