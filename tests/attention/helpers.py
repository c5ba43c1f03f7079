"""Small helpers shared by the attention tests: seeded float64 tensors and tolerances."""

from __future__ import annotations

import torch

TOL = {"atol": 1e-6, "rtol": 1e-6}


def rand(*shape: int, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    """A float64 tensor of standard normals times `scale`, the same for the same seed."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale


def close(a: torch.Tensor, b: torch.Tensor) -> None:
    """Assert two tensors agree to 1e-6 (float64), with a readable failure."""
    torch.testing.assert_close(torch.as_tensor(a, dtype=torch.float64),
                               torch.as_tensor(b, dtype=torch.float64), **TOL)


def alpha(trace) -> torch.Tensor:
    """α from a trace: the `weights` step, [heads, n_query, n_key]."""
    return trace["weights"].data


def random_mask(n_q: int, n_k: int, seed: int, keep_one: bool = True) -> torch.Tensor:
    """A random 0/1 bool mask; with `keep_one` every query keeps at least one key."""
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(n_q, n_k, generator=g) < 0.6
    if keep_one:
        m[torch.arange(n_q), torch.randint(0, n_k, (n_q,), generator=g)] = True
    return m
