"""`RedisStore` checks the query options in seconds at construction: `?timeout=` (the
pool's wait) a finite number at least 0, `?socket_timeout=` and `?socket_connect_timeout=`
finite numbers above 0; a good one works for sync and async calls alike."""

from __future__ import annotations

import asyncio

import pytest
from test_stores_redis import redis_url  # noqa: F401  # pyright: ignore[reportUnusedImport]

from hookwrap.stores._redis import RedisStore

pytest.importorskip("redis")


@pytest.mark.parametrize(
    "query",
    [
        "timeout=-1",
        "timeout=inf",
        "timeout=nan",
        "socket_timeout=-0.5",
        "socket_timeout=0",
        "socket_connect_timeout=-1",
        "socket_connect_timeout=1e999",
        "db=0&timeout=5&timeout=-1",
    ],
)
def test_bad_seconds_are_refused_at_construction(query: str) -> None:
    name = query.rpartition("&")[2].partition("=")[0]
    with pytest.raises(ValueError, match=f"the option '{name}' expects a finite number"):
        RedisStore(f"redis://127.0.0.1:1/0?{query}")


@pytest.mark.parametrize(
    "query", ["timeout=0", "timeout=2.5", "socket_timeout=3&socket_connect_timeout=0.5"]
)
def test_good_seconds_work(redis_url: str, query: str) -> None:  # noqa: F811
    store = RedisStore(f"{redis_url}?{query}", prefix="timeouts:")
    try:
        store.set("k", 1)
        assert store.get("k") == 1

        async def use() -> object:
            await store.aset("k", 2)
            return await store.aget("k")

        assert asyncio.run(use()) == 2
    finally:
        store.close()
