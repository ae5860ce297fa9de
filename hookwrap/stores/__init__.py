"""Stores: where hookwrap keeps data that outlives a call (tool caches, checkpoints).

Every store follows the `Store` protocol: JSON-compatible values under `str` keys, with
an optional time to live, sync and async.
"""

from ._base import Store
from ._memory import MemoryStore

__all__ = [
    "MemoryStore",
    "Store",
]
