"""Reading a checkpoint in the Hugging Face layout, with no network and no transformers.

A checkpoint directory holds ``config.json`` (the architecture), ``model.safetensors`` (the
weights, read with ``safetensors``) and ``tokenizer.json`` (read with ``tokenizers``). This
module only reads files and checks them; the forward pass lives in ``bert.py``.

Errors a checkpoint can raise, both with a message that names the directory:

- ``UnsupportedArchitecture`` — ``config.json``'s ``model_type`` (or one of its settings, such as
  ``position_embedding_type``) is one we cannot run; the message names it and what we support.
- ``CheckpointError`` — a file is missing or does not fit the config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

#: model_type values we can run (config.json). GPT-2 and friends are not here yet.
SUPPORTED_TYPES = ("bert",)

#: hidden_act values of config.json and the function each one names.
ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")

#: Prefixes a task head's checkpoint puts before the encoder's weights (BertForMaskedLM...).
PREFIXES = ("bert.",)


class CheckpointError(ValueError):
    """A checkpoint directory we cannot use: a missing file, a weight that does not fit."""

    def __init__(self, path: Path | str, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"checkpoint {self.path}: {problem}")


class UnsupportedArchitecture(CheckpointError):
    """``config.json`` names an architecture (``model_type``) or a setting we cannot run."""

    def __init__(self, path: Path | str, model_type: str, what: str | None = None):
        self.model_type = model_type
        problem = what or (f"model_type {model_type!r} is not supported; supported: "
                           + ", ".join(SUPPORTED_TYPES))
        super().__init__(path, problem)


@dataclass(frozen=True)
class BertConfig:
    """The numbers of a BERT encoder, from config.json (names shortened)."""

    vocab_size: int
    d_model: int  # hidden_size
    layers: int  # num_hidden_layers
    heads: int  # num_attention_heads
    d_ff: int  # intermediate_size
    max_positions: int  # max_position_embeddings
    type_vocab_size: int
    eps: float  # layer_norm_eps
    act: str  # hidden_act


def read_config(path: Path) -> dict[str, Any]:
    """config.json as a dict; CheckpointError when it is missing or not JSON."""
    file = path / "config.json"
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(path, "no config.json (expected the Hugging Face layout: "
                              "config.json, model.safetensors, tokenizer.json)") from None
    except (OSError, ValueError) as e:
        raise CheckpointError(path, f"config.json is not readable JSON ({e})") from None


def bert_config(path: Path, cfg: dict[str, Any]) -> BertConfig:
    """Check that `cfg` is a BERT we can run and return its numbers."""
    model_type = str(cfg.get("model_type", "(none)"))
    if model_type not in SUPPORTED_TYPES:
        raise UnsupportedArchitecture(path, model_type)
    pos = cfg.get("position_embedding_type", "absolute")
    if pos != "absolute":
        raise UnsupportedArchitecture(path, model_type, f"position_embedding_type {pos!r} is "
                                      "not supported; supported: 'absolute'")
    act = cfg.get("hidden_act", "gelu")
    if act not in ACTIVATIONS:
        raise UnsupportedArchitecture(path, model_type, f"hidden_act {act!r} is not "
                                      "supported; supported: " + ", ".join(ACTIVATIONS))
    try:
        c = BertConfig(int(cfg["vocab_size"]), int(cfg["hidden_size"]),
                       int(cfg["num_hidden_layers"]), int(cfg["num_attention_heads"]),
                       int(cfg["intermediate_size"]), int(cfg.get("max_position_embeddings", 512)),
                       int(cfg.get("type_vocab_size", 2)), float(cfg.get("layer_norm_eps", 1e-12)),
                       act)
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(path, f"config.json lacks a usable {e}") from None
    if c.d_model % c.heads:
        raise CheckpointError(path, f"hidden_size {c.d_model} is not a multiple of "
                              f"num_attention_heads {c.heads}")
    return c


def load_weights(path: Path) -> dict[str, torch.Tensor]:
    """model.safetensors as float32 tensors, the encoder's names without a task prefix."""
    file = path / "model.safetensors"
    if not file.is_file():
        raise CheckpointError(path, "no model.safetensors (pytorch_model.bin is not read: "
                              "convert it to safetensors)")
    try:
        raw = load_file(str(file), device="cpu")
    except Exception as e:  # safetensors raises its own error types for a corrupt file
        raise CheckpointError(path, f"model.safetensors is not readable ({e})") from None
    out = {}
    for name, t in raw.items():
        for prefix in PREFIXES:
            if name.startswith(prefix):
                name = name[len(prefix):]
        out[name] = t.to(torch.float32) if t.is_floating_point() else t
    return out


def load_tokenizer(path: Path) -> Tokenizer:
    """tokenizer.json with its padding and truncation switched off (we decide the length)."""
    file = path / "tokenizer.json"
    if not file.is_file():
        raise CheckpointError(path, "no tokenizer.json (a fast tokenizer file is required)")
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as e:  # tokenizers raises a plain Exception for a bad file
        raise CheckpointError(path, f"tokenizer.json is not readable ({e})") from None
    tok.no_padding()
    tok.no_truncation()
    return tok
