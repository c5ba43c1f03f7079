"""Properties every mechanism in the registry keeps, checked with hypothesis.

α rows sum to 1 (except the labelled after-softmax variant), masked cells are exactly 0, a
fully masked row is defined (never NaN), permuting the tokens permutes α, and the trace
holds the declared step ids in order with shapes that fit their axes.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.attention import registry
from app.attention.options import describe_options

from .helpers import alpha, close, rand

MECHANISMS = list(registry.MECHANISMS)
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)


def option_values(entry: dict):
    """A strategy for one option as the registry describes it (describe_options)."""
    if entry["type"] == "boolean":
        return st.booleans()
    if entry["type"] == "integer":
        values = st.integers(entry.get("minimum", 1), 4)
        return st.none() | values if entry["nullable"] else values
    return st.sampled_from(entry["choices"] + ([0.5] if entry.get("accepts_number") else []))


@st.composite
def options_and_sizes(draw, mech_id: str, cross: bool):
    """(options, heads, d_model, d_kv, n_q, n_k) that the mechanism accepts, drawn from what
    the registry says of its options and of how its key input must fit the query's.
    `scale_stage` keeps its default (the labelled after-softmax variant has its own test);
    `heads` is drawn first so that d_model is a multiple of it."""
    mech = registry.get(mech_id)
    described = {e["name"]: e for e in describe_options(mech.Options)}
    heads = draw(st.integers(1, 3)) if "heads" in described else 1
    opts = {name: draw(option_values(e)) for name, e in described.items()
            if name not in ("heads", "scale_stage")}
    if "heads" in described:
        opts["heads"] = heads
    n_q = draw(st.integers(1, 5))
    n_k = draw(st.integers(1, 5)) if cross and not mech.pairs_rows else n_q
    d_model = heads * draw(st.integers(1, 3))
    d_kv = draw(st.integers(1, 6)) if cross and not mech.same_width else d_model
    return opts, heads, d_model, d_kv, n_q, n_k


@st.composite
def cases(draw, mech_id: str, cross: bool | None = None, masked: bool | None = None):
    """A full call: x, x_kv (None for self-attention), mask (bool or None), options, heads."""
    cross = draw(st.booleans()) if cross is None else cross
    opts, heads, d_model, d_kv, n_q, n_k = draw(options_and_sizes(mech_id, cross))
    seed = draw(st.integers(0, 10_000))
    spread = draw(st.sampled_from([0.3, 1.0, 3.0]))
    x = rand(n_q, d_model, seed=seed, scale=spread)
    x_kv = rand(n_k, d_kv, seed=seed + 1, scale=spread) if cross else None
    masked = draw(st.booleans()) if masked is None else masked
    mask = None
    if masked:
        mask = torch.tensor(draw(st.lists(st.lists(st.booleans(), min_size=n_k, max_size=n_k),
                                          min_size=n_q, max_size=n_q)), dtype=torch.bool)
        mask[:, draw(st.integers(0, n_k - 1))] = True  # every query keeps a key
    return x, x_kv, mask, opts, heads, seed


def run(mech_id, x, x_kv, mask, opts, seed):
    return registry.get(mech_id)(x, x_kv, mask=mask, options=opts, seed=seed)


@pytest.mark.parametrize("mech_id", MECHANISMS)
@SETTINGS
@given(data=st.data())
def test_alpha_rows_sum_to_one(mech_id, data):
    x, x_kv, mask, opts, heads, seed = data.draw(cases(mech_id))
    _, trace = run(mech_id, x, x_kv, mask, opts, seed)
    a = alpha(trace)
    assert a.shape[0] == heads
    close(a.sum(-1), torch.ones(a.shape[:2]))
    assert (a >= 0).all()


@pytest.mark.parametrize("mech_id", [m for m, mech in registry.MECHANISMS.items()
                                     if "scale_stage" in mech.Options.__dataclass_fields__])
@SETTINGS
@given(data=st.data())
def test_after_softmax_variant_rows_sum_to_the_scale_and_say_so(mech_id, data):
    x, x_kv, mask, opts, heads, seed = data.draw(cases(mech_id))
    opts |= {"scale": "sqrt_n", "scale_stage": "after_softmax"}
    _, trace = run(mech_id, x, x_kv, mask, opts, seed)
    n_k = trace["weights"].shape[-1]
    close(alpha(trace).sum(-1), torch.full((heads, x.shape[0]), 1 / math.sqrt(n_k)))
    assert "not 1" in trace["weights"].note and "softmax" in trace.ids


@pytest.mark.parametrize("mech_id", MECHANISMS)
@SETTINGS
@given(data=st.data())
def test_masked_cells_are_exactly_zero(mech_id, data):
    x, x_kv, mask, opts, heads, seed = data.draw(cases(mech_id, masked=True))
    out, trace = run(mech_id, x, x_kv, mask, opts, seed)
    a = alpha(trace)
    assert (a[:, ~mask] == 0).all()
    assert torch.isfinite(out).all()
    assert not any(torch.isnan(s.data).any() for s in trace.steps)


@pytest.mark.parametrize("mech_id", MECHANISMS)
@SETTINGS
@given(data=st.data())
def test_fully_masked_row_is_defined_never_nan(mech_id, data):
    x, x_kv, mask, opts, heads, seed = data.draw(cases(mech_id, masked=True))
    dead = data.draw(st.integers(0, x.shape[0] - 1))
    mask[dead] = False
    out, trace = run(mech_id, x, x_kv, mask, opts, seed)
    a = alpha(trace)
    assert torch.isfinite(out).all()
    assert not any(torch.isnan(s.data).any() for s in trace.steps)
    if opts["mask_fill"] == "-inf":  # defined as 0: the row attends to nothing
        assert (a[:, dead] == 0).all()
        assert any(f"{dead + 1}" in n and "0 (not NaN)" in n for n in trace.notes)
    else:  # −1e20: a softmax of equal values, uniform as in seed 002
        close(a[:, dead], torch.full_like(a[:, dead], 1 / a.shape[-1]))
        assert any("uniform" in n for n in trace.notes)


@pytest.mark.parametrize("mech_id", MECHANISMS)
@SETTINGS
@given(data=st.data())
def test_permuting_tokens_permutes_alpha(mech_id, data):
    """Self-attention without positions is permutation-equivariant. A mechanism with
    positional keys (concat: W_1 has one column per *position* of V) is the exception by
    design: permuting the tokens permutes α's query rows but not its key columns."""
    x, _, _, opts, heads, seed = data.draw(cases(mech_id, cross=False, masked=False))
    p = torch.tensor(data.draw(st.permutations(range(x.shape[0]))))
    out, trace = run(mech_id, x, None, None, opts, seed)
    out_p, trace_p = run(mech_id, x[p], None, None, opts, seed)
    a, a_p = alpha(trace), alpha(trace_p)
    if registry.get(mech_id).positional_keys:
        close(a_p, a[:, p, :])
        return
    close(a_p, a[:, p][:, :, p])
    close(out_p, out[p])


@pytest.mark.parametrize("mech_id", MECHANISMS)
@SETTINGS
@given(data=st.data())
def test_trace_ids_and_shapes_are_the_declared_ones(mech_id, data):
    x, x_kv, mask, opts, heads, seed = data.draw(cases(mech_id))
    mech = registry.get(mech_id)
    out, trace = run(mech_id, x, x_kv, mask, opts, seed)
    cross, masked = x_kv is not None, mask is not None
    assert trace.ids == mech.step_ids(mech.parse(opts), cross, masked)
    n_q, n_k = x.shape[0], (x_kv if cross else x).shape[0]
    size = {"head": heads, "query": n_q, "key": n_k}
    for step in trace.steps:
        assert len(step.axes) == len(step.shape), step.id
        for axis, n in zip(step.axes, step.shape, strict=True):
            if axis in size:
                assert n == size[axis], (step.id, axis, step.shape)
        assert step.title and step.formula
    assert trace["weights"].shape == [heads, n_q, n_k]
    assert trace.ids[-1] == "output"
    close(trace["output"].data, out)
    close(trace["x"].data, x)
