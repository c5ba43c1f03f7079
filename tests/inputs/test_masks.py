"""build_mask: none, causal, and 0/1 matrices given as lists or pasted text."""

from __future__ import annotations

import pytest
import torch

from app.attention.errors import InputError
from app.inputs.masks import build_mask


@pytest.mark.parametrize("mask", [None, "none"])
def test_no_mask(mask):
    assert build_mask(mask, 3, 3) is None


def test_causal_is_lower_triangular_with_the_diagonal():
    m = build_mask("causal", 4, 4)
    assert m.dtype == torch.bool
    assert m.tolist() == [[True, False, False, False], [True, True, False, False],
                          [True, True, True, False], [True, True, True, True]]


def test_causal_for_cross_attention_is_n_query_by_n_key():
    m = build_mask("causal", 2, 3)
    assert m.tolist() == [[True, False, False], [True, True, False]]


@pytest.mark.parametrize("mask", [
    [[1, 0, 0], [1, 1, 0]],
    [[True, False, False], [True, True, False]],
    "1 0 0\n1 1 0",
    "[[1, 0, 0], [1, 1, 0]]",
    "1,0,0\n1,1,0",
    "[1 0 0; 1 1 0]",
    "tensor([[ True, False, False],\n        [ True,  True, False]])",
])
def test_a_matrix_in_any_form(mask):
    assert build_mask(mask, 2, 3).tolist() == [[True, False, False], [True, True, False]]


def test_wrong_shape_says_both_shapes():
    with pytest.raises(InputError) as e:
        build_mask([[1, 1], [1, 1]], 2, 3)
    assert e.value.field == "options.mask"
    assert "expected a 2 × 3 matrix (n_query × n_key) of 0/1, got 2 × 2" in str(e.value)


def test_values_other_than_0_and_1_name_the_cell():
    with pytest.raises(InputError, match=r"only 0 \(masked\) and 1 \(may attend\), got 2 at row 2,"
                       r" column 1"):
        build_mask([[1, 0], [2, 1]], 2, 2)


@pytest.mark.parametrize("mask, message", [
    ([[1, 0], [1]], "every row to have 2 values like row 1, got 1 in row 2"),
    ("1 0\n1 x", "a number at row 2, column 2, got 'x'"),
    ([[1, float("nan")], [1, 1]], "finite numbers, got nan at row 1, column 2"),
    ("causl", "none, causal, or a 0/1 matrix n_query × n_key, got 'causl'"),
    ("Causal", "got 'Causal'"),
    ("", "got ''"),
])
def test_bad_masks_are_input_errors_never_value_errors(mask, message):
    with pytest.raises(InputError) as e:
        build_mask(mask, 2, 2)
    assert e.value.field == "options.mask"
    assert message in str(e.value)
