"""Additive attention (Bahdanau; seed 004's second rule: "concatenate, linear, tanh, sum").

    q_i = x_i·W_q,  k_j = x_kv,j·W_k          W_q: d_model × d_a,  W_k: d_kv × d_a
    score_ij = v_aᵀ · tanh(q_i + k_j + b_a)    v_a, b_a: d_a
    α = softmax(score) over keys               (no scaling: the score is not a dot product
                                                of two growing vectors, tanh bounds it)
    V = X_kv·W_v,  output = α·V                W_v: d_kv × d_v

q_i·W_q + k_j·W_k is the linear layer of the seed's "concatenate Q and K, then a linear
layer", written as two blocks of one matrix. ``v_a`` defaults to all ones: v_aᵀ·tanh(…) is
then the seed's "sum" over the features. Give v_a to learn a weighted sum instead.
This mechanism overrides the score of the shared pipeline and does not scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import HEADS_QK, HKF, HQF, Call, Mechanism, input_ids, mask_and_weigh
from .options import MASK_FILLS, choice, count
from .trace import Trace
from .weights import WeightSpec


@dataclass(frozen=True)
class Options:
    d_a: int | None = count(None, "width of the hidden layer inside the tanh (default d_model)")
    d_v: int | None = count(None, "width of V and of the output (default d_kv)")
    mask_fill: str = choice("-inf", MASK_FILLS, "value written into masked score cells")


class Additive(Mechanism):
    id = "additive"
    title = "Additive attention (Bahdanau)"
    description = ("score_ij = v_aᵀ·tanh(q_i + k_j + b_a) with q = X·W_q, k = X_kv·W_k; "
                   "softmax over keys, no scaling; output = α·V with V = X_kv·W_v. v_a is all "
                   "ones by default (seed 004's \"sum\").")
    seed_doc = "004"
    Options = Options

    def sizes(self, d_model, d_kv, n_q, n_k, opts):
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k, "d_a": opts.d_a or d_model,
                "d_v": opts.d_v or d_kv}

    def pair_cells(self, n_q, n_k, d_model, options):
        """The tanh layer holds one d_a vector per query–key pair: n_q·n_k·d_a cells."""
        d_a = options.get("d_a")
        return n_q * n_k * (d_a if isinstance(d_a, int) and d_a > 0 else d_model)

    def weight_specs(self, opts):
        return [WeightSpec("W_q", ("d_model", "d_a"), "q = X·W_q"),
                WeightSpec("W_k", ("d_kv", "d_a"), "k = X_kv·W_k"),
                WeightSpec("W_v", ("d_kv", "d_v"), "V = X_kv·W_v"),
                WeightSpec("b_a", ("d_a",), "added inside the tanh"),
                WeightSpec("v_a", ("d_a",), "score = v_aᵀ·tanh(q_i + k_j + b_a); "
                           "all ones = the seed's sum", init="ones")]

    def step_ids(self, opts, cross, masked):
        return [*input_ids(cross), "q", "k", "v", "scores", *(["masked"] if masked else []),
                "weights", "output"]

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        self.record_inputs(c, trace)
        w, kv = c.w, "X_kv" if c.cross else "X"
        # q, k, v: project the inputs (one head)
        q = trace.record("q", "Query features q", "q = X·W_q", (c.x @ w["W_q"])[None],
                         HQF)  # [1, n_q, d_a]
        k = trace.record("k", "Key features k", f"k = {kv}·W_k", (c.x_kv @ w["W_k"])[None],
                         HKF)  # [1, n_k, d_a]
        v = trace.record("v", "Values V", f"V = {kv}·W_v", (c.x_kv @ w["W_v"])[None],
                         HKF)  # [1, n_k, d_v]
        # scores: every query against every key through tanh, then v_a
        ones = bool((w["v_a"] == 1).all())
        scores = trace.record("scores", "Additive scores", "S_ij = v_aᵀ·tanh(q_i + k_j + b_a)",
                              self.score(q, k, w["b_a"], w["v_a"]), HEADS_QK,
                              note="v_a is all ones: the score is the plain sum of "
                              "tanh(q_i + k_j + b_a) over its features (seed 004's \"sum\")"
                              if ones else None)  # [1, n_q, n_k]
        # masked, weights: softmax over keys, no scaling
        alpha = mask_and_weigh(trace, scores, c, "α = softmax(S) over keys; each row sums "
                               "to 1")  # [1, n_q, n_k]
        # output: α·V, one row per query
        return trace.record("output", "Output α·V", "output = α·V", (alpha @ v)[0],
                            ("query", "feature"))  # [n_q, d_v]

    @staticmethod
    def score(q: torch.Tensor, k: torch.Tensor, b_a: torch.Tensor,
              v_a: torch.Tensor) -> torch.Tensor:
        """v_aᵀ·tanh(q_i + k_j + b_a) for every pair: q [h, n_q, d_a], k [h, n_k, d_a]."""
        hidden = torch.tanh(q[:, :, None, :] + k[:, None, :, :] + b_a)  # [h, n_q, n_k, d_a]
        return hidden @ v_a  # [h, n_q, n_k]
