"""Share links: an insert-only store of (request, result) pairs behind a small interface.

``store_from_url(url)`` picks the implementation from a SQLAlchemy-style URL; today that is
SQLite (``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``sqlite:///:memory:``).
"""

from .base import Share, ShareStore, StoreConfigError, new_share_id, store_from_url
from .sqlite import SQLiteShareStore

__all__ = ["Share", "ShareStore", "SQLiteShareStore", "StoreConfigError", "new_share_id",
           "store_from_url"]
