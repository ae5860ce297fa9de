"""RedisStore's connection pools (SPEC §7), against the `redis-server` of
test_stores_redis: a call that finds every connection busy waits for one instead of
failing, in threads and in tasks of one event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from test_stores_redis import redis_url  # noqa: F401  # pyright: ignore[reportUnusedImport]

from hookwrap.stores._redis import RedisStore


def _take(pool: Any) -> Any:
    """A connection out of `pool`, as the oldest and newest redis releases hand one out
    (before 5.3 the command name was required; since, passing one is deprecated)."""
    try:
        return pool.get_connection()
    except TypeError:
        return pool.get_connection("_")


def test_more_concurrent_async_calls_than_connections_all_succeed(redis_url: str) -> None:  # noqa: F811
    """redis's default async pool holds 100 connections and fails the 101st call."""

    async def main() -> list[object]:
        async with RedisStore(redis_url, prefix="pool-async:") as store:
            await asyncio.gather(*(store.aset(f"k{i}", i) for i in range(150)))
            return list(await asyncio.gather(*(store.aget(f"k{i}") for i in range(150))))

    assert asyncio.run(main()) == list(range(150))


def test_a_sync_call_waits_for_a_busy_connection(redis_url: str) -> None:  # noqa: F811
    with RedisStore(f"{redis_url}?max_connections=1", prefix="pool-sync:") as store:
        pool = store._client.connection_pool  # pyright: ignore[reportPrivateUsage]
        held = _take(pool)  # every connection is busy
        errors: list[BaseException] = []

        def write() -> None:
            try:
                store.set("k", "v")
            except BaseException as exc:  # reported below
                errors.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.2)
        assert errors == []
        assert writer.is_alive()  # waiting, not failed
        pool.release(held)
        writer.join(timeout=10)
        assert errors == []
        assert store.get("k") == "v"


def test_a_wait_longer_than_the_url_s_timeout_is_redis_s_connection_error(
    redis_url: str,  # noqa: F811
) -> None:
    import redis

    with RedisStore(f"{redis_url}?max_connections=1&timeout=0.1", prefix="pool-t:") as store:
        pool = store._client.connection_pool  # pyright: ignore[reportPrivateUsage]
        held = _take(pool)
        try:
            with pytest.raises(redis.ConnectionError, match="No connection available"):
                store.set("k", "v")
        finally:
            pool.release(held)
        store.set("k", "v")
        assert store.get("k") == "v"
