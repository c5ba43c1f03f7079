"""concat against seed 004's own ``attention`` class, re-run once per query row."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from app.attention.concat import Concat
from app.attention.errors import InputError

from .helpers import alpha, close, rand, random_mask

concat = Concat()


class attention(nn.Module):  # noqa: N801 (the seed's name)
    """Seed 004's class with its print statements stripped; nothing else changed."""

    def __init__(self, query_size, key_size, value_size1, value_size2, output_size):
        super(attention, self).__init__()  # noqa: UP008 (the seed's spelling)
        self.query_size = query_size
        self.key_size = key_size
        self.value_size1 = value_size1
        self.value_size2 = value_size2
        self.output_size = output_size
        self.line1 = nn.Linear(self.query_size + key_size, self.value_size1)
        self.line2 = nn.Linear(self.query_size + value_size2, self.output_size)

    def forward(self, Q, K, V):
        attention_weight = torch.softmax(self.line1(torch.cat((Q[0], K[0]), 1)), dim=1)
        attention_applied = torch.bmm(attention_weight.unsqueeze(0), V)
        output = torch.cat((Q[0], attention_applied[0]), 1)
        output = self.line2(output).unsqueeze(0)
        return output, attention_weight


def seed_rows(x, x_kv, w, d_out):
    """The seed's class with our W_1, b_1, W_2, b_2, run for each query row i:
    Q = x_i, K = x_kv,i (each [1, 1, d]), V = X_kv ([1, L, d_kv])."""
    n, d_model = x.shape
    L, d_kv = x_kv.shape
    m = attention(d_model, d_kv, L, d_kv, d_out).double()
    with torch.no_grad():
        m.line1.weight.copy_(w["W_1"].T)
        m.line1.bias.copy_(w["b_1"])
        m.line2.weight.copy_(w["W_2"].T)
        m.line2.bias.copy_(w["b_2"])
        rows = [m(x[i].view(1, 1, -1), x_kv[i].view(1, 1, -1), x_kv[None]) for i in range(n)]
    out = torch.cat([o[0] for o, _ in rows])  # [n, d_out]
    weights = torch.cat([a for _, a in rows])  # [n, L]
    return out, weights


def concat_weights(d_model, d_kv, L, d_out, seed):
    return {"W_1": rand(d_model + d_kv, L, seed=seed), "b_1": rand(L, seed=seed + 1),
            "W_2": rand(d_model + d_kv, d_out, seed=seed + 2), "b_2": rand(d_out, seed=seed + 3)}


@pytest.mark.parametrize("n,d_model,d_kv,d_out", [(3, 4, 4, 4), (4, 3, 5, 2), (1, 2, 2, 6)])
def test_matches_seed_004_attention_class(n, d_model, d_kv, d_out):
    x = rand(n, d_model, seed=n)
    cross = d_kv != d_model
    x_kv = rand(n, d_kv, seed=n + 1) if cross else x
    w = concat_weights(d_model, d_kv, n, d_out, seed=n * 10)
    out, trace = concat(x, x_kv if cross else None, weights=w, options={"d_out": d_out})
    ref_out, ref_alpha = seed_rows(x, x_kv, w, d_out)
    close(out, ref_out)
    close(alpha(trace)[0], ref_alpha)


def test_seed_sized_example():
    """The seed's main(): query 32, values 64 wide, output 64; here L = n = 32 rows."""
    x, x_kv = rand(32, 32, seed=1), rand(32, 64, seed=2)
    out, trace = concat(x, x_kv, options={"d_out": 64}, seed=5)
    shapes = {s.id: s.shape for s in trace.steps}
    assert shapes == {"x": [32, 32], "x_kv": [32, 64], "qk_concat": [32, 96],
                      "scores": [1, 32, 32], "weights": [1, 32, 32], "weighted": [1, 32, 64],
                      "out_concat": [32, 96], "output": [32, 64]}
    close(alpha(trace).sum(-1), torch.ones(1, 32))
    # the seed prints torch.Size([1, 96]) for [Q ; applied] and [1, 1, 64] for the output
    close(trace["out_concat"].data[:, :32], x)
    close(trace["out_concat"].data[:, 32:], alpha(trace)[0] @ x_kv)


def test_mask_applies_to_the_L_scores():
    x = rand(5, 3, seed=30)
    w = concat_weights(3, 3, 5, 3, seed=30)
    mask = random_mask(5, 5, seed=31)
    out, trace = concat(x, weights=w, mask=mask)
    expected = torch.softmax((torch.cat([x, x], 1) @ w["W_1"] + w["b_1"])
                             .masked_fill(~mask, float("-inf")), dim=-1)
    close(alpha(trace)[0], expected)
    assert (alpha(trace)[0][~mask] == 0).all()
    close(out, torch.cat([x, expected @ x], 1) @ w["W_2"] + w["b_2"])
    assert trace.ids == ["x", "qk_concat", "scores", "masked", "weights", "weighted",
                         "out_concat", "output"]


def test_key_rows_must_pair_with_query_rows():
    with pytest.raises(InputError) as e:
        concat(rand(3, 4), rand(5, 4))
    assert e.value.field == "key"
    assert "expected 3 rows" in str(e.value) and "got 5 rows" in str(e.value)


def test_W_1_has_one_column_per_key_row():
    with pytest.raises(InputError) as e:
        concat(rand(3, 4), weights={"W_1": rand(8, 4)})
    assert str(e.value).startswith("weights.W_1: expected 8 × 3 ((d_model+d_kv) × L;")
    assert str(e.value).endswith("got 8 × 4")
