"""Routes: POST /api/v1/shares (201 {id, url}) and GET /api/v1/shares/{id}.

A share is created by running its request here, on the server, and storing the request
together with the computed result (float64 typed arrays, lossless). The link therefore shows
what was computed when it was shared, whatever a later version does. There is no update.

``kind`` says what the request is for; each kind has a runner
``runner(request: dict, http: fastapi.Request) -> (request_to_store, result)`` where the
result is encoded with ``encoding="f8"`` (see app/api/encoding.py). "attention" is built in;
the real-model router registers its kinds with ``register_runner`` when it is imported.
A runner raises InputError or pydantic.ValidationError for bad input (-> 422 whose loc
starts with ``["body", "request"]``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError

from app.attention.errors import InputError

from . import encoding as enc
from .attention import ERRORS_422, checked_run
from .deps import SettingsDep, StoreDep
from .errors import clean_errors, detail_of, unprocessable
from .schemas import AttentionRequest, Message, ShareCreate, ShareCreated, ShareOut

router = APIRouter(prefix="/api/v1", tags=["shares"])

Runner = Callable[[dict[str, Any], Request], tuple[dict[str, Any], dict[str, Any]]]
RUNNERS: dict[str, Runner] = {}

#: Longest id we look up (ids are 22 characters; anything far longer is not one of ours).
MAX_ID = 64


def register_runner(kind: str, runner: Runner) -> None:
    """Let POST /api/v1/shares accept requests of `kind` (e.g. "model_attention")."""
    RUNNERS[kind] = runner


def run_attention_share(request: dict[str, Any], http: Request) -> tuple[dict, dict]:
    """kind "attention": the request as validated, and the full response in f8."""
    req = AttentionRequest.model_validate(request)
    result = checked_run(req, http.app.state.settings)
    return req.model_dump(mode="json", exclude_none=True), enc.encode_result(result, "f8")


register_runner("attention", run_attention_share)


@router.post("/shares", status_code=201, response_model=ShareCreated,
             responses={**ERRORS_422, 201: {"description": "the share was stored"}})
def create_share(body: ShareCreate, http: Request, store: StoreDep,
                 settings: SettingsDep) -> Response:
    """Run `request`, store it with its result, and return the share's id and page URL."""
    runner = RUNNERS.get(body.kind)
    if runner is None:
        return unprocessable(detail_of(InputError(
            "kind", "one of " + ", ".join(RUNNERS), repr(body.kind[:40]))))
    try:
        stored_request, result = runner(body.request, http)
    except InputError as err:
        return unprocessable(detail_of(err, ("body", "request")))
    except ValidationError as err:
        errors = [{**e, "loc": ("body", "request", *e["loc"])} for e in err.errors()]
        return unprocessable(clean_errors(errors))
    numbers = enc.count_numbers(result)
    if numbers > settings.max_share_cells:
        return unprocessable(detail_of(InputError(
            "request", f"a view of at most {settings.max_share_cells:,} numbers to store "
            "(every step, weight and α); share fewer tokens or heads, or one head",
            f"{numbers:,} numbers"), ("body",)))
    share_id = store.create(stored_request, result, kind=body.kind)
    return enc.json_response({"id": share_id, "url": f"/s/{share_id}"}, status_code=201)


@router.get("/shares/{share_id}", response_model=ShareOut, responses={404: {"model": Message}})
def get_share(
    share_id: str,
    store: StoreDep,
    encoding: Annotated[enc.Encoding, Query(description="how the result's arrays come: "
                                            "plain nested lists or typed arrays")] = "plain",
) -> Response:
    """A stored share: its request, the result computed when it was shared, and when."""
    share = store.get(share_id) if len(share_id) <= MAX_ID else None
    if share is None:
        raise HTTPException(404, f"share {share_id[:MAX_ID]!r} not found")
    return enc.json_response({"id": share.id, "kind": share.kind, "request": share.request,
                              "result": enc.recode(share.result, encoding),
                              "created_at": share.created_at})
