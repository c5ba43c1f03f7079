"""The one service function the API calls: a request (plain data) in, a traced result out.

This is where the inputs (text, tokens, pasted matrices), the embedding, the mask and the
pasted weights are turned into tensors and handed to a mechanism from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from app.attention import registry
from app.attention.errors import InputError
from app.attention.trace import Trace
from app.inputs.embedding import EmbeddingSpec, embed, split_text, vocabulary
from app.inputs.masks import build_mask
from app.inputs.paste import parse_matrix


@dataclass(frozen=True)
class InputSpec:
    """One side's input: exactly one of text, tokens, matrix (tokens may label a matrix)."""

    text: str | None = None
    tokens: list[str] | None = None
    matrix: list[list[float]] | str | None = None


@dataclass(frozen=True)
class RunSpec:
    mechanism: str
    query: InputSpec
    key: InputSpec | None = None
    embedding: EmbeddingSpec = EmbeddingSpec()
    weights: dict[str, Any] = field(default_factory=dict)  # name -> matrix or pasted text
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)  # mechanism options + "mask"


@dataclass(frozen=True)
class RunResult:
    mechanism: str
    query_tokens: list[str]
    key_tokens: list[str]
    trace: Trace
    attention: torch.Tensor  # [heads, n_query, n_key]
    output: torch.Tensor  # [n_query, d_out]


def tokens_of(side: str, spec: InputSpec) -> list[str] | None:
    """The token labels of one side, or None if it is a matrix without labels."""
    if spec.text is not None:
        tokens = split_text(spec.text)
        if not tokens:
            raise InputError(f"{side}.text", "at least one token (text split on whitespace)",
                             "empty text")
        return tokens
    if spec.tokens is not None and spec.matrix is None:
        if not spec.tokens:
            raise InputError(f"{side}.tokens", "at least one token", "an empty list")
        return list(spec.tokens)
    return list(spec.tokens) if spec.tokens is not None else None


def matrix_of(side: str, spec: InputSpec) -> torch.Tensor:
    m = spec.matrix
    if isinstance(m, str):
        m = parse_matrix(m, f"{side}.matrix")
    x = torch.as_tensor(m, dtype=torch.float64)
    if x.dim() != 2 or 0 in x.shape:
        raise InputError(f"{side}.matrix", "a non-empty matrix n × d (rows are tokens)",
                         f"shape {list(x.shape)}")
    if spec.tokens is not None and len(spec.tokens) != x.shape[0]:
        raise InputError(f"{side}.tokens", f"one label per matrix row ({x.shape[0]})",
                         f"{len(spec.tokens)} labels")
    return x


def side_input(side: str, spec: InputSpec, emb: EmbeddingSpec,
               vocab: list[str]) -> tuple[torch.Tensor, list[str]]:
    given = [k for k in ("text", "tokens", "matrix") if getattr(spec, k) is not None]
    if not given or (spec.text is not None and len(given) > 1):
        raise InputError(side, "one of text, tokens or matrix (tokens may label a matrix)",
                         ", ".join(given) or "none")
    if spec.matrix is not None:
        x = matrix_of(side, spec)
        labels = tokens_of(side, spec) or [f"x{i + 1}" for i in range(x.shape[0])]
        return x, labels
    tokens = tokens_of(side, spec)
    return embed(tokens, emb, vocab), tokens


def run_attention(spec: RunSpec) -> RunResult:
    mechanism = registry.get(spec.mechanism)
    vocab = vocabulary(*(tokens_of(s, i) or [] for s, i in (("query", spec.query),
                                                             ("key", spec.key)) if i))
    x, q_tokens = side_input("query", spec.query, spec.embedding, vocab)
    x_kv, k_tokens = (side_input("key", spec.key, spec.embedding, vocab) if spec.key
                      else (None, q_tokens))
    options = dict(spec.options)
    n_k = x.shape[0] if x_kv is None else x_kv.shape[0]
    mask = build_mask(options.pop("mask", None), x.shape[0], n_k)
    weights = {name: parse_matrix(w, f"weights.{name}") if isinstance(w, str) else w
               for name, w in spec.weights.items() if w is not None}
    output, trace = mechanism(x, x_kv, weights, mask, options, seed=spec.seed)
    return RunResult(spec.mechanism, q_tokens, k_tokens, trace, trace["weights"].data,
                     output.detach().to(torch.float64))
