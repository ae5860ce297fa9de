"""Stores (SPEC §7): the `Store` protocol and `MemoryStore`: JSON data kept as a copy,
str keys, expiry after `ttl` seconds, sync and async, safe across threads."""

from __future__ import annotations

import asyncio
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import hookwrap.stores
import hookwrap.stores._memory as memory
from hookwrap.stores import MemoryStore, Store


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(memory, "_now", fake)
    return fake


# -- the protocol -----------------------------------------------------------------------------


def test_package_exports_the_protocol_and_the_stores() -> None:
    assert hookwrap.stores.__all__ == ["MemoryStore", "RedisStore", "SQLiteStore", "Store"]
    assert isinstance(MemoryStore(), Store)


def test_protocol_recognises_any_object_with_the_six_methods() -> None:
    class Half:
        def get(self, key: str) -> Any:
            return None

        def set(self, key: str, value: Any, ttl: float | None = None) -> None:
            pass

    class Full(Half):
        def delete(self, key: str) -> None:
            pass

        async def aget(self, key: str) -> Any:
            return None

        async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
            pass

        async def adelete(self, key: str) -> None:
            pass

    assert isinstance(Full(), Store)
    assert not isinstance(Half(), Store)
    assert not isinstance({}, Store)


# -- values -----------------------------------------------------------------------------------

JSON_VALUES = [
    None,
    True,
    0,
    -7,
    2.5,
    "",
    "héllo ✓",
    [],
    {},
    [1, "a", None, [False, {"x": [1.5]}]],
    {"a": {"b": [1, 2, {"c": None}]}, "z": True},
]


@pytest.mark.parametrize("value", JSON_VALUES)
def test_set_then_get_gives_back_an_equal_value_of_the_same_types(value: Any) -> None:
    store = MemoryStore()
    store.set("k", value)
    got = store.get("k")
    assert got == value
    assert repr(got) == repr(value)  # 1 stays 1, not 1.0; True stays True


def test_missing_key_reads_as_none() -> None:
    assert MemoryStore().get("nothing here") is None


def test_a_copy_is_stored_and_a_fresh_copy_is_returned() -> None:
    store = MemoryStore()
    value = {"items": [1, 2]}
    store.set("k", value)
    value["items"].append(3)
    got = store.get("k")
    assert got == {"items": [1, 2]}
    got["items"].append(4)
    assert store.get("k") == {"items": [1, 2]}
    assert store.get("k") is not store.get("k")


def test_set_overwrites() -> None:
    store = MemoryStore()
    store.set("k", 1)
    store.set("k", [2])
    assert store.get("k") == [2]


def test_delete_forgets_and_a_missing_key_is_fine() -> None:
    store = MemoryStore()
    store.set("k", 1)
    store.set("other", 2)
    store.delete("k")
    store.delete("k")
    store.delete("never set")
    assert store.get("k") is None
    assert store.get("other") == 2


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


def _self_containing() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (Opaque(), "the value is of type Opaque (Opaque())"),
        ((1, 2), "the value is of type tuple"),
        ({"a": [1, {2, 3}]}, "the value['a'][1] is of type set"),
        ({1: "one"}, "the value has the key 1 of type int (JSON keys are str)"),
        ([math.nan], "the value[0] is nan"),
        ({"x": math.inf}, "the value['x'] is inf"),
        (b"bytes", "the value is of type bytes"),
        (_self_containing(), "the value[1] contains itself"),
    ],
)
def test_a_value_that_is_not_json_is_a_type_error_naming_the_key_and_the_spot(
    value: Any, problem: str
) -> None:
    store = MemoryStore()
    with pytest.raises(TypeError) as caught:
        store.set("user:42", value)
    message = str(caught.value)
    assert "'user:42'" in message
    assert problem in message
    assert store.get("user:42") is None


def test_the_same_list_twice_is_not_a_cycle() -> None:
    shared = [1]
    store = MemoryStore()
    store.set("k", {"a": shared, "b": shared})
    assert store.get("k") == {"a": [1], "b": [1]}


@pytest.mark.parametrize("key", [1, None, b"k", ("a",)])
def test_keys_must_be_str(key: Any) -> None:
    store = MemoryStore()
    for call in (
        lambda: store.get(key),
        lambda: store.set(key, 1),
        lambda: store.delete(key),
    ):
        with pytest.raises(TypeError, match="store keys must be str"):
            call()


# -- expiry -----------------------------------------------------------------------------------


def test_a_key_expires_after_ttl_seconds(clock: Clock) -> None:
    store = MemoryStore()
    store.set("k", "v", ttl=10)
    store.set("forever", "v")
    clock.now += 9.99
    assert store.get("k") == "v"
    clock.now += 0.01
    assert store.get("k") is None
    clock.now += 1e9
    assert store.get("forever") == "v"


def test_set_again_restarts_the_ttl_and_none_removes_it(clock: Clock) -> None:
    store = MemoryStore()
    store.set("k", 1, ttl=10)
    clock.now += 8
    store.set("k", 2, ttl=10)
    clock.now += 8
    assert store.get("k") == 2
    store.set("k", 3)
    clock.now += 100
    assert store.get("k") == 3


def test_expired_keys_never_read_are_swept_as_the_store_grows(clock: Clock) -> None:
    store = MemoryStore()
    for i in range(100):
        store.set(f"old{i}", i, ttl=1)
    clock.now += 2
    for i in range(28):
        store.set(f"new{i}", i)
    assert repr(store) == "MemoryStore(28 keys)"
    assert store.get("new0") == 0


@pytest.mark.parametrize("ttl", ["10", True, [1]])
def test_a_ttl_of_the_wrong_type_is_a_type_error(ttl: Any) -> None:
    with pytest.raises(TypeError, match="ttl must be a number of seconds or None"):
        MemoryStore().set("k", 1, ttl=ttl)


@pytest.mark.parametrize("ttl", [0, -1, math.nan, math.inf])
def test_a_ttl_that_is_not_positive_and_finite_is_a_value_error(ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl must be a finite number of seconds above 0"):
        MemoryStore().set("k", 1, ttl=ttl)


# -- async and threads ------------------------------------------------------------------------


def test_async_methods_do_what_the_sync_ones_do(clock: Clock) -> None:
    store = MemoryStore()

    async def main() -> list[Any]:
        await store.aset("a", {"x": 1})
        await store.aset("b", [1], ttl=5)
        seen = [await store.aget("a"), await store.aget("b")]
        await store.adelete("a")
        clock.now += 5
        return [*seen, await store.aget("a"), await store.aget("b")]

    assert asyncio.run(main()) == [{"x": 1}, [1], None, None]
    with pytest.raises(TypeError, match="'bad'"):
        asyncio.run(store.aset("bad", {1, 2}))


def test_threads_sharing_a_store_see_whole_values() -> None:
    store = MemoryStore()
    start = threading.Barrier(8)

    def work(n: int) -> list[Any]:
        start.wait(timeout=5)
        seen = []
        for i in range(300):
            store.set(f"own{n}:{i}", [n, i])
            store.set("shared", {"writer": n, "i": i})
            seen.append(store.get("shared"))
            assert store.get(f"own{n}:{i}") == [n, i]
            if i % 3 == 0:
                store.delete(f"own{n}:{i}")
        return seen

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for seen in results:
        assert all(set(value) == {"writer", "i"} for value in seen)
    assert store.get("own3:1") == [3, 1]
    assert store.get("own3:3") is None
