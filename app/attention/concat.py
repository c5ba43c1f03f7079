"""Concat attention (seed 004's first rule and its ``attention`` class).

Each query q_i (row i of X) is paired with the key in its own row, k_i (row i of X_kv),
as the seed pairs ``Q[0]`` with ``K[0]``; the values are the L = n_kv rows of V = X_kv:

    qk_i      = [q_i ; k_i]                             d_model + d_kv
    α_i       = softmax(qk_i·W_1 + b_1) over the L rows of V    W_1: (d_model+d_kv) × L
    applied_i = α_i·V                                   d_kv
    out_i     = [q_i ; applied_i]·W_2 + b_2             W_2: (d_model+d_kv) × d_out

The weights over V do not come from comparing q_i with each key: one linear layer maps the
pair (q_i, k_i) straight to L numbers, one per row of V. So W_1 has one column per key
token, and the key input must have as many rows as the query input (row i pairs with row i).
A mask (n_q × L) applies to those L numbers before the softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import HEADS_QK, HQF, Call, Mechanism, input_ids, mask_and_weigh
from .options import MASK_FILLS, choice, count
from .trace import Trace
from .weights import WeightSpec

PAIR = "(d_model+d_kv)"


@dataclass(frozen=True)
class Options:
    d_out: int | None = count(None, "width of the output (default d_model)")
    mask_fill: str = choice("-inf", MASK_FILLS, "value written into masked score cells")


class Concat(Mechanism):
    id = "concat"
    title = "Concat attention (seed 004, rule 1)"
    description = ("α_i = softmax([q_i ; k_i]·W_1 + b_1) over the L rows of V, where query "
                   "row i is paired with key row i; applied_i = α_i·V; output_i = "
                   "[q_i ; applied_i]·W_2 + b_2 (seed 004's attention class).")
    seed_doc = "004"
    Options = Options
    pairs_rows = True  # as the seed pairs Q[0] with K[0]
    positional_keys = True  # W_1 has one column per row of V

    def sizes(self, d_model, d_kv, n_q, n_k, opts):
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k, "L": n_k,
                PAIR: d_model + d_kv, "d_out": opts.d_out or d_model}

    def weight_specs(self, opts):
        return [WeightSpec("W_1", (PAIR, "L"), "scores_i = [q_i ; k_i]·W_1 + b_1, one column "
                           "per row of V"),
                WeightSpec("b_1", ("L",), "added to the scores"),
                WeightSpec("W_2", (PAIR, "d_out"), "out_i = [q_i ; applied_i]·W_2 + b_2"),
                WeightSpec("b_2", ("d_out",), "added to the output")]

    def step_ids(self, opts, cross, masked):
        return [*input_ids(cross), "qk_concat", "scores", *(["masked"] if masked else []),
                "weights", "weighted", "out_concat", "output"]

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        self.record_inputs(c, trace)
        w = c.w
        # qk_concat: each query next to the key in its own row
        qk = trace.record("qk_concat", "Query next to its key", "[q_i ; k_i]",
                          torch.cat([c.x, c.x_kv], dim=1), ("query", "feature"))  # [n_q, d_m+d_kv]
        # scores: one linear layer from the pair to one number per row of V
        scores = trace.record("scores", "Scores [q_i ; k_i]·W_1 + b_1",
                              "S_i = [q_i ; k_i]·W_1 + b_1, one column per row of V",
                              (qk @ w["W_1"] + w["b_1"])[None], HEADS_QK)  # [1, n_q, L]
        # masked, weights: softmax over the L rows of V
        alpha = mask_and_weigh(trace, scores, c, "α_i = softmax(S_i) over the L rows of V; "
                               "each row sums to 1")  # [1, n_q, L]
        # weighted: applied_i = α_i·V, with V = X_kv itself
        applied = trace.record("weighted", "Applied values α·V", "applied_i = α_i·V, V = "
                               + ("X_kv" if c.cross else "X"), alpha @ c.x_kv,
                               HQF)  # [1, n_q, d_kv]
        # out_concat: each query next to what it attended to
        oc = trace.record("out_concat", "Query next to its applied value", "[q_i ; applied_i]",
                          torch.cat([c.x, applied[0]], dim=1), ("query", "feature"))
        # output: the seed's second linear layer
        return trace.record("output", "Output [q_i ; applied_i]·W_2 + b_2",
                            "out_i = [q_i ; applied_i]·W_2 + b_2", oc @ w["W_2"] + w["b_2"],
                            ("query", "feature"))  # [n_q, d_out]
