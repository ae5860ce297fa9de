"""Stores (SPEC §7): the `Store` protocol and `MemoryStore`: JSON data kept as a copy,
str keys, expiry after `ttl` seconds, sync and async, safe across threads."""

from __future__ import annotations

import asyncio
import enum
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import hookwrap.stores
import hookwrap.stores._memory as memory
from hookwrap.stores import MemoryStore, Store
from hookwrap.stores._base import dump

Advance = Callable[[float], None]


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


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


def test_text_is_written_as_it_is_unless_utf8_cannot_hold_it() -> None:
    """Escaped only for a lone surrogate: other text stays readable in a file or a server."""
    assert dump("k", {"é": "✓ \x00"}) == '{"é":"✓ \\u0000"}'
    assert dump("k", ["é", "caf\udce9"]) == '["\\u00e9","caf\\udce9"]'
    assert dump("k", "plain") == '"plain"'


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


# -- the contract every store follows ------------------------------------------------------

JSON_VALUES = [
    None,
    True,
    0,
    -7,
    2**70,
    2.5,
    "",
    "héllo ✓ \x00 '\"",
    [],
    {},
    [1, "a", None, [False, {"x": [1.5]}]],
    {"a": {"b": [1, 2, {"c": None}]}, "z": True},
]


class Color(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


# values `json.dumps` would write, which would come back as something else or not at all
PLAIN = ", which would come back as a plain"
CHANGED_VALUES: list[tuple[object, str]] = [
    (Level.HIGH, f"the value is of type Level (<Level.HIGH: 3>){PLAIN} int"),
    (Color.RED, f"the value is of type Color (<Color.RED: 'red'>){PLAIN} str"),
    ({"a": [Name("x")]}, f"the value['a'][0] is of type Name ('x'){PLAIN} str"),
    # (its repr changed in Python 3.12)
    (OrderedDict(a=1), f"the value is of type OrderedDict ({OrderedDict(a=1)!r}){PLAIN} dict"),
    ({Color.RED: 1}, f"key <Color.RED: 'red'> of type Color (JSON keys are str){PLAIN} str"),
]

# text with lone surrogates (a file name decoded with `surrogateescape`), which UTF-8
# cannot hold, and a key that holds one
ESCAPED_VALUES: list[object] = [
    "x\ud800",
    [{"k": "\udfff!", "caf\udce9": "é ✓"}],
    {"names": ["a.txt", b"caf\xe9.txt".decode("utf-8", "surrogateescape")]},
]
BAD_KEY = "user:\udce9"


def assert_refused_when_closed(store: Store, name: str) -> None:
    """Every method of a closed `store` raises a ValueError naming it as closed."""
    calls: list[Callable[[], object]] = [
        lambda: store.get("k"),
        lambda: store.set("k", 2),
        lambda: store.delete("k"),
        lambda: asyncio.run(store.aget("k")),
        lambda: asyncio.run(store.aset("k", 2)),
        lambda: asyncio.run(store.adelete("k")),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=rf"{name}\(.*closed\) cannot be used"):
            call()


class StoreContract:
    """What every `hookwrap.stores` store does. A subclass named `Test...` provides the
    fixtures `store` (a fresh, empty store) and `advance` (moves that store's clock on)."""

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)

    @pytest.mark.parametrize("value", JSON_VALUES)
    def test_set_then_get_gives_back_an_equal_value_of_the_same_types(
        self, store: Store, value: Any
    ) -> None:
        store.set("k", value)
        got = store.get("k")
        assert got == value
        assert repr(got) == repr(value)  # 1 stays 1, not 1.0; True stays True

    def test_missing_key_reads_as_none(self, store: Store) -> None:
        assert store.get("nothing here") is None

    def test_keys_are_exact(self, store: Store) -> None:
        store.set("a", 1)
        store.set("A", 2)
        store.set("a ", 3)
        store.set("", 4)
        assert [store.get(k) for k in ("a", "A", "a ", "", "b")] == [1, 2, 3, 4, None]

    def test_a_copy_is_stored_and_a_fresh_copy_is_returned(self, store: Store) -> None:
        value = {"items": [1, 2]}
        store.set("k", value)
        value["items"].append(3)
        got = store.get("k")
        assert got == {"items": [1, 2]}
        got["items"].append(4)
        assert store.get("k") == {"items": [1, 2]}
        assert store.get("k") is not store.get("k")

    def test_set_overwrites(self, store: Store) -> None:
        store.set("k", 1)
        store.set("k", [2])
        assert store.get("k") == [2]

    def test_delete_forgets_and_a_missing_key_is_fine(self, store: Store) -> None:
        store.set("k", 1)
        store.set("other", 2)
        store.delete("k")
        store.delete("k")
        store.delete("never set")
        assert store.get("k") is None
        assert store.get("other") == 2

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            (Opaque(), "the value is of type Opaque (Opaque())"),
            ((1, 2), "the value is of type tuple"),
            ({1: "one"}, "the value has the key 1 of type int (JSON keys are str)"),
            ([math.nan], "the value[0] is nan"),
        ],
    )
    def test_a_value_that_is_not_json_is_a_type_error_and_nothing_is_stored(
        self, store: Store, value: Any, problem: str
    ) -> None:
        store.set("user:42", "before")
        with pytest.raises(TypeError) as caught:
            store.set("user:42", value)
        assert "'user:42'" in str(caught.value)
        assert problem in str(caught.value)
        with pytest.raises(TypeError, match="'user:42'"):
            asyncio.run(store.aset("user:42", value))
        assert store.get("user:42") == "before"

    @pytest.mark.parametrize(("value", "problem"), CHANGED_VALUES)
    def test_a_value_that_would_not_come_back_as_given_is_a_type_error_naming_the_spot(
        self, store: Store, value: Any, problem: str
    ) -> None:
        store.set("user:42", "before")
        for call in (
            lambda: store.set("user:42", value),
            lambda: asyncio.run(store.aset("user:42", value)),
        ):
            with pytest.raises(TypeError) as caught:
                call()
            assert str(caught.value).startswith("cannot store 'user:42': ")
            assert problem in str(caught.value)
        assert store.get("user:42") == "before"

    @pytest.mark.parametrize("value", ESCAPED_VALUES)
    def test_text_with_a_lone_surrogate_comes_back_as_it_was(
        self, store: Store, value: Any
    ) -> None:
        store.set("k", value)
        assert repr(store.get("k")) == repr(value)
        asyncio.run(store.aset("a", value))
        assert repr(asyncio.run(store.aget("a"))) == repr(value)
        assert repr(store.get("a")) == repr(value)

    def test_a_surrogate_pair_of_two_code_points_is_refused(self, store: Store) -> None:
        """JSON would read it back as the one character it encodes: not what was set."""
        with pytest.raises(TypeError, match=r"the surrogates '\\ud83d\\ude00' as two code"):
            store.set("k", ["\ud83d" + "\ude00"])
        store.set("k", "\U0001f600")  # the character itself is text like any other
        assert store.get("k") == "\U0001f600"

    def test_a_key_with_a_lone_surrogate_is_a_value_error_naming_the_index(
        self, store: Store
    ) -> None:
        calls: list[Callable[[], object]] = [
            lambda: store.get(BAD_KEY),
            lambda: store.set(BAD_KEY, 1),
            lambda: store.delete(BAD_KEY),
            lambda: asyncio.run(store.aget(BAD_KEY)),
            lambda: asyncio.run(store.aset(BAD_KEY, 1)),
            lambda: asyncio.run(store.adelete(BAD_KEY)),
        ]
        for call in calls:
            with pytest.raises(ValueError) as caught:
                call()
            assert str(caught.value) == (
                "store keys must be Unicode text: 'user:\\udce9' holds the lone surrogate "
                "'\\udce9' at index 5"
            )

    @pytest.mark.parametrize("key", [1, None, b"k"])
    def test_keys_must_be_str_in_every_method(self, store: Store, key: Any) -> None:
        calls: list[Callable[[], object]] = [
            lambda: store.get(key),
            lambda: store.set(key, 1),
            lambda: store.delete(key),
            lambda: asyncio.run(store.aget(key)),
            lambda: asyncio.run(store.aset(key, 1)),
            lambda: asyncio.run(store.adelete(key)),
        ]
        for call in calls:
            with pytest.raises(TypeError, match="store keys must be str"):
                call()

    @pytest.mark.parametrize(
        ("ttl", "error"),
        [
            ("10", TypeError),
            (True, TypeError),
            (0, ValueError),
            (-1, ValueError),
            (math.nan, ValueError),
            (math.inf, ValueError),
        ],
    )
    def test_a_bad_ttl_is_refused_and_nothing_is_stored(
        self, store: Store, ttl: Any, error: type[Exception]
    ) -> None:
        with pytest.raises(error, match="ttl must be a"):
            store.set("k", 1, ttl=ttl)
        with pytest.raises(error, match="ttl must be a"):
            asyncio.run(store.aset("k", 1, ttl=ttl))
        assert store.get("k") is None

    def test_a_key_expires_after_its_ttl(self, store: Store, advance: Advance) -> None:
        store.set("k", "v", ttl=0.05)
        store.set("forever", "v")
        store.set("long", "v", ttl=1e12)
        assert store.get("k") == "v"
        advance(0.06)
        assert store.get("k") is None
        assert store.get("forever") == "v"
        assert store.get("long") == "v"

    def test_setting_again_replaces_the_expiry_and_no_ttl_removes_it(
        self, store: Store, advance: Advance
    ) -> None:
        store.set("k", 1, ttl=0.05)
        store.set("k", 2)
        store.set("j", 1)
        store.set("j", 2, ttl=0.05)
        advance(0.06)
        assert store.get("k") == 2
        assert store.get("j") is None

    def test_async_methods_do_what_the_sync_ones_do_in_every_event_loop(
        self, store: Store, advance: Advance
    ) -> None:
        async def main(n: int) -> list[Any]:
            await store.aset(f"a{n}", {"x": n})
            await store.aset(f"b{n}", [n], ttl=0.05)
            seen = [await store.aget(f"a{n}"), await store.aget(f"b{n}")]
            await store.adelete(f"a{n}")
            await store.adelete("never set")
            return [*seen, await store.aget(f"a{n}")]

        for n in range(3):  # each asyncio.run is a new event loop
            assert asyncio.run(main(n)) == [{"x": n}, [n], None]
        assert store.get("b2") == [2]
        store.set("from sync", [True])
        assert asyncio.run(store.aget("from sync")) == [True]
        advance(0.06)
        assert asyncio.run(store.aget("b2")) is None

    def test_concurrent_tasks_each_see_their_own_values(self, store: Store) -> None:
        async def task(n: int) -> Any:
            await store.aset(f"task{n}", {"n": n, "data": [n] * n})
            await asyncio.sleep(0)
            return await store.aget(f"task{n}")

        async def main() -> list[Any]:
            return await asyncio.gather(*(task(n) for n in range(40)))

        assert asyncio.run(main()) == [{"n": n, "data": [n] * n} for n in range(40)]

    def test_threads_sharing_a_store_see_whole_values(self, store: Store) -> None:
        start = threading.Barrier(6)

        def work(n: int) -> list[Any]:
            start.wait(timeout=5)
            seen = []
            for i in range(60):
                store.set(f"own{n}:{i}", [n, i])
                store.set("shared", {"writer": n, "i": i, "pad": "x" * (n * 100)})
                seen.append(store.get("shared"))
                assert store.get(f"own{n}:{i}") == [n, i]
                if i % 3 == 0:
                    store.delete(f"own{n}:{i}")
            return seen

        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(work, range(6)))
        for seen in results:
            assert all(len(value["pad"]) == 100 * value["writer"] for value in seen)
        assert store.get("own3:1") == [3, 1]
        assert store.get("own3:3") is None


class TestMemoryStoreContract(StoreContract):
    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore()

    @pytest.fixture
    def advance(self, clock: Clock) -> Advance:
        return clock.advance
