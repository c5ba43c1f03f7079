"""The Trace: the ordered, named intermediate steps one attention call went through.

Every mechanism returns ``output, trace``. A step id comes from one closed, ordered
vocabulary (``STEP_IDS``): a trace holds a subsequence of it, in that order. The front end
draws any step generically from its ``axes``; nothing there knows a mechanism.

Axes are named ``head``, ``query``, ``key``, ``feature``. Every per-head tensor keeps its
head axis (heads = 1 for single-head mechanisms): α is always [heads, n_query, n_key].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

#: The closed, ordered vocabulary of step ids with a one-line meaning each.
STEP_IDS: dict[str, str] = {
    "x": "query-side input X (rows are tokens)",
    "x_kv": "key/value-side input (cross-attention only)",
    "q": "queries Q",
    "k": "keys K",
    "v": "values V",
    "qk_concat": "each query next to its key, [q_i ; k_i] (concat attention)",
    "scores": "raw scores, one per query and key",
    "scaled": "scores times the scale s (before the softmax)",
    "masked": "scores with masked cells filled",
    "softmax": "softmax over keys, before a scale that comes after it",
    "weights": "α, the weights that multiply V",
    "weighted": "α·V per head",
    "heads_concat": "the heads' outputs side by side",
    "out_concat": "each query next to its attended value, [q_i ; applied_i]",
    "output": "the mechanism's output",
}

AXES = ("head", "query", "key", "feature")

#: Each step id's position in STEP_IDS: a trace's ids must rise in it.
_RANK = {step_id: i for i, step_id in enumerate(STEP_IDS)}


@dataclass(frozen=True)
class Step:
    """One recorded intermediate. `data` is a detached float64 copy."""

    id: str
    title: str
    formula: str
    axes: tuple[str, ...]
    data: torch.Tensor
    note: str | None = None

    @property
    def shape(self) -> list[int]:
        return list(self.data.shape)


@dataclass
class Trace:
    """An ordered list of steps plus notes about the whole call (e.g. fully masked rows),
    the sizes of its shape symbols and the weights it used, so that a result can be
    reproduced exactly from the trace alone, whatever a later version draws at random."""

    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the value of every shape symbol in this call, e.g. {"d_model": 8, "d_k": 4, "h": 2}
    sizes: dict[str, int] = field(default_factory=dict)
    #: the weights actually used, given or drawn (float64 copies), by name
    weights: dict[str, torch.Tensor] = field(default_factory=dict)

    def record(
        self,
        id: str,
        title: str,
        formula: str,
        data: torch.Tensor,
        axes: tuple[str, ...],
        note: str | None = None,
    ) -> torch.Tensor:
        """Append a step and hand `data` back, so a forward pass reads as a pipeline."""
        if id not in _RANK:
            raise KeyError(f"unknown step id {id!r}; add it to STEP_IDS")
        if self.steps and _RANK[id] <= _RANK[self.steps[-1].id]:
            raise ValueError(f"step {id!r} recorded after {self.steps[-1].id!r}: out of order")
        if len(axes) != data.dim() or any(a not in AXES for a in axes):
            raise ValueError(f"step {id!r}: axes {axes} do not fit shape {tuple(data.shape)}")
        copy = data.detach().to(torch.float64, copy=True)  # one copy, whatever the dtype
        self.steps.append(Step(id, title, formula, tuple(axes), copy, note))
        return data

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.steps]

    def __getitem__(self, id: str) -> Step:
        for step in self.steps:
            if step.id == id:
                return step
        raise KeyError(id)
