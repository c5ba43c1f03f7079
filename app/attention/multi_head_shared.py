"""Multi-head attention with one projection shared by all heads (seed 002's ``SelfAttention``).

The embedding is split into h pieces *first*, then every piece goes through the same
head_dim × head_dim matrices (head_dim = d_model / h):

    X_i = columns block i of X                                    n_q × head_dim
    Q_i = X_i·W_q,  K_i = X_kv,i·W_k,  V_i = X_kv,i·W_v           W_q: head_dim × head_dim
    α_i = softmax(Q_i·K_iᵀ · s) over keys,  s = 1/√d_model        (the seed's 1/√embed_size)
    heads_concat = [α_1·V_1 | … | α_h·V_h]                        n_q × d_model
    output = heads_concat·W_o + b_o                               W_o: d_model × d_model

Masked cells get −1e20 by default, as in the seed. The seed masks *before* it divides by
√embed_size, we scale first and then mask (the shared pipeline's order). Both give the same
α: a cell filled with −1e20 (or −1e20/√d_model) is e^(−huge) = 0 next to any real score, and
a fully masked row is a softmax of equal values either way, i.e. uniform 1/n_k.

The seed's ``forward`` declares ``self.queries``, ``self.keys``, ``self.values`` but never
applies them: its Q, K, V are the raw pieces X_i. ``projections=false`` reproduces that code
as written (no W_q, W_k, W_v); ``projections=true`` (default) applies them as the seed
evidently intended.
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
from .options import MASK_FILLS, choice, count, flag, scale_field
from .trace import Trace
from .weights import WeightSpec

AS_WRITTEN = "seed 002's code as written: its linear layers are never applied"


@dataclass(frozen=True)
class Options:
    heads: int = count(2, "number of heads h; d_model is split into h pieces of d_model / h")
    projections: bool = flag(True, "apply the shared W_q, W_k, W_v to every piece (false: "
                             "seed 002's code as written, which never applies them)")
    scale: str | float = scale_field("sqrt_d_model", "the multiplier s of the scores "
                                     "(default 1/√d_model, the seed's 1/√embed_size)")
    mask_fill: str = choice("-1e20", MASK_FILLS, "value written into masked score cells "
                            "(seed 002 uses −1e20)")


class MultiHeadShared(Mechanism):
    id = "multi_head_shared"
    title = "Multi-head attention, shared head projection"
    description = ("The embedding is split into h pieces first; one head_dim × head_dim "
                   "W_q, W_k, W_v is shared by all heads; scores scaled by 1/√d_model, masked "
                   "with −1e20; the heads are concatenated and projected by W_o + b_o "
                   "(seed 002).")
    seed_doc = "002"
    Options = Options
    same_width = True  # keys and values are split into the query's h pieces

    def sizes(self, d_model, d_kv, n_q, n_k, opts):
        h = opts.heads
        if d_model % h:
            raise InputError("options.heads", f"a number of heads that divides d_model = "
                             f"{d_model} (the embedding is split into h equal pieces)", str(h))
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k, "h": h, "head_dim": d_model // h}

    def weight_specs(self, opts):
        specs = []
        if opts.projections:
            specs += [WeightSpec("W_q", ("head_dim", "head_dim"), "Q_i = X_i·W_q, every head"),
                      WeightSpec("W_k", ("head_dim", "head_dim"), "K_i = X_kv,i·W_k, every head"),
                      WeightSpec("W_v", ("head_dim", "head_dim"), "V_i = X_kv,i·W_v, every head")]
        return specs + [WeightSpec("W_o", ("d_model", "d_model"), "output = concat·W_o + b_o"),
                        WeightSpec("b_o", ("d_model",), "added to the output")]

    def step_ids(self, opts, cross, masked):
        return [*input_ids(cross), "q", "k", "v", *attend_ids("before_softmax", masked),
                "weighted", "heads_concat", "output"]

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        self.record_inputs(c, trace)
        o, h = c.opts, c.opts.heads
        # q, k, v: split into h pieces, then the shared projection (or none, as written)
        q = self.project(trace, "q", "Queries Q per head", "Q_i", "X_i",
                         split_heads(c.x, h), c, HQF)  # [h, n_q, head_dim]
        k = self.project(trace, "k", "Keys K per head", "K_i", "X_kv,i",
                         split_heads(c.x_kv, h), c, HKF)  # [h, n_k, head_dim]
        v = self.project(trace, "v", "Values V per head", "V_i", "X_kv,i",
                         split_heads(c.x_kv, h), c, HKF)  # [h, n_k, head_dim]
        weighted = attend(trace, q, k, v, c, o.scale, "before_softmax", o.mask_fill)
        # weighted: each head's α_i·V_i
        trace.record("weighted", "Per-head output α·V", "head_i = α_i·V_i", weighted, HQF)
        # heads_concat: the heads side by side
        concat = trace.record("heads_concat", "Heads concatenated", "[head_1 | … | head_h]",
                              merge_heads(weighted), ("query", "feature"))  # [n_q, d_model]
        # output: the seed's fc_out, a linear layer with bias
        return trace.record("output", "Output projection", "output = concat·W_o + b_o",
                            concat @ c.w["W_o"] + c.w["b_o"],
                            ("query", "feature"))  # [n_q, d_model]

    @staticmethod
    def project(trace: Trace, id: str, title: str, lhs: str, source: str,
                pieces: torch.Tensor, c: Call, axes: tuple[str, ...]) -> torch.Tensor:
        """One of q, k, v: the pieces times the shared W (or the raw pieces, as written)."""
        name = "W_" + id
        if c.opts.projections:
            return trace.record(id, title, f"{lhs} = {source}·{name}, the same {name} for "
                                "every head", pieces @ c.w[name], axes)
        return trace.record(id, f"{title} ({AS_WRITTEN})", f"{lhs} = {source}", pieces, axes,
                            note=f"{AS_WRITTEN}, so {lhs} is the raw piece {source} of the "
                            f"input, with no {name}")
