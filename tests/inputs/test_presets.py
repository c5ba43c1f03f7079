"""Every preset runs through the service and reproduces what its description claims,
checked against the seed documents' own code (tests/seed_code.py) re-run here."""

from __future__ import annotations

import math

import pytest
import torch
from seed_code import SelfAttention000, SelfAttention002Intended, seed004_worked_example

from app.attention import registry
from app.attention.weights import resolve
from app.inputs.embedding import EmbeddingSpec, embed
from app.inputs.presets import get_preset, list_presets, preset_ids
from app.service import REQUEST_KEYS, RunResult, run_attention, spec_from_request

TOL = {"atol": 1e-10, "rtol": 1e-10}


def run(preset_id: str) -> RunResult:
    return run_attention(spec_from_request(get_preset(preset_id)["request"]))


def drawn_weights(preset_id: str, result: RunResult) -> dict[str, torch.Tensor]:
    """The weights the mechanism used: given ones plus the seeded draws, as resolve() does."""
    req = get_preset(preset_id)["request"]
    mech = registry.get(req["mechanism"])
    opts = mech.parse({k: v for k, v in req["options"].items() if k != "mask"})
    x = result.trace["x"].data
    x_kv = result.trace["x_kv"].data if "x_kv" in result.trace.ids else x
    sizes = mech.sizes(x.shape[1], x_kv.shape[1], x.shape[0], x_kv.shape[0], opts)
    return resolve(mech.weight_specs(opts), sizes, req["weights"], req["seed"], "")


# --- the catalogue -----------------------------------------------------------------------

def test_catalogue_ids_titles_and_request_format():
    presets = list_presets()
    ids = [p["id"] for p in presets]
    assert ids == preset_ids() and len(set(ids)) == len(ids)
    for wanted in ("seed004_worked_example", "seed000_self_attention", "seed000_standard",
                   "i_saw_a_saw", "i_saw_a_saw_positions", "tom_chase_jerry",
                   "causal_multi_head", "seed002_shared_heads"):
        assert wanted in ids
    for p in presets:
        assert set(p) == {"id", "title", "seed_doc", "description", "request"}
        assert p["title"] and len(p["description"]) > 40
        assert p["seed_doc"] in {"000", "002", "003", "004"}
        assert set(p["request"]) == set(REQUEST_KEYS)
        assert p["request"]["mechanism"] in registry.MECHANISMS
        assert "seed" not in p["request"]["weights"]


@pytest.mark.parametrize("preset_id", preset_ids())
def test_every_preset_runs_and_rows_are_probabilities(preset_id):
    result = run(preset_id)
    a = result.attention
    assert a.dim() == 3 and a.shape[1:] == (len(result.query_tokens), len(result.key_tokens))
    assert torch.isfinite(a).all() and torch.isfinite(result.output).all()
    assert (a >= 0).all()
    rows = a.sum(-1)
    expected = 1 / math.sqrt(5) if preset_id == "seed000_self_attention" else 1.0
    torch.testing.assert_close(rows, torch.full_like(rows, expected), **TOL)


def test_unknown_preset_is_a_key_error():
    with pytest.raises(KeyError):
        get_preset("no_such_preset")


def test_presets_are_copies():
    p = get_preset("seed004_worked_example")
    p["request"]["weights"]["W_q"][0][0] = 99
    p["title"] = "changed"
    fresh = get_preset("seed004_worked_example")
    assert fresh["request"]["weights"]["W_q"][0][0] == 1 and fresh["title"] != "changed"


# --- seed 004 §3.3: the worked example -----------------------------------------------------

def test_seed004_worked_example_equals_the_seeds_code():
    result = run("seed004_worked_example")
    seed = {name: t.double() for name, t in seed004_worked_example().items()}  # float32
    q, k, v = seed["querys"], seed["keys"], seed["values"]
    scores, alpha, out = (seed["attntion_scores"], seed["attntion_scores_softmax"],
                          seed["outputs"])
    t = result.trace
    assert result.query_tokens == ["input 1", "input 2", "input 3"]
    # integer inputs and weights: Q, K, V and the scores are exact
    assert torch.equal(t["q"].data[0], q) and torch.equal(t["k"].data[0], k)
    assert torch.equal(t["v"].data[0], v) and torch.equal(t["scores"].data[0], scores)
    assert t["scores"].data[0].tolist() == [[6, 8, 8], [8, 16, 12], [7, 12, 10]]  # by hand
    torch.testing.assert_close(t["scaled"].data, t["scores"].data, rtol=0, atol=0)  # s = 1
    # the seed runs in float32; we run in float64
    torch.testing.assert_close(result.attention[0], alpha, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(result.output, out, atol=1e-5, rtol=1e-6)


# --- seed 000: SelfAttention(3, 5, 4) --------------------------------------------------------

def test_seed000_preset_equals_the_seeds_self_attention_with_the_same_weights():
    result = run("seed000_self_attention")
    w = drawn_weights("seed000_self_attention", result)
    model = SelfAttention000(3, 5, 4).double()
    with torch.no_grad():
        for name in ("W_q", "W_k", "W_v"):
            getattr(model, name).weight.copy_(w[name].T)  # nn.Linear computes x·Wᵀ
        x = torch.tensor(get_preset("seed000_self_attention")["request"]["query"]["matrix"],
                         dtype=torch.float64)
        out, atten = model(x[None]), model.atten
    assert result.trace["x"].data.shape == (5, 3) and result.output.shape == (5, 4)
    torch.testing.assert_close(result.attention[0], atten[0], **TOL)
    torch.testing.assert_close(result.output, out[0], **TOL)
    rows = result.attention.sum(-1)
    torch.testing.assert_close(rows, torch.full_like(rows, 1 / math.sqrt(5)), **TOL)
    assert "1/√5" in result.trace["weights"].formula or "0.4472" in (
        result.trace["weights"].note or "")


def test_seed000_standard_uses_the_same_input_and_weights_with_the_standard_formula():
    seed, std = run("seed000_self_attention"), run("seed000_standard")
    torch.testing.assert_close(seed.trace["q"].data, std.trace["q"].data, **TOL)
    q, k = std.trace["q"].data[0], std.trace["k"].data[0]
    expected = torch.softmax(q @ k.T / math.sqrt(4), dim=-1)
    torch.testing.assert_close(std.attention[0], expected, **TOL)
    assert not torch.allclose(std.attention, seed.attention * math.sqrt(5))


# --- I saw a saw -----------------------------------------------------------------------------

def test_i_saw_a_saw_without_positions_gives_both_saws_the_same_row():
    result = run("i_saw_a_saw")
    assert result.query_tokens == ["I", "saw", "a", "saw"]
    a = result.attention[0]
    assert torch.equal(a[1], a[3])
    assert torch.equal(result.output[1], result.output[3])
    assert not torch.equal(a[0], a[1])


def test_i_saw_a_saw_with_positions_tells_the_saws_apart():
    a = run("i_saw_a_saw_positions").attention[0]
    assert (a[1] - a[3]).abs().max() > 1e-3


# --- Tom chase Jerry -> 汤姆 追逐 杰瑞 ---------------------------------------------------------

def test_tom_chase_jerry_is_chinese_queries_over_english_keys_with_additive_attention():
    result = run("tom_chase_jerry")
    assert result.mechanism == "additive"
    assert result.query_tokens == ["汤姆", "追逐", "杰瑞"]
    assert result.key_tokens == ["Tom", "chase", "Jerry"]
    assert result.attention.shape == (1, 3, 3)
    spec = EmbeddingSpec("hashed", 8, 0, "none")
    torch.testing.assert_close(result.trace["x"].data, embed(["汤姆", "追逐", "杰瑞"], spec, []))
    torch.testing.assert_close(result.trace["x_kv"].data,
                               embed(["Tom", "chase", "Jerry"], spec, []))
    # score = v_aᵀ·tanh(q_i·W_q + k_j·W_k + b_a), v_a = ones: recompute it independently
    w = drawn_weights("tom_chase_jerry", result)
    x, x_kv = result.trace["x"].data, result.trace["x_kv"].data
    hidden = torch.tanh((x @ w["W_q"])[:, None] + (x_kv @ w["W_k"])[None] + w["b_a"])
    expected = torch.softmax(hidden.sum(-1), dim=-1)
    torch.testing.assert_close(result.attention[0], expected, **TOL)


# --- causal multi-head ----------------------------------------------------------------------

def test_causal_multi_head_is_lower_triangular_in_both_heads():
    result = run("causal_multi_head")
    a = result.attention
    assert a.shape == (2, 6, 6)
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert (a[:, upper] == 0).all()
    assert (a[:, ~upper] > 0).all()
    assert a[0, 0, 0] == 1 and a[1, 0, 0] == 1  # the first token sees only itself


# --- seed 002: shared head projection with a padding mask -------------------------------------

def test_seed002_shared_heads_equals_the_seeds_code_and_hides_the_padding():
    result = run("seed002_shared_heads")
    assert result.query_tokens[-2:] == ["<pad>", "<pad>"]
    a = result.attention
    assert a.shape == (2, 5, 5)
    assert (a[:, :, 3:] == 0).all()  # the padded key columns: exactly zero
    w = drawn_weights("seed002_shared_heads", result)
    model = SelfAttention002Intended(8, 2).double()  # the seed's layers applied
    with torch.no_grad():
        model.queries.weight.copy_(w["W_q"].T)
        model.keys.weight.copy_(w["W_k"].T)
        model.values.weight.copy_(w["W_v"].T)
        model.fc_out.weight.copy_(w["W_o"].T)
        model.fc_out.bias.copy_(w["b_o"])
        x = result.trace["x"].data[None]
        mask = torch.tensor(get_preset("seed002_shared_heads")["request"]["options"]["mask"])
        out = model(x, x, x, mask[None, None])
    attention = model.attention
    torch.testing.assert_close(a, attention[0], **TOL)
    torch.testing.assert_close(result.output, out[0], **TOL)
