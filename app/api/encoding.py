"""Trace -> JSON: the one converter from tensors to response data, for every router.

Three encodings of an array:

- ``plain``: nested JSON lists of float64 numbers (exact: every float64 round-trips).
  ``encode_array`` returns a numpy array that ``json_response``/``dumps`` serialise in C
  (orjson), never a Python loop over numbers. A non-finite number (a masked score cell
  with fill −inf) is written as ``null``.
- ``typed``: a Plotly typed array ``{"dtype": "f4", "bdata": base64(float32 little-endian,
  row-major), "shape": [...]}``: 4 bytes a number before base64, what the front end uses;
  an array with a finite value outside float32's range comes as ``"f8"`` (float64) instead.
- ``f8``: the same with float64 (``"dtype": "f8"``): lossless and compact; how shares are
  stored, so a share can be served in either public encoding later (``recode``).

Other routers (real models) reuse ``encode_steps``, ``encode_array`` and ``json_response``.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Annotated, Any, Literal

import numpy as np
import orjson
from fastapi import Query
from fastapi.responses import Response

Encoding = Literal["plain", "typed"]
#: The ``?encoding=`` query parameter of every route that returns arrays.
EncodingQuery = Annotated[Encoding, Query(
    description="plain: nested lists of float64 numbers; typed: Plotly typed arrays "
    "{dtype, bdata, shape}: f4 (float32), or f8 where a value lies outside float32's range")]
ENCODINGS = ("plain", "typed", "f8")
_DTYPES = {"typed": ("f4", "<f4"), "f8": ("f8", "<f8")}
_FROM_DTYPE = {"f4": "<f4", "f8": "<f8"}


def to_numpy(array: Any) -> np.ndarray:
    """A torch tensor / numpy array / nested list as a C-contiguous float64 numpy array."""
    if hasattr(array, "detach"):  # torch.Tensor, without importing torch here
        array = array.detach().cpu().numpy()
    return np.ascontiguousarray(array, dtype=np.float64)


def typed_array(a: np.ndarray, encoding: str = "typed") -> dict[str, Any]:
    """``{"dtype", "bdata", "shape"}``: base64 of the little-endian, row-major bytes.

    ``typed`` is float32, unless a finite value lies outside float32's range: then that
    array comes as float64 (``"f8"``, which Plotly reads too) rather than turn into ∞.
    """
    dtype, np_dtype = _DTYPES[encoding]
    with np.errstate(over="ignore"):
        packed = np.ascontiguousarray(a, dtype=np_dtype)
    if encoding == "typed" and not np.isfinite(packed).all() and \
            (np.isinf(packed) & np.isfinite(a)).any():  # a finite value overflowed float32
        dtype, packed = "f8", np.ascontiguousarray(a, dtype="<f8")
    raw = packed.tobytes()
    return {"dtype": dtype, "bdata": base64.b64encode(raw).decode("ascii"),
            "shape": [int(s) for s in a.shape]}


def encode_array(array: Any, encoding: str = "plain") -> np.ndarray | dict[str, Any]:
    """One array in `encoding`: a numpy array for ``plain``, a typed-array dict otherwise."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; expected one of {ENCODINGS}")
    a = to_numpy(array)
    return a if encoding == "plain" else typed_array(a, encoding)


def decode_array(value: Any) -> np.ndarray:
    """A typed-array dict (f4 or f8) or nested lists back to a float64 numpy array."""
    if isinstance(value, dict):
        raw = base64.b64decode(value["bdata"])
        a = np.frombuffer(raw, dtype=_FROM_DTYPE[value["dtype"]])
        return a.reshape(value["shape"]).astype(np.float64)
    return np.asarray(value, dtype=np.float64)  # null (a non-finite number) -> nan


def encode_step(step: Any, encoding: str = "plain") -> dict[str, Any]:
    """One trace step as ``{id, title, formula, shape, axes, data, note}``."""
    return {"id": step.id, "title": step.title, "formula": step.formula,
            "shape": list(step.shape), "axes": list(step.axes),
            "data": encode_array(step.data, encoding), "note": step.note}


def encode_steps(trace_or_steps: Any, encoding: str = "plain") -> list[dict[str, Any]]:
    """Every step of a Trace (or an iterable of Steps), in order."""
    steps: Iterable[Any] = getattr(trace_or_steps, "steps", trace_or_steps)
    return [encode_step(s, encoding) for s in steps]


def encode_result(result: Any, encoding: str = "plain") -> dict[str, Any]:
    """An app.service.RunResult as the /api/v1/attention response body."""
    return {"mechanism": result.mechanism,
            "query_tokens": list(result.query_tokens),
            "key_tokens": list(result.key_tokens),
            "steps": encode_steps(result.trace, encoding),
            "attention": encode_array(result.attention, encoding),
            "output": encode_array(result.output, encoding),
            "notes": list(result.trace.notes),
            "sizes": dict(result.trace.sizes),
            "weights": {name: encode_array(w, encoding)
                        for name, w in result.trace.weights.items()},
            "mask": None if result.mask is None else result.mask.numpy().astype(np.int8)}


def _is_typed(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"dtype", "bdata", "shape"}


def recode(value: Any, encoding: str) -> Any:
    """A stored (f8) document in another encoding: every typed array inside is converted.

    Walks dicts and lists of dicts only; a list of numbers is left as it is.
    """
    if _is_typed(value):
        return encode_array(decode_array(value), encoding)
    if isinstance(value, dict):
        return {k: recode(v, encoding) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict | list):
        return [recode(v, encoding) for v in value]
    return value


def count_numbers(value: Any) -> int:
    """How many numbers a document holds: typed arrays by their shape, lists by their
    numbers; strings and keys do not count."""
    if _is_typed(value):
        return int(np.prod(value["shape"]))
    if isinstance(value, dict):
        return sum(count_numbers(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_numbers(v) if isinstance(v, dict | list) else
                   isinstance(v, int | float) for v in value)
    return int(isinstance(value, np.ndarray) and value.size)


def dumps(content: Any) -> bytes:
    """JSON bytes; numpy arrays are serialised in C, NaN/±Infinity become null."""
    return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


def json_response(content: Any, status_code: int = 200) -> Response:
    """A JSON response built with ``dumps`` (FastAPI's default encoder cannot take numpy)."""
    return Response(dumps(content), status_code=status_code, media_type="application/json")
