"""Options shared by the mechanisms, and the one parser that checks them.

Each mechanism's hyper-parameters are a frozen dataclass next to its torch code; a field's
``metadata`` may carry ``choices`` (allowed strings) and ``minimum`` (for ints). The parser
turns a plain dict (what came over the wire) into that dataclass or raises InputError
naming ``options.<field>``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any

from .errors import InputError

SCALES = ("sqrt_dk", "sqrt_d_model", "sqrt_n", "none")
SCALE_STAGES = ("before_softmax", "after_softmax")
MASK_FILLS = ("-inf", "-1e20")


def choice(default: str, choices: tuple[str, ...], help: str) -> Any:
    return dataclasses.field(default=default, metadata={"choices": choices, "help": help})


def count(default: int | None, help: str, minimum: int = 1) -> Any:
    return dataclasses.field(default=default, metadata={"minimum": minimum, "help": help})


def flag(default: bool, help: str) -> Any:
    return dataclasses.field(default=default, metadata={"help": help})


def scale_field(default: str, help: str) -> Any:
    return dataclasses.field(default=default, metadata={"choices": SCALES, "number": True,
                                                        "help": help})


def _kinds(tp) -> set[type]:
    """The plain Python types a field annotation admits (``int | None`` -> {int, NoneType})."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return set().union(*(_kinds(a) for a in typing.get_args(tp)))
    return {tp}


def _check(f: dataclasses.Field, value: Any, kinds: set[type]) -> Any:
    name = f"options.{f.name}"
    meta = f.metadata
    if value is None and type(None) in kinds:
        return None
    if isinstance(value, str) and "choices" in meta and value in meta["choices"]:
        return value
    if bool in kinds and isinstance(value, bool):
        return value
    if int in kinds and isinstance(value, int) and not isinstance(value, bool):
        if value < meta.get("minimum", -math.inf):
            raise InputError(name, f"an integer ≥ {meta['minimum']}", repr(value))
        return value
    if meta.get("number") and isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InputError(name, "a finite number", repr(value))
        return float(value)
    wanted = []
    if "choices" in meta:
        wanted.append("one of " + ", ".join(meta["choices"]))
    if meta.get("number"):
        wanted.append("a number")
    if int in kinds:
        wanted.append(f"an integer ≥ {meta.get('minimum', 1)}")
    if bool in kinds:
        wanted.append("true or false")
    if type(None) in kinds:
        wanted.append("null (the default)")
    raise InputError(name, " or ".join(wanted), repr(value))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of an options class (resolving them costs ~0.1 ms a call)."""
    return typing.get_type_hints(cls)


def parse_options(cls: type, given: dict[str, Any] | None) -> Any:
    """Build the options dataclass `cls` from `given`, naming the first bad field."""
    given = dict(given or {})
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in given:
        if key not in fields:
            raise InputError(f"options.{key}", "one of " + ", ".join(fields) +
                             " for this mechanism", f"unknown option {key!r}")
    values = {k: _check(fields[k], v, _kinds(hints[k])) for k, v in given.items()}
    return cls(**values)


def describe_options(cls: type) -> list[dict[str, Any]]:
    """The options as data, for the mechanism list in the API and the page."""
    hints = _hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        kinds = _kinds(hints[f.name])
        kind = ("boolean" if bool in kinds else "integer" if int in kinds
                else "choice")
        entry = {"name": f.name, "type": kind, "default": f.default,
                 "nullable": type(None) in kinds, "help": f.metadata.get("help", "")}
        if "choices" in f.metadata:
            entry["choices"] = list(f.metadata["choices"])
        if f.metadata.get("number"):
            entry["accepts_number"] = True
        if "minimum" in f.metadata:
            entry["minimum"] = f.metadata["minimum"]
        out.append(entry)
    return out
