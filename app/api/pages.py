"""HTML pages: GET / (the step-by-step visualiser) and GET /s/{id} (a shared view).

Each page has a JSON twin: / draws what GET /api/v1/mechanisms, /api/v1/presets and
POST /api/v1/attention return; /s/{id} draws GET /api/v1/shares/{id}, except a real-model
share, which the server redirects to the model page, /model?share=… (app/api/models.py), to
be drawn there from the same stored numbers. The pages hold no numbers and no user text: the
browser fetches them (static/js/api.js), so a token can never break out of an inline script.
Templates get ``page_context``: the CSP nonce as ``csp_nonce`` for the one ``<style>``
element plotly.js fills, and the embedding choices.

Also here, because the "Why √d_k?" panel needs it: GET /api/v1/experiments/sqrt-dk, seed
000's experiment (app.attention.sqrt_dk) as JSON, kept for the 32 most recent seeds (the
result depends on the seed alone and takes tens of milliseconds to compute).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from app.inputs.embedding import KINDS, POSITIONS, EmbeddingSpec
from app.service import MAX_SEED

from .deps import StoreDep, TemplatesDep

router = APIRouter(tags=["pages"])

#: Share ids are URL-safe base64 (secrets.token_urlsafe); anything else cannot exist.
SHARE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def page_context(request: Request, **extra: Any) -> dict[str, Any]:
    """What every page template reads: the CSP nonce and the embedding choices."""
    default = EmbeddingSpec()
    return {"csp_nonce": getattr(request.state, "csp_nonce", ""),
            "embedding_kinds": KINDS, "positions": POSITIONS,
            "embedding": {"kind": default.kind, "dim": default.dim, "seed": default.seed,
                          "positions": default.positions}, **extra}


@router.get("/", response_class=HTMLResponse, name="home", include_in_schema=False)
def home(request: Request, templates: TemplatesDep) -> HTMLResponse:
    """The visualiser; it opens on the first preset, computed and drawn."""
    return templates.TemplateResponse(request, "index.html", page_context(request))


@router.get("/s/{share_id}", response_class=HTMLResponse, name="share_page",
            include_in_schema=False)
def share_page(share_id: str, request: Request, templates: TemplatesDep,
               store: StoreDep) -> Response:
    """A shared view, read-only. The page fetches GET /api/v1/shares/{id}; an unknown id
    gets a 404 page that says so. A real-model share is
    drawn by the model page (/model?share=…, keeping ?layer=&head=), from the same
    stored numbers."""
    kind = store.kind(share_id) if SHARE_ID.match(share_id) else None
    status = 404 if kind is None else 200  # the page then says there is no such view
    if kind is not None and kind.startswith("model"):
        query = urlencode({"share": share_id, **{k: v for k, v in request.query_params.items()
                                                 if k in ("layer", "head")}})
        return RedirectResponse(f"{request.url_for('model_page').path}?{query}", 303)
    return templates.TemplateResponse(request, "share.html",
                                      page_context(request, share_id=share_id),
                                      status_code=status)


class SqrtDkExperiment(BaseModel):
    dims: list[int] = Field(description="widths d of q and k")
    n: int = Field(description="rows of Q and K (keys per softmax row)")
    trials: int = Field(description="independent draws of Q and K per d")
    seed: int
    std_raw: list[float] = Field(description="std of the entries of Q·Kᵀ, per d (≈ √d)")
    std_scaled: list[float] = Field(description="std of Q·Kᵀ/√d, per d (≈ 1)")
    max_weight_raw: list[float] = Field(description="mean of each row's largest softmax "
                                        "weight of Q·Kᵀ (→ 1: saturated)")
    max_weight_scaled: list[float] = Field(description="the same for Q·Kᵀ/√d")
    expected_std_raw: list[float] = Field(description="√d, the theory")
    expected_std_scaled: list[float] = Field(description="1, the theory")
    uniform_weight: float = Field(description="1/n: the largest weight of a uniform row")


@router.get("/api/v1/experiments/sqrt-dk", response_model=SqrtDkExperiment,
            tags=["experiments"])
def sqrt_dk(seed: Annotated[int, Query(ge=0, le=MAX_SEED)] = 0) -> JSONResponse:
    """Seed 000's experiment: the std of QKᵀ grows like √d; 1/√d brings it back to 1 and
    keeps the softmax from saturating. Q, K have N(0, 1) entries drawn from `seed`."""
    return JSONResponse(sqrt_dk_result(seed))


@lru_cache(maxsize=32)
def sqrt_dk_result(seed: int) -> dict[str, Any]:
    """The experiment's fields for `seed`, as plain JSON values. Cached: the result depends
    on the seed alone (callers only read it)."""
    from app.attention.sqrt_dk import sqrt_dk_experiment  # torch: load on first use

    result = sqrt_dk_experiment(seed=seed)
    fields = SqrtDkExperiment.model_fields
    return {k: v for k, v in result.items() if k in fields}
