"""multi_head_shared against seed 002's own SelfAttention class (tests/seed_code.py), re-run
with our weights.

projections=false is the seed's forward exactly as written (it never applies its three
linear layers). projections=true puts them where the seed evidently meant them: right after
the split into heads, each piece through the same head_dim × head_dim layer (the layers are
declared nn.Linear(head_dim, head_dim), so that is the only place they fit).
"""

from __future__ import annotations

import math

import pytest
import torch
from seed_code import SelfAttention002, SelfAttention002Intended

from app.attention.errors import InputError
from app.attention.multi_head_shared import MultiHeadShared

from .helpers import alpha, close, rand, random_mask

shared = MultiHeadShared()


def seed_model(cls, w, d_model, h):
    m = cls(d_model, h).double()
    with torch.no_grad():
        if "W_q" in w:
            m.queries.weight.copy_(w["W_q"].T)
            m.keys.weight.copy_(w["W_k"].T)
            m.values.weight.copy_(w["W_v"].T)
        m.fc_out.weight.copy_(w["W_o"].T)
        m.fc_out.bias.copy_(w["b_o"])
    return m


def shared_weights(d_model, h, projections, seed):
    hd = d_model // h
    w = {"W_o": rand(d_model, d_model, seed=seed), "b_o": rand(d_model, seed=seed + 1)}
    if projections:
        w |= {"W_q": rand(hd, hd, seed=seed + 2), "W_k": rand(hd, hd, seed=seed + 3),
              "W_v": rand(hd, hd, seed=seed + 4)}
    return w


@pytest.mark.parametrize("projections,cls", [(False, SelfAttention002),
                                             (True, SelfAttention002Intended)])
@pytest.mark.parametrize("h,d_model", [(1, 4), (2, 8), (4, 8), (3, 12)])
def test_matches_seed_002_code(projections, cls, h, d_model):
    x = rand(5, d_model, seed=d_model + h, scale=2.0)
    w = shared_weights(d_model, h, projections, seed=h)
    model = seed_model(cls, w, d_model, h)
    expected = model(x[None], x[None], x[None], None)[0]
    out, trace = shared(x, weights=w, options={"heads": h, "projections": projections})
    close(out, expected)
    close(alpha(trace), model.attention[0])
    assert trace["q"].shape == [h, 5, d_model // h]


@pytest.mark.parametrize("projections,cls", [(False, SelfAttention002),
                                             (True, SelfAttention002Intended)])
def test_mask_with_a_fully_masked_row_matches_seed(projections, cls):
    """Seed 002 masks before dividing by √embed_size, we scale first: with −1e20 both give
    the same α; the fully masked query gets uniform weights 1/n_k in both."""
    x = rand(5, 8, seed=80, scale=3.0)
    w = shared_weights(8, 2, projections, seed=80)
    mask = random_mask(5, 5, seed=81)
    mask[2] = False  # query 3 may attend to nothing
    model = seed_model(cls, w, 8, 2)
    expected = model(x[None], x[None], x[None], mask.int())[0]
    out, trace = shared(x, weights=w, mask=mask, options={"heads": 2,
                                                         "projections": projections})
    close(out, expected)
    close(alpha(trace), model.attention[0])
    close(alpha(trace)[:, 2], torch.full((2, 5), 0.2))
    other = mask.clone()
    other[2] = True  # every masked cell outside the dead row is exactly 0
    assert (alpha(trace)[:, ~other] == 0).all()
    assert any("uniform" in n and "3" in n for n in trace.notes)


def test_mask_before_or_after_scaling_gives_the_same_alpha():
    """Scaling a −1e20 cell by 1/√d_model leaves it −1.25e19: still e^(…) = 0."""
    x = rand(4, 8, seed=90, scale=2.0)
    mask = random_mask(4, 4, seed=91)
    out, trace = shared(x, mask=mask, options={"heads": 2}, seed=4)
    scores = trace["scores"].data
    mask_then_scale = torch.softmax(scores.masked_fill(~mask, -1e20) / math.sqrt(8), dim=-1)
    close(alpha(trace), mask_then_scale)
    assert trace["scaled"].formula.endswith("1/√d_model = 1/√8")


def test_cross_attention_matches_seed_with_separate_keys():
    x, x_kv = rand(3, 6, seed=100), rand(5, 6, seed=101)
    w = shared_weights(6, 3, True, seed=100)
    model = seed_model(SelfAttention002Intended, w, 6, 3)
    expected = model(x_kv[None], x_kv[None], x[None], None)[0]
    out, trace = shared(x, x_kv, weights=w, options={"heads": 3})
    close(out, expected)
    assert trace["weights"].shape == [3, 3, 5]
    assert trace.ids[:2] == ["x", "x_kv"]


def test_projections_false_is_labelled_as_the_seed_code_as_written():
    x = rand(3, 4, seed=110)
    _, trace = shared(x, options={"projections": False})
    for id in ("q", "k", "v"):
        assert "seed 002's code as written" in trace[id].title
        assert "seed 002's code as written" in trace[id].note
    close(trace["q"].data, x.reshape(3, 2, 2).transpose(0, 1))
    with pytest.raises(InputError) as e:
        shared(x, weights={"W_q": torch.eye(2)}, options={"projections": False})
    assert e.value.field == "weights.W_q"


def test_shared_projection_is_the_same_for_every_head():
    x = rand(4, 6, seed=120)
    w = shared_weights(6, 3, True, seed=120)
    _, trace = shared(x, weights=w, options={"heads": 3})
    for i in range(3):
        close(trace["q"].data[i], x[:, 2 * i:2 * i + 2] @ w["W_q"])


def test_key_input_needs_d_model_features():
    with pytest.raises(InputError) as e:
        shared(rand(3, 4), rand(3, 6), options={"heads": 2})
    assert e.value.field == "key" and "4 features" in str(e.value)
