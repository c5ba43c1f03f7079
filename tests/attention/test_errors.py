"""Bad input raises InputError, naming the field, what was expected and what came."""

from __future__ import annotations

import math

import pytest
import torch

from app.attention import registry
from app.attention.errors import InputError

from .helpers import rand

MECHANISMS = list(registry.MECHANISMS)


def error(mech_id, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as e:
        registry.get(mech_id)(*args, **kwargs)
    message = str(e.value)
    assert message.startswith(e.value.field + ": expected ")
    assert ", got " in message
    return e.value


def test_weight_shape_mismatch_says_the_convention():
    e = error("scaled_dot_product", rand(3, 8), weights={"W_q": rand(4, 8)},
              options={"d_k": 4})
    assert str(e) == ("weights.W_q: expected 8 × 4 (d_model × d_k; Q = X·W_q) for an input "
                      "with 8 features, got 4 × 8")
    assert e.field == "weights.W_q" and e.got == "4 × 8"


@pytest.mark.parametrize("mech_id,name,good_shape,options", [
    ("multi_head", "W_o", (8, 8), {}), ("multi_head_shared", "W_k", (4, 4), {}),
    ("additive", "W_v", (8, 8), {"d_v": 8}), ("concat", "W_2", (16, 8), {"d_out": 8}),
    ("additive", "b_a", (8,), {"d_a": 8})])
def test_weight_shape_mismatch_in_every_mechanism(mech_id, name, good_shape, options):
    bad = rand(*(s + 1 for s in good_shape))
    e = error(mech_id, rand(3, 8), weights={name: bad}, options=options)
    assert e.field == f"weights.{name}"
    assert " × ".join(map(str, good_shape)) in e.expected and "8 features" in e.expected
    registry.get(mech_id)(rand(3, 8), weights={name: rand(*good_shape)}, options=options)


@pytest.mark.parametrize("mech_id,weights,options,sizes", [
    ("scaled_dot_product", {"W_q": (8, 3)}, {}, {"q": [1, 5, 3], "v": [1, 5, 3]}),
    ("multi_head", {"W_q": (8, 6)}, {"heads": 2}, {"q": [2, 5, 3], "output": [5, 8]}),
    ("additive", {"W_v": (8, 2)}, {}, {"output": [5, 2]}),
    ("concat", {"W_2": (16, 7)}, {}, {"output": [5, 7]}),
])
def test_unset_width_is_read_off_a_given_weight(mech_id, weights, options, sizes):
    """A pasted W_q of 8 × 3 with d_k unset means d_k = 3, not a shape error."""
    given = {name: rand(*shape) for name, shape in weights.items()}
    _, trace = registry.get(mech_id)(rand(5, 8), weights=given, options=options)
    for step, shape in sizes.items():
        assert trace[step].shape == shape


def test_inferred_width_still_checks_the_other_weights():
    e = error("scaled_dot_product", rand(5, 8), weights={"W_q": rand(8, 3), "W_k": rand(8, 4)})
    assert e.field == "weights.W_k" and "8 × 3" in e.expected and e.got == "8 × 4"


def test_cross_attention_weight_error_names_both_inputs():
    e = error("additive", rand(3, 8), rand(4, 5), weights={"W_k": rand(8, 8)})
    assert "5 × 8 (d_kv × d_a" in e.expected and "a key input with 5" in e.expected


@pytest.mark.parametrize("mech_id", ["multi_head", "multi_head_shared"])
def test_heads_not_dividing_d_model(mech_id):
    e = error(mech_id, rand(3, 8), options={"heads": 3})
    assert e.field == "options.heads" and "d_model = 8" in e.expected and e.got == "3"


@pytest.mark.parametrize("mech_id", MECHANISMS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_or_inf_in_the_input(mech_id, bad):
    x = rand(3, 4)
    x[1, 2] = bad
    e = error(mech_id, x)
    assert e.field == "query" and e.expected == "finite numbers"
    assert "row 2, column 3" in e.got
    e = error(mech_id, rand(3, 4), x)
    assert e.field == "key"


@pytest.mark.parametrize("mech_id,name,shape", [
    ("scaled_dot_product", "W_k", (4, 4)), ("multi_head", "W_o", (4, 4)),
    ("multi_head_shared", "b_o", (4,)), ("additive", "v_a", (4,)), ("concat", "W_1", (8, 3))])
def test_nan_or_inf_in_weights(mech_id, name, shape):
    w = rand(*shape)
    w.view(-1)[1] = math.nan
    e = error(mech_id, rand(3, 4), weights={name: w})
    assert e.field == f"weights.{name}" and e.expected == "finite numbers" and "nan" in e.got


@pytest.mark.parametrize("mech_id", MECHANISMS)
@pytest.mark.parametrize("empty", [torch.empty(0, 4), torch.empty(3, 0), []])
def test_empty_input(mech_id, empty):
    e = error(mech_id, empty)
    assert e.field == "query"
    e = error(mech_id, rand(3, 4), empty)
    assert e.field == "key"


@pytest.mark.parametrize("mech_id", MECHANISMS)
def test_mask_of_the_wrong_shape(mech_id):
    e = error(mech_id, rand(3, 4), mask=torch.ones(3, 4))
    assert e.field == "options.mask" and "3 × 3" in e.expected and e.got == "3 × 4"
    e = error(mech_id, rand(3, 4), mask=torch.full((3, 3), 2))
    assert e.field == "options.mask" and "0 (masked) and 1" in e.expected


@pytest.mark.parametrize("mech_id", MECHANISMS)
def test_unknown_option(mech_id):
    e = error(mech_id, rand(3, 4), options={"temperature": 2})
    assert e.field == "options.temperature" and "mask_fill" in e.expected
    assert "unknown option 'temperature'" in e.got


@pytest.mark.parametrize("mech_id,options,field", [
    ("scaled_dot_product", {"scale": "sqrt_x"}, "options.scale"),
    ("scaled_dot_product", {"scale": math.inf}, "options.scale"),
    ("multi_head", {"heads": 0}, "options.heads"),
    ("multi_head_shared", {"projections": "yes"}, "options.projections"),
    ("additive", {"d_a": 1.5}, "options.d_a"),
    ("concat", {"mask_fill": "0"}, "options.mask_fill")])
def test_bad_option_value(mech_id, options, field):
    assert error(mech_id, rand(3, 4), options=options).field == field


@pytest.mark.parametrize("mech_id,options,name", [
    ("scaled_dot_product", {}, "W_o"),
    ("multi_head", {"bias": False}, "b_q"),
    ("multi_head_shared", {"projections": False}, "W_q"),
    ("additive", {}, "W_1"),
    ("concat", {}, "W_q")])
def test_unused_weight_given(mech_id, options, name):
    e = error(mech_id, rand(2, 4), weights={name: rand(4, 4)}, options=options)
    assert e.field == f"weights.{name}" and "does not use" in e.got


def test_concat_key_rows_must_match_query_rows():
    e = error("concat", rand(3, 4), rand(2, 4))
    assert e.field == "key" and e.got == "2 rows"


def test_shared_key_features_must_match():
    e = error("multi_head_shared", rand(3, 4), rand(3, 2))
    assert e.field == "key" and "4 features" in e.expected


def test_unknown_mechanism():
    with pytest.raises(InputError) as e:
        registry.get("sparse")
    assert e.value.field == "mechanism" and "additive" in e.value.expected
    assert e.value.got == "'sparse'"


@pytest.mark.parametrize("where", ["query", "key", "weights.W_v", "options.mask"])
def test_ragged_rows_or_text_instead_of_numbers(where):
    x, ragged = rand(2, 2), [[1.0, 2.0], [3.0]]
    args, kwargs = {"query": ((ragged,), {}), "key": ((x, ragged), {}),
                    "weights.W_v": ((x,), {"weights": {"W_v": ragged}}),
                    "options.mask": ((x,), {"mask": ragged})}[where]
    e = error("scaled_dot_product", *args, **kwargs)
    assert e.field == where and e.got == "rows of different lengths"
    e = error("additive", x, weights={"b_a": "one two"})
    assert e.field == "weights.b_a" and "'one two'" in e.got


@pytest.mark.parametrize("mech_id", MECHANISMS)
def test_overflow_is_refused_not_returned_as_nan(mech_id):
    """1e200 is a finite input, but a dot product of two such rows overflows float64: an
    error, never NaN. Additive (tanh bounds the score) and concat (linear) stay finite."""
    x = torch.full((3, 4), 1e200, dtype=torch.float64)
    if mech_id in ("additive", "concat"):
        out, trace = registry.get(mech_id)(x)
        assert torch.isfinite(out).all()
        return
    e = error(mech_id, x)
    assert e.field == "query" and "overflow" in e.got and "'scores'" in e.got


def test_overflow_from_the_scale_option_is_refused():
    e = error("scaled_dot_product", rand(3, 4, scale=100.0), options={"scale": 1e308})
    assert "'scaled'" in e.got
