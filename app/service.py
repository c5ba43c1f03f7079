"""The one service function the API calls: a request (plain data) in, a traced result out.

This is where the inputs (text, tokens, pasted matrices), the embedding, the mask and the
pasted weights are turned into tensors and handed to a mechanism from the registry. A matrix
already read into a float64 tensor (the API's ``limited`` reads every paste under its cell
cap) passes through without being read again.
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
from app.inputs.paste import as_tensor

#: The keys of a request (JSON API v1), of one side's input, and of the embedding.
REQUEST_KEYS = ("mechanism", "query", "key", "embedding", "weights", "seed", "options")
INPUT_KEYS = ("text", "tokens", "matrix")
EMBEDDING_KEYS = ("kind", "dim", "seed", "positions")
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class InputSpec:
    """One side's input: exactly one of text, tokens, matrix (tokens may label a matrix)."""

    text: str | None = None
    tokens: list[str] | None = None
    matrix: list[list[float]] | str | torch.Tensor | None = None


@dataclass(frozen=True)
class RunSpec:
    mechanism: str
    query: InputSpec
    key: InputSpec | None = None
    embedding: EmbeddingSpec = EmbeddingSpec()
    weights: dict[str, Any] = field(default_factory=dict)  # name -> matrix, text or tensor
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
    mask: torch.Tensor | None = None  # [n_query, n_key] bool, True = may attend

    @property
    def cells(self) -> int:
        """How many numbers the result holds: every step, weight, α and the output."""
        return (sum(s.data.numel() for s in self.trace.steps) + self.attention.numel()
                + self.output.numel() + sum(w.numel() for w in self.trace.weights.values()))


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
    x = as_tensor(spec.matrix, f"{side}.matrix")  # [n, d_model]
    if x.dim() != 2 or 0 in x.shape:
        raise InputError(f"{side}.matrix", "a non-empty matrix n × d (rows are tokens)",
                         f"shape {list(x.shape)}")
    if spec.tokens is not None and len(spec.tokens) != x.shape[0]:
        raise InputError(f"{side}.tokens", f"one label per matrix row ({x.shape[0]})",
                         f"{len(spec.tokens)} labels")
    return x


def side_input(side: str, spec: InputSpec, emb: EmbeddingSpec,
               vocab: list[str]) -> tuple[torch.Tensor, list[str]]:
    given = [k for k in INPUT_KEYS if getattr(spec, k) is not None]
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
    """Run `spec`: inputs, mask and weights become tensors (each matrix read once) and go
    to the mechanism. Size limits are the caller's (the API's ``limited``)."""
    mechanism = registry.get(spec.mechanism)
    vocab = vocabulary(*(tokens_of(s, i) or [] for s, i in (("query", spec.query),
                                                             ("key", spec.key)) if i))
    x, q_tokens = side_input("query", spec.query, spec.embedding, vocab)
    x_kv, k_tokens = (side_input("key", spec.key, spec.embedding, vocab) if spec.key
                      else (None, q_tokens))
    options = dict(spec.options)
    n_k = x.shape[0] if x_kv is None else x_kv.shape[0]
    mask = build_mask(options.pop("mask", None), x.shape[0], n_k)
    weights = {name: as_tensor(w, f"weights.{name}")
               for name, w in spec.weights.items() if w is not None}
    output, trace = mechanism(x, x_kv, weights, mask, options, seed=spec.seed)
    return RunResult(spec.mechanism, q_tokens, k_tokens, trace, trace["weights"].data,
                     output.detach().to(torch.float64), mask)


# --- a request as plain data (JSON API v1) -> RunSpec ------------------------------------

def spec_from_request(request: Any) -> RunSpec:
    """The RunSpec of a request dict in the JSON API v1 format, checked strictly.

    ``{"mechanism", "query", "key"?, "embedding"?, "weights"?, "seed"?, "options"?}``;
    ``query`` / ``key`` are ``{"text"}``, ``{"tokens"}`` or ``{"matrix", "tokens"?}``,
    ``key`` null means self-attention; the seed for random weights is ``weights.seed`` or
    top-level ``seed``.
    An unknown key anywhere (a typo such as ``"option"``) is an InputError naming it, so a
    setting is never silently ignored. Matrices are checked later, in run_attention.
    """
    _known("request", request, REQUEST_KEYS, required=("mechanism", "query"))
    mechanism = request["mechanism"]
    if not isinstance(mechanism, str):
        raise InputError("mechanism", "a mechanism id (a string)", _what(mechanism))
    key = request.get("key")
    options = request.get("options") or {}
    if not isinstance(options, dict):
        raise InputError("options", "an object of options", _what(options))
    return RunSpec(mechanism=mechanism, query=input_spec("query", request["query"]),
                   key=None if key is None else input_spec("key", key),
                   embedding=embedding_spec(request.get("embedding")),
                   weights={k: v for k, v in weights_of(request.get("weights")).items()
                            if k != "seed"},
                   seed=seed_of(request), options=dict(options))


def seed_of(request: dict) -> int:
    """The seed for random weights: ``weights.seed`` (DESIGN's API example) or top-level
    ``seed``; both are accepted, and giving two different seeds is an error."""
    weights = request.get("weights") if isinstance(request.get("weights"), dict) else {}
    given = {f: v for f, v in (("seed", request.get("seed")),
                               ("weights.seed", weights.get("seed"))) if v is not None}
    seeds = {f: _seed(f, v) for f, v in given.items()}
    if len(set(seeds.values())) > 1:
        raise InputError("weights.seed", f"the same seed as top-level seed ({seeds['seed']})",
                         str(seeds["weights.seed"]))
    return next(iter(seeds.values()), 0)


def input_spec(side: str, value: Any) -> InputSpec:
    """``{"text": ...}``, ``{"tokens": [...]}`` or ``{"matrix": ..., "tokens"?: [...]}``."""
    _known(side, value, INPUT_KEYS)
    text, tokens, matrix = (value.get(k) for k in INPUT_KEYS)
    if text is not None and not isinstance(text, str):
        raise InputError(f"{side}.text", "a string (split on whitespace)", _what(text))
    if tokens is not None:
        if not isinstance(tokens, list | tuple):
            raise InputError(f"{side}.tokens", "a list of strings", _what(tokens))
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise InputError(f"{side}.tokens", f"a string at position {i + 1}", _what(t))
        tokens = list(tokens)
    if matrix is not None and not isinstance(matrix, list | tuple | str):
        raise InputError(f"{side}.matrix", "a matrix: nested lists or pasted text",
                         _what(matrix))
    return InputSpec(text=text, tokens=tokens, matrix=matrix)


def embedding_spec(value: Any) -> EmbeddingSpec:
    """``{"kind", "dim", "seed", "positions"}``, each optional; null means the defaults."""
    if value is None:
        return EmbeddingSpec()
    _known("embedding", value, EMBEDDING_KEYS)
    spec = EmbeddingSpec()
    for name in ("kind", "positions"):
        if name in value and not isinstance(value[name], str):
            raise InputError(f"embedding.{name}", "a string", _what(value[name]))
    dim = value.get("dim", spec.dim)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise InputError("embedding.dim", "an integer ≥ 1 (features per token)", _what(dim))
    return EmbeddingSpec(kind=value.get("kind", spec.kind), dim=dim,
                         seed=_seed("embedding.seed", value.get("seed", spec.seed)),
                         positions=value.get("positions", spec.positions))


def weights_of(value: Any) -> dict[str, Any]:
    """name -> matrix (nested lists or pasted text) or null (drawn from the seed)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("weights", "an object: weight name -> matrix", _what(value))
    for name, w in value.items():
        if name == "seed":
            continue  # DESIGN's place for the seed; read by seed_of
        if w is not None and not isinstance(w, list | tuple | str):
            raise InputError(f"weights.{name}", "a matrix: nested lists or pasted text",
                             _what(w))
    return dict(value)


def _known(field: str, value: Any, keys: tuple[str, ...], required: tuple[str, ...] = ()):
    """`value` is a dict whose keys are all in `keys` and include `required`."""
    if not isinstance(value, dict):
        raise InputError(field, "an object with keys " + ", ".join(keys), _what(value))
    unknown = [k for k in value if k not in keys]
    if unknown:
        where = "" if field == "request" else f"{field}."
        raise InputError(where + str(unknown[0]), "only the keys " + ", ".join(keys),
                         "unknown " + ", ".join(repr(k) for k in unknown))
    missing = [k for k in required if value.get(k) is None]
    if missing:
        raise InputError(missing[0], f"{missing[0]!r} in the request", "none")


def _seed(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise InputError(field, "an integer from 0 to 2^63 − 1", _what(value))
    return value


def _what(value: Any) -> str:
    """What came, short: a value's repr clipped, or its type for containers."""
    if isinstance(value, dict | list | tuple):
        return f"a {type(value).__name__}"
    text = "null" if value is None else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
