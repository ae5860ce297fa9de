"""SQLiteStore (SPEC §7): the `Store` contract (`test_stores.StoreContract`), and what a
file shared by threads and processes adds."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from test_stores import Advance, Clock, StoreContract, assert_refused_when_closed

import hookwrap as hw
import hookwrap.stores._memory as memory
import hookwrap.stores._sqlite as sqlite_module
from hookwrap.middleware._toolcache import ToolCache
from hookwrap.stores._sqlite import SQLiteStore


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(sqlite_module, "_now", fake)
    monkeypatch.setattr(memory, "_now", fake)
    return fake


class TestSQLiteStoreContract(StoreContract):
    @pytest.fixture(params=["file", ":memory:"])
    def store(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLiteStore]:
        path = tmp_path / "store.db" if request.param == "file" else ":memory:"
        with SQLiteStore(path) as store:
            yield store

    @pytest.fixture
    def advance(self, clock: Clock) -> Advance:
        return clock.advance


# -- SQLiteStore ------------------------------------------------------------------------------


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "hookwrap.db"


def test_the_file_and_its_table_are_made_when_missing_in_wal_mode(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.set("k", {"v": 1})
    assert path.exists()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT key, value FROM hookwrap_store").fetchall() == [("k", '{"v":1}')]
    db.close()
    with SQLiteStore(str(path)) as again:  # an existing table is kept, a str path works
        assert again.get("k") == {"v": 1}


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        (b"store.db", TypeError, "expects a file path (str or os.PathLike) or ':memory:' "),
        (3, TypeError, "(got int: 3)"),
        (None, TypeError, "(got NoneType: None)"),
        ("", ValueError, "got '', which SQLite would take as a private temporary database"),
    ],
)
def test_a_bad_path_is_refused_naming_the_argument(
    path: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        SQLiteStore(path)
    assert str(caught.value).startswith("SQLiteStore(path) expects")
    assert message in str(caught.value)


def test_a_store_dropped_without_close_closes_its_database(path: Path) -> None:
    """Python 3.13 and newer warn of a connection garbage-collected while open."""
    store = SQLiteStore(str(path))
    store.set("k", 1)
    db = store._db  # pyright: ignore[reportPrivateUsage]
    assert db is not None
    del store
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        db.execute("SELECT 1")


def test_a_file_that_cannot_be_opened_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "store.db"
    with pytest.raises(sqlite3.OperationalError, match=r"SQLiteStore cannot open .*no such folder"):
        SQLiteStore(missing)
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not a database, " * 100)
    with pytest.raises(sqlite3.DatabaseError, match=r"cannot open .*notes\.txt.*not a database"):
        SQLiteStore(garbage)
    assert garbage.read_text() == "not a database, " * 100


def test_two_stores_on_one_file_see_each_others_writes(path: Path) -> None:
    with SQLiteStore(path) as one, SQLiteStore(path) as other:
        one.set("k", [1])
        assert other.get("k") == [1]
        other.set("k", [2])
        assert one.get("k") == [2]
        one.delete("k")
        assert other.get("k") is None

        async def main() -> Any:
            await other.aset("async", {"from": "other"})
            return await one.aget("async")

        assert asyncio.run(main()) == {"from": "other"}


def test_another_process_reads_what_this_one_wrote_and_writes_back(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.set("checkpoint", {"messages": ["hi"], "step": 3})
        store.set("gone", 1, ttl=0.001)
        child = """
import json, sys
from hookwrap.stores._sqlite import SQLiteStore
with SQLiteStore(sys.argv[1]) as store:
    print(json.dumps([store.get("checkpoint"), store.get("gone")]))
    store.set("from child", {"pid": "child"})
"""
        done = subprocess.run(
            [sys.executable, "-c", child, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [{"messages": ["hi"], "step": 3}, None]
        assert store.get("from child") == {"pid": "child"}


def test_expiry_is_an_absolute_unix_time_checked_on_read(path: Path, clock: Clock) -> None:
    with SQLiteStore(path) as store, SQLiteStore(path) as other:
        store.set("k", "v", ttl=10)
        with sqlite3.connect(path) as db:
            row = db.execute("SELECT expires FROM hookwrap_store WHERE key = 'k'").fetchone()
        db.close()
        assert row == (clock.now + 10,)
        clock.advance(9.99)
        assert other.get("k") == "v"
        clock.advance(0.01)
        assert other.get("k") is None
        assert store.get("k") is None


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM hookwrap_store").fetchone()
    db.close()
    return int(count)


def test_expired_rows_never_read_are_purged_on_open_and_as_writes_go_on(
    path: Path, clock: Clock
) -> None:
    with SQLiteStore(path) as store:
        for i in range(10):
            store.set(f"old{i}", i, ttl=1)
        store.set("kept", "v")
        clock.advance(2)
        assert _rows(path) == 11
    with SQLiteStore(path) as store:
        assert _rows(path) == 1
        for i in range(100):
            store.set(f"old{i}", i, ttl=1)
        clock.advance(2)
        for i in range(28):
            store.set(f"new{i}", i)
        assert _rows(path) == 1 + 28  # the 128th write purged the 100 expired rows
        assert store.get("kept") == "v"


def test_threads_with_their_own_store_on_one_file(path: Path) -> None:
    SQLiteStore(path).close()  # the table exists before the threads race to open the file
    start = threading.Barrier(4)

    def work(n: int) -> list[Any]:
        with SQLiteStore(path) as store:
            start.wait(timeout=5)
            seen = []
            for i in range(50):
                store.set(f"t{n}:{i}", {"n": n, "i": i})
                store.set("shared", {"writer": n, "pad": "x" * (n * 100)})
                seen.append(store.get("shared"))
            return seen

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    assert all(len(v["pad"]) == 100 * v["writer"] for seen in results for v in seen)
    with SQLiteStore(path) as store:
        for n in range(4):
            assert [store.get(f"t{n}:{i}") for i in range(50)] == [
                {"n": n, "i": i} for i in range(50)
            ]


def test_async_methods_wait_for_a_locked_database_without_blocking_the_loop(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.set("k", 0)
        locker = sqlite3.connect(path, isolation_level=None)

        async def main() -> tuple[int, bool, Any]:
            locker.execute("BEGIN EXCLUSIVE")  # another writer holds the database
            write = asyncio.create_task(store.aset("k", 1))
            ticks = 0
            for _ in range(5):
                await asyncio.sleep(0.01)
                ticks += 1
            waiting = not write.done()
            locker.execute("COMMIT")
            await write
            return ticks, waiting, await store.aget("k")

        try:
            assert asyncio.run(main()) == (5, True, 1)
        finally:
            locker.close()


def test_close_ends_the_store_and_keeps_the_data(path: Path) -> None:
    store = SQLiteStore(path)
    store.set("k", [1])
    store.close()
    store.close()
    assert repr(store) == f"SQLiteStore({str(path)!r}, closed)"
    assert_refused_when_closed(store, "SQLiteStore")
    with SQLiteStore(path) as again:
        assert again.get("k") == [1]


def test_as_a_context_manager_it_closes_even_on_error(path: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), SQLiteStore(path) as store:
        assert repr(store) == f"SQLiteStore({str(path)!r})"
        store.set("k", 1)
        raise RuntimeError("boom")
    with pytest.raises(ValueError, match="closed"):
        store.get("k")


def test_memory_database_belongs_to_its_object() -> None:
    with SQLiteStore(":memory:") as one, SQLiteStore(":memory:") as other:
        one.set("k", 1)
        assert other.get("k") is None
        assert asyncio.run(one.aget("k")) == 1  # the worker thread uses the same database


def test_tool_cache_shares_results_through_one_file(path: Path) -> None:
    calls: list[int] = []

    def make(store: SQLiteStore) -> Any:
        @hw.tool(use=[ToolCache(store=store)])
        def square(n: int) -> int:
            """Square a number."""
            calls.append(n)
            return n * n

        @hw.tool(use=[ToolCache(store=store)])
        async def asquare(n: int) -> int:
            """Square a number."""
            calls.append(-n)
            return n * n

        return square, asquare

    with SQLiteStore(path) as one, SQLiteStore(path) as other:
        square, asquare = make(one)
        square_elsewhere, asquare_elsewhere = make(other)  # as another process would
        assert square(4) == 16
        assert square_elsewhere(4) == 16
        assert asyncio.run(asquare(5)) == 25
        assert asyncio.run(asquare_elsewhere(5)) == 25
    assert calls == [4, -5]
