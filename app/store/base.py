"""The share-store interface and the URL -> store factory.

A share is immutable: there is ``create`` and ``get`` and nothing else. It keeps the request
and the computed result, so a link shows exactly what was shared even after a later version
draws random weights differently. Ids are ``secrets.token_urlsafe(16)``: 128 random bits,
22 URL-safe characters, never sequential (a capability URL, W3C guidance ≥ 120 bits).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

#: Bytes of randomness in a share id (16 bytes = 128 bits -> 22 base64url characters).
ID_BYTES = 16


class StoreConfigError(ValueError):
    """The database URL names a store this build cannot open."""


@dataclass(frozen=True)
class Share:
    id: str
    kind: str  # "attention" | "model_attention" | "model_overview"
    request: dict[str, Any]
    result: dict[str, Any]
    created_at: str  # ISO 8601, UTC, e.g. "2025-01-31T12:00:00.123456Z"


@runtime_checkable
class ShareStore(Protocol):
    """What the API needs from a share store."""

    def create(self, request: dict[str, Any], result: dict[str, Any],
               kind: str = "attention") -> str:
        """Store a new share and return its id."""
        ...

    def get(self, share_id: str) -> Share | None:
        """The share with this id, or None."""
        ...

    def kind(self, share_id: str) -> str | None:
        """What the share with this id is for ("attention", "model_attention", …), or
        None; without reading its (possibly large) result."""
        ...

    def close(self) -> None:
        ...


def new_share_id() -> str:
    return secrets.token_urlsafe(ID_BYTES)


def store_from_url(url: str) -> ShareStore:
    """Open the store a database URL names; raise StoreConfigError for anything else."""
    scheme = url.split(":", 1)[0].lower()
    if scheme == "sqlite":
        from .sqlite import SQLiteShareStore

        prefix = "sqlite:///"
        if not url.startswith(prefix) or len(url) == len(prefix):
            raise StoreConfigError(f"database URL {url!r}: expected sqlite:///path/to/file.db "
                                   "(three slashes, then a relative path; four for an "
                                   "absolute one) or sqlite:///:memory:")
        return SQLiteShareStore(url[len(prefix):])
    if scheme.startswith("postgres"):
        raise StoreConfigError(
            f"database URL {url.split('@')[-1]!r}: PostgreSQL is not implemented in this "
            "version of attnscope (no driver is installed); use sqlite:///path/to/file.db")
    raise StoreConfigError(f"database URL scheme {scheme!r} is not supported; "
                           "use sqlite:///path/to/file.db")
