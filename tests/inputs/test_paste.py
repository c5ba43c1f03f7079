"""parse_matrix / as_matrix: every format people paste, and errors that point at the cell."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.attention.errors import InputError
from app.inputs import paste
from app.inputs.paste import as_matrix, parse_matrix
from app.service import InputSpec, RunSpec, run_attention

M = [[1.0, 2.0], [3.0, 4.0]]


def assert_input_error(call, field: str, message: str) -> None:
    """`call()` raises InputError naming `field`, with `message` in its text."""
    with pytest.raises(InputError) as e:
        call()
    assert e.value.field == field
    assert message in str(e.value)

FORMATS = {
    "json": "[[1, 2], [3, 4]]",
    "json_floats": "[[1.0, 2.0],\n [3.0, 4.0]]",
    "python_trailing_comma": "[[1, 2], [3, 4],]",
    "csv": "1,2\n3,4\n",
    "csv_spaces_crlf": "1, 2\r\n3, 4\r\n",
    "csv_trailing_comma": "1,2,\n3,4,",
    "csv_quoted": '"1","2"\n"3","4"',
    "tsv": "1\t2\n3\t4",
    "tsv_spreadsheet_trailing_tab": "1\t2\t\n3\t4\t\n",
    "whitespace": "1 2\n3   4",
    "whitespace_blank_lines_and_comment": "# np.savetxt header\n\n1 2\n\n3 4\n",
    "matlab": "[1 2; 3 4]",
    "matlab_commas": "[1, 2; 3, 4]",
    "matlab_no_brackets": "1 2; 3 4",
    "matlab_multiline": "[1 2;\n 3 4]",
    "semicolon_csv_decimal_comma": "0,1e1;2\n3;4,0",
    "numpy_repr": "array([[1., 2.],\n       [3., 4.]])",
    "numpy_repr_dtype": "array([[1., 2.],\n       [3., 4.]], dtype=float32)",
    "numpy_print": "[[1. 2.]\n [3. 4.]]",
    "np_array_call": "np.array([[1, 2], [3, 4]])",
    "assignment": "W_q = np.array([[1, 2], [3, 4]])",
    "torch_repr": "tensor([[1., 2.],\n        [3., 4.]])",
    "torch_dtype": "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)",
    "torch_requires_grad": "tensor([[1., 2.], [3., 4.]], requires_grad=True)",
    "torch_grad_fn": "tensor([[1., 2.], [3., 4.]], grad_fn=<AddmmBackward0>)",
    "torch_device_dtype": "tensor([[1., 2.], [3., 4.]], device='cuda:0', dtype=torch.float16)",
    "torch_parameter": "Parameter containing:\ntensor([[1., 2.],\n        [3., 4.]], "
                       "requires_grad=True)",
    "torch_sci": "tensor([[1.0000e+00, 2.0000e+00],\n        [3.0000e+00, 4.0000e+00]])",
    "torch_batch_of_one": "tensor([[[1., 2.],\n         [3., 4.]]])",
    "scientific": "1e0 2E+0\n3.0e0 .4e1",
    "unicode_minus": "−1 −2\n−3 −4",
}


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_reads_the_same_matrix(name):
    expected = [[-1.0, -2.0], [-3.0, -4.0]] if name == "unicode_minus" else M
    assert parse_matrix(FORMATS[name], "weights.W_q") == expected


@pytest.mark.parametrize("text, expected", [
    ("[1, 2, 3]", [[1.0, 2.0, 3.0]]),              # a flat list is one row
    ("1 2 3", [[1.0, 2.0, 3.0]]),
    ("[1; 2; 3]", [[1.0], [2.0], [3.0]]),          # MATLAB column vector
    ("tensor(3.)", [[3.0]]),
    ("[[true, false], [false, true]]", [[1.0, 0.0], [0.0, 1.0]]),  # a bool mask
    ("tensor([[ True, False]])", [[1.0, 0.0]]),
    ("array([[1_000, -0.5]])", [[1000.0, -0.5]]),
    ("[[1e-300, 1.5e300]]", [[1e-300, 1.5e300]]),
])
def test_shapes_and_spellings(text, expected):
    assert parse_matrix(text, "f") == expected


@pytest.mark.parametrize("text, message", [
    ("1,2,3\n4,5,abc", "weights.W_q: expected a number at row 2, column 3, got 'abc'"),
    ("[[1, 2, 3], [4, 5, \"abc\"]]", "expected a number at row 2, column 3, got 'abc'"),
    ("1 2 3\n4 5 x7", "expected a number at row 2, column 3, got 'x7'"),
    ("array([[1., 2.], [3., 4j]])", "expected a number at row 2, column 2, got '4j'"),
    ("1 2 3\n4 5", "expected every row to have 3 values like row 1, got 2 in row 2"),
    ("[[1, 2, 3], [4, 5]]", "expected every row to have 3 values like row 1, got 2 in row 2"),
    ("[1 2 3; 4 5 6 7]", "expected every row to have 3 values like row 1, got 4 in row 2"),
    ("1,nan", "expected finite numbers, got nan at row 1, column 2"),
    ("[[1, 2], [3, Infinity]]", "expected finite numbers, got Infinity at row 2, column 2"),
    ("tensor([[1., -inf]])", "expected finite numbers, got -inf at row 1, column 2"),
    ("[[1, 2], [3,, 4]]", "expected a number at row 2, column 2, got an empty cell"),
    ("1,,2", "expected a number at row 1, column 2, got an empty cell"),
    ("", "got an empty paste"),
    ("   \n\t ", "got an empty paste"),
    ("[]", "got an empty matrix []"),
    ("[[1, 2], [3, 4]", "with every '[' closed by a ']'"),
    ("[[1, 2]] extra", "got unexpected text 'extra' after it"),
    ("tensor([[1., 2.]]) + 1", "got unexpected text ') + 1' after the data"),
    ("[[1, [2]]]", "got a list nested 3 deep at row 1, column 2"),
    ("[[1, 2], 3]", "expected a row in brackets [...] at row 2 like row 1, got the bare value '3'"),
    ("tensor([[ 0.1, 0.2,  ..., 0.3]])", "abbreviated"),
])
def test_errors_say_where_and_what(text, message):
    assert_input_error(lambda: parse_matrix(text, "weights.W_q"), "weights.W_q", message)


def test_a_long_bad_cell_is_clipped_in_the_message():
    with pytest.raises(InputError) as e:
        parse_matrix("1 " + "x" * 5000, "query.matrix")
    assert len(str(e.value)) < 200


def test_max_cells_refuses_before_reading_numbers(monkeypatch):
    text = "\n".join(" ".join(["1.5"] * 100) for _ in range(100))  # 10,000 cells
    monkeypatch.setattr(paste, "_to_floats", lambda *a: pytest.fail("built the floats"))
    with pytest.raises(InputError, match="expected at most 9999 numbers, got 10000 numbers"):
        parse_matrix(text, "query.matrix", max_cells=9999)


def test_max_cells_allows_exactly_the_limit():
    assert len(parse_matrix("1 2\n3 4", "f", max_cells=4)) == 2
    with pytest.raises(InputError, match="at most 3 numbers"):
        as_matrix([[1, 2], [3, 4]], "f", max_cells=3)


def test_not_text_is_an_input_error():
    with pytest.raises(InputError, match="got an int"):
        parse_matrix(5, "f")


# --- as_matrix: nested lists given directly ------------------------------------------------

@pytest.mark.parametrize("value, message", [
    ([[1, 2, 3], [4, 5]], "expected every row to have 3 values like row 1, got 2 in row 2"),
    ([[1, 2], [3, "abc"]], "expected a number at row 2, column 2, got 'abc'"),
    ([[1, None]], "expected a number at row 1, column 2, got null"),
    ([[1, {"a": 1}]], "expected a number at row 1, column 2, got a dict"),
    ([[1.0, float("nan")]], "expected finite numbers, got nan at row 1, column 2"),
    ([[1.0], [float("inf")]], "expected finite numbers, got inf at row 2, column 1"),
    ([], "got an empty list"),
    ([[]], "expected at least one number in row 1, got an empty row"),
    ({"a": 1}, "got a dict"),
    (None, "got null"),
])
def test_as_matrix_errors(value, message):
    assert_input_error(lambda: as_matrix(value, "query.matrix"), "query.matrix", message)


def test_as_matrix_accepts_lists_tuples_flat_rows_tensors_arrays_and_text():
    assert as_matrix([[1, 2], [3, 4]], "f") == M
    assert as_matrix(((1, 2), (3, 4)), "f") == M
    assert as_matrix([1, 2], "f") == [[1.0, 2.0]]
    assert as_matrix(torch.tensor(M), "f") == M
    assert as_matrix(np.array(M), "f") == M
    assert as_matrix("1 2\n3 4", "f") == M
    assert as_matrix([["1.5", "-2"]], "f") == [[1.5, -2.0]]


def test_run_attention_turns_a_ragged_matrix_into_an_input_error_not_a_value_error():
    spec = RunSpec("scaled_dot_product", InputSpec(matrix=[[1.0, 2.0], [3.0]]))
    with pytest.raises(InputError, match="query.matrix: expected every row to have 2 values"):
        run_attention(spec)


def test_run_attention_names_the_weight_and_cell_of_a_bad_pasted_weight():
    x = [[1.0, 0.0], [0.0, 1.0]]
    for w, message in [([[1.0, 2.0], [3.0]], "every row to have 2 values like row 1, got 1 in "
                        "row 2"), ("1 2\n3 oops", "a number at row 2, column 2, got 'oops'"),
                       ([[1.0, float("nan")], [0.0, 1.0]], "finite numbers, got nan at row 1")]:
        spec = RunSpec("scaled_dot_product", InputSpec(matrix=x), weights={"W_q": w})
        assert_input_error(lambda spec=spec: run_attention(spec), "weights.W_q", message)


def test_run_attention_reads_a_pasted_torch_weight():
    x = [[1.0, 0.0], [0.0, 1.0]]
    w = "tensor([[2., 0.],\n        [0., 2.]], dtype=torch.float64, requires_grad=True)"
    result = run_attention(RunSpec("scaled_dot_product", InputSpec(matrix=x),
                                   weights={"W_q": w}))
    assert result.trace["q"].data[0].tolist() == [[2.0, 0.0], [0.0, 2.0]]


# --- round trips: format a random matrix the way each tool prints it, read it back ---------

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
matrices = st.integers(1, 5).flatmap(lambda cols: st.lists(
    st.lists(finite, min_size=cols, max_size=cols), min_size=1, max_size=5))


def _numpy_repr(m):
    with np.printoptions(floatmode="unique", threshold=sys.maxsize):
        return repr(np.array(m, dtype=np.float64))


def _numpy_print(m):
    with np.printoptions(floatmode="unique", threshold=sys.maxsize):
        return str(np.array(m, dtype=np.float64))


def _torch_repr(m):
    torch.set_printoptions(precision=20, profile=None)
    try:
        return repr(torch.tensor(m, dtype=torch.float64, requires_grad=True))
    finally:
        torch.set_printoptions(profile="default")


FORMATTERS = {
    "json": json.dumps,
    "csv": lambda m: "\n".join(",".join(repr(x) for x in row) for row in m),
    "tsv": lambda m: "\n".join("\t".join(repr(x) for x in row) for row in m),
    "whitespace": lambda m: "\n".join("  ".join(repr(x) for x in row) for row in m),
    "matlab": lambda m: "[" + "; ".join(" ".join(repr(x) for x in row) for row in m) + "]",
    "numpy_repr": _numpy_repr,
    "numpy_print": _numpy_print,
    "torch_repr": _torch_repr,
}


@pytest.mark.parametrize("fmt", FORMATTERS)
@settings(max_examples=60, deadline=None)
@given(m=matrices)
def test_round_trip(fmt, m):
    text = FORMATTERS[fmt](m)
    assert parse_matrix(text, "f") == m, text


@settings(max_examples=40, deadline=None)
@given(m=matrices)
def test_as_matrix_round_trip_and_floats_are_exact(m):
    out = as_matrix(m, "f")
    assert out == m
    assert all(isinstance(x, float) and math.isfinite(x) for row in out for x in row)
