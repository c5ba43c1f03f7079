"""Presets: ready-made requests (JSON API v1 format) that reproduce each seed's example.

A preset is ``{"id", "title", "description", "seed_doc", "request"}``; ``request`` is
exactly what a client would POST to ``/api/v1/attention`` (``app.service.spec_from_request``
reads it): ``{"mechanism", "query", "key", "embedding", "weights", "seed", "options"}``,
with the seed for random weights at the top level and ``weights`` as name -> matrix.

What each one shows, and where it comes from:

- ``seed004_worked_example``: seed 004 §3.3, 3 inputs × 4 features, its fixed
  key/query/value weights (4 × 3, right-multiplied: Q = X·W_q), no scaling.
- ``seed000_self_attention``: seed 000's ``SelfAttention(3, 5, 4)``: 5 tokens × 3 features
  -> 4; its code scales by 1/√n *after* the softmax, so every row of α sums to 1/√5.
  ``seed000_standard`` is the same input with the standard 1/√d_k before the softmax.
- ``i_saw_a_saw`` / ``i_saw_a_saw_positions``: seed 000's motivation: without positions
  both "saw" rows of α are identical; sinusoidal positions tell them apart.
- ``tom_chase_jerry``: seed 004 §2.3.2, the decoder's "汤姆 追逐 杰瑞" querying the encoder's
  "Tom chase Jerry" with additive (Bahdanau) attention.
- ``causal_multi_head``: seed 003's multi-head attention with a causal mask.
- ``seed002_shared_heads``: seed 002's ``SelfAttention`` (one head_dim × head_dim projection
  shared by the heads, 1/√embed_size, fill −1e20) with a padding mask.
"""

from __future__ import annotations

import copy
from typing import Any

HASHED_8 = {"kind": "hashed", "dim": 8, "seed": 0, "positions": "none"}
HASHED_8_SIN = {**HASHED_8, "positions": "sinusoidal"}

#: seed 004 §3.3, as printed there (each already d_model × d_k for X·W).
SEED004_X = [[1, 0, 1, 1], [0, 2, 0, 2], [1, 1, 1, 1]]
SEED004_W = {
    "W_q": [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]],  # query_weights
    "W_k": [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]],  # key_weights
    "W_v": [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]],  # value_weights
}

#: 5 tokens × 3 features for SelfAttention(3, 5, 4): N(0, 1) draws (torch seed 0), rounded.
SEED000_X = [[1.54, -0.29, -2.18], [0.57, -1.08, -1.40], [0.40, 0.84, -0.72],
             [-0.40, -0.60, 0.18], [-0.86, 1.10, -1.07]]
SEED000_TOKENS = ["a1", "a2", "a3", "a4", "a5"]

#: "Tom chase Jerry <pad> <pad>": a batch padded to 5; no query may look at the padding.
PADDED_TEXT = "Tom chase Jerry <pad> <pad>"
PADDING_MASK = [[1, 1, 1, 0, 0] for _ in range(5)]


def _request(mechanism: str, query: dict, options: dict, *, key: dict | None = None,
             embedding: dict | None = None, weights: dict | None = None,
             seed: int = 0) -> dict[str, Any]:
    return {"mechanism": mechanism, "query": query, "key": key, "embedding": embedding,
            "weights": weights or {}, "seed": seed, "options": options}


def _preset(id: str, title: str, seed_doc: str, description: str,
            request: dict[str, Any]) -> dict[str, Any]:
    return {"id": id, "title": title, "seed_doc": seed_doc, "description": description,
            "request": request}


PRESETS: tuple[dict[str, Any], ...] = (
    _preset("seed004_worked_example", "Worked example: 3 inputs, fixed weights", "004",
            "Seed 004 §3.3 step by step: three inputs of 4 features, its fixed key, query "
            "and value weights (Q = X·W_q, W 4 × 3), scores Q·Kᵀ with no scaling, softmax, "
            "then α·V. The numbers equal the seed's own printout.",
            _request("scaled_dot_product",
                     {"matrix": SEED004_X, "tokens": ["input 1", "input 2", "input 3"]},
                     {"d_k": 3, "scale": "none"}, weights=SEED004_W)),
    _preset("seed000_self_attention", "SelfAttention(3, 5, 4) as the seed wrote it", "000",
            "Seed 000's PyTorch SelfAttention(3, 5, 4): 5 tokens × 3 features projected to 4. "
            "Its code multiplies by 1/√n after the softmax (n = 5 tokens), not 1/√d_k before "
            "it: every row of α then sums to 1/√5 ≈ 0.447 instead of 1. Compare with "
            "seed000_standard.",
            _request("scaled_dot_product", {"matrix": SEED000_X, "tokens": SEED000_TOKENS},
                     {"d_k": 4, "scale": "sqrt_n", "scale_stage": "after_softmax"})),
    _preset("seed000_standard", "SelfAttention(3, 5, 4), standard scaling", "000",
            "The same input and weights as seed000_self_attention, with the formula the "
            "seed states: softmax(Q·Kᵀ/√d_k)·V. Rows of α sum to 1.",
            _request("scaled_dot_product", {"matrix": SEED000_X, "tokens": SEED000_TOKENS},
                     {"d_k": 4})),
    _preset("i_saw_a_saw", "I saw a saw: no positions", "000",
            "Seed 000's motivating sentence. Without position information the two \"saw\"s "
            "have the same embedding, so their rows of α (and of the output) are identical: "
            "attention alone cannot tell the verb from the noun.",
            _request("scaled_dot_product", {"text": "I saw a saw"}, {}, embedding=HASHED_8)),
    _preset("i_saw_a_saw_positions", "I saw a saw: sinusoidal positions", "000",
            "The same sentence with sinusoidal position encodings added to the embeddings: "
            "the two \"saw\"s now differ, and so do their rows of α.",
            _request("scaled_dot_product", {"text": "I saw a saw"}, {},
                     embedding=HASHED_8_SIN)),
    _preset("tom_chase_jerry", "Tom chase Jerry → 汤姆 追逐 杰瑞 (cross-attention)", "004",
            "Seed 004's translation example: the decoder's Chinese tokens (queries) attend "
            "to the encoder's English tokens (keys and values) with additive attention, "
            "score = v_aᵀ·tanh(q·W_q + k·W_k + b_a). Weights are random (seed 0), not "
            "trained: the pattern shows the mechanics, not a learned alignment.",
            _request("additive", {"text": "汤姆 追逐 杰瑞"}, {},
                     key={"text": "Tom chase Jerry"}, embedding=HASHED_8)),
    _preset("causal_multi_head", "Causal multi-head attention", "003",
            "Two heads over a short sentence with sinusoidal positions and a causal mask: "
            "each token attends only to itself and the tokens before it, so α is lower "
            "triangular in every head.",
            _request("multi_head", {"text": "the cat sat on the mat"},
                     {"heads": 2, "mask": "causal"}, embedding=HASHED_8_SIN)),
    _preset("seed002_shared_heads", "Shared head projection with a padding mask", "002",
            "Seed 002's SelfAttention: the 8 features are split into 2 heads of 4 first, one "
            "4 × 4 W_q, W_k, W_v is shared by both heads, scores are scaled by 1/√embed_size "
            "and masked cells get −1e20. The mask hides the two <pad> key columns, so their "
            "weights are exactly 0 in every row.",
            _request("multi_head_shared", {"text": PADDED_TEXT},
                     {"heads": 2, "projections": True, "mask_fill": "-1e20",
                      "mask": PADDING_MASK}, embedding=HASHED_8)),
)

_BY_ID = {p["id"]: p for p in PRESETS}


def list_presets() -> list[dict[str, Any]]:
    """Every preset, in a stable order (copies: callers may edit them freely)."""
    return [copy.deepcopy(p) for p in PRESETS]


def get_preset(preset_id: str) -> dict[str, Any]:
    """One preset by id (a copy); KeyError for an unknown id (the API answers 404)."""
    return copy.deepcopy(_BY_ID[preset_id])


def preset_ids() -> list[str]:
    return list(_BY_ID)
