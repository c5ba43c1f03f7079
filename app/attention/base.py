"""The fixed pipeline every mechanism runs, with an overridable score function.

    project → scores → scale → mask → softmax → weighted sum → output projection

(labml's ``mha.py``: ``get_scores`` is the hook a variant overrides.) A mechanism is a
subclass that names its options dataclass, its weights (symbolic shapes) and writes
``forward``; ``__call__`` does the checks every mechanism shares, resolves weights, and
returns ``output, trace``. Nothing here keeps state between calls.

Shapes, written once: X is [n_q, d_model], X_kv is [n_k, d_kv]; Q is [h, n_q, d_k],
K is [h, n_k, d_k], V is [h, n_k, d_v]; scores and α are [h, n_q, n_k].
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from .errors import InputError, shape_words
from .options import parse_options
from .trace import Trace
from .weights import WeightSpec, as_float64, resolve

#: Axes of per-head tensors: scores and α; queries (and per-head outputs); keys and values.
HEADS_QK = ("head", "query", "key")
HQF = ("head", "query", "feature")
HKF = ("head", "key", "feature")

#: Widths that default from d_model; when left unset they are read off a given weight.
FREE_SIZES = ("d_k", "d_v", "d_a", "d_out")


@dataclass(frozen=True)
class Call:
    """Everything a forward pass needs, checked: inputs, weights, mask, options, sizes."""

    x: torch.Tensor  # [n_q, d_model]
    x_kv: torch.Tensor  # [n_k, d_kv]
    cross: bool
    w: dict[str, torch.Tensor]
    mask: torch.Tensor | None  # [n_q, n_k] bool, True = may attend
    opts: Any
    sizes: dict[str, int]


class Mechanism:
    """Base class: subclasses set the class attributes and write `forward`."""

    id: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    seed_doc: ClassVar[str]
    Options: ClassVar[type]
    #: Cross-attention needs as many key rows as query rows (query row i pairs with key row i).
    pairs_rows: ClassVar[bool] = False
    #: Cross-attention needs a key input as wide as the query input (shared weights).
    same_width: ClassVar[bool] = False
    #: α's key axis is by position (a weight column per key row), so reordering the tokens
    #: reorders α's query rows but not its key columns.
    positional_keys: ClassVar[bool] = False

    # --- what a subclass declares -------------------------------------------------------
    def sizes(self, d_model: int, d_kv: int, n_q: int, n_k: int, opts: Any) -> dict[str, int]:
        """The value of every shape symbol for these inputs and options."""
        return {"d_model": d_model, "d_kv": d_kv, "n": n_k}

    def weight_specs(self, opts: Any) -> list[WeightSpec]:
        raise NotImplementedError

    def step_ids(self, opts: Any, cross: bool, masked: bool) -> list[str]:
        """The ids this mechanism records for these options, in order."""
        raise NotImplementedError

    def forward(self, c: Call, trace: Trace) -> torch.Tensor:
        raise NotImplementedError

    def check(self, x: torch.Tensor, x_kv: torch.Tensor, opts: Any) -> None:
        """The key input fits the query input as this mechanism declares."""
        if self.pairs_rows and x_kv.shape[0] != x.shape[0]:
            raise InputError("key", f"{x.shape[0]} rows, one per query row ({self.title} "
                             "pairs query row i with key row i)", f"{x_kv.shape[0]} rows")
        if self.same_width and x_kv.shape[1] != x.shape[1]:
            raise InputError("key", f"a key input with {x.shape[1]} features (d_model: "
                             f"{self.title} uses the query's widths for the keys too)",
                             f"a {shape_words(x_kv.shape)} matrix")

    def pair_cells(self, n_q: int, n_k: int, d_model: int, options: dict[str, Any]) -> int:
        """Cells of a hidden layer held per query–key pair ([n_q, n_k, width]) for these
        sizes and raw (unparsed) options, so the API can bound it before running; 0 = none."""
        return 0

    # --- what every mechanism shares ----------------------------------------------------
    def parse(self, options: dict[str, Any] | None) -> Any:
        return parse_options(self.Options, options)

    def __call__(
        self,
        x: torch.Tensor,
        x_kv: torch.Tensor | None = None,
        weights: dict[str, Any] | None = None,
        mask: torch.Tensor | None = None,
        options: dict[str, Any] | Any = None,
        seed: int = 0,
    ) -> tuple[torch.Tensor, Trace]:
        """Run on X (and X_kv for cross-attention): returns ``output, trace``."""
        opts = options if isinstance(options, self.Options) else self.parse(options)
        cross = x_kv is not None
        x = check_input("query", x)
        x_kv = check_input("key", x_kv) if cross else x
        self.check(x, x_kv, opts)
        n_q, d_model = x.shape
        n_k, d_kv = x_kv.shape
        given = given_weights(weights)
        opts = self.infer_free_sizes(opts, given)
        sizes = self.sizes(d_model, d_kv, n_q, n_k, opts)
        words = f"an input with {d_model} features" + (
            f" and a key input with {d_kv}" if cross else "")
        w = resolve(self.weight_specs(opts), sizes, given, seed, words)
        if mask is not None:
            mask = check_mask(mask, n_q, n_k)
        trace = Trace(sizes=dict(sizes), weights={k: v.detach().clone() for k, v in w.items()})
        out = self.forward(Call(x, x_kv, cross, w, mask, opts, sizes), trace)
        check_overflow(trace)
        return out, trace

    def infer_free_sizes(self, opts: Any, weights: dict[str, torch.Tensor]) -> Any:
        """Read a width the user left at its default from the shape of a weight they gave.

        Pasting a 4 × 3 W_q with ``d_k`` unset means d_k = 3 (for multi-head, a W_q of
        d_model × 6 with 2 heads means d_k = 3). Only options that are None are filled;
        the usual shape checks then judge every other weight against these sizes.
        `weights` are the given ones as float64 tensors (``given_weights``).
        """
        free = [f for f in FREE_SIZES if getattr(opts, f, 0) is None]
        found: dict[str, int] = {}
        for spec in self.weight_specs(opts) if free else ():
            given = weights.get(spec.name)
            if given is None:
                continue
            shape = tuple(given.shape)
            if len(shape) != len(spec.dims):
                continue
            for symbol, size in zip(spec.dims, shape, strict=True):
                name, per_head = symbol.removeprefix("h·"), symbol.startswith("h·")
                heads = getattr(opts, "heads", 1) if per_head else 1
                if name in free and name not in found and size % heads == 0 and size:
                    found[name] = size // heads
        return dataclasses.replace(opts, **found) if found else opts

    def record_inputs(self, c: Call, trace: Trace) -> None:
        """Step `x` (and `x_kv` for cross-attention)."""
        trace.record("x", "Input X", "X: one row per query token", c.x, ("query", "feature"))
        if c.cross:
            trace.record("x_kv", "Key/value input", "X_kv: one row per key token", c.x_kv,
                         ("key", "feature"))


def given_weights(weights: dict[str, Any] | None) -> dict[str, torch.Tensor]:
    """Every given weight (null = drawn, left out) as a float64 tensor, each converted once."""
    return {name: as_float64(f"weights.{name}", w) for name, w in (weights or {}).items()
            if w is not None}


def check_input(field: str, x: Any) -> torch.Tensor:
    """A non-empty, finite n × d matrix, as float64."""
    x = as_float64(field, x)
    if x.dim() != 2:
        raise InputError(field, "a matrix n × d (rows are tokens)", f"{x.dim()} dimensions")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise InputError(field, "at least one token and one feature",
                         f"a {shape_words(x.shape)} matrix")
    if not torch.isfinite(x).all():
        i, j = torch.nonzero(~torch.isfinite(x))[0].tolist()
        raise InputError(field, "finite numbers",
                         f"{x[i, j].item()} at row {i + 1}, column {j + 1}")
    return x


def check_overflow(trace: Trace) -> None:
    """Finite inputs can still overflow float64 (|x| ≈ 1e155 squares past 1e308): a step
    with inf or NaN (other than the −inf fill of `masked`) is refused, never returned."""
    for step in trace.steps:
        if step.id == "masked":  # −inf is the fill there; NaN or +inf is not
            bad = bool(torch.isnan(step.data).any() or torch.isposinf(step.data).any())
        else:
            bad = not bool(torch.isfinite(step.data).all())
        if bad:
            raise InputError("query", "inputs, weights and scale small enough that every step "
                             "stays finite in float64",
                             f"an overflow to inf or NaN at step {step.id!r} ({step.title})")


def check_mask(mask: Any, n_q: int, n_k: int) -> torch.Tensor:
    """`mask` as bool [n_q, n_k], True = may attend: an n_q × n_k matrix of 0/1 (or bool);
    an error names the shapes, or the first cell that is neither 0 nor 1."""
    mask = mask if isinstance(mask, torch.Tensor) else as_float64("options.mask", mask)
    if tuple(mask.shape) != (n_q, n_k):
        raise InputError("options.mask", f"a {n_q} × {n_k} matrix (n_query × n_key) of 0/1",
                         shape_words(mask.shape))
    if mask.dtype == torch.bool:
        return mask
    bad = torch.nonzero((mask != 0) & (mask != 1))
    if len(bad):
        i, j = bad[0].tolist()
        raise InputError("options.mask", "only 0 (masked) and 1 (may attend)",
                         f"{mask[i, j].item():g} at row {i + 1}, column {j + 1}")
    return mask == 1


# --- pipeline pieces shared by the mechanisms --------------------------------------------

def input_ids(cross: bool) -> list[str]:
    """The steps `record_inputs` writes."""
    return ["x"] + (["x_kv"] if cross else [])


def attend_ids(scale_stage: str, masked: bool) -> list[str]:
    """The steps `attend` writes, from the scores to α."""
    mask = ["masked"] if masked else []
    if scale_stage == "before_softmax":
        return ["scores", "scaled", *mask, "weights"]
    return ["scores", *mask, "softmax", "weights"]


def split_heads(t: torch.Tensor, heads: int) -> torch.Tensor:
    """[n, h·d] -> [h, n, d]: head i is the i-th block of d columns."""
    n, hd = t.shape
    return t.reshape(n, heads, hd // heads).transpose(0, 1)


def merge_heads(t: torch.Tensor) -> torch.Tensor:
    """[h, n, d] -> [n, h·d]."""
    h, n, d = t.shape
    return t.transpose(0, 1).reshape(n, h * d)


def scale_factor(scale: str | float, d_k: int, d_model: int, n_k: int) -> tuple[float, str]:
    """The multiplier s and how it reads: 'sqrt_dk' -> (1/√d_k, '1/√d_k = 1/√4')."""
    if scale == "sqrt_dk":
        return 1 / math.sqrt(d_k), f"1/√d_k = 1/√{d_k}"
    if scale == "sqrt_d_model":
        return 1 / math.sqrt(d_model), f"1/√d_model = 1/√{d_model}"
    if scale == "sqrt_n":
        return 1 / math.sqrt(n_k), f"1/√n = 1/√{n_k}"
    if scale == "none":
        return 1.0, "1 (no scaling)"
    return float(scale), f"{float(scale):g}"


def fill_value(mask_fill: str) -> float:
    return float("-inf") if mask_fill == "-inf" else -1e20


def apply_mask(trace: Trace, scores: torch.Tensor, mask: torch.Tensor | None,
               mask_fill: str, source: str) -> torch.Tensor:
    """Step `masked`: cells a query may not attend to get the fill value."""
    if mask is None:
        return scores
    masked = scores.masked_fill(~mask, fill_value(mask_fill))  # [h, n_q, n_k]
    trace.record("masked", "Masked scores",
                 f"{source} with cells where mask = 0 set to {mask_fill}", masked, HEADS_QK)
    return masked


def softmax_keys(masked: torch.Tensor, mask: torch.Tensor | None, trace: Trace) -> torch.Tensor:
    """softmax over keys, with a defined result for a query whose keys are all masked.

    With fill −inf such a row would be 0/0 = NaN; we define its weights as all 0, so its
    output is 0 (plus any output bias), and say so in the trace. With fill −1e20 the row is
    a softmax of equal numbers: uniform weights, as the seed code (002) gives.
    """
    alpha = torch.softmax(masked, dim=-1)  # [h, n_q, n_k]
    if mask is None:
        return alpha
    dead = ~mask.any(dim=-1)  # [n_q]
    if dead.any():
        numbers = [str(i + 1) for i in torch.nonzero(dead).flatten().tolist()]
        rows = ("query row " if len(numbers) == 1 else "query rows ") + ", ".join(numbers)
        verb = "has" if len(numbers) == 1 else "have"
        if torch.isneginf(masked).any():
            alpha = torch.where(dead[None, :, None], torch.zeros_like(alpha), alpha)
            trace.note(f"{rows} {verb} every key masked: with fill −inf the weights there are "
                       "defined as 0 (not NaN), so the output there is 0 plus any bias")
        else:
            trace.note(f"{rows} {verb} every key masked: with fill −1e20 the softmax of equal "
                       "values gives uniform weights 1/n_k there, as the seed code does")
    return alpha


def mask_and_weigh(trace: Trace, scores: torch.Tensor, c: Call, formula: str) -> torch.Tensor:
    """Steps `masked` and `weights` for a mechanism that does not scale: α = softmax(S)
    over keys (after the mask), each row summing to 1. `formula` says what α is."""
    masked = apply_mask(trace, scores, c.mask, c.opts.mask_fill, "S")
    # weights: softmax over keys, no scaling
    return trace.record("weights", "Attention weights α", formula,
                        softmax_keys(masked, c.mask, trace), HEADS_QK)  # [h, n_q, n_k]


def attend(trace: Trace, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, c: Call,
           scale: str | float, scale_stage: str, mask_fill: str) -> torch.Tensor:
    """scores → scaled → masked → softmax → weights → weighted, for dot-product heads.

    q [h, n_q, d_k], k [h, n_k, d_k], v [h, n_k, d_v] -> α·V [h, n_q, d_v].
    """
    d_k = q.shape[-1]
    s, s_words = scale_factor(scale, d_k, c.sizes["d_model"], k.shape[1])
    # scores: every query against every key
    scores = trace.record("scores", "Scores QKᵀ", "S = Q·Kᵀ, S_ij = q_i · k_j",
                          q @ k.transpose(-1, -2), HEADS_QK)  # [h, n_q, n_k]
    if scale_stage == "before_softmax":
        # scaled: shrink the scores before the softmax
        scaled = trace.record("scaled", "Scaled scores", f"S·s, s = {s_words}", scores * s,
                              HEADS_QK)
        masked = apply_mask(trace, scaled, c.mask, mask_fill, "S·s")
        # weights: softmax over keys
        alpha = softmax_keys(masked, c.mask, trace)
        trace.record("weights", "Attention weights α", "α = softmax(S·s) over keys; "
                     "each row sums to 1", alpha, HEADS_QK)
    else:
        masked = apply_mask(trace, scores, c.mask, mask_fill, "S")
        # softmax: over keys, before the scale that comes after it
        soft = trace.record("softmax", "Softmax of scores", "softmax(S) over keys",
                            softmax_keys(masked, c.mask, trace), HEADS_QK)
        alpha = soft * s
        # weights: the seed's code scales after the softmax, so rows sum to s, not 1
        trace.record("weights", "Attention weights α (scaled after softmax)",
                     f"α = softmax(S)·s, s = {s_words}", alpha, HEADS_QK,
                     note=f"scaled after the softmax as in seed 000's code: each row sums to "
                     f"{s:.4g}, not 1")
    # weighted: each query's mix of the values
    return alpha @ v  # [h, n_q, d_v]
