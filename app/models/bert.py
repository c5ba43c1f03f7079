"""A BERT encoder whose self-attention runs through our own ``MultiHead`` mechanism.

Devlin et al. (2019), post-LayerNorm, in the weight layout of Hugging Face checkpoints:

    h_0 = LayerNorm(E_word[ids] + E_pos[0..n−1] + E_type[0])                    n × d
    per layer l:
        a   = MultiHead(h_{l−1}; W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o)        n × d
        h'  = LayerNorm(h_{l−1} + a)
        h_l = LayerNorm(h' + act(h'·W_in + b_in)·W_out + b_out)               act = GELU (erf)

nn.Linear stores its weight as out × in and computes x·Wᵀ; our mechanisms map rows by
right-multiplication (Q = X·W_q), so every matrix is transposed once at load: W_q =
``query.weight``ᵀ, W_o = ``attention.output.dense.weight``ᵀ. Head i is the i-th block of
d_model / h columns, which is BERT's own split, so α of head i is BERT's head i.

Precision and speed: everything runs in float32, like the checkpoint. The attention goes
through ``MultiHead.forward`` directly, with weights checked once at load (finite, right
shapes), so a pass does not pay ``Mechanism.__call__``'s per-call float64 cast and checks,
and it records into an ``InferenceTrace``: the same steps, checks and order as ``Trace``,
but each step keeps the tensor the mechanism computed instead of a float64 copy (safe here:
the pass runs under ``torch.inference_mode`` and never changes a tensor once recorded, and
inference tensors refuse in-place changes outside it).

What a pass keeps (``EncoderRun``): per layer the input X and α, plus each row's entropy,
computed while the softmax's input is at hand. The rest of a layer's trace (Q, K, V,
scores, …) is dropped and rebuilt on demand by ``trace_layer``, which runs the same
``MultiHead.forward`` on the same X with the same weights, so it gives the same numbers bit
for bit (tests). A 512-token pass of MiniLM then keeps ≈ 80 MB instead of ≈ 260 MB.

Measured at 512 tokens on 2 cores, interleaved with transformers' eager forward (= 1.0):
float64 through ``__call__`` ≈ 3×, float32 with ``Trace`` ≈ 2.2×, float32 with one float32
copy per step ≈ 1.2×, with ``InferenceTrace`` ≈ 1.06×. Parity with transformers' eager
attention: α and the last hidden state within 4e-6 (tests/models/test_minilm.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from app.attention.base import Call
from app.attention.multi_head import MultiHead
from app.attention.trace import Step, Trace

from . import analysis
from .checkpoint import BertConfig, CheckpointError

MULTI_HEAD = MultiHead()


@dataclass(frozen=True)
class Layer:
    """One encoder layer's weights, every matrix in the x·W layout (in × out)."""

    attention: dict[str, torch.Tensor]  # W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o
    ln_attn: tuple[torch.Tensor, torch.Tensor]  # γ, β after the attention residual
    w_in: torch.Tensor  # [d, d_ff]
    b_in: torch.Tensor  # [d_ff]
    w_out: torch.Tensor  # [d_ff, d]
    b_out: torch.Tensor  # [d]
    ln_out: tuple[torch.Tensor, torch.Tensor]  # γ, β after the feed-forward residual


@dataclass(frozen=True)
class EncoderRun:
    """One forward pass: per layer its input X, its α and its rows' entropy; the output."""

    inputs: list[torch.Tensor]  # per layer: X entering its attention, [n, d]
    alphas: list[torch.Tensor]  # per layer: α, [h, n, n]
    entropy: list[torch.Tensor]  # per layer: −Σ_j α_ij ln α_ij, [h, n]
    hidden: torch.Tensor  # [n, d], the encoder's output (last_hidden_state)

    @property
    def nbytes(self) -> int:
        tensors = [*self.inputs, *self.alphas, *self.entropy, self.hidden]
        return sum(t.nbytes for t in tensors)


class WeightReader:
    """Takes named tensors out of a state dict, checking each one's shape."""

    def __init__(self, path: Path, state: dict[str, torch.Tensor]):
        self.path, self.state = path, state

    def get(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        t = self.state.get(name)
        if t is None and name.endswith(".weight") and "LayerNorm" in name:
            t = self.state.get(name[: -len("weight")] + "gamma")  # TF-converted checkpoints
        if t is None and name.endswith(".bias") and "LayerNorm" in name:
            t = self.state.get(name[: -len("bias")] + "beta")
        if t is None:
            raise CheckpointError(self.path, f"model.safetensors has no weight {name!r}")
        if tuple(t.shape) != shape:
            raise CheckpointError(self.path, f"weight {name!r}: expected shape "
                                  f"{list(shape)} from config.json, got {list(t.shape)}")
        if not torch.isfinite(t).all():
            raise CheckpointError(self.path, f"weight {name!r} holds NaN or infinity")
        return t.to(torch.float32)

    def linear(self, name: str, d_in: int, d_out: int) -> tuple[torch.Tensor, torch.Tensor]:
        """nn.Linear ``name`` as (W [in, out], b [out]) for x·W + b."""
        w = self.get(f"{name}.weight", (d_out, d_in))
        return w.T.contiguous(), self.get(f"{name}.bias", (d_out,))

    def norm(self, name: str, d: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.get(f"{name}.weight", (d,)), self.get(f"{name}.bias", (d,))


def read_layer(r: WeightReader, c: BertConfig, i: int) -> Layer:
    p = f"encoder.layer.{i}"
    att = {}
    for sym, name in (("q", "query"), ("k", "key"), ("v", "value")):
        att[f"W_{sym}"], att[f"b_{sym}"] = r.linear(f"{p}.attention.self.{name}", c.d_model,
                                                    c.d_model)
    att["W_o"], att["b_o"] = r.linear(f"{p}.attention.output.dense", c.d_model, c.d_model)
    w_in, b_in = r.linear(f"{p}.intermediate.dense", c.d_model, c.d_ff)
    w_out, b_out = r.linear(f"{p}.output.dense", c.d_ff, c.d_model)
    return Layer(att, r.norm(f"{p}.attention.output.LayerNorm", c.d_model), w_in, b_in,
                 w_out, b_out, r.norm(f"{p}.output.LayerNorm", c.d_model))


def activation(name: str):
    if name == "gelu":
        return F.gelu  # exact: x·Φ(x) with the error function
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")
    return F.relu


class InferenceTrace(Trace):
    """A Trace that keeps each recorded tensor itself (float32, no copy): for passes under
    ``torch.inference_mode`` that never modify a tensor after recording it."""

    def record(self, id, title, formula, data, axes, note=None):
        # Trace.record's own checks (known id, order, axes fit the shape), on an empty
        # tensor with as many dimensions, so the rules live in one place: trace.py.
        Trace(self.steps[-1:]).record(id, title, formula, data.new_empty((0,) * data.dim()),
                                      axes, note)
        self.steps.append(Step(id, title, formula, tuple(axes), data.detach(), note))
        return data


class BertEncoder:
    """BERT's encoder with checked weights; ``run(ids)`` is one traced forward pass."""

    def __init__(self, path: Path, config: BertConfig, state: dict[str, torch.Tensor]):
        c, r = config, WeightReader(path, state)
        self.config = c
        self.word = r.get("embeddings.word_embeddings.weight", (c.vocab_size, c.d_model))
        self.position = r.get("embeddings.position_embeddings.weight",
                              (c.max_positions, c.d_model))
        self.token_type = r.get("embeddings.token_type_embeddings.weight",
                                (c.type_vocab_size, c.d_model))
        self.ln_embed = r.norm("embeddings.LayerNorm", c.d_model)
        self.layers = [read_layer(r, c, i) for i in range(c.layers)]
        self.act = activation(c.act)
        self.options = MULTI_HEAD.parse({"heads": c.heads, "bias": True})

    def norm(self, x: torch.Tensor, ln: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return F.layer_norm(x, (self.config.d_model,), ln[0], ln[1], self.config.eps)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """h_0 = LayerNorm(E_word[ids] + E_pos[0..n−1] + E_type[0]), one segment."""
        n = ids.shape[0]
        return self.norm(self.word[ids] + self.position[:n] + self.token_type[0],
                         self.ln_embed)  # [n, d]

    def attend(self, x: torch.Tensor, layer: Layer) -> tuple[torch.Tensor, Trace]:
        """Self-attention of one layer through MultiHead.forward: output and trace."""
        n, d = x.shape
        sizes = MULTI_HEAD.sizes(d, d, n, n, self.options)
        trace = InferenceTrace()
        out = MULTI_HEAD.forward(Call(x, x, False, layer.attention, None, self.options, sizes),
                                 trace)  # [n, d]
        return out, trace

    def run(self, ids: list[int]) -> EncoderRun:
        """One forward pass over a single unpadded sequence of token ids."""
        if not 0 < len(ids) <= self.config.max_positions:
            raise ValueError(f"{len(ids)} tokens: expected 1 to {self.config.max_positions}")
        inputs, alphas, entropy = [], [], []
        with torch.inference_mode():
            h = self.embed(torch.as_tensor(ids, dtype=torch.long))  # [n, d]
            for layer in self.layers:
                a, trace = self.attend(h, layer)  # [n, d]
                inputs.append(h)
                alphas.append(trace["weights"].data)  # [h, n, n]
                entropy.append(analysis.entropy(trace["weights"].data,
                                                trace["scaled"].data))  # [h, n]
                h = self.norm(h + a, layer.ln_attn)
                ff = self.act(h @ layer.w_in + layer.b_in) @ layer.w_out + layer.b_out
                h = self.norm(h + ff, layer.ln_out)  # [n, d]
        return EncoderRun(inputs, alphas, entropy, h)

    def trace_layer(self, index: int, x: torch.Tensor) -> Trace:
        """Layer `index`'s full attention trace, rebuilt from its input X (see above)."""
        with torch.inference_mode():
            return self.attend(x, self.layers[index])[1]
