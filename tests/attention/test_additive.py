"""additive (Bahdanau) against a plain-Python loop, and the seed's "sum" for v_a = ones."""

from __future__ import annotations

import math

import pytest
import torch

from app.attention.additive import Additive
from app.attention.weights import resolve
from app.inputs.embedding import EmbeddingSpec, embed, split_text

from .helpers import alpha, close, rand, random_mask

additive = Additive()


def loop_bahdanau(x, x_kv, w, mask=None):
    """score_ij = Σ_a v_a[a]·tanh(Σ_d x_id W_q[d,a] + Σ_e x_kv,je W_k[e,a] + b_a[a]), by loops."""
    X, Y = x.tolist(), x_kv.tolist()
    Wq, Wk, Wv = w["W_q"].tolist(), w["W_k"].tolist(), w["W_v"].tolist()
    ba, va = w["b_a"].tolist(), w["v_a"].tolist()
    d_a, d_v = len(ba), len(Wv[0])
    alphas, outputs = [], []
    for i, xi in enumerate(X):
        scores = []
        for j, yj in enumerate(Y):
            if mask is not None and not mask[i][j]:
                scores.append(-math.inf)
                continue
            s = 0.0
            for a in range(d_a):
                qa = sum(xi[d] * Wq[d][a] for d in range(len(xi)))
                ka = sum(yj[e] * Wk[e][a] for e in range(len(yj)))
                s += va[a] * math.tanh(qa + ka + ba[a])
            scores.append(s)
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        row = [e / sum(exps) for e in exps]
        alphas.append(row)
        values = [[sum(yj[e] * Wv[e][c] for e in range(len(yj))) for c in range(d_v)] for yj in Y]
        outputs.append([sum(row[j] * values[j][c] for j in range(len(Y))) for c in range(d_v)])
    return torch.tensor(alphas, dtype=torch.float64), torch.tensor(outputs, dtype=torch.float64)


def given(d_model, d_kv, d_a, d_v, seed):
    return {"W_q": rand(d_model, d_a, seed=seed), "W_k": rand(d_kv, d_a, seed=seed + 1),
            "W_v": rand(d_kv, d_v, seed=seed + 2), "b_a": rand(d_a, seed=seed + 3),
            "v_a": rand(d_a, seed=seed + 4)}


@pytest.mark.parametrize("n_q,n_k,d_model,d_kv,d_a,d_v", [
    (3, 3, 4, 4, 4, 4), (2, 5, 3, 6, 7, 2), (4, 1, 2, 2, 5, 3)])
def test_matches_loop_implementation(n_q, n_k, d_model, d_kv, d_a, d_v):
    x, x_kv = rand(n_q, d_model, seed=1), rand(n_k, d_kv, seed=2)
    w = given(d_model, d_kv, d_a, d_v, seed=n_q + n_k)
    cross = n_q != n_k or d_model != d_kv
    x_kv = x_kv if cross else x
    out, trace = additive(x, x_kv if cross else None, weights=w,
                          options={"d_a": d_a, "d_v": d_v})
    ref_alpha, ref_out = loop_bahdanau(x, x_kv, w)
    close(alpha(trace)[0], ref_alpha)
    close(out, ref_out)


def test_masked_matches_loop_and_is_not_scaled():
    x = rand(5, 4, seed=10, scale=3.0)
    w = given(4, 4, 6, 4, seed=10)
    mask = random_mask(5, 5, seed=11)
    out, trace = additive(x, weights=w, mask=mask, options={"d_a": 6})
    ref_alpha, ref_out = loop_bahdanau(x, x, w, mask.tolist())
    close(alpha(trace)[0], ref_alpha)
    close(out, ref_out)
    assert (alpha(trace)[0][~mask] == 0).all()
    assert "scaled" not in trace.ids  # additive attention does not scale


def test_default_v_a_is_ones_the_seeds_sum():
    x = rand(4, 5, seed=20)
    _, trace = additive(x, seed=7)
    _, with_ones = additive(x, seed=7, weights={"v_a": torch.ones(5)})
    close(trace["scores"].data, with_ones["scores"].data)  # the default v_a is all ones
    # v_aᵀ·tanh(…) with v_a = 1 is the seed's "tanh, then sum over the features"
    q, k = trace["q"].data[0], trace["k"].data[0]
    drawn = drawn_weights(x, x, seed=7)
    assert (drawn["v_a"] == 1).all() and not (drawn["b_a"] == 0).all()  # b_a is drawn
    b_a = drawn["b_a"]
    seed_sum = torch.tanh(q[:, None, :] + k[None, :, :] + b_a).sum(dim=-1)
    close(trace["scores"].data[0], seed_sum)
    assert "seed 004's \"sum\"" in trace["scores"].note
    _, learned = additive(x, seed=7, weights={"v_a": torch.arange(5.0)})
    assert learned["scores"].note is None


def drawn_weights(x, x_kv, seed, options=None):
    """The seeded weights a run used, from the same public resolve() the mechanism calls."""
    opts = additive.parse(options)
    sizes = additive.sizes(x.shape[1], x_kv.shape[1], x.shape[0], x_kv.shape[0], opts)
    return resolve(additive.weight_specs(opts), sizes, None, seed, "")


def test_tom_chase_jerry_cross_attention_shapes():
    """Seed 004's example: generating 汤姆 追逐 杰瑞 attends over Tom chase Jerry."""
    source, target = split_text("Tom chase Jerry"), split_text("汤姆 追逐 杰瑞")
    x_kv = embed(source, EmbeddingSpec(dim=4, seed=1), source)  # encoder states, 3 × 4
    x = embed(target, EmbeddingSpec(dim=6, seed=2), target)  # decoder states, 3 × 6
    out, trace = additive(x, x_kv, options={"d_a": 5, "d_v": 2}, seed=3)
    shapes = {s.id: s.shape for s in trace.steps}
    assert shapes == {"x": [3, 6], "x_kv": [3, 4], "q": [1, 3, 5], "k": [1, 3, 5],
                      "v": [1, 3, 2], "scores": [1, 3, 3], "weights": [1, 3, 3],
                      "output": [3, 2]}
    assert out.shape == (3, 2)
    close(alpha(trace).sum(-1), torch.ones(1, 3))
    assert trace["weights"].axes == ("head", "query", "key")
    ref_alpha, ref_out = loop_bahdanau(x, x_kv, drawn_weights(x, x_kv, 3, {"d_a": 5, "d_v": 2}))
    close(alpha(trace)[0], ref_alpha)
    close(out, ref_out)


def test_pair_cells_count_the_tanh_layer_and_only_additive_has_one():
    from app.attention.registry import MECHANISMS

    m = Additive()
    assert m.pair_cells(3, 4, 8, {}) == 3 * 4 * 8  # d_a defaults to d_model
    assert m.pair_cells(3, 4, 8, {"d_a": 5, "mask": "causal"}) == 3 * 4 * 5
    _, trace = m(rand(3, 8), rand(4, 8), options={"d_a": 5})
    assert trace.sizes["d_a"] == 5  # the width the count used is the one the run uses
    others = {i: mech.pair_cells(3, 4, 8, {}) for i, mech in MECHANISMS.items()
              if i != "additive"}
    assert others and set(others.values()) == {0}
