"""`MemoryStore`: a `Store` in this process's memory."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ._base import check_key, check_ttl, dump

__all__ = ["MemoryStore"]

_now = time.monotonic  # the clock expiry reads; tests replace it

_FIRST_SWEEP = 64


class MemoryStore:
    """A `Store` kept in this process's memory: for tests, single processes, and as the
    model of what every store does.

    Values are kept as JSON text, so `get` returns a fresh copy each time. An expired key
    reads as `None` and is dropped then; expired keys never read are dropped in bulk when
    the store has doubled in size since the last sweep, so memory stays bounded by about
    twice the live keys.
    """

    def __init__(self) -> None:
        self._data: dict[str, tuple[str, float | None]] = {}
        self._lock = threading.Lock()
        self._sweep_at = _FIRST_SWEEP

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._data)} keys)"

    def get(self, key: str) -> Any | None:
        """The value stored under `key` (a fresh copy), or `None` if none or expired."""
        check_key(key)
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            text, expires = entry
            if expires is not None and _now() >= expires:
                del self._data[key]
                return None
        return json.loads(text)

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store a copy of `value` under `key`, for `ttl` seconds (`None`: no expiry)."""
        check_key(key)
        seconds = check_ttl(ttl)
        text = dump(key, value)
        expires = None if seconds is None else _now() + seconds
        with self._lock:
            self._data[key] = (text, expires)
            if len(self._data) >= self._sweep_at:
                self._sweep()

    def delete(self, key: str) -> None:
        """Forget `key`; a missing key is not an error."""
        check_key(key)
        with self._lock:
            self._data.pop(key, None)

    async def aget(self, key: str) -> Any | None:
        """`get`; memory never makes the caller wait."""
        return self.get(key)

    async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
        """`set`; memory never makes the caller wait."""
        self.set(key, value, ttl)

    async def adelete(self, key: str) -> None:
        """`delete`; memory never makes the caller wait."""
        self.delete(key)

    def _sweep(self) -> None:
        """Drop expired entries (the lock is held); the next sweep waits for the store to
        double, so sweeping costs O(1) per `set` on average."""
        now = _now()
        self._data = {k: e for k, e in self._data.items() if e[1] is None or e[1] > now}
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(self._data))
