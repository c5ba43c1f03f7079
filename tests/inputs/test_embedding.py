"""Tokens -> X: hashed and one-hot embeddings, sinusoidal positions, splitting any script."""

from __future__ import annotations

import math

import pytest
import torch

from app.attention.errors import InputError
from app.inputs.embedding import EmbeddingSpec, embed, sinusoidal, split_text, vocabulary


def test_chinese_text_is_three_tokens():
    assert split_text("汤姆 追逐 杰瑞") == ["汤姆", "追逐", "杰瑞"]


def test_any_whitespace_splits_including_ideographic_space_and_newlines():
    assert split_text("汤姆\u3000追逐\n杰瑞\t!") == ["汤姆", "追逐", "杰瑞", "!"]
    assert split_text("   ") == []


def test_hashed_same_token_same_vector_for_a_seed_and_dim():
    spec = EmbeddingSpec("hashed", 8, 3)
    x = embed(["I", "saw", "a", "saw"], spec, [])
    assert x.shape == (4, 8) and x.dtype == torch.float64
    assert torch.equal(x[1], x[3])
    assert not torch.equal(x[0], x[1])
    again = embed(["saw", "I"], spec, [])  # another call, another sentence
    assert torch.equal(again[0], x[1]) and torch.equal(again[1], x[0])


def test_hashed_vectors_differ_across_seeds_and_are_fixed_numbers():
    a = embed(["saw"], EmbeddingSpec("hashed", 8, 0), [])
    b = embed(["saw"], EmbeddingSpec("hashed", 8, 1), [])
    assert not torch.allclose(a, b)
    # the same on every machine: the generator is seeded from SHA-256 of seed and token
    again = embed(["saw"], EmbeddingSpec("hashed", 8, 0), [])
    assert torch.equal(a, again)
    assert 0.2 < a.std().item() < 3.0  # N(0, 1) entries


def test_hashed_works_for_any_script():
    x = embed(["汤姆", "Tom", "🐱"], EmbeddingSpec("hashed", 4, 0), [])
    assert x.shape == (3, 4) and torch.isfinite(x).all()
    assert len({tuple(r.tolist()) for r in x}) == 3


def test_one_hot_uses_the_shared_vocabulary_in_order_and_pads():
    q, k = ["b", "a", "b"], ["c", "a"]
    vocab = vocabulary(q, k)
    assert vocab == ["b", "a", "c"]
    x = embed(q, EmbeddingSpec("one_hot", 5, 0), vocab)
    assert x.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
    xk = embed(k, EmbeddingSpec("one_hot", 5, 0), vocab)
    assert xk.tolist() == [[0, 0, 1, 0, 0], [0, 1, 0, 0, 0]]


def test_one_hot_dim_smaller_than_vocabulary_is_an_input_error():
    with pytest.raises(InputError) as e:
        embed(["a", "b", "c"], EmbeddingSpec("one_hot", 2, 0), ["a", "b", "c"])
    assert e.value.field == "embedding.dim"
    assert "at least the number of distinct tokens (3)" in str(e.value)


def test_sinusoidal_matches_the_formula():
    n, d = 6, 7  # odd d: the last column is a sine
    pe = sinusoidal(n, d)
    for p in range(n):
        for c in range(d):
            i2 = c - c % 2
            angle = p / 10000 ** (i2 / d)
            expected = math.sin(angle) if c % 2 == 0 else math.cos(angle)
            assert pe[p, c].item() == pytest.approx(expected, abs=1e-12), (p, c)


def test_sinusoidal_positions_are_added_and_separate_repeated_tokens():
    tokens = ["I", "saw", "a", "saw"]
    plain = embed(tokens, EmbeddingSpec("hashed", 8, 0, "none"), [])
    with_pos = embed(tokens, EmbeddingSpec("hashed", 8, 0, "sinusoidal"), [])
    torch.testing.assert_close(with_pos - plain, sinusoidal(4, 8))
    assert not torch.allclose(with_pos[1], with_pos[3])


@pytest.mark.parametrize("spec, field", [
    (EmbeddingSpec("bag_of_words", 8, 0), "embedding.kind"),
    (EmbeddingSpec("hashed", 8, 0, "learned"), "embedding.positions"),
    (EmbeddingSpec("hashed", 0, 0), "embedding.dim"),
    (EmbeddingSpec("hashed", -3, 0), "embedding.dim"),
])
def test_bad_embedding_settings_name_their_field(spec, field):
    with pytest.raises(InputError) as e:
        embed(["a"], spec, ["a"])
    assert e.value.field == field


def test_no_tokens_is_an_input_error():
    with pytest.raises(InputError):
        embed([], EmbeddingSpec(), [])
