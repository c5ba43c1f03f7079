"""Weights by name: their symbolic shapes, the seeded draw of any weight not given, checks.

Rows are tokens and a weight maps by right-multiplication: Q = X·W_q, so W_q is
d_model × d_k. A weight not given is drawn from its own generator, seeded by the request's
seed and the weight's name, so giving W_q never changes the W_k you get, and the numbers are
the same on every run and machine (torch's CPU Mersenne Twister, float64 Box–Muller).
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass

import torch

from .errors import InputError, shape_words


@dataclass(frozen=True)
class WeightSpec:
    """A weight a mechanism uses: its name, its shape in symbols, and what it does."""

    name: str
    dims: tuple[str, ...]  # symbols, e.g. ("d_model", "d_k")
    role: str  # e.g. "Q = X·W_q"
    init: str = "normal"  # "normal" (std 1/√fan_in), "ones" or "zeros"

    def shape(self, sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(sizes[d] for d in self.dims)

    def words(self, sizes: dict[str, int]) -> str:
        """``"8 × 4 (d_model × d_k; Q = X·W_q)"``."""
        return f"{shape_words(self.shape(sizes))} ({' × '.join(self.dims)}; {self.role})"


def draw(seed: int, spec: WeightSpec, shape: tuple[int, ...]) -> torch.Tensor:
    """The weight `spec` as drawn for `seed`: reproducible, independent per name.

    Small draws (the common case: a few hundred numbers, redrawn on every request) are
    cached; the mechanisms never modify a weight in place.
    """
    if math.prod(shape) <= CACHED_DRAW_CELLS:
        return _draw_cached(int(seed), spec.name, spec.init, shape)
    return _draw(int(seed), spec.name, spec.init, shape)


#: Draws up to this many numbers are cached (64 of them: at most 32 MB).
CACHED_DRAW_CELLS = 65_536


def _draw(seed: int, name: str, init: str, shape: tuple[int, ...]) -> torch.Tensor:
    if init == "ones":
        return torch.ones(shape, dtype=torch.float64)
    if init == "zeros":
        return torch.zeros(shape, dtype=torch.float64)
    g = torch.Generator().manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63))
    fan_in = shape[0] if len(shape) == 2 else max(shape[0], 1)
    return torch.randn(shape, generator=g, dtype=torch.float64) / fan_in**0.5


_draw_cached = functools.lru_cache(maxsize=64)(_draw)


def resolve(
    specs: list[WeightSpec],
    sizes: dict[str, int],
    given: dict[str, object] | None,
    seed: int,
    input_words: str,
) -> dict[str, torch.Tensor]:
    """Every weight in `specs`: the given one after checks, else the seeded draw.

    `input_words` says what the input was ("an input with 8 features") for the error text.
    A given weight that the mechanism does not use with these options is an error too: a
    user who pasted it should learn it has no effect.
    """
    given = {k: v for k, v in (given or {}).items() if v is not None}
    names = {s.name for s in specs}
    for name in given:
        if name not in names:
            raise InputError(f"weights.{name}",
                             "one of " + ", ".join(sorted(names)) + " for these options",
                             f"{name}, which this mechanism does not use")
    out = {}
    for spec in specs:
        shape = spec.shape(sizes)
        if spec.name not in given:
            out[spec.name] = draw(seed, spec, shape)
            continue
        w = as_float64(f"weights.{spec.name}", given[spec.name])
        if len(shape) == 1 and w.dim() == 2 and 1 in w.shape:
            w = w.reshape(-1)  # a bias pasted as one row or one column
        if tuple(w.shape) != shape:
            raise InputError(f"weights.{spec.name}",
                             f"{spec.words(sizes)} for {input_words}", shape_words(w.shape))
        if not torch.isfinite(w).all():
            bad = torch.nonzero(~torch.isfinite(w))[0].tolist()
            raise InputError(f"weights.{spec.name}", "finite numbers",
                             f"{w[tuple(bad)].item()} at {_at(bad)}")
        out[spec.name] = w
    return out


def as_float64(field: str, value: object) -> torch.Tensor:
    """`value` as a float64 tensor, or InputError naming `field` (ragged rows, text, ...).
    A float64 tensor comes back as it is (no copy)."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
        return value
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as e:
        got = ("rows of different lengths" if "sequence of length" in str(e)
               else f"{type(value).__name__} {str(value)[:40]!r}")
        raise InputError(field, "a rectangular array of numbers", got) from None


def _at(index: list[int]) -> str:
    if len(index) == 2:
        return f"row {index[0] + 1}, column {index[1] + 1}"
    return f"position {index[0] + 1}"
