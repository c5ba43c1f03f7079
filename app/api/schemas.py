"""Pydantic schemas of JSON API v1: requests are checked here, at the edge.

The request mirrors ../shared/DESIGN.md ("JSON API v1"). Types only go as far as JSON can
say: numbers must be finite (NaN and ±Infinity, which Python's json parser accepts, fail
here with the exact cell in ``loc``), unknown keys are refused. Limits that depend on the
settings (tokens, d_model, heads, cells) are checked in app/api/attention.py before any
tensor exists. The option fields are built from the mechanisms' own option dataclasses, so a
new mechanism's option appears here without an edit.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    create_model,
)

from app.attention.options import describe_options
from app.attention.registry import MECHANISMS
from app.attention.trace import AXES, STEP_IDS
from app.inputs.embedding import KINDS, POSITIONS
from app.service import MAX_SEED

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
#: An int that JSON must give as an int (not "3" or 3.0); app/api/models.py uses it too.
StrictInt = Annotated[int, Field(strict=True)]
Seed = Annotated[int, Field(strict=True, ge=0, le=MAX_SEED,
                            description="seed for what is drawn at random, 0 … 2^63 − 1")]
Rows = list[list[FiniteFloat]]
def _unicode(value: str) -> str:
    """Refuse a lone UTF-16 surrogate ("\\ud800" in JSON): it is no character, and it
    cannot be hashed, stored or sent back as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(value[e.start])
        raise ValueError(f"expected valid Unicode text, got a lone surrogate U+{code:04X} "
                         f"at character {e.start + 1}") from None
    return value


#: Any text a user sends: checked to be valid Unicode.
Text = Annotated[str, AfterValidator(_unicode)]
Paste = Annotated[Text, Field(description="a pasted matrix: JSON nested lists, CSV, TSV, "
                             "whitespace- or ;-separated rows, or a numpy / PyTorch repr",
                             examples=["1 0 1 1\n0 2 0 2\n1 1 1 1"])]

# Union members are picked by the JSON type of the value (a callable discriminator), so a
# bad cell gives one error at its own loc, not one per member. Tags are written <like this>
# and app/api/errors.py strips them from each error's loc.
ROWS, ROW, TEXT, NUMBER = "<rows>", "<row>", "<text>", "<number>"


def _by_json_type(value: Any) -> str:
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list) and all(isinstance(r, list) for r in value):  # [] too
        return ROWS
    return ROW if isinstance(value, list) else NUMBER


def _pick(message: str, fn=_by_json_type) -> Discriminator:
    return Discriminator(fn, custom_error_type="type_error", custom_error_message=message)


Matrix = Annotated[Annotated[Rows, Tag(ROWS)] | Annotated[Paste, Tag(TEXT)],
                   _pick("Input should be a matrix: a list of rows of numbers, or pasted text")]
MatrixOrVector = Annotated[
    Annotated[Rows, Tag(ROWS)] | Annotated[list[FiniteFloat], Tag(ROW)]
    | Annotated[Paste, Tag(TEXT)],
    _pick("Input should be a matrix (a list of rows of numbers), a vector (a list of "
          "numbers) or pasted text")]

MechanismId = Literal[tuple(MECHANISMS)]  # type: ignore[valid-type]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputSide(Strict):
    """One side of the attention: exactly one of text, tokens, matrix (tokens may label a
    matrix). Rows are tokens: a matrix is n × d_model."""

    text: Text | None = Field(None, description="split on whitespace into tokens",
                             examples=["I saw a saw"])
    tokens: list[Text] | None = Field(None, description="the tokens themselves, or labels "
                                     "for the rows of `matrix`")
    matrix: Matrix | None = Field(None, description="X itself, n × d_model: nested "
                                          "lists or pasted text")


class Embedding(Strict):
    """How tokens become rows of X."""

    kind: Literal[KINDS] = Field("hashed", description="hashed: a seeded random vector per "  # type: ignore[valid-type]
                                 "distinct token; one_hot: unit vectors over the vocabulary")
    dim: Annotated[int, Field(strict=True, ge=1)] = Field(8, description="d_model, features "
                                                          "per token")
    seed: Seed = 0
    positions: Literal[POSITIONS] = Field("none", description="add sinusoidal position "  # type: ignore[valid-type]
                                          "encodings or not")


WeightValue = MatrixOrVector | None


class Weights(BaseModel):
    """weight name -> matrix (nested lists or pasted text), plus the seed that draws every
    weight left out. The seed may sit here (as DESIGN's example has it) or at top level."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, WeightValue]  # type: ignore[assignment]

    seed: Seed | None = Field(None, description="seed for the weights left out (same as "
                              "top-level `seed`; give one or the other)")


def _option_type(entry: dict[str, Any]) -> Any:
    """A field type for one option as describe_options() reports it; null = the default."""
    if entry["type"] == "boolean":
        return bool | None
    if entry["type"] == "integer":
        return Annotated[int, Field(strict=True, ge=entry.get("minimum", 1))] | None
    choices = Literal[tuple(entry["choices"])]  # type: ignore[valid-type]
    if not entry.get("accepts_number"):
        return choices | None
    words = "Input should be one of " + ", ".join(entry["choices"]) + " or a number"
    return Annotated[Annotated[choices, Tag(TEXT)] | Annotated[FiniteFloat, Tag(NUMBER)],
                     _pick(words, lambda v: TEXT if isinstance(v, str) else NUMBER)] | None


def _options_model() -> type[BaseModel]:
    """Every option of every mechanism (a mechanism refuses the ones it does not have)."""
    fields: dict[str, Any] = {}
    for mechanism in MECHANISMS.values():
        for entry in describe_options(mechanism.Options):
            if entry["name"] not in fields:
                fields[entry["name"]] = (_option_type(entry),
                                         Field(None, description=entry["help"]))
    fields["mask"] = (Matrix | None, Field(
        None, description='"none", "causal" (query i sees keys j ≤ i), or a 0/1 matrix '
        "n_query × n_key (nested lists or pasted text), 1 = may attend",
        examples=["causal"]))
    return create_model("Options", __config__=ConfigDict(extra="forbid"),
                        __doc__="Mechanism options; null or absent means the mechanism's "
                        "default. GET /api/v1/mechanisms lists which options each one has.",
                        **fields)


Options = _options_model()


class AttentionRequest(Strict):
    """POST /api/v1/attention: one mechanism run on your inputs."""

    mechanism: MechanismId = Field(description="a mechanism id from GET /api/v1/mechanisms")
    query: InputSide
    key: InputSide | None = Field(None, description="the key/value side; null means "
                                  "self-attention (keys and values come from query)")
    embedding: Embedding | None = None
    weights: Weights | None = Field(
        None, description="weight name -> matrix (nested lists or pasted text); a weight "
        "left out or null is drawn from `seed`. Weights map by right-multiplication: "
        "Q = X·W_q, so W_q is d_model × d_k.")
    seed: Seed | None = Field(None, description="seed for every weight left out (default "
                              "0); `weights.seed` is the same thing")
    options: Options | None = None  # type: ignore[valid-type]


# --- responses (documentation and schema checks; the routes serialise with orjson) --------

class TypedArray(BaseModel):
    """A Plotly typed array: base64 of little-endian values, row-major: float32 (f4), or
    float64 (f8) for an array with a finite value outside float32's range."""

    dtype: Literal["f4", "f8"] = Field(description="f4 (float32); f8 (float64) when a value "
                                       "lies outside float32's range")
    bdata: str
    shape: list[int]


class StepOut(BaseModel):
    id: Literal[tuple(STEP_IDS)]  # type: ignore[valid-type]
    title: str
    formula: str
    shape: list[int]
    axes: list[Literal[AXES]]  # type: ignore[valid-type]
    data: list[Any] | TypedArray = Field(description="nested lists (null = −∞, a masked "
                                         "cell) or, with ?encoding=typed, a typed array")
    note: str | None = None


class AttentionResponse(BaseModel):
    mechanism: str
    query_tokens: list[str]
    key_tokens: list[str]
    steps: list[StepOut]
    attention: list[list[list[float]]] | TypedArray = Field(
        description="α, [heads][n_query][n_key]")
    output: list[list[float]] | TypedArray = Field(description="[n_query][d_out]")
    notes: list[str]
    sizes: dict[str, int] = Field(description="the value of every shape symbol in this run, "
                                  'e.g. {"d_model": 8, "d_k": 4, "h": 2}')
    weights: dict[str, list[list[float]] | list[float] | TypedArray] = Field(
        description="every weight actually used, given or drawn from the seed, by name")
    mask: list[list[Literal[0, 1]]] | None = Field(
        description="the mask applied, [n_query][n_key], 1 = may attend; null = none")


class Parameter(BaseModel):
    name: str
    type: str
    default: Any = None
    nullable: bool = False
    help: str = ""
    choices: list[str] | None = None
    accepts_number: bool | None = None
    accepts_matrix: bool | None = None
    minimum: int | None = None


class StepInfo(BaseModel):
    id: str
    description: str


class WeightInfo(BaseModel):
    name: str
    dims: list[str] = Field(description="the shape in symbols, e.g. [d_model, h·d_k]")
    shape: str = Field(description='the same as text, e.g. "d_model × h·d_k"')
    role: str
    init: str
    condition: str | None = Field(None, description='when it is used, e.g. "bias = true"; '
                                  "null = always")


class MechanismInfo(BaseModel):
    id: str
    title: str
    description: str
    seed_doc: str
    parameters: list[Parameter]
    steps: list[StepInfo]
    weights: list[WeightInfo]


class Preset(BaseModel):
    id: str
    title: str
    description: str
    seed_doc: str
    request: dict[str, Any] = Field(description="a request for POST /api/v1/attention")


class ShareCreate(Strict):
    request: dict[str, Any] = Field(description="the request to share, e.g. an "
                                    "AttentionRequest when kind is attention")
    kind: str = Field("attention", description='what the request is for: "attention" '
                      "(POST /api/v1/attention) or a real-model kind")


class ShareCreated(BaseModel):
    id: str
    url: str


class ShareOut(BaseModel):
    id: str
    kind: str
    request: dict[str, Any]
    result: dict[str, Any]
    created_at: str


class ErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ValidationErrorOut(BaseModel):
    detail: list[ErrorItem]


class Message(BaseModel):
    detail: str
