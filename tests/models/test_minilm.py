"""Our BERT forward, attention through MultiHead, against transformers as the oracle.

Every layer's and head's α must equal transformers' eager ``output_attentions`` to 1e-4,
every layer's traced X must be transformers' hidden state entering that layer, and the last
hidden state must match to 1e-4. The same for tiny checkpoints found through
ATTNSCOPE_MODEL_DIRS, including a BertForMaskedLM (``bert.`` prefixed weights).
"""

from __future__ import annotations

import os

import pytest
import torch

from app.attention.errors import InputError
from app.config import Settings
from app.models.checkpoint import UnsupportedArchitecture, bert_config, read_config
from app.models.registry import BUILTIN_ID, UnknownModel
from app.models.service import ModelService

from .conftest import MINILM

TOL = 1e-4
TEXTS = [
    "The cat sat on the mat because it was tired.",
    "I saw a saw. Tokenizers split unbelievably long words into word-pieces, don't they?",
]
TRACE_IDS = ["x", "q", "k", "v", "scores", "scaled", "weights", "weighted", "heads_concat",
             "output"]


def oracle(hf_model, ids: list[int]):
    with torch.no_grad():
        return hf_model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)


def assert_matches_oracle(run, ref, layers: int, heads: int) -> None:
    assert len(run.encoder.alphas) == layers == len(ref.attentions)
    for layer, ours in enumerate(run.encoder.alphas):  # [h, n, n]
        theirs = ref.attentions[layer][0]  # [h, n, n]
        assert ours.shape == theirs.shape and ours.shape[0] == heads
        for head in range(heads):
            diff = (ours[head] - theirs[head]).abs().max().item()
            assert diff < TOL, f"layer {layer} head {head}: α differs by {diff:.2e}"
        x = run.encoder.inputs[layer]
        x_diff = (x - ref.hidden_states[layer][0]).abs().max().item()
        assert x_diff < TOL, f"layer {layer}: traced X differs from the hidden state by {x_diff}"
    final = (run.encoder.hidden - ref.last_hidden_state[0]).abs().max().item()
    assert final < TOL, f"last hidden state differs by {final:.2e}"


@pytest.fixture(scope="module")
def service() -> ModelService:
    return ModelService([])


@pytest.mark.parametrize("text", TEXTS)
def test_minilm_every_head_matches_transformers(service, hf_minilm, text):
    run = service.forward(BUILTIN_ID, text)
    ref = oracle(hf_minilm, run.ids)
    assert_matches_oracle(run, ref, 6, 12)


def test_minilm_at_512_tokens_matches_transformers(service, hf_minilm):
    text = " ".join(f"token{i} is here" for i in range(300))
    run = service.forward(BUILTIN_ID, text, truncate=True)
    assert len(run.tokens) == 512 and run.truncated_from > 512
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert_matches_oracle(run, oracle(hf_minilm, run.ids), 6, 12)


def test_tokens_are_transformers_tokenizer(service, transformers):
    tok = transformers.AutoTokenizer.from_pretrained(str(MINILM))
    for text in TEXTS:
        run = service.forward(BUILTIN_ID, text)
        expected = tok(text)["input_ids"]
        assert run.ids == expected
        assert run.tokens == tok.convert_ids_to_tokens(expected)
        assert run.cls_pos == [0] and run.sep_pos == [len(expected) - 1]


def test_truncation_is_transformers_tokenizer_truncation(service, transformers):
    tok = transformers.AutoTokenizer.from_pretrained(str(MINILM))
    text = " ".join(f"token{i} is here, isn't it?" for i in range(200))
    run = service.forward(BUILTIN_ID, text, truncate=True)
    expected = tok(text, truncation=True, max_length=512)["input_ids"]
    assert run.ids == expected and len(expected) == 512
    assert run.tokens == tok.convert_ids_to_tokens(expected)
    assert run.truncated_from == len(tok(text)["input_ids"])


def test_trace_is_multi_head_with_the_checkpoint_weights(service):
    """Q of head h is X·W_q + b_q restricted to head h's 32 columns, W_q = query.weightᵀ."""
    from safetensors.torch import load_file

    state = load_file(str(MINILM / "model.safetensors"))
    run = service.forward(BUILTIN_ID, TEXTS[0])
    trace = service.layer_trace(BUILTIN_ID, TEXTS[0], False, 2)
    assert trace.ids == TRACE_IDS
    # rebuilt from the pass's X, the trace gives the pass's own α, bit for bit
    assert torch.equal(trace["weights"].data, run.encoder.alphas[2])
    assert torch.equal(trace["x"].data, run.encoder.inputs[2])
    rows = -torch.special.xlogy(run.encoder.alphas[2], run.encoder.alphas[2]).sum(-1)
    torch.testing.assert_close(run.encoder.entropy[2], rows, atol=1e-5, rtol=0)
    x = trace["x"].data
    q = x @ state["encoder.layer.2.attention.self.query.weight"].T \
        + state["encoder.layer.2.attention.self.query.bias"]  # [n, 384]
    assert trace["q"].shape == [12, len(run.tokens), 32]
    torch.testing.assert_close(trace["q"].data[5], q[:, 160:192], atol=1e-4, rtol=0)
    rows = trace["weights"].data.sum(-1)
    torch.testing.assert_close(rows, torch.ones_like(rows), atol=1e-5, rtol=0)
    scaled = trace["scores"].data / 32 ** 0.5
    torch.testing.assert_close(trace["scaled"].data, scaled, atol=1e-5, rtol=0)


def test_repeated_text_comes_from_the_cache(service):
    first = service.forward(BUILTIN_ID, "cached sentence")
    assert service.forward(BUILTIN_ID, "cached sentence") is first
    assert service.forward(BUILTIN_ID, "cached sentence", truncate=True) is not first


def test_text_over_max_tokens_names_text_with_counts(service):
    text = "word " * 600
    with pytest.raises(InputError) as e:
        service.forward(BUILTIN_ID, text)
    assert e.value.field == "text"
    assert "at most 512 tokens" in e.value.expected and e.value.got == "602 tokens"


def test_unknown_model(service):
    with pytest.raises(UnknownModel, match="no model 'gpt-5'; known: minilm-l6"):
        service.forward("gpt-5", "hi")


def test_layer_and_head_out_of_range_name_the_field(service):
    with pytest.raises(InputError) as e:
        service.attention(BUILTIN_ID, "hi", layer=6)
    assert e.value.field == "layer" and "0 to 5" in e.value.expected
    with pytest.raises(InputError) as e:
        service.attention(BUILTIN_ID, "hi", layer=0, head=-1)
    assert e.value.field == "head" and e.value.got == "-1"


# --- other checkpoints through ATTNSCOPE_MODEL_DIRS ------------------------------------

def test_model_dirs_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNSCOPE_MODEL_DIRS", f"{tmp_path}{os.pathsep}/nowhere")
    monkeypatch.setenv("ATTNSCOPE_MODEL_CACHE_BYTES", "12345")
    service = ModelService.from_settings(Settings(_env_file=None))
    assert service.model_dirs == [str(tmp_path), "/nowhere"]
    assert service.cache.max_bytes == 12345


def test_tiny_checkpoints_are_listed_and_match_transformers(tiny_dir, transformers,
                                                            monkeypatch):
    monkeypatch.setenv("ATTNSCOPE_MODEL_DIRS", str(tiny_dir))
    service = ModelService.from_settings(Settings(_env_file=None))
    infos = {i.id: i for i in service.list_models()}
    assert list(infos)[0] == BUILTIN_ID
    assert set(infos) == {BUILTIN_ID, "tiny-bert", "tiny-mlm"}  # gpt (gpt2) is left out
    tiny = infos["tiny-bert"]
    assert (tiny.layers, tiny.heads, tiny.d_model, tiny.max_tokens) == (2, 4, 48, 64)
    assert str(tiny_dir / "tiny-bert") in tiny.source
    for model_id, cls in (("tiny-bert", "BertModel"), ("tiny-mlm", "BertForMaskedLM")):
        hf = getattr(transformers, cls).from_pretrained(str(tiny_dir / infos[model_id].name),
                                                        attn_implementation="eager").eval()
        encoder = hf if cls == "BertModel" else hf.bert
        run = service.forward(model_id, TEXTS[1])
        assert_matches_oracle(run, oracle(encoder, run.ids), 2, 4)


def test_tiny_checkpoint_limit_is_its_own_max_positions(tiny_dir):
    service = ModelService([str(tiny_dir)])
    with pytest.raises(InputError, match="at most 64 tokens for tiny-bert"):
        service.forward("tiny-bert", "word " * 70)
    assert len(service.forward("tiny-bert", "word " * 70, truncate=True).tokens) == 64


def test_unsupported_architecture_is_named(tiny_dir):
    with pytest.raises(UnsupportedArchitecture, match="model_type 'gpt2' is not supported; "
                       "supported: bert"):
        bert_config(tiny_dir / "gpt", read_config(tiny_dir / "gpt"))
    service = ModelService([str(tiny_dir)])
    with pytest.raises(UnsupportedArchitecture, match="gpt2") as e:
        service.forward("gpt", "hello")
    assert e.value.model_type == "gpt2" and str(tiny_dir / "gpt") in str(e.value)


def test_unsupported_bert_setting_is_named(tmp_path):
    from .conftest import write_config_only

    cfg = dict(read_config(MINILM), position_embedding_type="relative_key")
    path = write_config_only(tmp_path / "rel", cfg)
    with pytest.raises(UnsupportedArchitecture, match="position_embedding_type "
                       "'relative_key' is not supported"):
        bert_config(path, read_config(path))
