"""Application settings: one pydantic-settings class, read through ``get_settings()``.

Every setting can be given as an environment variable with the prefix ``ATTNSCOPE_``
(``ATTNSCOPE_DATABASE_URL``, ``ATTNSCOPE_MAX_TOKENS`` …) or in a ``.env`` file. Tests build
their own ``Settings(...)`` and pass it to ``create_app``; nothing is read at import time.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed to "
                                    "call the API from a browser; empty = none")

    @property
    def max_paste_chars(self) -> int:
        """Longest pasted matrix text: generous for max_cells numbers, below the body limit."""
        return self.max_body_bytes


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings from the environment (cached; tests pass their own)."""
    return Settings()
