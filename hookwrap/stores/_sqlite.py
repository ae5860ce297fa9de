"""`SQLiteStore`: a `Store` in an SQLite file, shared by every process that opens it."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import weakref
from typing import Any

from ._base import Closing, check_key, check_ttl, dump

__all__ = ["SQLiteStore"]

_now = time.time  # absolute unix time, so other processes read expiry alike; tests replace it

_PURGE_EVERY = 128  # writes between two purges of expired rows

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hookwrap_store "
    "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL) WITHOUT ROWID",
    # partial: rows that never expire cost the index nothing
    "CREATE INDEX IF NOT EXISTS hookwrap_store_expires "
    "ON hookwrap_store (expires) WHERE expires IS NOT NULL",
)


class SQLiteStore(Closing):
    """A `Store` in an SQLite database file: the embedded default, shared by the threads of
    this process and by every other process that opens the same file.

    Args:
        path: the database file (`str` or `os.PathLike`), created with its table when
            missing; `":memory:"` keeps the data in this object only.

    One connection serves every thread, behind a lock: each operation is one short
    statement, and a single connection is what `":memory:"` needs and what `close()` can
    close for good. Other processes are kept in step by SQLite's own locking (WAL mode,
    a 5 second busy timeout). Expiry is an absolute unix time checked on every read;
    expired rows are purged when the store opens and every 128 writes. The `a*` methods
    run the same statements in a worker thread, so a busy database never blocks the
    event loop.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise TypeError(
                "SQLiteStore(path) expects a file path (str or os.PathLike) or ':memory:' "
                f"(got {type(path).__name__}: {path!r})"
            )
        if not path:
            raise ValueError(
                "SQLiteStore(path) expects a file path or ':memory:' (got '', which SQLite "
                "would take as a private temporary database)"
            )
        self.path = path
        self._lock = threading.Lock()
        self._writes = 0
        self._db: sqlite3.Connection | None = None
        try:
            self._db = sqlite3.connect(
                path, timeout=5.0, isolation_level=None, check_same_thread=False
            )
            # a store dropped without close() closes its database as it goes (Python 3.13
            # and newer warn of a connection left open)
            weakref.finalize(self, self._db.close)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; cheaper commits
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._purge(self._db)
        except sqlite3.Error as exc:
            self.close()
            raise type(exc)(f"SQLiteStore cannot open {path!r}: {exc}") from exc
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        closed = ", closed" if self._db is None else ""
        return f"SQLiteStore({self.path!r}{closed})"

    def get(self, key: str) -> Any | None:
        """The value stored under `key` (a fresh copy), or `None` if none or expired."""
        check_key(key)
        with self._lock:
            row = (
                self._open()
                .execute(
                    "SELECT value FROM hookwrap_store WHERE key = ? "
                    "AND (expires IS NULL OR expires > ?)",
                    (key, _now()),
                )
                .fetchone()
            )
        return None if row is None else json.loads(row[0])

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store a copy of `value` under `key`, for `ttl` seconds (`None`: no expiry)."""
        self._put(*self._row(key, value, ttl))

    def delete(self, key: str) -> None:
        """Forget `key`; a missing key is not an error."""
        check_key(key)
        with self._lock:
            self._open().execute("DELETE FROM hookwrap_store WHERE key = ?", (key,))

    async def aget(self, key: str) -> Any | None:
        """`get`, run in a worker thread."""
        check_key(key)
        return await asyncio.to_thread(self.get, key)

    async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
        """`set`, run in a worker thread; the copy is taken before the call awaits."""
        await asyncio.to_thread(self._put, *self._row(key, value, ttl))

    async def adelete(self, key: str) -> None:
        """`delete`, run in a worker thread."""
        check_key(key)
        await asyncio.to_thread(self.delete, key)

    def close(self) -> None:
        """Close the database; the store cannot be used afterwards. Closing twice is fine."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _row(self, key: str, value: Any, ttl: float | None) -> tuple[str, str, float | None]:
        """What `set` writes: checked, copied as JSON text, with its absolute expiry."""
        check_key(key)
        seconds = check_ttl(ttl)
        text = dump(key, value)
        return key, text, None if seconds is None else _now() + seconds

    def _put(self, key: str, text: str, expires: float | None) -> None:
        with self._lock:
            db = self._open()
            db.execute(
                "INSERT OR REPLACE INTO hookwrap_store (key, value, expires) VALUES (?, ?, ?)",
                (key, text, expires),
            )
            self._writes += 1
            if self._writes % _PURGE_EVERY == 0:
                self._purge(db)

    def _purge(self, db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM hookwrap_store WHERE expires <= ?", (_now(),))

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError(f"{self!r} cannot be used: it was closed")
        return self._db
