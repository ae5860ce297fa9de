"""ToolCache (SPEC §8): the same tool with the same arguments is answered from the cache
without running again; errors are never cached; ttl, LRU eviction, the `tools` filter,
sync and async tools from one object, and a shared `hookwrap.stores` store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import hookwrap as hw
import hookwrap.middleware._toolcache as toolcache
import hookwrap.stores._memory as memory
from hookwrap.middleware._toolcache import ToolCache
from hookwrap.stores import MemoryStore
from hookwrap.testing import FakeProvider


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(toolcache, "_now", fake)
    monkeypatch.setattr(memory, "_now", fake)
    return fake


@pytest.fixture(params=["memory", "store"])
def cache(request: pytest.FixtureRequest) -> ToolCache:
    """A ToolCache of each storage: the in-memory LRU and a MemoryStore."""
    return ToolCache() if request.param == "memory" else ToolCache(store=MemoryStore())


class Counted:
    """Tools that count their calls: `add` (sync) and `aadd` (async), one cache around both."""

    def __init__(self, cache: ToolCache, name: str = "add") -> None:
        self.calls: list[tuple[Any, ...]] = []

        def add(a: int, b: int = 0) -> dict[str, int]:
            """Add two numbers."""
            self.calls.append((a, b))
            return {"sum": a + b}

        async def aadd(a: int, b: int = 0) -> dict[str, int]:
            """Add two numbers."""
            await asyncio.sleep(0)
            self.calls.append((a, b))
            return {"sum": a + b}

        self.add = hw.tool(add, use=[cache], name=name)
        self.aadd = hw.tool(aadd, use=[cache], name=name)


class Boom(Exception):
    """An error a tool raises on purpose."""


# -- hits and misses --------------------------------------------------------------------------


def test_a_hit_skips_the_tool_and_returns_the_first_result(cache: ToolCache) -> None:
    tools = Counted(cache)
    assert tools.add(1, 2) == {"sum": 3}
    assert tools.add(1, 2) == {"sum": 3}
    assert tools.add(1, 2) == {"sum": 3}
    assert tools.calls == [(1, 2)]


def test_different_arguments_miss(cache: ToolCache) -> None:
    tools = Counted(cache)
    assert [tools.add(1, 2), tools.add(2, 1), tools.add(1, 3)] == [
        {"sum": 3},
        {"sum": 3},
        {"sum": 4},
    ]
    assert tools.calls == [(1, 2), (2, 1), (1, 3)]


def test_argument_order_and_spelling_do_not_matter(cache: ToolCache) -> None:
    tools = Counted(cache)
    tools.add(1, 2)
    tools.add(b=2, a=1)
    tools.add(1, b=2)
    tools.add.invoke(hw.ToolCall("c1", "add", {"b": 2, "a": 1}))
    assert tools.calls == [(1, 2)]


def test_the_same_arguments_of_another_tool_miss(cache: ToolCache) -> None:
    first = Counted(cache, name="first")
    second = Counted(cache, name="second")
    first.add(1, 2)
    second.add(1, 2)
    assert first.calls == [(1, 2)]
    assert second.calls == [(1, 2)]


def test_an_async_tool_is_cached_with_real_awaits(cache: ToolCache) -> None:
    tools = Counted(cache)

    async def main() -> list[Any]:
        return [await tools.aadd(1, 2), await tools.aadd(b=2, a=1), await tools.aadd(5)]

    assert asyncio.run(main()) == [{"sum": 3}, {"sum": 3}, {"sum": 5}]
    assert tools.calls == [(1, 2), (5, 0)]


def test_one_cache_serves_sync_and_async_tools_of_the_same_name(cache: ToolCache) -> None:
    tools = Counted(cache)
    assert tools.add(1, 2) == {"sum": 3}
    assert asyncio.run(tools.aadd(1, 2)) == {"sum": 3}
    assert asyncio.run(tools.aadd(7, 1)) == {"sum": 8}
    assert tools.add(7, 1) == {"sum": 8}
    assert tools.calls == [(1, 2), (7, 1)]


def test_a_none_result_is_cached_too(cache: ToolCache) -> None:
    calls: list[str] = []

    @hw.tool(use=[cache])
    def log_line(text: str) -> None:
        calls.append(text)

    assert log_line("a") is None
    assert log_line("a") is None
    assert calls == ["a"]


def test_errors_are_never_cached(cache: ToolCache) -> None:
    outcomes: list[Any] = [Boom("first"), "second", "third"]
    calls: list[str] = []

    @hw.tool(use=[cache])
    def flaky(x: int) -> str:
        outcome = outcomes.pop(0)
        calls.append(str(outcome))
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with pytest.raises(Boom):
        flaky(1)
    assert flaky(1) == "second"
    assert flaky(1) == "second"
    assert calls == ["first", "second"]


def test_async_errors_are_never_cached(cache: ToolCache) -> None:
    calls: list[int] = []

    @hw.tool(use=[cache])
    async def flaky(x: int) -> int:
        calls.append(x)
        if len(calls) == 1:
            raise Boom("first")
        return len(calls)

    with pytest.raises(Boom):
        asyncio.run(flaky(1))
    assert asyncio.run(flaky(1)) == 2
    assert asyncio.run(flaky(1)) == 2
    assert calls == [1, 1]


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_arguments_that_are_not_json_go_through_uncached(cache: ToolCache) -> None:
    calls: list[Point] = []

    @hw.tool(use=[cache])
    def norm(p: Point) -> int:
        calls.append(p)
        return abs(p.x) + abs(p.y)

    assert norm(Point(1, 2)) == 3
    assert norm(Point(1, 2)) == 3
    assert len(calls) == 2
    assert cache.key(hw.ToolCall("c", "norm", {"p": Point(1, 2)})) is None
    assert (
        cache.key(hw.ToolCall("c", "norm", {"p": {"x": 1, "y": 2}})) == 'norm:{"p":{"x":1,"y":2}}'
    )


def test_the_key_is_the_name_and_canonical_json_arguments() -> None:
    cache = ToolCache()
    key = cache.key(
        hw.ToolCall("c", "search", {"q": "é", "page": 2, "opts": {"z": 1, "a": [True]}})
    )
    assert key == 'search:{"opts":{"a":[true],"z":1},"page":2,"q":"\\u00e9"}'
    assert key == "search:" + json.dumps(
        {"page": 2, "opts": {"a": [True], "z": 1}, "q": "é"}, sort_keys=True, separators=(",", ":")
    )


# -- what a hit returns -----------------------------------------------------------------------


def test_memory_hit_returns_the_same_object() -> None:
    tools = Counted(ToolCache())
    first = tools.add(1, 2)
    assert tools.add(1, 2) is first


def test_store_hit_returns_a_fresh_copy_each_time() -> None:
    tools = Counted(ToolCache(store=MemoryStore()))
    first = tools.add(1, 2)
    first["sum"] = 99
    second = tools.add(1, 2)
    assert second == {"sum": 3}
    second["sum"] = 100
    assert tools.add(1, 2) == {"sum": 3}
    assert tools.calls == [(1, 2)]


def test_a_store_holds_results_under_namespaced_keys_shared_by_every_cache() -> None:
    store = MemoryStore()
    one = Counted(ToolCache(store=store))
    other = Counted(ToolCache(store=store))  # as another process would
    one.add(1, 2)
    assert store.get('hookwrap:toolcache:add:{"a":1,"b":2}') == [{"sum": 3}]
    assert other.add(1, 2) == {"sum": 3}
    assert other.calls == []


def test_a_result_that_is_not_json_is_not_kept_in_a_store_and_is_no_error() -> None:
    calls: list[int] = []

    @hw.tool(use=[ToolCache(store=MemoryStore())])
    def span(n: int) -> tuple[int, int]:
        calls.append(n)
        return (0, n)

    assert span(3) == (0, 3)
    assert span(3) == (0, 3)
    assert calls == [3, 3]


def test_an_iterator_result_is_not_cached_in_memory() -> None:
    calls: list[int] = []

    @hw.tool(use=[ToolCache()])
    def count(n: int) -> Iterator[int]:
        calls.append(n)
        return iter(range(n))

    assert list(count(3)) == [0, 1, 2]
    assert list(count(3)) == [0, 1, 2]
    assert calls == [3, 3]


class BrokenStore(MemoryStore):
    """A store whose backend is down."""

    def get(self, key: str) -> Any:
        raise ConnectionError("store down")

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        raise ConnectionError("store down")


def test_a_failing_store_is_logged_and_the_tool_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools = Counted(ToolCache(store=BrokenStore()))
    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        assert tools.add(1, 2) == {"sum": 3}
        assert tools.add(1, 2) == {"sum": 3}
        assert asyncio.run(tools.aadd(1, 2)) == {"sum": 3}  # aget/aset call get/set
    assert tools.calls == [(1, 2)] * 3
    messages = [r.getMessage() for r in caplog.records]
    assert any("could not read" in m and "ConnectionError: store down" in m for m in messages)
    assert any("could not write" in m for m in messages)


class AwaitedStore(MemoryStore):
    """A MemoryStore that records which methods were used, and really awaits."""

    def __init__(self) -> None:
        super().__init__()
        self.used: list[str] = []

    def get(self, key: str) -> Any:
        self.used.append("get")
        return super().get(key)

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        self.used.append("set")
        super().set(key, value, ttl)

    async def aget(self, key: str) -> Any:
        await asyncio.sleep(0)
        self.used.append("aget")
        return super().get(key)

    async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
        await asyncio.sleep(0)
        self.used.append("aset")
        super().set(key, value, ttl)


def test_async_tools_use_the_store_async_methods_and_sync_tools_the_sync_ones() -> None:
    store = AwaitedStore()
    tools = Counted(ToolCache(store=store))
    asyncio.run(tools.aadd(1, 2))
    asyncio.run(tools.aadd(1, 2))
    assert store.used == ["aget", "aset", "aget"]
    store.used.clear()
    tools.add(1, 2)
    assert store.used == ["get"]
    assert tools.calls == [(1, 2)]


# -- ttl --------------------------------------------------------------------------------------


def test_memory_results_expire_after_ttl(clock: Clock) -> None:
    tools = Counted(ToolCache(ttl=10))
    tools.add(1, 2)
    clock.now += 9.9
    tools.add(1, 2)
    assert tools.calls == [(1, 2)]
    clock.now += 0.1
    tools.add(1, 2)
    assert tools.calls == [(1, 2), (1, 2)]
    clock.now += 9.9
    tools.add(1, 2)  # the new result has a fresh ttl
    assert tools.calls == [(1, 2), (1, 2)]


def test_store_results_expire_after_ttl(clock: Clock) -> None:
    tools = Counted(ToolCache(store=MemoryStore(), ttl=10))
    tools.add(1, 2)
    clock.now += 9.9
    asyncio.run(tools.aadd(1, 2))
    assert tools.calls == [(1, 2)]
    clock.now += 0.1
    asyncio.run(tools.aadd(1, 2))
    assert tools.calls == [(1, 2), (1, 2)]


def test_without_ttl_results_do_not_expire(clock: Clock, cache: ToolCache) -> None:
    tools = Counted(cache)
    tools.add(1, 2)
    clock.now += 1e9
    tools.add(1, 2)
    assert tools.calls == [(1, 2)]


# -- LRU eviction -----------------------------------------------------------------------------


def test_the_least_recently_used_entry_is_evicted() -> None:
    tools = Counted(ToolCache(max_size=2))
    tools.add(1)
    tools.add(2)
    tools.add(1)  # a hit: 1 is now the most recently used
    tools.add(3)  # evicts 2
    assert tools.calls == [(1, 0), (2, 0), (3, 0)]
    tools.add(1)
    tools.add(3)
    assert tools.calls == [(1, 0), (2, 0), (3, 0)]
    tools.add(2)  # evicted: runs again, and evicts 1
    tools.add(1)
    assert tools.calls == [(1, 0), (2, 0), (3, 0), (2, 0), (1, 0)]


def test_max_size_does_not_apply_to_a_store() -> None:
    tools = Counted(ToolCache(store=MemoryStore(), max_size=1))
    for n in range(5):
        tools.add(n)
    for n in range(5):
        tools.add(n)
    assert len(tools.calls) == 5


# -- the tools filter -------------------------------------------------------------------------


@pytest.mark.parametrize("by", ["name", "tool"])
def test_only_the_named_tools_are_cached(by: str) -> None:
    calls: list[str] = []

    def search(q: str) -> str:
        """Search."""
        calls.append(f"search {q}")
        return q

    def now(tz: str) -> str:
        """The time."""
        calls.append(f"now {tz}")
        return tz

    selector: Any = "search" if by == "name" else hw.tool(search)
    cache = ToolCache(tools=[selector])
    cached, live = hw.tool(search, use=[cache]), hw.tool(now, use=[cache])
    for _ in range(2):
        cached("x")
        live("UTC")
    assert calls == ["search x", "now UTC", "now UTC"]
    assert cache.key(hw.ToolCall("c", "now", {"tz": "UTC"})) is None


# -- where it sits in the onion ---------------------------------------------------------------


def test_a_hit_skips_inner_hooks_while_outer_hooks_and_after_tool_still_run() -> None:
    seen: list[str] = []

    @hw.wrap_tool
    def outer(call: hw.ToolCall, call_next: Callable[[hw.ToolCall], Any]) -> Any:
        seen.append("outer")
        return call_next(call)

    @hw.wrap_tool
    def inner(call: hw.ToolCall, call_next: Callable[[hw.ToolCall], Any]) -> Any:
        seen.append("inner")
        return call_next(call)

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        seen.append(f"after {outcome.result}")

    @hw.tool(use=[outer, ToolCache(), inner, after])
    def double(n: int) -> int:
        seen.append("tool")
        return 2 * n

    assert double(4) == 8
    assert double(4) == 8
    assert seen == ["outer", "inner", "tool", "after 8", "outer", "after 8"]


def test_the_key_is_computed_after_before_tool_rewrote_the_arguments() -> None:
    @hw.before_tool
    def lower(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={"q": call.arguments["q"].lower()})

    calls: list[str] = []

    @hw.tool(use=[lower, ToolCache()])
    def search(q: str) -> str:
        calls.append(q)
        return q

    assert search("Paris") == "paris"
    assert search("PARIS") == "paris"
    assert calls == ["paris"]


# -- concurrency ------------------------------------------------------------------------------


def test_concurrent_identical_calls_may_both_run_no_lock_is_held_across_the_call() -> None:
    both_inside = threading.Barrier(2)
    calls: list[int] = []

    @hw.tool(use=[ToolCache()])
    def slow(n: int) -> int:
        calls.append(n)
        both_inside.wait(timeout=5)  # a lock held across the call would deadlock here
        return n

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(slow, [1, 1])) == [1, 1]
    assert calls == [1, 1]
    assert slow(1) == 1
    assert calls == [1, 1]


def test_concurrent_async_calls_interleave() -> None:
    calls: list[int] = []

    @hw.tool(use=[ToolCache(store=MemoryStore())])
    async def slow(n: int) -> int:
        calls.append(n)
        await asyncio.sleep(0.01)
        return n

    async def main() -> list[int]:
        return list(await asyncio.gather(slow(1), slow(1), slow(2)))

    assert asyncio.run(main()) == [1, 1, 2]
    assert sorted(calls) == [1, 1, 2]
    assert asyncio.run(slow(1)) == 1
    assert len(calls) == 3


@pytest.mark.parametrize("store", [None, MemoryStore()], ids=["memory", "store"])
def test_threads_sharing_a_cache_get_right_answers(store: MemoryStore | None) -> None:
    calls: list[int] = []
    lock = threading.Lock()

    @hw.tool(use=[ToolCache(store=store, max_size=3)])
    def square(n: int) -> dict[str, int]:
        with lock:
            calls.append(n)
        return {"n": n, "square": n * n}

    def work(seed: int) -> list[tuple[int, Any]]:
        numbers = [(seed * 7 + i) % 6 for i in range(200)]
        return [(n, square(n)) for n in numbers]

    with ThreadPoolExecutor(8) as pool:
        answers = [pair for pairs in pool.map(work, range(8)) for pair in pairs]
    assert len(answers) == 1600
    assert all(got == {"n": n, "square": n * n} for n, got in answers)
    assert set(calls) == set(range(6))
    assert len(calls) < 1600  # some were hits
    before = len(calls)
    for n in range(6):
        square(n)
    missed = len(calls) - before
    if store is None:
        assert missed >= 3  # the LRU kept no more than max_size=3 results
    else:
        assert missed == 0


# -- through a real SDK -----------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_calls_from_an_openai_model_are_cached_whatever_the_argument_order(
    is_async: bool,
) -> None:
    """The model asks for the same call twice (its JSON keys in another order), then for
    another: the tool runs twice."""
    pytest.importorskip("openai")
    asks = [
        {"city": "Paris", "unit": "c"},
        {"unit": "c", "city": "Paris"},
        {"city": "Oslo", "unit": "c"},
    ]
    replies = [
        hw.Message.assistant("", [hw.ToolCall(f"c{i}", "weather", args)])
        for i, args in enumerate(asks)
    ]
    provider = FakeProvider(replies)
    client = provider.openai(async_=is_async)
    user = [{"role": "user", "content": "weather?"}]
    runs: list[str] = []

    def weather(city: str, unit: str = "c") -> str:
        """Weather for a city."""
        runs.append(city)
        return f"{city}: 20{unit}"

    async def aweather(city: str, unit: str = "c") -> str:
        """Weather for a city."""
        return weather(city, unit)

    cache = ToolCache(store=MemoryStore())
    if is_async:
        atool = hw.tool(aweather, name="weather", use=[cache])

        async def ask_all() -> list[str]:
            answers = []
            for _ in asks:
                completion = await client.chat.completions.create(model="m", messages=user)
                answers.append(await atool.ainvoke(native_call(completion)))
            return answers

        answers = asyncio.run(ask_all())
    else:
        tool = hw.tool(weather, use=[cache])
        answers = []
        for _ in asks:
            completion = client.chat.completions.create(model="m", messages=user)
            answers.append(tool.invoke(native_call(completion)))
    assert answers == ["Paris: 20c", "Paris: 20c", "Oslo: 20c"]
    assert runs == ["Paris", "Oslo"]
    assert len(provider.requests) == 3


def native_call(completion: Any) -> hw.ToolCall:
    """The first tool call of an OpenAI ChatCompletion, as a neutral ToolCall."""
    call = completion.choices[0].message.tool_calls[0]
    return hw.ToolCall(call.id, call.function.name, json.loads(call.function.arguments))


# -- construction -----------------------------------------------------------------------------


def test_defaults_and_repr() -> None:
    cache = ToolCache()
    assert (cache.store, cache.ttl, cache.max_size, cache.cached_tools) == (None, None, 100, None)
    assert cache.tools == ()  # a cache provides no tools of its own
    assert repr(cache) == "ToolCache(store=memory, ttl=None, max_size=100, tools=None)"
    named = ToolCache(ttl=5, tools=("b", "a"))
    assert repr(named) == "ToolCache(store=memory, ttl=5.0, max_size=100, tools=['a', 'b'])"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"store": {}}, TypeError, "ToolCache(store=...) expects a hookwrap.stores store"),
        ({"store": "redis://"}, TypeError, "(got str: 'redis://')"),
        ({"store": MemoryStore}, TypeError, "(got the class MemoryStore; make one"),
        ({"ttl": "60"}, TypeError, "ToolCache(ttl=...): ttl must be a number of seconds"),
        ({"ttl": 0}, ValueError, "ToolCache(ttl=...): ttl must be a finite number"),
        ({"ttl": -1.5}, ValueError, "(got -1.5)"),
        ({"max_size": 0}, ValueError, "ToolCache(max_size=...) expects an int >= 1 (got 0)"),
        ({"max_size": 2.5}, TypeError, "ToolCache(max_size=...) expects an int >= 1 (got float"),
        ({"max_size": True}, TypeError, "(got bool: True)"),
        ({"tools": "search"}, TypeError, "ToolCache(tools=...) expects None or a collection"),
        ({"tools": ["search", 3]}, TypeError, "(got the item int: 3)"),
        ({"tools": []}, ValueError, "(got an empty list, which caches nothing)"),
    ],
)
def test_bad_arguments_are_refused_at_construction(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        ToolCache(**kwargs)
    assert type(caught.value) is error
    assert message in str(caught.value)


def test_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ToolCache(MemoryStore())  # type: ignore[misc]
