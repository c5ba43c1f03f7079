"""scaled_dot_product against PyTorch's fused kernel and against seed 000's and seed 004's code
(tests/seed_code.py)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from seed_code import SelfAttention000, seed004_worked_example

from app.attention.scaled_dot_product import ScaledDotProduct

from .helpers import alpha, close, rand, random_mask

sdp = ScaledDotProduct()


def reference(x, x_kv, w, attn_mask=None, is_causal=False, scale=None):
    """F.scaled_dot_product_attention on our projections (attn_mask: True = may attend)."""
    q, k, v = x @ w["W_q"], x_kv @ w["W_k"], x_kv @ w["W_v"]
    return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=attn_mask,
                                          is_causal=is_causal, scale=scale)[0]


@pytest.mark.parametrize("d_model,d_k,d_v", [(6, None, None), (8, 4, 4), (5, 3, 7)])
def test_matches_fused_kernel_without_mask(d_model, d_k, d_v):
    x = rand(5, d_model, seed=1)
    w = {"W_q": rand(d_model, d_k or d_model, seed=2), "W_k": rand(d_model, d_k or d_model, seed=3),
         "W_v": rand(d_model, d_v or d_k or d_model, seed=4)}
    out, trace = sdp(x, weights=w, options={"d_k": d_k, "d_v": d_v})
    close(out, reference(x, x, w))
    # α checked on its own: softmax(QKᵀ/√d_k), rows summing to 1
    q, k = x @ w["W_q"], x @ w["W_k"]
    close(alpha(trace)[0], torch.softmax(q @ k.T / math.sqrt(q.shape[1]), dim=-1))
    close(alpha(trace).sum(-1), torch.ones(1, 5))


def test_matches_fused_kernel_with_causal_mask():
    x = rand(6, 8, seed=5)
    w = {"W_q": rand(8, 8, seed=20), "W_k": rand(8, 8, seed=21), "W_v": rand(8, 8, seed=22)}
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    out, trace = sdp(x, weights=w, mask=causal)
    close(out, reference(x, x, w, is_causal=True))
    close(out, reference(x, x, w, attn_mask=causal))
    assert (alpha(trace)[0][~causal] == 0).all()
    assert trace.ids == ["x", "q", "k", "v", "scores", "scaled", "masked", "weights", "output"]


def test_matches_fused_kernel_with_pasted_mask_and_cross_attention():
    x, x_kv = rand(4, 6, seed=6), rand(7, 3, seed=7)
    w = {"W_q": rand(6, 5, seed=8), "W_k": rand(3, 5, seed=9), "W_v": rand(3, 2, seed=10)}
    mask = random_mask(4, 7, seed=11)
    out, trace = sdp(x, x_kv, weights=w, mask=mask.int(), options={"d_k": 5, "d_v": 2})
    close(out, reference(x, x_kv, w, attn_mask=mask))
    assert trace["weights"].shape == [1, 4, 7]
    assert (alpha(trace)[0][~mask] == 0).all()


@pytest.mark.parametrize("scale,s", [("none", 1.0), ("sqrt_d_model", 1 / math.sqrt(8)),
                                     ("sqrt_n", 1 / math.sqrt(5)), (0.25, 0.25)])
def test_scale_options_match_fused_kernel_scale(scale, s):
    x = rand(5, 8, seed=12)
    w = {"W_q": rand(8, 3, seed=13), "W_k": rand(8, 3, seed=14), "W_v": rand(8, 3, seed=15)}
    out, _ = sdp(x, weights=w, options={"d_k": 3, "scale": scale})
    close(out, reference(x, x, w, scale=s))


# --- seed 000: Li Hongyi's SelfAttention (tests/seed_code.py) ----------------------------

def test_seed_000_code_reproduced_by_sqrt_n_after_softmax():
    model = SelfAttention000(3, 5, 4).double()  # the seed's SelfAttention(3, 5, 4)
    batch = rand(50, 5, 3, seed=16)  # the seed's 50 sequences of 5 vectors of 3
    w = {"W_q": rand(3, 4, seed=17), "W_k": rand(3, 4, seed=18), "W_v": rand(3, 4, seed=19)}
    with torch.no_grad():
        for name in w:  # nn.Linear computes x·Wᵀ: its weight is our W transposed
            getattr(model, name).weight.copy_(w[name].T)
        expected = model(batch)
    assert expected.shape == (50, 5, 4)
    opts = {"d_k": 4, "scale": "sqrt_n", "scale_stage": "after_softmax"}
    for b in range(0, 50, 7):
        out, trace = sdp(batch[b], weights=w, options=opts)
        close(out, expected[b])
        # the seed's rows sum to 1/√n = 1/√5, and the trace says so in words
        close(alpha(trace).sum(-1), torch.full((1, 5), 1 / math.sqrt(5)))
        assert "0.4472" in trace["weights"].note and "not 1" in trace["weights"].note
    assert trace.ids == ["x", "q", "k", "v", "scores", "softmax", "weights", "output"]


# --- seed 004 §3.3: the 3 × 4 worked example (tests/seed_code.py) ------------------------

def test_seed_004_worked_example():
    seed = seed004_worked_example(torch.float64)  # the seed's code, run in float64
    w = {"W_q": seed["query_weights"], "W_k": seed["key_weights"], "W_v": seed["value_weights"]}
    out, trace = sdp(seed["inputs"], weights=w, options={"scale": "none", "d_k": 3})
    close(trace["k"].data[0], seed["keys"])
    close(trace["q"].data[0], seed["querys"])
    close(trace["v"].data[0], seed["values"])
    close(trace["scores"].data[0], seed["attntion_scores"])
    close(alpha(trace)[0], seed["attntion_scores_softmax"])
    close(out, seed["outputs"])
    # the numbers the seed's code prints (checked by hand: q_1·k_1 = [1,1,3]·[1,2,1] = 6)
    close(trace["k"].data[0], torch.tensor([[1., 2, 1], [4, 4, 0], [2, 3, 1]]))
    close(trace["q"].data[0], torch.tensor([[1., 1, 3], [2, 2, 2], [2, 1, 3]]))
    close(trace["v"].data[0], torch.tensor([[2., 3, 3], [2, 8, 0], [2, 6, 3]]))
    close(trace["scores"].data[0], torch.tensor([[6., 8, 8], [8, 16, 12], [7, 12, 10]]))
    torch.testing.assert_close(alpha(trace)[0][0], torch.tensor([0.0634, 0.4683, 0.4683],
                                                                dtype=torch.float64),
                               atol=1e-4, rtol=0)
    torch.testing.assert_close(out, torch.tensor([[2.0, 6.7465, 1.5951],
                                                  [2.0, 7.9624, 0.0549],
                                                  [2.0, 7.7335, 0.3732]],
                                                 dtype=torch.float64), atol=1e-4, rtol=0)
    assert "scaled" in trace.ids and trace["scaled"].formula.endswith("1 (no scaling)")
