"""Parse a matrix the way people copy one: from a notebook, a spreadsheet, a paper, a REPL.

Accepted, detected from the text itself (rows are matrix rows, cells are numbers):

- JSON / Python nested lists ``[[1, 2], [3, 4]]``; a flat list ``[1, 2, 3]`` is one row;
  a trailing comma before ``]`` is allowed (Python style);
- MATLAB rows ``[1 2; 3 4]`` (also without brackets: ``1 2; 3 4``);
- CSV, TSV, and whitespace-separated rows, one row per line (blank lines and lines starting
  with ``#``, e.g. ``np.savetxt`` headers, are skipped);
- numpy reprs and prints: ``array([[1., 2.], [3., 4.]], dtype=float32)``, ``[[1. 2.]\\n [3. 4.]]``;
- PyTorch reprs: ``tensor([[...]], dtype=torch.float64, requires_grad=True)``,
  ``grad_fn=<AddBackward0>``, ``device='cuda:0'``, ``Parameter containing:`` before it;
- a leading assignment ``W_q = ...`` and a wrapping ``np.array(...)`` / ``torch.tensor(...)``.

Cells: anything Python's ``float`` reads (``1e-3``, ``-.5``, ``1.``, ``1_000``), the Unicode
minus ``−``, quotes around a number, and ``true`` / ``false`` as 1 / 0 (a bool mask).
``nan`` and ``inf`` (any spelling) are read and then refused: a matrix must be finite.

Every error is an ``InputError`` on the given field that names the row and column (1-based)
of the first bad cell, or the row whose length differs from row 1, or says the paste was
empty. ``max_cells`` caps the size: the cells are counted with one regex scan before any
list of floats is built.

``as_tensor`` gives the same matrix as a float64 tensor; a finite, non-empty 2-D float64
tensor or numpy array (a matrix already read) passes through it without being read again.
"""

from __future__ import annotations

import csv
import math
import re
from typing import Any

import numpy as np
import torch

from app.attention.errors import InputError

FORMATS = ("a matrix: JSON nested lists, CSV, TSV, whitespace- or ;-separated rows, "
           "or a numpy / PyTorch repr")

_ASSIGN = re.compile(r"\s*[A-Za-z_][\w.]*\s*=(?!=)\s*")
_WRAPPER = re.compile(r"\s*(?:Parameter containing:\s*)?(?:(?:np|numpy|torch)\.)?"
                      r"(?:array|tensor|matrix|asarray|as_tensor)\s*\(\s*")
_KWARG = r"\s*,\s*\w+\s*=\s*(?:<[^<>]*>|'[^']*'|\"[^\"]*\"|[\w.:+-]+)"
_WRAPPER_END = re.compile(rf"(?:{_KWARG})*\s*,?\s*\)\s*")
_TOKEN = re.compile(r"\[|\]|,|;|[^\s\[\],;]+")
_CELL_COUNT = re.compile(r"[^\s\[\],;]+")
_TRUE_FALSE = {"true": 1.0, "false": 0.0}


def parse_matrix(text: str, field: str, *, max_cells: int | None = None) -> list[list[float]]:
    """The matrix in `text` as rows of floats; InputError on `field` naming the bad cell."""
    if not isinstance(text, str):
        raise InputError(field, FORMATS, _type_words(text))
    body = _unwrap(text, field)
    if not body.strip():
        raise InputError(field, FORMATS, "an empty paste")
    _check_size(body, field, max_cells)
    rows = _bracket_rows(body, field) if body.lstrip().startswith("[") else _line_rows(body)
    return _to_floats(rows, field)


def as_matrix(value: Any, field: str, *, max_cells: int | None = None) -> list[list[float]]:
    """A matrix given as data (nested lists, a flat list = one row, a tensor or array, or
    pasted text) as rows of floats, checked like a paste: ragged rows, non-numbers, NaN
    and empty input raise InputError naming the row and column."""
    if isinstance(value, str):
        return parse_matrix(value, field, max_cells=max_cells)
    checked = _read_already(value, field, max_cells)
    if checked is not None:
        return checked.tolist()
    if hasattr(value, "tolist") and not isinstance(value, list | tuple):
        value = value.tolist()  # torch tensor / numpy array
    if not isinstance(value, list | tuple):
        raise InputError(field, FORMATS, _type_words(value))
    if not value:
        raise InputError(field, FORMATS, "an empty list")
    rows = value if all(isinstance(r, list | tuple) for r in value) else [value]
    if max_cells is not None:
        _check_count(sum(len(r) if isinstance(r, list | tuple) else 1 for r in rows),
                     field, max_cells)
    for i, row in enumerate(rows):
        if not isinstance(row, list | tuple):
            raise InputError(field, f"a row (a list) at row {i + 1} like row 1",
                             _type_words(row))
    return _to_floats(rows, field)


def as_tensor(value: Any, field: str, *, max_cells: int | None = None) -> torch.Tensor:
    """The matrix of ``as_matrix`` as a float64 tensor [rows, columns]. A float64 tensor or
    numpy array holding a finite, non-empty 2-D matrix passes through as it is (no copy,
    one finiteness scan): what ``as_tensor`` returned can be handed on and read again
    cheaply."""
    checked = _read_already(value, field, max_cells)
    if checked is not None:
        return checked
    return torch.tensor(as_matrix(value, field, max_cells=max_cells), dtype=torch.float64)


def _read_already(value: Any, field: str, max_cells: int | None) -> torch.Tensor | None:
    """`value` as a tensor if it is a float64 tensor / numpy array that is a finite,
    non-empty 2-D matrix (nothing left to check but its size), else None."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64 and \
            value.flags.c_contiguous and value.flags.writeable:  # shareable with torch
        value = torch.from_numpy(value)
    if not isinstance(value, torch.Tensor) or value.dtype != torch.float64 or \
            value.dim() != 2 or 0 in value.shape or not bool(torch.isfinite(value).all()):
        return None
    if max_cells is not None:
        _check_count(value.numel(), field, max_cells)
    return value.detach()


# --- wrappers and size ---------------------------------------------------------------------

def _unwrap(text: str, field: str) -> str:
    """Strip ``name =``, ``array(`` / ``tensor(`` and their keyword suffix; the data stays."""
    text = text.strip()
    m = _ASSIGN.match(text)
    if m and (text[m.end():].startswith("[") or _WRAPPER.match(text, m.end())):
        text = text[m.end():]
    m = _WRAPPER.match(text)
    if not m:
        return text
    inner = text[m.end():]
    if not inner.startswith("["):
        return re.match(r"[^,)]*", inner).group()  # a scalar: tensor(3.)
    end = _matching_bracket(inner)
    if end is None:
        raise InputError(field, f"{FORMATS}, with every '[' closed by a ']'",
                         "an unclosed '['")
    if not _WRAPPER_END.fullmatch(inner[end:]):
        raise InputError(field, f"{FORMATS} (the repr closed by ')' after its data)",
                         f"unexpected text {_clip(inner[end:].strip())} after the data")
    return inner[:end]


def _matching_bracket(text: str) -> int | None:
    """Index just past the ``]`` that closes the ``[`` at text[0], or None."""
    depth = 0
    for m in re.finditer(r"[\[\]]", text):
        depth += 1 if m.group() == "[" else -1
        if depth == 0:
            return m.end()
    return None


def _check_size(body: str, field: str, max_cells: int | None) -> None:
    """Count cells with one regex scan (no floats, no lists) and refuse a paste too big."""
    if "..." in body or "…" in body:
        raise InputError(field, "every number (numpy / PyTorch abbreviated this print with "
                         "'...': set np.set_printoptions(threshold=sys.maxsize) or "
                         "torch.set_printoptions(profile='full') and copy it again)",
                         "an abbreviated print with '...'")
    if max_cells is not None:
        _check_count(sum(1 for _ in _CELL_COUNT.finditer(body)), field, max_cells)


def _check_count(n: int, field: str, max_cells: int) -> None:
    if n > max_cells:
        raise InputError(field, f"at most {max_cells} numbers", f"{n} numbers")


# --- the two layouts -----------------------------------------------------------------------

def _bracket_rows(body: str, field: str) -> list[list[str]]:
    """``[[..], [..]]``, ``[1, 2]``, ``[1 2; 3 4]``, numpy prints: rows of cell strings."""
    top, end = _nest(body, field)
    rest = body[end:].strip()
    if rest:
        raise InputError(field, f"{FORMATS}, ending with the ']' that closes the first '['",
                         f"unexpected text {_clip(rest)} after it")
    while len(top) == 1 and isinstance(top[0], list) and top[0] and \
            all(isinstance(r, list) for r in top[0]):
        top = top[0]  # a leading axis of size 1: tensor([[[...]]]) from a batch of one
    if not top:
        raise InputError(field, FORMATS, "an empty matrix []")
    if all(isinstance(c, str) for c in top):
        return _split_semicolons(top)
    top = [r for r in top if r != ";"]  # "[[1, 2]; [3, 4]]"
    for i, row in enumerate(top):
        if not isinstance(row, list):
            raise InputError(field, f"a row in brackets [...] at row {i + 1} like row 1",
                             f"the bare value {_clip(row)}")
        for j, cell in enumerate(row):
            if isinstance(cell, list):
                raise InputError(field, "a 2-D matrix (a list of rows of numbers)",
                                 f"a list nested 3 deep at row {i + 1}, column {j + 1}")
    return [[c for c in row if c != ";"] for row in top]


def _nest(body: str, field: str) -> tuple[list, int]:
    """Tokens into nested lists of cell strings (``;`` kept as a row break); end offset."""
    stack: list[list] = []
    expect_cell = False  # right after a comma: a cell or a ']' must follow
    for m in _TOKEN.finditer(body):
        tok = m.group()
        if tok == "[":
            stack.append([])
            expect_cell = False
        elif tok == "]":
            if not stack:
                raise InputError(field, FORMATS, "a ']' with no '[' before it")
            done = stack.pop()
            if not stack:
                return done, m.end()
            stack[-1].append(done)
            expect_cell = False
        elif tok == ",":
            if expect_cell or not stack or not stack[-1] or stack[-1][-1] == ";":
                raise _empty_cell(field, stack)
            expect_cell = True
        elif tok == ";":
            stack[-1].append(";")
            expect_cell = False
        else:
            stack[-1].append(tok)
            expect_cell = False
    raise InputError(field, f"{FORMATS}, with every '[' closed by a ']'",
                     f"{len(stack)} unclosed '['")


def _empty_cell(field: str, stack: list[list]) -> InputError:
    row = stack[-1] if stack else []
    cells = [c for c in row if c != ";"]
    i = len([r for r in stack[-2] if r != ";"]) + 1 if len(stack) >= 2 else row.count(";") + 1
    where = f"row {i}, column {len(cells) + 1}"
    return InputError(field, f"a number at {where}", "an empty cell")


def _split_semicolons(cells: list[str]) -> list[list[str]]:
    """A flat list is one row; ``;`` splits it into rows (MATLAB ``[1 2; 3 4]``)."""
    rows: list[list[str]] = [[]]
    for c in cells:
        if c == ";":
            rows.append([])
        else:
            rows[-1].append(c)
    if len(rows) > 1 and not rows[-1]:
        rows.pop()  # "[1 2; 3 4;]"
    return rows


def _line_rows(body: str) -> list[list[str]]:
    """One row per line: TSV if any tab, CSV if any comma, ``;``-separated columns if
    ``;`` sits inside several lines (European CSV, decimal comma), else whitespace; a
    ``;`` otherwise ends a row (MATLAB ``1 2; 3 4``). A trailing delimiter is ignored."""
    lines = [ln for ln in body.splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) > 1 and any(";" in ln.strip().rstrip(";") for ln in lines):
        rows = [[c.strip().replace(",", ".") for c in row]
                for row in csv.reader(lines, delimiter=";")]
    elif "\t" in body:
        rows = [[c.strip() for c in row] for row in csv.reader(lines, delimiter="\t")]
    else:
        lines = [part for ln in lines for part in ln.split(";") if part.strip()]
        if "," in body:
            rows = [[c.strip() for c in row]
                    for row in csv.reader(lines, skipinitialspace=True)]
        else:
            rows = [ln.split() for ln in lines]
    return [row[:-1] if len(row) > 1 and row[-1] == "" else row for row in rows]


# --- cells ---------------------------------------------------------------------------------

def _to_floats(rows: list, field: str) -> list[list[float]]:
    """Check every row has row 1's length, then read every cell as a finite float."""
    width = len(rows[0])
    if width == 0:
        raise InputError(field, "at least one number in row 1", "an empty row")
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise InputError(field, f"every row to have {width} values like row 1",
                             f"{len(row)} in row {i}")
    return [[_number(c, field, i, j) for j, c in enumerate(row, start=1)]
            for i, row in enumerate(rows, start=1)]


def _number(cell: Any, field: str, i: int, j: int) -> float:
    """One cell as a finite float; the error names row i, column j (1-based)."""
    if isinstance(cell, bool):
        return float(cell)
    if isinstance(cell, int | float):
        value = float(cell)
        shown = repr(cell)
    elif isinstance(cell, str):
        value = _read(cell)
        shown = cell.strip().strip("'\"")
        if value is None:
            got = _clip(shown) if shown else "an empty cell"
            raise InputError(field, f"a number at row {i}, column {j}", got)
    else:
        raise InputError(field, f"a number at row {i}, column {j}", _type_words(cell))
    if not math.isfinite(value):
        raise InputError(field, "finite numbers", f"{shown} at row {i}, column {j}")
    return value


def _read(cell: str) -> float | None:
    """The float a cell spells, or None if it spells none."""
    s = cell.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        s = s[1:-1].strip()
    s = s.replace("\u2212", "-")
    if s.lower() in _TRUE_FALSE:
        return _TRUE_FALSE[s.lower()]
    try:
        return float(s)
    except ValueError:
        return None


def _type_words(value: Any) -> str:
    """``None`` -> "null", ``5`` -> "an int", ``{}`` -> "a dict": what came, in words."""
    if value is None:
        return "null"
    name = type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name


def _clip(text: Any, limit: int = 30) -> str:
    """repr of `text`, shortened: an error never echoes a whole paste back."""
    s = str(text)
    return repr(s if len(s) <= limit else s[: limit - 1] + "…")

