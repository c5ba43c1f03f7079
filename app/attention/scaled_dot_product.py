"""Scaled dot-product attention, one head (seed 000, Li Hongyi's self-attention notes).

    Q = X·W_q,  K = X_kv·W_k,  V = X_kv·W_v
    α = softmax(Q·Kᵀ · s)        (scale_stage = before_softmax, the standard form)
    output = α·V

The scale s is 1/√d_k by default. Seed 000's code writes ``softmax(Q·Kᵀ) * (1/√n)``:
scaled *after* the softmax by the number of tokens n. ``scale="sqrt_n",
scale_stage="after_softmax"`` reproduces it exactly, and then each row of α sums to 1/√n.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import HKF, HQF, Call, Mechanism, attend, attend_ids, input_ids
from .options import MASK_FILLS, SCALE_STAGES, choice, count, scale_field
from .trace import Trace
from .weights import WeightSpec


@dataclass(frozen=True)
class Options:
    d_k: int | None = count(None, "width of Q and K (default d_model)")
    d_v: int | None = count(None, "width of V and of the output (default d_k)")
    scale: str | float = scale_field("sqrt_dk", "the multiplier s of the scores: 1/√d_k, "
                                     "1/√d_model, 1/√n, none, or a number used as s")
    scale_stage: str = choice("before_softmax", SCALE_STAGES,
                              "apply s before the softmax (standard) or after it (seed 000's code)")
    mask_fill: str = choice("-inf", MASK_FILLS, "value written into masked score cells")


class ScaledDotProduct(Mechanism):
    id = "scaled_dot_product"
    title = "Scaled dot-product attention"
    description = ("One head: softmax(Q·Kᵀ·s)·V with Q = X·W_q, K = X·W_k, V = X·W_v. "
                   "The scale and where it is applied are options, to reproduce seed 000's "
                   "code (scale 1/√n after the softmax).")
    seed_doc = "000"
    Options = Options

    def sizes(self, d_model, d_kv, n_q, n_k, opts):
        d_k = opts.d_k or d_model
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k, "d_k": d_k, "d_v": opts.d_v or d_k}

    def weight_specs(self, opts):
        return [WeightSpec("W_q", ("d_model", "d_k"), "Q = X·W_q"),
                WeightSpec("W_k", ("d_kv", "d_k"), "K = X_kv·W_k"),
                WeightSpec("W_v", ("d_kv", "d_v"), "V = X_kv·W_v")]

    def step_ids(self, opts, cross, masked):
        return [*input_ids(cross), "q", "k", "v", *attend_ids(opts.scale_stage, masked),
                "output"]

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        self.record_inputs(c, trace)
        # q, k, v: project the inputs (one head)
        q = trace.record("q", "Queries Q", "Q = X·W_q", (c.x @ c.w["W_q"])[None],
                         HQF)  # [1, n_q, d_k]
        k = trace.record("k", "Keys K", "K = X_kv·W_k" if c.cross else "K = X·W_k",
                         (c.x_kv @ c.w["W_k"])[None], HKF)  # [1, n_k, d_k]
        v = trace.record("v", "Values V", "V = X_kv·W_v" if c.cross else "V = X·W_v",
                         (c.x_kv @ c.w["W_v"])[None], HKF)  # [1, n_k, d_v]
        o = c.opts
        weighted = attend(trace, q, k, v, c, o.scale, o.scale_stage, o.mask_fill)
        # output: α·V, one row per query
        return trace.record("output", "Output α·V", "output = α·V", weighted[0],
                            ("query", "feature"))  # [n_q, d_v]
