"""Stores: where hookwrap keeps data that outlives a call (tool caches, checkpoints).

Every store follows the `Store` protocol: JSON-compatible values under `str` keys, with
an optional time to live, sync and async.
"""

from ._base import Store
from ._memory import MemoryStore
from ._redis import RedisStore
from ._sqlite import SQLiteStore

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "Store",
]
