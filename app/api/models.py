"""Routes: real pretrained models. GET /api/v1/models, POST /api/v1/models/{id}/attention,
POST /api/v1/models/{id}/overview; the share kinds "model_attention", "model_overview";
and the page GET /model.

``api`` (prefix /api/v1/models) holds the JSON routes, ``pages`` the HTML page; ``router``
includes both, so create_app's one ``include_router(module.router)`` serves them all.

Stateless: every request carries its text. Each app keeps one ``ModelService`` (created on
first use, on ``app.state.model_service``) whose byte-bounded LRU cache of forward passes
makes a second request on the same text fast (switching heads). Routes never touch torch:
they call the service and encode its tensors with app.api.encoding.

Errors: unknown model id -> 404; text over the model's max tokens (unless ``truncate``),
layer or head out of range -> 422 naming ``text`` / ``layer`` / ``head``; a checkpoint in
ATTNSCOPE_MODEL_DIRS that we cannot run (its model_type) -> 422 naming ``model_id``.
"""

from __future__ import annotations

import threading
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field, StrictBool

from app.attention.errors import InputError
from app.models.checkpoint import CheckpointError
from app.models.registry import ModelInfo, UnknownModel
from app.models.service import HeadView, ModelService, Overview

from . import encoding as enc
from .deps import TemplatesDep
from .encoding import EncodingQuery
from .errors import detail_of, unprocessable
from .pages import page_context
from .schemas import Message, StepOut, Strict, StrictInt, Text, TypedArray, ValidationErrorOut
from .shares import register_runner

api = APIRouter(prefix="/api/v1/models", tags=["models"])
pages = APIRouter(tags=["pages"])

ERRORS = {404: {"model": Message, "description": "no model with this id"},
          422: {"model": ValidationErrorOut, "description": "bad input: `detail` names the "
                "field (text, layer, head), what was expected and what came"}}
_SERVICE_LOCK = threading.Lock()


# --- schemas ---------------------------------------------------------------------------

class ModelOut(BaseModel):
    id: str = Field(description="use it in /api/v1/models/{id}/…")
    name: str
    layers: int
    heads: int = Field(description="attention heads per layer")
    d_model: int
    max_tokens: int = Field(description="longest input, counting [CLS] and [SEP]")
    vocab_size: int
    source: str = Field(description="where the checkpoint comes from")


class ModelText(Strict):
    text: Text = Field(description="the text the model reads (its own tokenizer splits it)",
                       examples=["The cat sat on the mat because it was tired."])
    truncate: StrictBool = Field(False, description="cut a text over max_tokens to its first "
                                 "max_tokens tokens instead of answering 422")


class ModelAttentionRequest(ModelText):
    layer: StrictInt = Field(description="layer, counted from 0", examples=[0])
    head: StrictInt | None = Field(None, description="head, counted from 0; null = every "
                                   "head of the layer", examples=[0])
    steps: StrictBool = Field(True, description="include the layer's trace steps (X, Q, K, V, "
                        "scores, α, …); false returns α alone, a third of the bytes")


Array = list[Any] | TypedArray


class ModelAttentionOut(BaseModel):
    model: str
    tokens: list[str]
    layer: int
    head: int | None
    attention: Array = Field(description="α, [heads][n][n] (heads = 1 when `head` is given)")
    steps: list[StepOut] = Field(description="the trace of MultiHead on this layer, sliced "
                                 "to `head`; shaped as in POST /api/v1/attention")
    notes: list[str]
    truncated_from: int | None = Field(description="token count before truncation, or null")


class Stats(BaseModel):
    entropy: Array = Field(description="[layers][heads]: mean over queries of −Σ α ln α (nats)")
    max_weight: Array = Field(description="[layers][heads]: mean over queries of max α")
    prev: Array = Field(description="[layers][heads]: mean α from token i to token i − 1")
    self: Array = Field(description="[layers][heads]: mean α from a token to itself")
    cls: Array | None = Field(description="[layers][heads]: mean α to [CLS]; null if none")
    sep: Array | None = Field(description="[layers][heads]: mean α to [SEP]; null if none")


class ModelOverviewOut(BaseModel):
    model: str
    tokens: list[str]
    layers: int
    heads: int
    stats: Stats
    block: int = Field(description="tokens per thumbnail (and rollout) cell along each axis")
    thumbnails: Array = Field(description="[layers][heads][m][m]: α pooled by block mean, "
                              "m = ⌈n / block⌉ ≤ 64")
    rollout: Array = Field(description="[m][m]: attention rollout through every layer "
                           "(Abnar & Zuidema 2020), pooled like the thumbnails")
    truncated_from: int | None


# --- service and encoding -------------------------------------------------------------

def service_of(app: Any) -> ModelService:
    """The app's ModelService, created on first use from its settings."""
    service = getattr(app.state, "model_service", None)
    if service is None:
        with _SERVICE_LOCK:
            service = getattr(app.state, "model_service", None)
            if service is None:
                service = ModelService.from_settings(app.state.settings)
                app.state.model_service = service
    return service


def info_out(info: ModelInfo) -> dict[str, Any]:
    return {"id": info.id, "name": info.name, "layers": info.layers, "heads": info.heads,
            "d_model": info.d_model, "max_tokens": info.max_tokens,
            "vocab_size": info.vocab_size, "source": info.source}


def encode_head_view(view: HeadView, encoding: str) -> dict[str, Any]:
    return {"model": view.model.id, "tokens": view.tokens, "layer": view.layer,
            "head": view.head, "attention": enc.encode_array(view.attention, encoding),
            "steps": enc.encode_steps(view.steps, encoding),
            "notes": view.notes, "truncated_from": view.truncated_from}


def encode_overview(o: Overview, encoding: str) -> dict[str, Any]:
    stats = {k: None if v is None else enc.encode_array(v, encoding) for k, v in o.stats.items()}
    return {"model": o.model.id, "tokens": o.tokens, "layers": o.model.layers,
            "heads": o.model.heads, "stats": stats, "block": o.block,
            "thumbnails": enc.encode_array(o.thumbnails, encoding),
            "rollout": enc.encode_array(o.rollout, encoding), "truncated_from": o.truncated_from}


def not_found(err: UnknownModel) -> HTTPException:
    return HTTPException(404, f"{err} (GET /api/v1/models lists them)"[:500])


def unusable(err: CheckpointError) -> Response:
    return unprocessable(detail_of(InputError("model_id", "a model whose checkpoint we can "
                                              "run", str(err)), ("path",)))


def attention_view(service: ModelService, model_id: str, body: ModelAttentionRequest,
                   encoding: str) -> dict[str, Any]:
    view = service.attention(model_id, body.text, body.layer, body.head, body.truncate,
                             body.steps)
    return encode_head_view(view, encoding)


def overview_view(service: ModelService, model_id: str, body: ModelText,
                  encoding: str) -> dict[str, Any]:
    return encode_overview(service.overview(model_id, body.text, body.truncate), encoding)


# --- routes ----------------------------------------------------------------------------

@api.get("", response_model=list[ModelOut])
def list_models(http: Request) -> Response:
    """The models this server can run: minilm-l6 and any from ATTNSCOPE_MODEL_DIRS."""
    return enc.json_response([info_out(i) for i in service_of(http.app).list_models()])


@api.post("/{model_id}/attention", response_model=ModelAttentionOut, responses=ERRORS)
def model_attention(model_id: str, body: ModelAttentionRequest, http: Request,
                    encoding: EncodingQuery = "plain") -> Response:
    """α of one layer (one head, or all heads) and the layer's traced attention steps."""
    return answer(attention_view, http, model_id, body, encoding)


@api.post("/{model_id}/overview", response_model=ModelOverviewOut, responses=ERRORS)
def model_overview(model_id: str, body: ModelText, http: Request,
                   encoding: EncodingQuery = "plain") -> Response:
    """Every layer × head: statistics, ≤ 64 × 64 thumbnails of α, and attention rollout."""
    return answer(overview_view, http, model_id, body, encoding)


def answer(view: Any, http: Request, model_id: str, body: Any, encoding: str) -> Response:
    """`view`'s result as JSON; an unknown model is a 404, an unusable checkpoint a 422."""
    try:
        return enc.json_response(view(service_of(http.app), model_id, body, encoding))
    except UnknownModel as err:
        raise not_found(err) from None
    except CheckpointError as err:
        return unusable(err)


@pages.get("/model", response_class=HTMLResponse, name="model_page", include_in_schema=False)
def model_page(request: Request, templates: TemplatesDep) -> HTMLResponse:
    """The pretrained-model page. It holds no numbers and no user text: the browser fetches
    GET /api/v1/models, then the overview and one head at a time (static/js/model.js)."""
    return templates.TemplateResponse(request, "model.html", page_context(request))


# --- shares ----------------------------------------------------------------------------

class ModelShareRequest(Strict):
    model: str = Field(description="a model id from GET /api/v1/models")


class ModelAttentionShare(ModelShareRequest, ModelAttentionRequest):
    """A shared model_attention: POST /api/v1/models/{model}/attention's body plus model."""


class ModelOverviewShare(ModelShareRequest, ModelText):
    """A shared model_overview: POST /api/v1/models/{model}/overview's body plus model."""


def _share_runner(schema: type[ModelShareRequest], view):
    def run(request: dict[str, Any], http: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        req = schema.model_validate(request)
        try:
            result = view(service_of(http.app), req.model, req, "f8")
        except UnknownModel as err:
            raise InputError("model", "a model id from GET /api/v1/models",
                             repr(err.model_id)) from None
        except CheckpointError as err:
            raise InputError("model", "a model whose checkpoint we can run", str(err)) from None
        return req.model_dump(mode="json"), result
    return run


register_runner("model_attention", _share_runner(ModelAttentionShare, attention_view))
register_runner("model_overview", _share_runner(ModelOverviewShare, overview_view))


router = APIRouter()
router.include_router(api)
router.include_router(pages)
