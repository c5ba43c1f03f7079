"""Fixtures for the real-model tests: transformers (the oracle only) and tiny checkpoints.

transformers is a test dependency, never a runtime one: it loads the same local files
offline (HF_HUB_OFFLINE=1) with eager attention, so its ``output_attentions`` are the
explicit softmax weights we compare with.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from app.models.registry import builtin_path  # noqa: E402

MINILM = builtin_path()


@pytest.fixture(scope="session")
def transformers():
    return pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def hf_minilm(transformers):
    """transformers' BertModel on the packaged MiniLM files: the oracle."""
    model = transformers.BertModel.from_pretrained(str(MINILM), attn_implementation="eager")
    return model.eval()


def write_tiny_bert(transformers, path: Path, *, masked_lm: bool = False, seed: int = 0,
                    max_positions: int = 64) -> Path:
    """A small random BERT in the Hugging Face layout, with MiniLM's tokenizer.json.

    ``masked_lm`` saves a BertForMaskedLM, whose encoder weights carry a ``bert.`` prefix.
    """
    import torch

    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=48, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=96,
                                     max_position_embeddings=max_positions)
    cls = transformers.BertForMaskedLM if masked_lm else transformers.BertModel
    model = cls(config).eval()
    model.save_pretrained(str(path), safe_serialization=True)
    shutil.copy(MINILM / "tokenizer.json", path / "tokenizer.json")
    return path


def write_config_only(path: Path, config: dict) -> Path:
    """A directory that looks like a checkpoint but whose config we cannot run."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config))
    shutil.copy(MINILM / "tokenizer.json", path / "tokenizer.json")
    return path


@pytest.fixture
def tiny_dir(tmp_path, transformers) -> Path:
    """ATTNSCOPE_MODEL_DIRS-style directory holding checkpoints tiny-bert and tiny-mlm."""
    root = tmp_path / "models"
    root.mkdir()
    write_tiny_bert(transformers, root / "tiny-bert")
    write_tiny_bert(transformers, root / "Tiny MLM", masked_lm=True, seed=1)
    write_config_only(root / "gpt", {"model_type": "gpt2", "n_layer": 2})
    return root
