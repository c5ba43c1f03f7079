"""Routes: GET /api/v1/mechanisms, GET /api/v1/presets[/{id}], POST /api/v1/attention.

A request goes: pydantic schema (types, finite numbers) -> ``app.service.spec_from_request``
(the engine's own request reader) -> ``limited`` (settings' limits, before any run; pastes
read once, with a cell cap, into the tensors handed on) -> ``app.service.run_attention`` ->
``app.api.encoding``.
Routes never touch torch. Any InputError becomes a 422 naming its field.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.attention.errors import InputError
from app.attention.options import describe_options
from app.attention.registry import MECHANISMS
from app.attention.trace import STEP_IDS
from app.config import Settings
from app.inputs import presets
from app.inputs.embedding import split_text
from app.inputs.masks import parse_mask
from app.inputs.paste import as_tensor
from app.service import InputSpec, RunSpec, run_attention, spec_from_request

from . import encoding as enc
from .deps import SettingsDep
from .schemas import (
    AttentionRequest,
    AttentionResponse,
    MechanismInfo,
    Message,
    Preset,
    ValidationErrorOut,
)

router = APIRouter(prefix="/api/v1", tags=["attention"])

#: h·d_k (and h·d_v) may be this many times max_d_model: bounds every drawn weight.
WIDTH_FACTOR = 4

ERRORS_422 = {
    422: {"model": ValidationErrorOut, "description": "bad input: `detail` names the field, "
          "what was expected and what came"},
    400: {"model": Message, "description": "the body could not be read as text (not UTF-8)"},
    413: {"model": Message, "description": "the body is over the size limit"},
}


# --- mechanisms ------------------------------------------------------------------------

MASK_PARAMETER = {"name": "mask", "type": "mask", "default": "none", "nullable": True,
                  "choices": ["none", "causal"], "accepts_matrix": True,
                  "help": "none, causal (query i sees keys j ≤ i), or a 0/1 matrix "
                  "n_query × n_key with 1 = may attend"}


def weight_infos(mechanism: Any) -> list[dict[str, Any]]:
    """Weights for the default options, plus those a boolean option switches on or off."""
    default = mechanism.Options()
    base = mechanism.weight_specs(default)
    base_names = {w.name for w in base}
    out = {w.name: (w, None) for w in base}
    for f in dataclasses.fields(default):
        value = getattr(default, f.name)
        if not isinstance(value, bool):
            continue
        flipped = {w.name: w for w in mechanism.weight_specs(
            dataclasses.replace(default, **{f.name: not value}))}
        for name, w in flipped.items():
            if name not in base_names:
                out.setdefault(name, (w, f"{f.name} = {str(not value).lower()}"))
        for name in base_names - set(flipped):
            out[name] = (out[name][0], f"{f.name} = {str(value).lower()}")
    return [{"name": w.name, "dims": list(w.dims), "shape": " × ".join(w.dims),
             "role": w.role, "init": w.init, "condition": cond} for w, cond in out.values()]


def mechanism_info(mechanism: Any) -> dict[str, Any]:
    default = mechanism.Options()
    steps = mechanism.step_ids(default, cross=False, masked=True)
    return {"id": mechanism.id, "title": mechanism.title,
            "description": mechanism.description, "seed_doc": mechanism.seed_doc,
            "parameters": [*describe_options(mechanism.Options), MASK_PARAMETER],
            "steps": [{"id": s, "description": STEP_IDS[s]} for s in steps],
            "weights": weight_infos(mechanism)}


@functools.cache
def mechanisms_body() -> bytes:
    """The JSON of every mechanism's info, built once: the registry does not change."""
    return enc.dumps([mechanism_info(m) for m in MECHANISMS.values()])


@router.get("/mechanisms", response_model=list[MechanismInfo])
def list_mechanisms() -> Response:
    """Every mechanism: its options (with defaults), the steps it records (self-attention
    with a mask, default options) and its weights with symbolic shapes."""
    return Response(mechanisms_body(), media_type="application/json")


# --- presets ---------------------------------------------------------------------------

@router.get("/presets", response_model=list[Preset])
def list_presets() -> Response:
    """Ready-made requests that reproduce the seed documents' examples."""
    return enc.json_response(presets.list_presets())


@router.get("/presets/{preset_id}", response_model=Preset,
            responses={404: {"model": Message}})
def get_preset(preset_id: str) -> Response:
    """One preset; its ``request`` can be POSTed to /api/v1/attention as it is."""
    try:
        return enc.json_response(presets.get_preset(preset_id))
    except KeyError:
        raise HTTPException(404, f"preset {preset_id[:80]!r} not found; GET /api/v1/presets "
                            "lists them") from None


# --- limits ----------------------------------------------------------------------------

def _at_most(field: str, value: int, limit: int, what: str) -> None:
    if value > limit:
        raise InputError(field, f"at most {limit} {what}", str(value))


def _side(name: str, side: InputSpec, settings: Settings) -> tuple[InputSpec, int, int | None]:
    """A side with its paste read under the cell cap (a tensor); its token count and width."""
    if side.matrix is not None:
        x = as_tensor(side.matrix, f"{name}.matrix", max_cells=settings.max_cells)
        n, d = x.shape
        _at_most(f"{name}.matrix", n, settings.max_tokens, "rows (tokens)")
        _at_most(f"{name}.matrix", d, settings.max_d_model, "columns (features, d_model)")
        return dataclasses.replace(side, matrix=x), n, d
    n = len(split_text(side.text)) if side.text is not None else len(side.tokens or ())
    _at_most(f"{name}.text" if side.text is not None else f"{name}.tokens", n,
             settings.max_tokens, "tokens")
    return side, n, None


def _pair_layer(opts: dict[str, Any], n_q: int, n_k: int, d_model: int, settings: Settings,
                mechanism: Any) -> None:
    """A hidden layer per query–key pair (additive's tanh: [n_q, n_k, d_a]) is bounded."""
    cells = mechanism.pair_cells(n_q, n_k, d_model, opts)
    if not cells:
        return
    d_a = cells // (n_q * n_k)
    _at_most("options.d_a" if opts.get("d_a") else "embedding.dim", cells,
             settings.max_pair_cells, f"cells for n_query × n_key × d_a = {n_q} × {n_k} × "
             f"{d_a} (the tanh layer holds one d_a vector per query–key pair)")


def _options(options: dict[str, Any], n_q: int, n_k: int, d_model: int, settings: Settings,
             mechanism: Any) -> dict[str, Any]:
    opts = dict(options)
    heads = opts.get("heads", getattr(mechanism.Options(), "heads", 1))
    if isinstance(heads, int):
        _at_most("options.heads", heads, settings.max_heads, "heads")
        _at_most("options.heads", heads * n_q * n_k, settings.max_attention_cells,
                 f"heads × n_query × n_key cells ({n_q} × {n_k} tokens allow "
                 f"{max(settings.max_attention_cells // (n_q * n_k), 1)} heads)")
    for width in ("d_k", "d_v", "d_a", "d_out"):
        value = opts.get(width)
        if isinstance(value, int):
            _at_most(f"options.{width}", value, settings.max_d_model, "features")
            if isinstance(heads, int) and width in ("d_k", "d_v"):
                _at_most(f"options.{width}", heads * value,
                         WIDTH_FACTOR * settings.max_d_model, f"for h·{width} (h = {heads})")
    if opts.get("mask") is not None:
        opts["mask"] = parse_mask(opts["mask"], max_cells=settings.max_cells)
    _pair_layer(opts, n_q, n_k, d_model, settings, mechanism)
    return opts


def limited(spec: RunSpec, settings: Settings) -> RunSpec:
    """`spec` checked against the settings' limits before anything runs; every given matrix
    (inputs, weights, mask) read once, under the cell cap, into the tensor handed on."""
    mechanism = MECHANISMS.get(spec.mechanism)
    query, n_q, d_model = _side("query", spec.query, settings)
    key, n_k = None, n_q
    if spec.key is not None:
        key, n_k, _ = _side("key", spec.key, settings)
    if any(side is not None and side.matrix is None for side in (spec.query, spec.key)):
        _at_most("embedding.dim", spec.embedding.dim, settings.max_d_model, "features")
    weights = {name: as_tensor(w, f"weights.{name}", max_cells=settings.max_cells)
               for name, w in spec.weights.items() if w is not None}
    d_model = d_model or spec.embedding.dim
    options = (_options(spec.options, max(n_q, 1), max(n_k, 1), d_model, settings, mechanism)
               if mechanism else spec.options)
    return dataclasses.replace(spec, query=query, key=key, weights=weights, options=options)


def checked_run(request: AttentionRequest, settings: Settings) -> Any:
    """Validate, limit and run one request: an app.service.RunResult, or InputError.

    The run itself is bounded by the limits above; what it returns is bounded too
    (``settings.max_result_cells``): a few KB of request with wide d_k and many heads
    would otherwise ask for hundreds of MB of response.
    """
    spec = limited(spec_from_request(request.model_dump(exclude_none=True)), settings)
    result = run_attention(spec)  # the engine refuses a step that overflowed (InputError)
    limit = settings.max_result_cells
    if result.cells > limit:
        raise InputError("options", f"a result of at most {limit:,} numbers (every step, "
                         "weight, α and output); use fewer tokens or heads, or a smaller "
                         "d_model, d_k or d_v", f"{result.cells:,} numbers")
    return result


# --- attention -------------------------------------------------------------------------

def _examples() -> dict[str, dict[str, Any]]:
    """The presets as OpenAPI examples (each runs as it is), plus one pasted matrix."""
    examples = {p["id"]: {"summary": p["title"], "value": p["request"]}
                for p in presets.list_presets()}
    examples["pasted_text"] = {
        "summary": "Pasted X and W_q as text (CSV rows and a numpy repr)",
        "value": {"mechanism": "scaled_dot_product",
                  "query": {"matrix": "1, 0, 1, 1\n0, 2, 0, 2\n1, 1, 1, 1",
                            "tokens": ["input 1", "input 2", "input 3"]},
                  "weights": {"W_q": "array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]])"},
                  "seed": 0, "options": {"d_k": 3, "mask": "causal"}}}
    return examples


#: Below this much work (heads·n_q·n_k + (n_q + n_k)·d²) a run takes well under a
#: millisecond: it runs on the event loop, sparing the worker-thread hand-off (measured
#: ≈ 0.3 ms, a third of a 16-token request). Anything larger goes to a worker thread so
#: it never stalls other clients.
INLINE_WORK = 65_536


def _extent(value: Any) -> tuple[int, int]:
    """(rows, columns) of a nested list; a pasted text counts as one row of its length."""
    if isinstance(value, str):
        return 1, len(value)
    if isinstance(value, list) and value:
        return len(value), len(value[0]) if isinstance(value[0], list) else 1
    return 0, 0


def _work(request: AttentionRequest) -> int:
    """A cheap upper estimate of a request's work, from its sizes alone (no parsing)."""
    def side(s: Any) -> tuple[int, int]:
        if s.matrix is not None:
            rows, cols = _extent(s.matrix)
            return max(rows, cols), cols  # a paste's length bounds its rows too
        return (len(s.text.split()) if s.text is not None else len(s.tokens or ())), 0

    n_q, d_q = side(request.query)
    n_k, d_k = side(request.key) if request.key is not None else (n_q, d_q)
    d = max(d_q, d_k, request.embedding.dim if request.embedding else 8)
    heads = getattr(request.options, "heads", None) or 1
    pasted = sum(r * c for r, c in map(_extent, (request.weights.model_extra or {}).values())
                 ) if request.weights else 0
    return heads * n_q * n_k + (n_q + n_k) * d * d + pasted


@router.post("/attention", response_model=AttentionResponse, responses=ERRORS_422)
async def attention(
    request: Annotated[AttentionRequest, Body(openapi_examples=_examples())],
    settings: SettingsDep,
    encoding: enc.EncodingQuery = "plain",
) -> Response:
    """Run one mechanism and return every intermediate step, α and the output."""
    def run() -> Response:
        return enc.json_response(enc.encode_result(checked_run(request, settings), encoding))

    if _work(request) <= INLINE_WORK:
        return run()
    return await run_in_threadpool(run)
