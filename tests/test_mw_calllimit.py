"""CallLimit (SPEC §8): per-run limits on model calls, tool calls and calls of each tool; the
call over a limit is refused with `hw.Aborted` naming the limit, refused calls do not count,
and counting is exact under threads and asyncio tasks."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._calllimit import CallLimit
from hookwrap.testing import FakeProvider

SHAPES = ("sync", "async", "stream", "astream")
USER = [{"role": "user", "content": "hi"}]


def model_target(shape: str, calls: list[str]) -> Callable[..., Any]:
    """A model function of this shape that records each prompt it really receives."""
    if shape == "sync":

        def llm(prompt: str) -> str:
            calls.append(prompt)
            return "answer"

        return llm
    if shape == "async":

        async def allm(prompt: str) -> str:
            calls.append(prompt)
            return "answer"

        return allm
    if shape == "stream":

        def sllm(prompt: str) -> Iterator[str]:
            calls.append(prompt)
            yield "ans"
            yield "wer"

        return sllm

    async def asllm(prompt: str) -> AsyncIterator[str]:
        calls.append(prompt)
        yield "ans"
        yield "wer"

    return asllm


def outcome_sync(fn: Callable[..., Any], *args: Any) -> str:
    """`"ok"` when the call (and its stream, if any) completes, else the abort reason."""
    try:
        result = fn(*args)
        if not isinstance(result, (str, int)):
            result = "".join(result)
    except hw.Aborted as exc:
        return exc.reason
    return "ok"


async def outcome_async(fn: Callable[..., Any], *args: Any) -> str:
    try:
        result = fn(*args)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, (str, int)):
            result = "".join([part async for part in result])
    except hw.Aborted as exc:
        return exc.reason
    return "ok"


def in_one_run(shape: str, fn: Callable[..., Any], prompts: list[str]) -> list[str]:
    """Call `fn` once per prompt inside one `hw.run()` (async shapes: `async with`)."""
    if shape in ("sync", "stream"):
        with hw.run():
            return [outcome_sync(fn, p) for p in prompts]

    async def main() -> list[str]:
        async with hw.run():
            return [await outcome_async(fn, p) for p in prompts]

    return asyncio.run(main())


def outside_runs(shape: str, fn: Callable[..., Any], prompts: list[str]) -> list[str]:
    if shape in ("sync", "stream"):
        return [outcome_sync(fn, p) for p in prompts]

    async def main() -> list[str]:
        return [await outcome_async(fn, p) for p in prompts]

    return asyncio.run(main())


# -- model calls ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_model_calls_limit_refuses_exactly_the_call_after_the_last_allowed(shape: str) -> None:
    calls: list[str] = []
    chat = hw.model(model_target(shape, calls), use=[CallLimit(model_calls=3)])
    results = in_one_run(shape, chat, ["1", "2", "3", "4", "5"])
    reason = "CallLimit: model_calls=3 reached"
    assert results == ["ok", "ok", "ok", reason, reason]
    assert calls == ["1", "2", "3"]  # refused calls never reach the model


@pytest.mark.parametrize("shape", SHAPES)
def test_separate_runs_do_not_share_counts(shape: str) -> None:
    calls: list[str] = []
    chat = hw.model(model_target(shape, calls), use=[CallLimit(model_calls=2)])
    reason = "CallLimit: model_calls=2 reached"
    assert in_one_run(shape, chat, ["a", "b", "c"]) == ["ok", "ok", reason]
    assert in_one_run(shape, chat, ["d", "e", "f"]) == ["ok", "ok", reason]
    # outside a run every call is its own one-call run
    assert outside_runs(shape, chat, ["g", "h", "i"]) == ["ok", "ok", "ok"]
    assert calls == ["a", "b", "d", "e", "g", "h", "i"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_zero_limit_refuses_every_call_even_in_one_call_runs(shape: str) -> None:
    calls: list[str] = []
    chat = hw.model(model_target(shape, calls), use=[CallLimit(model_calls=0)])
    assert outside_runs(shape, chat, ["a"]) == ["CallLimit: model_calls=0 reached"]
    assert calls == []


def test_an_abort_leaves_the_run_through_on_abort_with_the_reason() -> None:
    ended: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ended.append(info.reason)

    chat = hw.model(model_target("sync", []), use=[CallLimit(model_calls=1)])
    with pytest.raises(hw.Aborted) as caught, hw.run(use=[aborted]):
        chat("a")
        chat("b")
    assert caught.value.reason == "CallLimit: model_calls=1 reached"
    assert ended == ["CallLimit: model_calls=1 reached"]


def test_one_callimit_on_two_models_is_one_budget_and_two_callimits_count_apart() -> None:
    shared = CallLimit(model_calls=2)
    first = hw.model(model_target("sync", []), use=[shared])
    second = hw.model(model_target("sync", []), use=[shared])
    with hw.run():
        assert [outcome_sync(f, "x") for f in (first, second, first)] == [
            "ok",
            "ok",
            "CallLimit: model_calls=2 reached",
        ]
    own = hw.model(model_target("sync", []), use=[CallLimit(model_calls=1)])
    other = hw.model(model_target("sync", []), use=[CallLimit(model_calls=1)])
    with hw.run():
        assert [outcome_sync(f, "x") for f in (own, other)] == ["ok", "ok"]


def test_a_call_answered_by_an_earlier_respond_is_not_counted() -> None:
    """CallLimit counts the calls that reach its hook: a cache placed before it saves calls."""

    @hw.before_model
    def cache(request: hw.ModelRequest) -> hw.Respond | None:
        return hw.Respond("cached") if request.messages[-1].text == "known" else None

    calls: list[str] = []
    chat = hw.model(model_target("sync", calls), use=[cache, CallLimit(model_calls=1)])
    with hw.run():
        results = [outcome_sync(chat, p) for p in ("known", "known", "new", "known", "other")]
    assert results == ["ok", "ok", "ok", "ok", "CallLimit: model_calls=1 reached"]
    assert calls == ["new"]


# -- tools ----------------------------------------------------------------------------------


def tools(limit: CallLimit, is_async: bool, ran: list[str]) -> tuple[Any, Any]:
    if is_async:

        async def search(q: str) -> str:
            ran.append(f"search {q}")
            return q

        async def fetch(url: str) -> str:
            ran.append(f"fetch {url}")
            return url

    else:

        def search(q: str) -> str:
            ran.append(f"search {q}")
            return q

        def fetch(url: str) -> str:
            ran.append(f"fetch {url}")
            return url

    return hw.tool(search, use=[limit]), hw.tool(fetch, use=[limit])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_limits_total_and_per_tool_and_refused_calls_do_not_count(is_async: bool) -> None:
    ran: list[str] = []
    limit = CallLimit(tool_calls=3, per_tool={"search": 1})
    search, fetch = tools(limit, is_async, ran)
    plan = [(search, "a"), (search, "b"), (fetch, "1"), (fetch, "2"), (fetch, "3"), (search, "c")]
    per_tool = "CallLimit: per_tool['search']=1 reached"
    total = "CallLimit: tool_calls=3 reached"
    if is_async:

        async def main() -> list[str]:
            async with hw.run():
                return [await outcome_async(t, arg) for t, arg in plan]

        results = asyncio.run(main())
    else:
        with hw.run():
            results = [outcome_sync(t, arg) for t, arg in plan]
    # the refused second search does not use up one of the three tool calls
    assert results == ["ok", per_tool, "ok", "ok", total, total]
    assert ran == ["search a", "fetch 1", "fetch 2"]


def test_tool_limits_are_per_run_and_a_tool_without_a_limit_is_not_counted() -> None:
    ran: list[str] = []
    search, fetch = tools(CallLimit(per_tool={"search": 2}), False, ran)
    for _ in range(2):
        with hw.run():
            assert [outcome_sync(fetch, str(i)) for i in range(5)] == ["ok"] * 5
            results = [outcome_sync(search, q) for q in "abc"]
            assert results == ["ok", "ok", "CallLimit: per_tool['search']=2 reached"]
    assert ran.count("search a") == 2
    assert "search c" not in ran


def test_a_tool_limit_also_aborts_a_one_call_run() -> None:
    search, _ = tools(CallLimit(tool_calls=0), False, [])
    with pytest.raises(hw.Aborted) as caught:
        search("a")
    assert caught.value.reason == "CallLimit: tool_calls=0 reached"


# -- concurrency ----------------------------------------------------------------------------


@contextlib.contextmanager
def frequent_thread_switches() -> Iterator[None]:
    """Make a thread switch between any two bytecodes likely, so a read-then-write race
    in the counting would show up."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_threads_in_one_run_never_exceed_the_limits() -> None:
    ran: list[str] = []

    def llm(prompt: str) -> str:
        ran.append(prompt)
        return "ok"

    def search(q: str) -> str:
        return q

    limit = CallLimit(model_calls=1000, tool_calls=1100, per_tool={"search": 1100})
    chat = hw.model(llm, use=[limit])
    tool = hw.tool(search, use=[limit])
    barrier = threading.Barrier(8)

    def worker(n: int) -> list[str]:
        barrier.wait()
        out = []
        for i in range(150):
            out.append(outcome_sync(chat, f"{n}-{i}"))
            out.append(outcome_sync(tool, str(i)))
        return out

    for _ in range(3):  # three runs: a lost update in the counting is then near certain
        ran.clear()
        with frequent_thread_switches(), hw.run(), ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(contextvars.copy_context().run, worker, n) for n in range(8)]
            results = [r for f in futures for r in f.result()]
        assert results.count("ok") == 1000 + 1100
        assert results.count("CallLimit: model_calls=1000 reached") == 1200 - 1000
        assert results.count("CallLimit: tool_calls=1100 reached") == 1200 - 1100
        assert len(ran) == 1000


def test_asyncio_tasks_in_one_run_never_exceed_the_limit() -> None:
    ran: list[int] = []

    async def slow(i: int) -> int:
        await asyncio.sleep(0)  # every task reaches the hooks before any finishes
        ran.append(i)
        return i

    tool = hw.tool(slow, use=[CallLimit(per_tool={"slow": 7})])

    async def main() -> list[str]:
        async with hw.run():
            return list(await asyncio.gather(*(outcome_async(tool, i) for i in range(30))))

    results = asyncio.run(main())
    assert results.count("ok") == 7
    assert results.count("CallLimit: per_tool['slow']=7 reached") == 23
    assert len(ran) == 7


# -- a real SDK client ----------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_openai_client_calls_over_the_limit_never_reach_the_provider(
    is_async: bool, stream: bool
) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["one", "two", "three"])
    client = hw.wrap(provider.openai(async_=is_async), use=[CallLimit(model_calls=2)])

    def create() -> Any:
        return client.chat.completions.create(model="m", messages=USER, stream=stream)

    def text(result: Any) -> str:
        if not stream:
            return str(result.choices[0].message.content)
        return "".join(c.choices[0].delta.content or "" for c in result)

    async def atext(result: Any) -> str:
        result = await result
        if not stream:
            return str(result.choices[0].message.content)
        return "".join([c.choices[0].delta.content or "" async for c in result])

    if is_async:

        async def main() -> tuple[list[str], str]:
            async with hw.run():
                answers = [await atext(create()) for _ in range(2)]
                with pytest.raises(hw.Aborted) as caught:
                    await atext(create())
            return answers, caught.value.reason

        answers, reason = asyncio.run(main())
    else:
        with hw.run():
            answers = [text(create()) for _ in range(2)]
            with pytest.raises(hw.Aborted) as caught:
                text(create())
        reason = caught.value.reason
    assert answers == ["one", "two"]
    assert reason == "CallLimit: model_calls=2 reached"
    assert len(provider.requests) == 2


# -- constructor ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"model_calls": -1}, ValueError, "CallLimit(model_calls=...) expects an int >= 0"),
        ({"tool_calls": "3"}, TypeError, "CallLimit(tool_calls=...) expects an int >= 0"),
        ({"model_calls": True}, TypeError, "(got bool: True)"),
        ({"model_calls": 2.0}, TypeError, "(got float: 2.0)"),
        ({"per_tool": ["search"]}, TypeError, "(got list: ['search'])"),
        ({"per_tool": {1: 2}}, TypeError, "(got the key int: 1)"),
        ({"per_tool": {"search": -2}}, ValueError, "(got 'search': -2)"),
        ({"per_tool": {"search": None}}, TypeError, "(got 'search': None)"),
        ({"per_tool": {"search": "1"}}, TypeError, "tool name (str) -> limit (int >= 0)"),
    ],
)
def test_bad_arguments_are_refused_at_construction(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        CallLimit(**kwargs)


def test_arguments_are_keyword_only_and_kept_readable() -> None:
    with pytest.raises(TypeError):
        CallLimit(3)  # type: ignore[misc]
    limit = CallLimit(model_calls=0, per_tool={"search": 2})
    assert (limit.model_calls, limit.tool_calls, dict(limit.per_tool)) == (0, None, {"search": 2})
    assert repr(limit) == "CallLimit(model_calls=0, per_tool={'search': 2})"
    assert isinstance(limit, hw.Middleware)


def test_without_limits_every_call_goes_through() -> None:
    calls: list[str] = []
    chat = hw.model(model_target("sync", calls), use=[CallLimit()])
    search, _ = tools(CallLimit(), False, [])
    with hw.run():
        assert [outcome_sync(chat, str(i)) for i in range(20)] == ["ok"] * 20
        assert [outcome_sync(search, str(i)) for i in range(20)] == ["ok"] * 20
