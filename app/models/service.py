"""The service functions the model routes call: plain values in, tensors and traces out.

``ModelService`` holds one registry (the built-in MiniLM plus ``ATTNSCOPE_MODEL_DIRS``) and
one byte-bounded LRU cache, keyed by (model, text, truncate): the forward pass (each layer's
X and α), the overview, and the full trace of a layer once a head of it is asked for with
its steps (rebuilt from X through MultiHead; bit-identical to the pass). Requests are
stateless: any request can be answered from the text alone; the cache only makes a repeated
text fast (switching heads, the overview and a head on the same sentence).

Layers and heads are counted from 0, as in transformers' ``attentions`` tuple and bertviz.
Bad input raises InputError naming the request field (``text``, ``layer``, ``head``); an
unknown id raises UnknownModel; a checkpoint we cannot run raises its CheckpointError.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from app.attention.errors import InputError
from app.attention.trace import Step, Trace
from app.config import Settings

from . import analysis
from .bert import EncoderRun
from .cache import ByteLRU
from .registry import ModelEntry, ModelInfo, Registry

#: Forward passes that may run at once (one per core: more only wait for the cores).
COMPUTE_SLOTS = max(1, os.cpu_count() or 1)


def text_key(text: str) -> str:
    """The cache's name for a text: its SHA-256, so a key never holds the text itself
    (a 2 MB text would otherwise sit in memory uncounted by the cache's byte bound)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ModelRun:
    """One text through one model: what the cache keeps."""

    model: ModelInfo
    ids: list[int]
    tokens: list[str]
    truncated_from: int | None
    encoder: EncoderRun
    cls_pos: list[int]
    sep_pos: list[int]

    @property
    def nbytes(self) -> int:
        return self.encoder.nbytes + 64 * len(self.ids)

    def alpha(self, layer: int) -> torch.Tensor:
        return self.encoder.alphas[layer]  # [h, n, n]


@dataclass(frozen=True)
class HeadView:
    """The attention of one layer (one head, or all heads) with its trace steps."""

    model: ModelInfo
    tokens: list[str]
    layer: int
    head: int | None
    attention: torch.Tensor  # [heads, n, n]
    steps: list[Step]
    notes: list[str]
    truncated_from: int | None


@dataclass(frozen=True)
class Overview:
    """Every layer × head at a glance, and the rollout."""

    model: ModelInfo
    tokens: list[str]
    stats: dict[str, torch.Tensor | None]  # name -> [layers, heads]
    thumbnails: torch.Tensor  # [layers, heads, m, m], m ≤ 64
    block: int  # tokens per thumbnail (and rollout) cell along each axis
    rollout: torch.Tensor  # [m, m], pooled like the thumbnails
    truncated_from: int | None

    @property
    def nbytes(self) -> int:
        parts = [self.thumbnails, self.rollout, *(s for s in self.stats.values() if s is not None)]
        return sum(t.nbytes for t in parts) + 64 * len(self.tokens)


@dataclass
class ModelService:
    """Registry + forward-pass cache for one app (two apps in one process share nothing
    but the loaded weights)."""

    model_dirs: list[str] = field(default_factory=list)
    # config.py's default (≈ a dozen 512-token MiniLM passes); apps pass their settings'
    cache_bytes: int = Settings.model_fields["model_cache_bytes"].default
    max_cells: int | None = None  # heads × n × n of an all-heads attention request

    def __post_init__(self) -> None:
        self.cache: ByteLRU = ByteLRU(self.cache_bytes)
        self._registry: Registry | None = None
        self._lock = threading.Lock()
        self._compute = threading.BoundedSemaphore(COMPUTE_SLOTS)

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelService:
        """The service an app's settings describe: the checkpoint directories of
        ``model_dirs`` (ATTNSCOPE_MODEL_DIRS, split on the OS path separator), the cache
        bound ``model_cache_bytes`` and the all-heads bound ``max_attention_cells``."""
        dirs = [d.strip() for d in settings.model_dirs.split(os.pathsep) if d.strip()]
        return cls(dirs, settings.model_cache_bytes, settings.max_attention_cells)

    @property
    def registry(self) -> Registry:
        """Discovered on first use (reads each checkpoint's config.json only)."""
        with self._lock:
            if self._registry is None:
                self._registry = Registry(self.model_dirs)
            return self._registry

    def computing(self, fn: Any, *args: Any) -> Any:
        """Run a forward pass (or a layer's trace) when a compute slot is free: at most
        COMPUTE_SLOTS at once, so twenty new texts at the same moment queue instead of
        holding twenty passes' tensors in memory together."""
        with self._compute:
            return fn(*args)

    def list_models(self) -> list[ModelInfo]:
        return self.registry.infos()

    def entry(self, model_id: str) -> ModelEntry:
        return self.registry.get(model_id)

    def forward(self, model_id: str, text: str, truncate: bool = False) -> ModelRun:
        """The traced forward pass of `text`, from the cache when it was run before."""
        entry = self.entry(model_id)
        key = ("run", entry.id, str(entry.path), text_key(text), bool(truncate))
        return self.cache.get_or_compute(
            key, lambda: self.computing(run_model, entry, text, truncate), lambda r: r.nbytes)

    def attention(self, model_id: str, text: str, layer: int, head: int | None = None,
                  truncate: bool = False, steps: bool = True) -> HeadView:
        """α of `layer` (all heads, or `head`) and, with `steps`, the layer's trace sliced
        to that head.

        Without a head, heads × n × n may be at most ``self.max_cells`` (the settings'
        max_attention_cells): all 12 heads of a 512-token text are asked for one at a time.
        """
        info = self.entry(model_id).info
        check_index("layer", layer, info.layers, f"{info.id} has {info.layers} layers")
        if head is not None:
            check_index("head", head, info.heads, f"{info.id} has {info.heads} heads a layer")
        run = self.forward(model_id, text, truncate)
        n = len(run.tokens)
        limit = self.max_cells
        if head is None and limit is not None and info.heads * n * n > limit:
            raise InputError("head", f"a head from 0 to {info.heads - 1}: all {info.heads} "
                             f"heads at {n} tokens are {info.heads * n * n} cells a step, over "
                             f"this server's limit of {limit}", "null (every head)")
        alpha = run.alpha(layer) if head is None else run.alpha(layer)[head:head + 1]
        if not steps:
            return HeadView(info, run.tokens, layer, head, alpha, [], [], run.truncated_from)
        trace = self.layer_trace(model_id, text, truncate, layer)
        sliced = trace.steps if head is None else [slice_step(s, head, info.heads)
                                                   for s in trace.steps]
        return HeadView(info, run.tokens, layer, head, alpha, sliced, list(trace.notes),
                        run.truncated_from)

    def layer_trace(self, model_id: str, text: str, truncate: bool, layer: int) -> Trace:
        """The full MultiHead trace of one layer, rebuilt from the cached pass's X."""
        entry = self.entry(model_id)
        run = self.forward(model_id, text, truncate)
        key = ("trace", entry.id, str(entry.path), text_key(text), bool(truncate), layer)
        return self.cache.get_or_compute(
            key, lambda: self.computing(entry.load().encoder.trace_layer, layer,
                                        run.encoder.inputs[layer]),
            lambda t: sum(s.data.nbytes for s in t.steps))

    def overview(self, model_id: str, text: str, truncate: bool = False) -> Overview:
        """Statistics, thumbnails and rollout of every head (cached apart from the run)."""
        entry = self.entry(model_id)
        key = ("overview", entry.id, str(entry.path), text_key(text), bool(truncate))
        return self.cache.get_or_compute(
            key, lambda: summarise(self.forward(model_id, text, truncate)), lambda o: o.nbytes)


def check_index(name: str, value: int, count: int, why: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise InputError(name, f"an integer from 0 to {count - 1} ({why}, counted from 0)",
                         repr(value))


def run_model(entry: ModelEntry, text: str, truncate: bool) -> ModelRun:
    model = entry.load()
    t = model.tokenize(text, truncate)
    encoder = model.encoder.run(t.ids)
    cls_pos = [i for i, x in enumerate(t.ids) if x == model.cls_id]
    sep_pos = [i for i, x in enumerate(t.ids) if x == model.sep_id]
    return ModelRun(model.info, t.ids, t.tokens, t.truncated_from, encoder, cls_pos, sep_pos)


def slice_step(step: Step, head: int, heads: int) -> Step:
    """A trace step as seen from one head: per-head tensors keep only that head (the head
    axis stays, length 1); the concatenation keeps that head's block of columns; the input
    X and the projected output, which mix every head, stay whole and say so."""
    if step.axes and step.axes[0] == "head":
        return Step(step.id, step.title, step.formula, step.axes,
                    step.data[head:head + 1], step.note)
    if step.id == "heads_concat":
        w = step.data.shape[-1] // heads
        note = (f"head {head}'s block: columns {head * w} to {(head + 1) * w - 1} of the "
                "concatenation")
        return Step(step.id, step.title, step.formula, step.axes,
                    step.data[:, head * w:(head + 1) * w], note)
    if step.id == "output":
        return Step(step.id, step.title, step.formula, step.axes, step.data,
                    "all heads together: the layer's attention output before the residual")
    return step


def summarise(run: ModelRun) -> Overview:
    """Per-head statistics, thumbnails and the rollout of one forward pass.

    The rollout is pooled like the thumbnails (block mean to ≤ 64 × 64; exact for n ≤ 64):
    the first view of a 512-token text then costs the bytes of one full head, not three.
    """
    layers = run.encoder.alphas
    per_layer = [analysis.head_stats(a, run.cls_pos, run.sep_pos, e)
                 for a, e in zip(layers, run.encoder.entropy, strict=True)]
    stats = {name: (None if per_layer[0][name] is None
                    else torch.stack([s[name] for s in per_layer]).to(torch.float32))
             for name in per_layer[0]}  # name -> [layers, heads]
    thumbnails = torch.stack([analysis.pool(a) for a in layers])  # [layers, heads, m, m]
    return Overview(run.model, run.tokens, stats, thumbnails, analysis.block(len(run.tokens)),
                    analysis.rollout(layers), run.truncated_from)  # rollout [m, m]
