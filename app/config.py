"""Application settings: one pydantic-settings class, read through ``get_settings()``.

Every setting can be given as an environment variable with the prefix ``ATTNSCOPE_``
(``ATTNSCOPE_DATABASE_URL``, ``ATTNSCOPE_MAX_TOKENS`` …) or in a ``.env`` file. Tests build
their own ``Settings(...)`` and pass it to ``create_app``; nothing is read at import time.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

#: The repository root (the directory holding app/, static/, templates/).
ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"


class Settings(BaseSettings):
    """Server settings and the limits every request is checked against."""

    model_config = SettingsConfigDict(env_prefix="ATTNSCOPE_", env_file=".env",
                                      extra="ignore")

    database_url: str = Field(
        default=f"sqlite:///{DATA_DIR / 'attnscope.db'}",
        description="where shares live: sqlite:///path/to/file.db (the directory is created)")
    max_tokens: int = Field(512, ge=1, description="tokens (rows) per side, query and key")
    max_d_model: int = Field(1024, ge=1, description="features per token (d_model, "
                             "embedding dim, matrix columns)")
    max_heads: int = Field(64, ge=1, description="attention heads")
    max_cells: int = Field(1_000_000, ge=1, description="cells of any one pasted matrix")
    max_body_bytes: int = Field(2 * 1024 * 1024, ge=1024, description="request body; "
                                "larger bodies get 413")
    max_attention_cells: int = Field(
        1_048_576, ge=1, description="heads × n_query × n_key of one run (4 heads at 512 "
        "tokens): bounds every per-head step the trace holds")
    max_result_cells: int = Field(
        6_000_000, ge=1, description="numbers in one result (every step, weight, α and the "
        "output): 6M is 24 MB as typed arrays; bounds what a few KB of request can ask for")
    max_share_cells: int = Field(
        3_000_000, ge=1, description="numbers in one stored share (kept as float64)")
    max_pair_cells: int = Field(
        8_388_608, ge=1, description="n_query × n_key × d_a for mechanisms with a hidden "
        "layer per query–key pair (additive: tanh(q_i + k_j + b_a) holds one d_a vector per "
        "pair; 8M cells ≈ 64 MB per intermediate in float64)")
    model_dirs: str = Field(
        "", description="extra local checkpoints in the Hugging Face layout (config.json, "
        "*.safetensors, tokenizer.json), directories separated by ':'; each is served as a "
        "model next to minilm-l6 (the BERT family)")
    model_cache_bytes: int = Field(
        1 << 30, ge=0, description="bytes of forward passes the real-model cache keeps "
        "(least recently used first out); one 512-token MiniLM pass is about 80 MB")
    torch_threads: int = Field(
        1, ge=0, description="torch intra-op threads per process; 1 (default) suits many "
        "small requests on a few cores: several request threads each running a torch pool "
        "oversubscribe the cores (measured 20–30× slower at 16 tokens on 2 cores); 0 leaves "
        "torch's default")
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="origins allowed to call the API from a browser, "
        "comma-separated; empty = none (no CORS headers at all)")

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value):
        if isinstance(value, str):
            return [o.strip() for o in value.split(",") if o.strip()]
        return value


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings from the environment (cached; tests pass their own)."""
    return Settings()
