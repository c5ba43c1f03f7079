"""spec_from_request: the JSON API v1 request dict -> RunSpec, strict about every key."""

from __future__ import annotations

import pytest
import torch

from app.attention.errors import InputError
from app.inputs.embedding import EmbeddingSpec
from app.inputs.masks import parse_mask
from app.inputs.paste import as_tensor
from app.service import InputSpec, RunSpec, run_attention, spec_from_request

FULL = {
    "mechanism": "multi_head",
    "query": {"text": "I saw a saw"},
    "key": None,
    "embedding": {"kind": "hashed", "dim": 8, "seed": 0, "positions": "none"},
    "weights": {"W_q": [[0.0] * 8] * 8, "W_k": None},
    "seed": 3,
    "options": {"heads": 2, "mask": "causal"},
}


def test_a_full_request():
    spec = spec_from_request(FULL)
    assert spec == RunSpec(
        mechanism="multi_head", query=InputSpec(text="I saw a saw"), key=None,
        embedding=EmbeddingSpec("hashed", 8, 0, "none"),
        weights={"W_q": [[0.0] * 8] * 8, "W_k": None}, seed=3,
        options={"heads": 2, "mask": "causal"})
    result = run_attention(spec)
    assert result.attention.shape == (2, 4, 4)


def test_a_minimal_request_takes_the_defaults():
    spec = spec_from_request({"mechanism": "scaled_dot_product", "query": {"tokens": ["a", "b"]}})
    assert spec.key is None and spec.seed == 0 and spec.weights == {} and spec.options == {}
    assert spec.embedding == EmbeddingSpec()


def test_cross_attention_and_a_labelled_matrix():
    spec = spec_from_request({"mechanism": "additive",
                              "query": {"matrix": "1 0\n0 1", "tokens": ["p", "q"]},
                              "key": {"matrix": [[1, 2], [3, 4], [5, 6]]}})
    result = run_attention(spec)
    assert result.query_tokens == ["p", "q"] and result.key_tokens == ["x1", "x2", "x3"]


@pytest.mark.parametrize("change, field, words", [
    ({"option": {}}, "option", "unknown 'option'"),
    ({"extra": 1, "more": 2}, "extra", "unknown 'extra', 'more'"),
    ({"query": {"text": "a", "txt": "b"}}, "query.txt", "only the keys text, tokens, matrix"),
    ({"key": {"tokens": ["a"], "label": "x"}}, "key.label", "unknown 'label'"),
    ({"embedding": {"dim": 8, "size": 8}}, "embedding.size", "unknown 'size'"),
    ({"weights": {"seed": 1}, "seed": 2}, "weights.seed", "the same seed as top-level"),
    ({"weights": {"seed": -3}}, "weights.seed", "an integer from 0 to 2^63 − 1"),
    ({"seed": True}, "seed", "an integer from 0 to 2^63 − 1"),
    ({"seed": -1}, "seed", "got -1"),
    ({"seed": "0"}, "seed", "got '0'"),
    ({"embedding": {"dim": 0}}, "embedding.dim", "an integer ≥ 1"),
    ({"embedding": {"dim": 8.5}}, "embedding.dim", "got 8.5"),
    ({"embedding": {"seed": 2**64}}, "embedding.seed", "2^63"),
    ({"embedding": {"kind": 3}}, "embedding.kind", "a string"),
    ({"embedding": []}, "embedding", "an object"),
    ({"mechanism": 5}, "mechanism", "a mechanism id"),
    ({"mechanism": None}, "mechanism", "'mechanism' in the request"),
    ({"query": None}, "query", "'query' in the request"),
    ({"query": "I saw a saw"}, "query", "an object with keys text, tokens, matrix"),
    ({"query": {"text": 5}}, "query.text", "a string"),
    ({"query": {"tokens": "a b"}}, "query.tokens", "a list of strings"),
    ({"query": {"tokens": ["a", 2]}}, "query.tokens", "a string at position 2"),
    ({"query": {"matrix": 5}}, "query.matrix", "nested lists or pasted text"),
    ({"weights": [[1]]}, "weights", "weight name -> matrix"),
    ({"weights": {"W_q": 5}}, "weights.W_q", "nested lists or pasted text"),
    ({"options": "causal"}, "options", "an object of options"),
])
def test_strict_errors_name_the_field(change, field, words):
    request = {"mechanism": "scaled_dot_product", "query": {"text": "a b"}, **change}
    with pytest.raises(InputError) as e:
        spec_from_request(request)
    assert e.value.field == field
    assert words in str(e.value)


def test_not_a_dict_at_all():
    with pytest.raises(InputError, match="an object with keys mechanism, query"):
        spec_from_request([1, 2])


def test_errors_found_later_still_name_the_field():
    spec = spec_from_request({"mechanism": "scaled_dot_product", "query": {"text": "a b"},
                              "options": {"mask": [[1, 0], [1]]}})
    with pytest.raises(InputError) as e:
        run_attention(spec)
    assert e.value.field == "options.mask"


def _read_capped(field, value):
    """What the API's limited() calls on a given matrix, with a cap of 5 cells."""
    if field == "options.mask":
        return parse_mask(value, max_cells=5)
    return as_tensor(value, field, max_cells=5)


@pytest.mark.parametrize("value, field", [
    ("1 2 3\n4 5 6", "query.matrix"),
    ([[1] * 8] * 8, "weights.W_q"),
    (torch.ones(2, 3, dtype=torch.float64), "weights.W_q"),  # already read: still capped
    ("1 0 1\n1 1 0", "options.mask"),
])
def test_max_cells_caps_every_given_matrix(value, field):
    with pytest.raises(InputError) as e:
        _read_capped(field, value)
    assert e.value.field == field and "at most 5 numbers" in str(e.value)


def test_matrices_read_under_the_cap_run_without_being_read_again(monkeypatch):
    x = _read_capped("query.matrix", "1 2\n3 4")
    mask = _read_capped("options.mask", "1 0\n1 1")  # 4 cells: under the cap
    w_q = _read_capped("weights.W_q", [[1, 0], [0, 1]])
    assert x.dtype == mask.dtype == w_q.dtype == torch.float64
    monkeypatch.setattr("app.inputs.paste._to_floats", None)  # no cell is read again
    result = run_attention(RunSpec("scaled_dot_product", InputSpec(matrix=x),
                                   weights={"W_q": w_q}, options={"mask": mask}))
    assert result.attention.shape == (1, 2, 2)
    assert result.mask.tolist() == [[True, False], [True, True]]
    assert torch.equal(result.trace.weights["W_q"], w_q)


def test_the_seed_may_sit_in_weights_as_in_the_api_contract():
    """DESIGN's request example puts the seed in ``weights``: same draw as top-level seed."""
    base = {"mechanism": "multi_head", "query": {"text": "I saw a saw"}}
    inside = run_attention(spec_from_request({**base, "weights": {"seed": 7}}))
    top = run_attention(spec_from_request({**base, "seed": 7}))
    other = run_attention(spec_from_request({**base, "seed": 8}))
    assert torch.equal(inside.output, top.output)
    assert not torch.equal(inside.output, other.output)
