"""Tokens -> embeddings X (rows are tokens).

- ``hashed``: each distinct token gets a vector drawn from a generator seeded by the
  SHA-256 of the token and the embedding seed: the same token always gives the same row for
  a given (seed, dim), on every machine. Entries are N(0, 1).
- ``one_hot``: the vocabulary is the distinct tokens in order of first appearance (query
  side first, then key side); token t is the unit vector e_t. ``dim`` pads with zero
  columns; a vocabulary larger than ``dim`` is an error.

Positions: ``none`` (so "I saw a saw" gives both "saw"s the same row), or ``sinusoidal``
(Vaswani et al. 2017: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(…)) added to X.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import torch

from app.attention.errors import InputError

KINDS = ("hashed", "one_hot")
POSITIONS = ("none", "sinusoidal")


@dataclass(frozen=True)
class EmbeddingSpec:
    kind: str = "hashed"
    dim: int = 8
    seed: int = 0
    positions: str = "none"


def split_text(text: str) -> list[str]:
    """Whitespace split, any script: "汤姆 追逐 杰瑞" is three tokens."""
    return text.split()


@functools.lru_cache(maxsize=4096)  # ≤ 4096 × 1024 float64 = 32 MB; stack() copies out
def token_vector(token: str, dim: int, seed: int) -> torch.Tensor:
    """The hashed embedding of one token: N(0, 1) entries from a generator seeded by
    SHA-256(seed, token). Cached: callers must not modify the returned tensor."""
    digest = hashlib.sha256(f"{seed}\x00{token}".encode()).digest()
    g = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") % (2**63))
    return torch.randn(dim, generator=g, dtype=torch.float64)


def sinusoidal(n: int, dim: int) -> torch.Tensor:
    pos = torch.arange(n, dtype=torch.float64)[:, None]  # [n, 1]
    i = torch.arange(0, dim, 2, dtype=torch.float64)  # [ceil(d/2)]
    angle = pos / torch.pow(10000.0, i / dim)  # [n, ceil(d/2)]
    pe = torch.zeros(n, dim, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : dim // 2])
    return pe


def embed(tokens: list[str], spec: EmbeddingSpec, vocab: list[str]) -> torch.Tensor:
    """X for `tokens`: [n, dim]. `vocab` is the shared one-hot vocabulary."""
    if isinstance(spec.dim, bool) or not isinstance(spec.dim, int) or spec.dim < 1:
        raise InputError("embedding.dim", "an integer ≥ 1 (features per token)", repr(spec.dim))
    if not tokens:
        raise InputError("tokens", "at least one token", "none")
    if spec.kind == "hashed":
        x = torch.stack([token_vector(t, spec.dim, spec.seed) for t in tokens])
    elif spec.kind == "one_hot":
        if len(vocab) > spec.dim:
            raise InputError("embedding.dim", f"at least the number of distinct tokens "
                             f"({len(vocab)}) for one_hot", str(spec.dim))
        index = {t: i for i, t in enumerate(vocab)}
        x = torch.zeros(len(tokens), spec.dim, dtype=torch.float64)
        x[torch.arange(len(tokens)), torch.tensor([index[t] for t in tokens])] = 1.0
    else:
        raise InputError("embedding.kind", "one of " + ", ".join(KINDS), repr(spec.kind))
    if spec.positions == "sinusoidal":
        x = x + sinusoidal(len(tokens), spec.dim)
    elif spec.positions != "none":
        raise InputError("embedding.positions", "one of " + ", ".join(POSITIONS),
                         repr(spec.positions))
    return x


def vocabulary(*token_lists: list[str]) -> list[str]:
    return list(dict.fromkeys(t for tokens in token_lists for t in tokens))


