"""multi_head against nn.MultiheadAttention, a manual einsum, and seed 003's labml code."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from app.attention.multi_head import MultiHead

from .helpers import alpha, close, rand, random_mask

mha = MultiHead()


def weights(d_model, d_kv, h, d_k, d_v, bias, seed=0):
    w = {"W_q": rand(d_model, h * d_k, seed=seed + 1), "W_k": rand(d_kv, h * d_k, seed=seed + 2),
         "W_v": rand(d_kv, h * d_v, seed=seed + 3), "W_o": rand(h * d_v, d_model, seed=seed + 4)}
    if bias:
        w |= {"b_q": rand(h * d_k, seed=seed + 5), "b_k": rand(h * d_k, seed=seed + 6),
              "b_v": rand(h * d_v, seed=seed + 7), "b_o": rand(d_model, seed=seed + 8)}
    return w


def torch_mha(w, d_model, d_kv, h, bias):
    """nn.MultiheadAttention carrying our weights (its Linear weights are ours transposed)."""
    m = nn.MultiheadAttention(d_model, h, bias=bias, kdim=d_kv, vdim=d_kv,
                              batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        if m._qkv_same_embed_dim:
            m.in_proj_weight.copy_(torch.cat([w["W_q"].T, w["W_k"].T, w["W_v"].T]))
        else:
            m.q_proj_weight.copy_(w["W_q"].T)
            m.k_proj_weight.copy_(w["W_k"].T)
            m.v_proj_weight.copy_(w["W_v"].T)
        m.out_proj.weight.copy_(w["W_o"].T)
        if bias:
            m.in_proj_bias.copy_(torch.cat([w["b_q"], w["b_k"], w["b_v"]]))
            m.out_proj.bias.copy_(w["b_o"])
    return m.eval()


def run_torch(m, x, x_kv, mask=None):
    """(output [n_q, d_model], per-head α [h, n_q, n_k]); torch's bool mask is True = blocked."""
    out, a = m(x[None], x_kv[None], x_kv[None], need_weights=True,
               average_attn_weights=False, attn_mask=None if mask is None else ~mask)
    return out[0], a[0]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("h,d_model", [(1, 4), (2, 8), (4, 8), (3, 9)])
def test_matches_nn_multihead_attention(bias, h, d_model):
    x = rand(5, d_model, seed=h * 10 + d_model)
    w = weights(d_model, d_model, h, d_model // h, d_model // h, bias)
    out, trace = mha(x, weights=w, options={"heads": h, "bias": bias})
    ref_out, ref_alpha = run_torch(torch_mha(w, d_model, d_model, h, bias), x, x)
    close(out, ref_out)
    close(alpha(trace), ref_alpha)
    assert trace["weights"].shape == [h, 5, 5]


@pytest.mark.parametrize("bias", [False, True])
def test_matches_nn_multihead_attention_with_causal_mask(bias):
    x = rand(6, 8, seed=30)
    w = weights(8, 8, 2, 4, 4, bias, seed=30)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    out, trace = mha(x, weights=w, mask=causal, options={"heads": 2, "bias": bias})
    ref_out, ref_alpha = run_torch(torch_mha(w, 8, 8, 2, bias), x, x, causal)
    close(out, ref_out)
    close(alpha(trace), ref_alpha)
    assert (alpha(trace)[:, ~causal] == 0).all()
    assert "masked" in trace.ids


@pytest.mark.parametrize("bias", [False, True])
def test_matches_nn_multihead_attention_cross_attention(bias):
    x, x_kv = rand(3, 8, seed=40), rand(5, 6, seed=41)  # kdim = vdim = 6 ≠ d_model = 8
    w = weights(8, 6, 2, 4, 4, bias, seed=40)
    mask = random_mask(3, 5, seed=42)
    out, trace = mha(x, x_kv, weights=w, mask=mask, options={"heads": 2, "bias": bias})
    ref_out, ref_alpha = run_torch(torch_mha(w, 8, 6, 2, bias), x, x_kv, mask)
    close(out, ref_out)
    close(alpha(trace), ref_alpha)
    assert trace.ids[:2] == ["x", "x_kv"]
    assert trace["k"].shape == [2, 5, 4] and trace["weights"].shape == [2, 3, 5]


def test_d_k_not_d_model_over_h_matches_einsum():
    h, d_k, d_v, d_model = 3, 5, 2, 4  # h·d_k = 15 ≠ d_model, h·d_v = 6
    x = rand(4, d_model, seed=50)
    w = weights(d_model, d_model, h, d_k, d_v, True, seed=50)
    out, trace = mha(x, weights=w, options={"heads": h, "d_k": d_k, "d_v": d_v, "bias": True})
    q = (x @ w["W_q"] + w["b_q"]).reshape(4, h, d_k)
    k = (x @ w["W_k"] + w["b_k"]).reshape(4, h, d_k)
    v = (x @ w["W_v"] + w["b_v"]).reshape(4, h, d_v)
    a = torch.softmax(torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(d_k), dim=-1)
    o = torch.einsum("hqk,khd->qhd", a, v).reshape(4, h * d_v) @ w["W_o"] + w["b_o"]
    close(alpha(trace), a)
    close(out, o)
    assert trace["heads_concat"].shape == [4, h * d_v]


# --- seed 003: labml's MultiHeadAttention, re-implemented from the seed text -------------
# Without labml's tracker (a global) and with no dropout (eval; p = 0). Shapes are the
# seed's [seq_len, batch_size, ...].

class PrepareForMultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, heads: int, d_k: int, bias: bool):
        super().__init__()
        self.linear = nn.Linear(d_model, heads * d_k, bias=bias)
        self.heads = heads
        self.d_k = d_k

    def forward(self, x: torch.Tensor):
        head_shape = x.shape[:-1]
        x = self.linear(x)
        x = x.view(*head_shape, self.heads, self.d_k)
        return x


class LabmlMultiHeadAttention(nn.Module):
    def __init__(self, heads: int, d_model: int, bias: bool = True):
        super().__init__()
        self.d_k = d_model // heads
        self.heads = heads
        self.query = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=bias)
        self.key = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=bias)
        self.value = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=True)
        self.softmax = nn.Softmax(dim=1)
        self.output = nn.Linear(d_model, d_model)
        self.scale = 1 / math.sqrt(self.d_k)

    def get_scores(self, query, key):
        return torch.einsum('ibhd,jbhd->ijbh', query, key)

    def prepare_mask(self, mask, query_shape, key_shape):
        assert mask.shape[0] == 1 or mask.shape[0] == query_shape[0]
        assert mask.shape[1] == key_shape[0]
        assert mask.shape[2] == 1 or mask.shape[2] == query_shape[1]
        return mask.unsqueeze(-1)

    def forward(self, *, query, key, value, mask=None):
        seq_len, batch_size, _ = query.shape
        if mask is not None:
            mask = self.prepare_mask(mask, query.shape, key.shape)
        query = self.query(query)
        key = self.key(key)
        value = self.value(value)
        scores = self.get_scores(query, key)
        scores *= self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
        attn = self.softmax(scores)
        x = torch.einsum("ijbh,jbhd->ibhd", attn, value)
        x = x.reshape(seq_len, batch_size, -1)
        return self.output(x), attn


def labml_with(w, h, d_model, bias):
    m = LabmlMultiHeadAttention(h, d_model, bias=bias).double()
    with torch.no_grad():
        for part, name in (("query", "q"), ("key", "k"), ("value", "v")):
            getattr(m, part).linear.weight.copy_(w[f"W_{name}"].T)
        m.value.linear.bias.copy_(w["b_v"])  # labml's value projection always has a bias
        if bias:
            m.query.linear.bias.copy_(w["b_q"])
            m.key.linear.bias.copy_(w["b_k"])
        m.output.weight.copy_(w["W_o"].T)
        m.output.bias.copy_(w["b_o"])
    return m


@pytest.mark.parametrize("masked", [False, True])
def test_matches_seed_003_labml_code(masked):
    h, d_model, n = 4, 8, 5
    x = rand(n, d_model, seed=60)
    w = weights(d_model, d_model, h, 2, 2, True, seed=60)
    mask = torch.ones(n, n, dtype=torch.bool).tril() if masked else None
    ref, attn = labml_with(w, h, d_model, True)(
        query=x[:, None], key=x[:, None], value=x[:, None],
        mask=None if mask is None else mask[:, :, None])  # labml's mask is [q, k, batch]
    out, trace = mha(x, weights=w, mask=mask, options={"heads": h, "bias": True})
    close(out, ref[:, 0])
    close(alpha(trace), attn[:, :, 0].permute(2, 0, 1))  # [q, k, h] -> [h, q, k]


def test_matches_seed_003_labml_code_without_query_key_bias():
    """labml's bias=False still gives V and the output a bias: that is our bias=true with
    b_q = b_k = 0."""
    h, d_model = 2, 6
    x = rand(4, d_model, seed=70)
    w = weights(d_model, d_model, h, 3, 3, True, seed=70)
    ref, _ = labml_with(w, h, d_model, False)(query=x[:, None], key=x[:, None],
                                              value=x[:, None])
    w |= {"b_q": torch.zeros(6), "b_k": torch.zeros(6)}
    out, _ = mha(x, weights=w, options={"heads": h, "bias": True})
    close(out, ref[:, 0])
