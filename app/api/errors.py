"""How bad input becomes a 4xx: one shape for every error, never an echo of a big body.

- ``InputError(field, expected, got)`` from the engine -> 422
  ``{"detail": [{"loc": ["body", *field.split(".")], "msg": ..., "type": "value_error"}]}``.
- pydantic's RequestValidationError -> the same 422 shape, with each error's ``input`` and
  ``ctx`` dropped (FastAPI's default handler echoes the whole bad input back).
- NaN and ±Infinity (which Python's json parser accepts) fail the schema's finite-float
  type, so they come back as a 422 naming the exact cell.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.attention.errors import InputError

#: Longest error message we send back (a message quoting user text is cut here).
MAX_MSG = 500


def detail_of(err: InputError, prefix: tuple[str, ...] = ("body",)) -> list[dict[str, Any]]:
    loc = [*prefix, *err.field.split(".")] if err.field else list(prefix)
    return [{"loc": loc, "msg": str(err)[:MAX_MSG], "type": "value_error"}]


def unprocessable(detail: list[dict[str, Any]]) -> JSONResponse:
    """The 422 every bad input gets: ``{"detail": detail}`` (from detail_of or
    clean_errors)."""
    return JSONResponse({"detail": detail}, status_code=422)


def clean_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pydantic errors without ``input``/``ctx``/``url``; messages cut to MAX_MSG."""
    out = []
    for e in errors:
        msg = str(e.get("msg", "")).removeprefix("Value error, ")  # our own words follow
        if e.get("type") == "json_invalid" and (e.get("ctx") or {}).get("error"):
            msg = f"{msg}: {e['ctx']['error']}"  # e.g. "JSON decode error: Expecting value"
        loc = [p for p in e.get("loc", ()) if not _is_tag(p)]
        where = dotted(loc)
        msg = f"{where}: {msg}" if where else msg
        out.append({"loc": loc, "msg": msg[:MAX_MSG],
                    "type": e.get("type", "value_error")})
    return out


def dotted(loc: list[Any]) -> str:
    """``["body", "query", "matrix", 0, 1]`` -> ``"query.matrix[0][1]"`` (the field a user
    wrote, as InputError names it)."""
    out = ""
    for part in loc[1:] if loc and loc[0] in ("body", "query", "path") else loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _is_tag(part: Any) -> bool:
    """A union member's tag (app/api/schemas.py writes them <like this>), not a field."""
    return isinstance(part, str) and part.startswith("<") and part.endswith(">")


async def _on_input_error(request: Request, exc: InputError) -> JSONResponse:
    return unprocessable(detail_of(exc))


async def _on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    return unprocessable(clean_errors(list(exc.errors())))


def install(app: FastAPI) -> None:
    app.add_exception_handler(InputError, _on_input_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)

