"""RedisStore (SPEC §7) against a real `redis-server` started for this module: the `Store`
contract, keys under a prefix, `PX` expiry, sharing between stores and processes, one
async client per event loop.

Without `redis-server` on PATH these tests skip, except under CI (`CI` set), where they
fail so that they can never be skipped unnoticed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_stores import Advance, StoreContract, assert_refused_when_closed

import hookwrap as hw
from hookwrap.middleware._toolcache import ToolCache
from hookwrap.stores._redis import RedisStore


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the Redis tests", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh `redis-server` on a free port, for this test session."""
    binary = shutil.which("redis-server")
    if binary is None:
        _unavailable("redis-server is not on PATH (apt-get install redis-server)")
    try:
        import redis
    except ImportError:
        _unavailable("the redis package is missing (pip install 'hookwrap[redis]')")
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    options = ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
    options += ["--save", "", "--appendonly", "no"]  # nothing written to disk
    server = subprocess.Popen(
        [str(binary), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    probe = redis.Redis.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                probe.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not answer on port {port}") from None
                time.sleep(0.005)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        probe.close()
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def raw(redis_url: str) -> Iterator[Any]:
    """A plain client on an emptied database, to look at what the store wrote."""
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def store(redis_url: str, raw: Any) -> Iterator[RedisStore]:
    with RedisStore(redis_url) as store:
        yield store


class TestRedisStoreContract(StoreContract):
    """`store` is the module's fixture; Redis expires keys on its own clock, so time passes."""

    @pytest.fixture
    def advance(self) -> Advance:
        return time.sleep


# -- keys, values and expiry on the server ----------------------------------------------------


def test_values_are_json_text_under_the_prefixed_key(redis_url: str, raw: Any) -> None:
    with RedisStore(redis_url) as default, RedisStore(redis_url, prefix="app:") as app:
        default.set("k", {"a": [1, "é"]})
        app.set("k", 2)
        assert raw.get("hookwrap:k") == '{"a":[1,"é"]}'
        assert raw.get("app:k") == "2"
        assert default.get("k") == {"a": [1, "é"]}
        assert app.get("k") == 2
        app.delete("k")
        assert default.get("k") == {"a": [1, "é"]}
    with RedisStore(redis_url, prefix="") as bare:
        assert bare.get("hookwrap:k") == {"a": [1, "é"]}
    assert sorted(raw.keys("*")) == ["hookwrap:k"]


def test_ttl_is_the_servers_px_expiry(store: RedisStore, raw: Any) -> None:
    store.set("ten", 1, ttl=10)
    assert 9_000 < raw.pttl("hookwrap:ten") <= 10_000
    store.set("ten", 2)
    assert raw.pttl("hookwrap:ten") == -1  # no expiry
    store.set("aeons", 3, ttl=1e300)  # beyond Redis's clock: kept without expiry
    assert raw.pttl("hookwrap:aeons") == -1
    store.set("tiny", 4, ttl=0.0001)  # rounded up to 1 ms, not down to an invalid 0
    time.sleep(0.005)
    assert store.get("tiny") is None
    assert raw.exists("hookwrap:tiny") == 0


def test_two_stores_share_data(redis_url: str, raw: Any) -> None:
    with RedisStore(redis_url) as one, RedisStore(redis_url) as other:
        one.set("k", [1])
        assert other.get("k") == [1]
        other.delete("k")
        assert one.get("k") is None

        async def main() -> Any:
            await other.aset("async", {"from": "other"}, ttl=60)
            return await one.aget("async")

        assert asyncio.run(main()) == {"from": "other"}


def test_another_process_reads_what_this_one_wrote_and_writes_back(
    store: RedisStore, redis_url: str
) -> None:
    store.set("checkpoint", {"messages": ["hi"], "step": 3})
    child = """
import asyncio, json, sys
from hookwrap.stores._redis import RedisStore

async def main(store):
    async with store:
        return await store.aget("checkpoint")

with RedisStore(sys.argv[1]) as store:
    store.set("from child", {"pid": "child"})
print(json.dumps(asyncio.run(main(RedisStore(sys.argv[1])))))
"""
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", child, redis_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout) == {"messages": ["hi"], "step": 3}
    assert store.get("from child") == {"pid": "child"}


# -- connections ------------------------------------------------------------------------------


def _clients(raw: Any) -> int:
    """Connections the server has open, this `raw` client's included."""
    return len(raw.client_list())


def _clients_once_closed(raw: Any, expected: int) -> int:
    """`_clients`, given the server time to see closed connections go (it learns of a
    close a little after the client's socket is closed): asked until it is `expected`,
    for 2 seconds at most."""
    deadline = time.monotonic() + 2
    while (found := _clients(raw)) != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def test_each_event_loop_gets_its_own_client_closed_when_the_loop_shuts_down(
    store: RedisStore, raw: Any
) -> None:
    store.set("k", 0)
    before = _clients(raw)

    async def main(n: int) -> Any:
        await store.aset("k", n)
        assert _clients(raw) == before + 1  # this loop's client
        return await store.aget("k")

    assert [asyncio.run(main(n)) for n in range(3)] == [0, 1, 2]
    assert _clients_once_closed(raw, before) == before

    results: list[Any] = []

    def in_a_thread(n: int) -> None:
        async def work() -> Any:
            await store.aset(f"t{n}", n)
            await asyncio.sleep(0.01)  # both loops hold their client at once
            return await store.aget(f"t{n}")

        results.append(asyncio.run(work()))

    threads = [threading.Thread(target=in_a_thread, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [0, 1]
    assert _clients_once_closed(raw, before) == before


def test_aclose_closes_this_loops_client_now_and_ends_the_store(redis_url: str, raw: Any) -> None:
    before = _clients(raw)

    async def main() -> tuple[int, int]:
        async with RedisStore(redis_url) as store:
            await store.aset("k", 1)
            store.get("k")
            during = _clients(raw)
        return during, _clients_once_closed(raw, before)  # before this loop shuts down

    during, after = asyncio.run(main())
    assert (during, after) == (before + 2, before)  # the sync and this loop's client


def test_close_ends_the_store(redis_url: str, raw: Any) -> None:
    store = RedisStore(redis_url, prefix="p:")
    store.set("k", [1])
    with store:
        pass
    store.close()
    assert repr(store) == f"RedisStore({redis_url!r}, prefix='p:', closed)"
    assert_refused_when_closed(store, "RedisStore")
    assert raw.get("p:k") == "[1]"


def test_a_server_that_is_down_raises_redis_errors() -> None:
    import redis

    with RedisStore(f"redis://127.0.0.1:{_free_port()}/0") as store:
        with pytest.raises(redis.ConnectionError):
            store.get("k")
        with pytest.raises(redis.ConnectionError):
            asyncio.run(store.aset("k", 1))


def test_tool_cache_shares_results_through_the_server(redis_url: str, raw: Any) -> None:
    calls: list[int] = []

    def make(store: RedisStore) -> Any:
        @hw.tool(use=[ToolCache(store=store, ttl=60)])
        async def square(n: int) -> int:
            """Square a number."""
            calls.append(n)
            return n * n

        return square

    with RedisStore(redis_url) as one, RedisStore(redis_url) as other:
        assert asyncio.run(make(one)(4)) == 16
        assert asyncio.run(make(other)(4)) == 16  # as another process would
    assert calls == [4]
    assert raw.keys("*") == ['hookwrap:hookwrap:toolcache:square:{"n":4}']


# -- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "prefix", "error", "message"),
    [
        (None, "x", TypeError, "RedisStore(url) expects a str such as 'redis://localhost:6379/0'"),
        (b"redis://h", "x", TypeError, "(got bytes: b'redis://h')"),
        ("http://user:hunter2@h/0", "x", ValueError, "'http://user:***@h/0'"),
        ("localhost:6379", "x", ValueError, "expects a redis://, rediss:// or unix:// URL"),
        ("redis://h:6379/xyz", "x", ValueError, "the database 'xyz' is not a number"),
        ("redis://h", None, TypeError, "RedisStore(prefix=...) expects a str (got NoneType"),
        # every key would fail in the encoder as it is sent, a bare UnicodeEncodeError
        ("redis://h", "a\udc80", ValueError, "must be Unicode text: 'a\\udc80' holds the lone"),
    ],
)
def test_bad_arguments_are_refused_naming_them(
    url: Any, prefix: Any, error: type[Exception], message: str
) -> None:
    pytest.importorskip("redis")
    with pytest.raises(error) as caught:
        RedisStore(url, prefix=prefix)
    assert message in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_repr_hides_the_password() -> None:
    pytest.importorskip("redis")
    store = RedisStore("redis://admin:s3cret@cache.internal:6380/2", prefix="a:")
    assert repr(store) == "RedisStore('redis://admin:***@cache.internal:6380/2', prefix='a:')"
    store.close()


def test_without_the_redis_package_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ImportError, match=r"pip install 'hookwrap\[redis\]'"):
        RedisStore("redis://localhost:6379/0")


def test_importing_the_stores_does_not_import_redis() -> None:
    check = (
        "import sys, hookwrap, hookwrap.stores, hookwrap.stores._redis;"
        "assert 'redis' not in sys.modules, 'redis was imported'"
    )
    root = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, cwd=root, check=False
    )
    assert done.returncode == 0, done.stderr
