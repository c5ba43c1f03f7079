"""SQLite share store: stdlib sqlite3, WAL, one short-lived connection per operation.

WAL lets readers run while one writer writes; ``busy_timeout`` makes a writer wait for the
lock instead of failing, so concurrent creates from the server's thread pool all land. The
schema is created on open. A trigger refuses UPDATE: there is no code path that changes a
share, and the database says so too.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .base import Share, new_share_id

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS shares (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    request    TEXT NOT NULL,   -- JSON, the request as validated
    result     TEXT NOT NULL,   -- JSON, the computed result (exact float64 typed arrays)
    created_at TEXT NOT NULL    -- ISO 8601 UTC
);
CREATE TRIGGER IF NOT EXISTS shares_are_immutable BEFORE UPDATE ON shares
BEGIN
    SELECT RAISE(ABORT, 'shares are immutable');
END;
"""


class SQLiteShareStore:
    """A ShareStore in one SQLite file (or a private in-memory database for ``:memory:``)."""

    def __init__(self, path: str | Path):
        self._keeper: sqlite3.Connection | None = None
        if str(path) == ":memory:":
            # a shared-cache memory database lives as long as one connection holds it
            self._target = f"file:attnscope-{new_share_id()}?mode=memory&cache=shared"
            self._uri = True
            self._keeper = self._connect()
        else:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._target, self._uri = str(path), False
        with closing(self._connect()) as conn:
            if self._keeper is None:
                conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._target, uri=self._uri, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def create(self, request: dict[str, Any], result: dict[str, Any],
               kind: str = "attention") -> str:
        req = orjson.dumps(request).decode()
        res = orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY).decode()
        created = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        with closing(self._connect()) as conn:
            for _ in range(5):  # a 128-bit collision is ~impossible; retry rather than overwrite
                share_id = new_share_id()
                try:
                    conn.execute("INSERT INTO shares (id, kind, request, result, created_at) "
                                 "VALUES (?, ?, ?, ?, ?)", (share_id, kind, req, res, created))
                    return share_id
                except sqlite3.IntegrityError:
                    continue
        raise RuntimeError("could not draw an unused share id")

    def get(self, share_id: str) -> Share | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT id, kind, request, result, created_at FROM shares "
                               "WHERE id = ?", (share_id,)).fetchone()
        if row is None:
            return None
        return Share(row[0], row[1], orjson.loads(row[2]), orjson.loads(row[3]), row[4])

    def kind(self, share_id: str) -> str | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT kind FROM shares WHERE id = ?", (share_id,)).fetchone()
        return None if row is None else row[0]

    def count(self) -> int:
        with closing(self._connect()) as conn:
            return conn.execute("SELECT COUNT(*) FROM shares").fetchone()[0]

    def close(self) -> None:
        if self._keeper is not None:
            self._keeper.close()
            self._keeper = None
