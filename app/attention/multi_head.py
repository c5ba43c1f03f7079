"""Multi-head attention (seed 003, labml's annotated ``MultiHeadAttention``).

    Q = X·W_q + b_q,  K = X_kv·W_k + b_k,  V = X_kv·W_v + b_v     W_q: d_model × (h·d_k)
    head i takes the i-th block of d_k columns of Q, K (d_v of V)
    α_i = softmax(Q_i·K_iᵀ · s) over keys, s = 1/√d_k by default
    heads_concat = [α_1·V_1 | … | α_h·V_h]                          n_q × (h·d_v)
    output = heads_concat·W_o + b_o                                  W_o: (h·d_v) × d_model

Biases b_q, b_k, b_v, b_o are used when ``bias`` is true (default false). The same layout
is what PyTorch's ``nn.MultiheadAttention`` and BERT use, so a real model's layer runs
through this file unchanged (app/models).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import (
    HKF,
    HQF,
    Call,
    Mechanism,
    attend,
    attend_ids,
    input_ids,
    merge_heads,
    split_heads,
)
from .errors import InputError
from .options import MASK_FILLS, SCALE_STAGES, choice, count, flag, scale_field
from .trace import Trace
from .weights import WeightSpec


@dataclass(frozen=True)
class Options:
    heads: int = count(2, "number of heads h")
    d_k: int | None = count(None, "width of each head's Q and K (default d_model / h)")
    d_v: int | None = count(None, "width of each head's V (default d_k)")
    bias: bool = flag(False, "add biases b_q, b_k, b_v, b_o")
    scale: str | float = scale_field("sqrt_dk", "the multiplier s of the scores")
    scale_stage: str = choice("before_softmax", SCALE_STAGES, "apply s before or after softmax")
    mask_fill: str = choice("-inf", MASK_FILLS, "value written into masked score cells")


class MultiHead(Mechanism):
    id = "multi_head"
    title = "Multi-head attention"
    description = ("h heads, each a scaled dot-product attention on its own block of "
                   "d_k columns of Q = X·W_q, K, V; the heads' outputs are concatenated and "
                   "projected by W_o (seed 003).")
    seed_doc = "003"
    Options = Options

    def sizes(self, d_model, d_kv, n_q, n_k, opts):
        h = opts.heads
        if opts.d_k is None and d_model % h:
            raise InputError("options.heads", f"a number of heads that divides d_model = "
                             f"{d_model} (or set options.d_k)", str(h))
        d_k = opts.d_k or d_model // h
        d_v = opts.d_v or d_k
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k, "h": h, "d_k": d_k, "d_v": d_v,
                "h·d_k": h * d_k, "h·d_v": h * d_v}

    def weight_specs(self, opts):
        specs = [WeightSpec("W_q", ("d_model", "h·d_k"), "Q = X·W_q, head i = columns block i"),
                 WeightSpec("W_k", ("d_kv", "h·d_k"), "K = X_kv·W_k"),
                 WeightSpec("W_v", ("d_kv", "h·d_v"), "V = X_kv·W_v"),
                 WeightSpec("W_o", ("h·d_v", "d_model"), "output = concat·W_o")]
        if opts.bias:
            specs += [WeightSpec("b_q", ("h·d_k",), "added to Q"),
                      WeightSpec("b_k", ("h·d_k",), "added to K"),
                      WeightSpec("b_v", ("h·d_v",), "added to V"),
                      WeightSpec("b_o", ("d_model",), "added to the output")]
        return specs

    def step_ids(self, opts, cross, masked):
        return [*input_ids(cross), "q", "k", "v", *attend_ids(opts.scale_stage, masked),
                "weighted", "heads_concat", "output"]

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        self.record_inputs(c, trace)
        w, h, o = c.w, c.opts.heads, c.opts
        b = (lambda name: w[name]) if o.bias else (lambda name: 0.0)
        # q, k, v: project, then split the columns into h heads
        q = trace.record("q", "Queries Q per head", "Q = X·W_q" + (" + b_q" if o.bias else ""),
                         split_heads(c.x @ w["W_q"] + b("b_q"), h), HQF)  # [h, n_q, d_k]
        k = trace.record("k", "Keys K per head", "K = X_kv·W_k" + (" + b_k" if o.bias else ""),
                         split_heads(c.x_kv @ w["W_k"] + b("b_k"), h), HKF)  # [h, n_k, d_k]
        v = trace.record("v", "Values V per head", "V = X_kv·W_v" + (" + b_v" if o.bias else ""),
                         split_heads(c.x_kv @ w["W_v"] + b("b_v"), h), HKF)  # [h, n_k, d_v]
        weighted = attend(trace, q, k, v, c, o.scale, o.scale_stage, o.mask_fill)
        # weighted: each head's α_i·V_i
        trace.record("weighted", "Per-head output α·V", "head_i = α_i·V_i", weighted, HQF)
        # heads_concat: the heads side by side
        concat = trace.record("heads_concat", "Heads concatenated",
                              "[head_1 | … | head_h]", merge_heads(weighted),
                              ("query", "feature"))  # [n_q, h·d_v]
        # output: project back to d_model
        return trace.record("output", "Output projection",
                            "output = concat·W_o" + (" + b_o" if o.bias else ""),
                            concat @ w["W_o"] + b("b_o"), ("query", "feature"))  # [n_q, d_model]
