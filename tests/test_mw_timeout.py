"""`Timeout` (SPEC §8): construction, model and tool calls in every shape, cancellation of
async calls, the worker thread of sync calls and what becomes of a late result, streams,
and real SDK clients against the fake provider."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._timeout import Timeout
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]
SLOW = 0.05  # the limit of the tests that measure when the error comes
QUICK = 0.02  # the limit of the others
MARGIN = 0.45  # how late after its limit a TimeoutError may still count as "at the limit"


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "hookwrap-timeout"]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event slow targets wait on; set at the end of the test, which then checks that
    every worker thread has ended (a late call let go of, not leaked)."""
    event = threading.Event()
    yield event
    event.set()
    for thread in workers():
        thread.join(2)
    assert workers() == []


def timed(fn: Callable[[], Any]) -> tuple[BaseException, float]:
    start = time.perf_counter()
    with pytest.raises(TimeoutError) as info:
        fn()
    return info.value, time.perf_counter() - start


async def timed_async(awaitable: Any) -> tuple[BaseException, float]:
    start = time.perf_counter()
    with pytest.raises(TimeoutError) as info:
        await awaitable
    return info.value, time.perf_counter() - start


def errors_seen() -> tuple[list[BaseException], Any]:
    """A list and an `on_error` hook that appends each run's error to it."""
    seen: list[BaseException] = []

    @hw.on_error
    def record(info: hw.FinishInfo) -> None:
        assert info.error is not None
        seen.append(info.error)

    return seen, record


# -- construction ---------------------------------------------------------------------------


def test_limits_are_optional_keyword_only_and_kept_as_given() -> None:
    assert (Timeout().model, Timeout().tool) == (None, None)
    timeout = Timeout(model=2, tool=0.5)
    assert (timeout.model, timeout.tool) == (2, 0.5)
    assert repr(timeout) == "Timeout(model=2, tool=0.5)"
    assert isinstance(timeout, hw.Middleware)
    with pytest.raises(TypeError):
        Timeout(2)  # type: ignore[misc]


@pytest.mark.parametrize("bad", ["2", True, [1], 1j])
@pytest.mark.parametrize("name", ["model", "tool"])
def test_a_limit_that_is_not_a_number_is_a_type_error_naming_it(name: str, bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        Timeout(**{name: bad})
    message = str(info.value)
    assert f"Timeout({name}=...)" in message
    assert "number of seconds" in message
    assert repr(bad) in message


@pytest.mark.parametrize("bad", [0, -1, -0.5, float("nan"), float("inf")])
@pytest.mark.parametrize("name", ["model", "tool"])
def test_a_limit_that_is_not_positive_and_finite_is_a_value_error(name: str, bad: Any) -> None:
    with pytest.raises(ValueError) as info:
        Timeout(**{name: bad})
    message = str(info.value)
    assert f"Timeout({name}=...)" in message
    assert "above 0" in message
    assert repr(bad) in message


# -- model calls ----------------------------------------------------------------------------


def test_sync_call_in_time_returns_its_answer_in_the_callers_run(
    release: threading.Event,
) -> None:
    inside: list[Any] = []

    @hw.wrap_model
    def observe(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> Any:
        inside.append((ctx.run_id, threading.current_thread().name))
        ctx.state.set("seen", True)
        response = yield request
        return response

    finished: list[Any] = []

    @hw.on_finish
    def done(info: hw.FinishInfo, ctx: hw.RunContext[Any]) -> None:
        finished.append((info.run_id, ctx.state.get("seen")))

    @hw.model(use=[Timeout(model=5), observe, done])
    def llm(prompt: str) -> str:
        return f"echo: {prompt}"

    assert llm("hi") == "echo: hi"
    assert inside[0][1] == "hookwrap-timeout"  # the call ran in the worker ...
    assert finished == [(inside[0][0], True)]  # ... in the caller's run


def test_sync_calls_one_after_another_share_one_worker_each_in_its_own_run(
    release: threading.Event,
) -> None:
    inside: list[tuple[int, str]] = []

    @hw.model(use=[Timeout(model=5)])
    def llm(prompt: str) -> str:
        ctx = hw.current()
        assert ctx is not None
        inside.append((threading.get_ident(), ctx.run_id))
        assert hw.current() is ctx
        return f"echo: {prompt}"

    for _ in range(20):
        assert llm("hi") == "echo: hi"
    assert len({thread for thread, _ in inside}) == 1  # no thread started per call
    assert len({run for _, run in inside}) == 20  # each call in its own one-call run


def test_a_worker_busy_with_a_late_call_serves_no_other(release: threading.Event) -> None:
    threads: list[int] = []

    @hw.model(use=[Timeout(model=QUICK)])
    def llm(prompt: str) -> str:
        threads.append(threading.get_ident())
        if prompt == "slow":
            release.wait(5)
        return prompt

    with pytest.raises(TimeoutError):
        llm("slow")
    assert llm("quick") == "quick"  # not queued behind the late call
    assert threads[0] != threads[1]
    release.set()
    assert llm("again") == "again"  # and the late one is back, or a new one


def test_sync_call_over_the_limit_raises_at_the_limit_and_ends_the_run(
    release: threading.Event,
) -> None:
    seen, record = errors_seen()
    finished: list[str] = []

    @hw.model(use=[Timeout(model=SLOW), record])
    def llm(prompt: str) -> str:
        release.wait(2)
        finished.append("target returned")
        return "late"

    error, elapsed = timed(lambda: llm("hi"))
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert str(error) == f"model call exceeded Timeout(model={SLOW})"
    assert seen == [error]
    assert finished == []  # the function still runs: Python cannot stop it
    release.set()
    for thread in workers():
        thread.join(2)
    assert finished == ["target returned"]  # and its late answer is dropped quietly


def test_sync_call_that_fails_late_is_dropped_quietly(release: threading.Event) -> None:
    @hw.model(use=[Timeout(model=QUICK)])
    def llm(prompt: str) -> str:
        release.wait(2)
        raise RuntimeError("nobody hears this")

    timed(lambda: llm("hi"))
    # `release` lets the call fail; an error escaping the worker would fail the test as an
    # unhandled thread exception (filterwarnings=error)


def test_errors_from_inside_pass_through_as_the_same_object() -> None:
    own = TimeoutError("the target's own timeout")

    def llm(prompt: str) -> str:
        raise own

    async def allm(prompt: str) -> str:
        raise own

    with pytest.raises(TimeoutError) as info:
        hw.model(llm, use=[Timeout(model=5)])("hi")
    assert info.value is own
    with pytest.raises(TimeoutError) as info:
        asyncio.run(hw.model(allm, use=[Timeout(model=5)])("hi"))
    assert info.value is own


def test_async_call_in_time_returns_its_answer_and_starts_no_thread() -> None:
    threads: list[int] = []

    @hw.model(use=[Timeout(model=5)])
    async def llm(prompt: str) -> str:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return f"echo: {prompt}"

    assert asyncio.run(llm("hi")) == "echo: hi"
    assert threads == [threading.get_ident()]


def test_async_call_over_the_limit_is_cancelled_and_raises_at_the_limit() -> None:
    log: list[str] = []
    seen, record = errors_seen()

    @hw.model(use=[Timeout(model=SLOW), record])
    async def llm(prompt: str) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        finally:
            log.append("finally")
        return "never"

    async def main() -> tuple[BaseException, float]:
        result = await timed_async(llm("hi"))
        assert log == ["cancelled", "finally"]  # at once, not when the sleep would end
        return result

    error, elapsed = asyncio.run(main())
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert str(error) == f"model call exceeded Timeout(model={SLOW})"
    assert seen == [error]


def test_without_a_model_limit_model_calls_stay_in_the_callers_thread() -> None:
    calls: list[str] = []

    @hw.model(use=[Timeout(tool=QUICK)])  # model=None: model calls are not limited
    def llm(prompt: str) -> str:
        calls.append(threading.current_thread().name)
        return "ok"

    assert llm("hi") == "ok"
    assert calls == ["MainThread"]  # no worker for a call without a limit


# -- streams --------------------------------------------------------------------------------


def test_sync_stream_in_time_passes_every_chunk_and_closes_its_worker() -> None:
    @hw.model(use=[Timeout(model=5)])
    def llm(prompt: str) -> Iterator[str]:
        yield from ("a", "b", "c")

    assert list(llm("hi")) == ["a", "b", "c"]
    for thread in workers():
        thread.join(2)
    assert workers() == []


def test_sync_stream_slow_to_start_raises_before_any_chunk(release: threading.Event) -> None:
    @hw.model(use=[Timeout(model=QUICK)])
    def llm(prompt: str) -> Iterator[str]:
        release.wait(2)  # a plain function: the request happens before the stream exists
        return iter(["late"])

    error, _ = timed(lambda: llm("hi"))
    assert "model call exceeded" in str(error)


def test_sync_stream_caller_time_between_chunks_does_not_count() -> None:
    @hw.model(use=[Timeout(model=SLOW)])
    def llm(prompt: str) -> Iterator[str]:
        yield from ("a", "b")

    stream = llm("hi")
    first = next(stream)
    time.sleep(SLOW * 1.5)  # the caller is slow, not the model
    assert [first, *stream] == ["a", "b"]


def test_sync_stream_with_a_slow_chunk_raises_at_the_limit(release: threading.Event) -> None:
    log: list[str] = []
    seen, record = errors_seen()

    @hw.model(use=[Timeout(model=SLOW), record])
    def llm(prompt: str) -> Iterator[str]:
        try:
            yield "a"
            release.wait(2)
            log.append("late chunk")
            yield "b"
        finally:
            log.append("closed")

    stream = llm("hi")
    assert next(stream) == "a"
    error, elapsed = timed(lambda: next(stream))
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert (
        str(error)
        == f"model stream exceeded Timeout(model={SLOW}) waiting for a chunk (1 received)"
    )
    assert seen == [error]
    release.set()
    for thread in workers():
        thread.join(2)
    assert log == ["late chunk", "closed"]  # closed in the worker once the pull returned


def test_async_stream_with_a_slow_chunk_is_cancelled_at_the_limit() -> None:
    log: list[str] = []
    seen, record = errors_seen()

    @hw.model(use=[Timeout(model=SLOW), record])
    async def llm(prompt: str) -> AsyncIterator[str]:
        try:
            yield "a"
            await asyncio.sleep(5)
            yield "b"
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        finally:
            log.append("closed")

    async def main() -> tuple[list[str], BaseException, float]:
        got: list[str] = []

        async def read() -> None:
            async for item in llm("hi"):
                got.append(item)

        error, elapsed = await timed_async(read())
        assert log == ["cancelled", "closed"]
        return got, error, elapsed

    got, error, elapsed = asyncio.run(main())
    assert got == ["a"]
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert (
        str(error)
        == f"model stream exceeded Timeout(model={SLOW}) waiting for a chunk (1 received)"
    )
    assert seen == [error]


def test_async_stream_slow_to_start_and_caller_time_between_chunks() -> None:
    async def chunks() -> AsyncIterator[str]:
        yield "a"
        yield "b"

    @hw.model(use=[Timeout(model=QUICK)])
    async def slow_start(prompt: str) -> AsyncIterator[str]:
        await asyncio.sleep(5)
        return chunks()

    @hw.model(use=[Timeout(model=SLOW)])
    async def quick(prompt: str) -> AsyncIterator[str]:
        return chunks()

    async def main() -> list[str]:
        error, _ = await timed_async(slow_start("hi"))
        assert "model call exceeded" in str(error)
        stream = await quick("hi")
        first = await stream.__anext__()
        await asyncio.sleep(SLOW * 1.5)  # the caller is slow, not the model
        return [first, *[item async for item in stream]]

    assert asyncio.run(main()) == ["a", "b"]


# -- tools ----------------------------------------------------------------------------------


def test_tools_in_time_return_their_result_unchanged() -> None:
    result = {"temp": 21}

    @hw.tool(use=[Timeout(tool=5)])
    def weather(city: str) -> dict[str, int]:
        return result

    @hw.tool(use=[Timeout(tool=5)])
    async def aweather(city: str) -> dict[str, int]:
        return result

    assert weather("Paris") is result
    assert asyncio.run(aweather("Paris")) is result


def test_a_slow_sync_tool_raises_naming_the_tool(release: threading.Event) -> None:
    seen, record = errors_seen()

    @hw.tool(use=[Timeout(tool=SLOW), record])
    def weather(city: str) -> str:
        release.wait(2)
        return "late"

    error, elapsed = timed(lambda: weather("Paris"))
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert str(error) == f"tool 'weather' exceeded Timeout(tool={SLOW})"
    assert seen == [error]


def test_a_slow_async_tool_is_cancelled() -> None:
    log: list[str] = []

    @hw.tool(use=[Timeout(tool=QUICK)])
    async def weather(city: str) -> str:
        try:
            await asyncio.sleep(5)
        finally:
            log.append("finally")
        return "late"

    async def main() -> BaseException:
        error, _ = await timed_async(weather("Paris"))
        assert log == ["finally"]
        return error

    assert str(asyncio.run(main())) == f"tool 'weather' exceeded Timeout(tool={QUICK})"


def test_a_model_limit_does_not_limit_tools() -> None:
    @hw.tool(use=[Timeout(model=QUICK)])
    async def weather(city: str) -> str:
        await asyncio.sleep(QUICK * 1.5)
        return "sunny"

    assert asyncio.run(weather("Paris")) == "sunny"


# -- SDK clients ----------------------------------------------------------------------------


def slow_reply(release: threading.Event) -> Callable[[hw.ModelRequest], str]:
    """A scripted reply that holds the fake's answer until `release` is set."""

    def reply(request: hw.ModelRequest) -> str:
        release.wait(2)
        return "late"

    return reply


def test_openai_async_request_is_cancelled_at_the_limit(release: threading.Event) -> None:
    openai = pytest.importorskip("openai")
    provider = FakeProvider(["in time", slow_reply(release)])
    with provider.serve() as url:  # real sockets: the fake's answer is held in its thread
        raw = provider.openai(async_=True, url=url, max_retries=0)
        patient = hw.wrap(raw, use=[Timeout(model=5)])
        hasty = hw.wrap(raw, use=[Timeout(model=SLOW)])

        async def main() -> tuple[Any, BaseException, float]:
            async with raw:
                completion = await patient.chat.completions.create(model="gpt", messages=USER)
                slow = hasty.chat.completions.create(model="gpt", messages=USER)
                error, elapsed = await timed_async(slow)
            return completion, error, elapsed

        completion, error, elapsed = asyncio.run(main())
        release.set()
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert completion.choices[0].message.content == "in time"
    assert SLOW * 0.9 <= elapsed < SLOW + MARGIN
    assert str(error) == f"model call to 'gpt' exceeded Timeout(model={SLOW})"
    assert len(provider.requests) == 2  # no retry behind the caller's back


def test_openai_async_stream_in_time_stays_native() -> None:
    openai = pytest.importorskip("openai")
    provider = FakeProvider(["streamed answer"], chunk_size=4)
    client = hw.wrap(provider.openai(async_=True), use=[Timeout(model=5)])

    async def main() -> tuple[Any, str]:
        stream = await client.chat.completions.create(model="gpt", messages=USER, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        return stream, text

    stream, text = asyncio.run(main())
    assert isinstance(stream, openai.AsyncStream)
    assert text == "streamed answer"


def test_openai_sync_call_over_the_limit(release: threading.Event) -> None:
    openai = pytest.importorskip("openai")
    provider = FakeProvider(["in time", slow_reply(release)])
    raw = provider.openai(max_retries=0)
    completion = hw.wrap(raw, use=[Timeout(model=5)]).chat.completions.create(
        model="gpt", messages=USER
    )
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert completion.choices[0].message.content == "in time"
    hasty = hw.wrap(raw, use=[Timeout(model=QUICK)])
    error, _ = timed(lambda: hasty.chat.completions.create(model="gpt", messages=USER))
    assert str(error) == f"model call to 'gpt' exceeded Timeout(model={QUICK})"


def test_openai_sync_stream_that_opens_late_is_closed(release: threading.Event) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider([slow_reply(release)], chunk_size=2)
    client = hw.wrap(provider.openai(max_retries=0), use=[Timeout(model=QUICK)])
    error, _ = timed(
        lambda: client.chat.completions.create(model="gpt", messages=USER, stream=True)
    )
    assert str(error) == f"model call to 'gpt' exceeded Timeout(model={QUICK})"
    release.set()
    for thread in workers():
        thread.join(2)
    assert provider.closed == 1  # the SSE body was closed before its end


def test_patch_takes_one_timeout_for_sync_and_async_clients() -> None:
    pytest.importorskip("openai")
    threads: list[str] = []

    def reply(request: hw.ModelRequest) -> str:
        threads.append(threading.current_thread().name)  # the transport answers in the caller
        return "answer"

    provider = FakeProvider([reply, reply])
    try:
        # a sync call_next hook without its async twin would be refused here
        hw.patch("openai", use=[Timeout(model=5)])
        sync = provider.openai().chat.completions.create(model="m", messages=USER)
        aclient = provider.openai(async_=True)
        answer = asyncio.run(aclient.chat.completions.create(model="m", messages=USER))
    finally:
        hw.unpatch("openai")
    assert sync.choices[0].message.content == answer.choices[0].message.content == "answer"
    assert threads == ["hookwrap-timeout", "MainThread"]  # a worker only for the sync call


# -- the docs page --------------------------------------------------------------------------


def test_the_docs_page_runs_and_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    page = Path(__file__).parent.parent / "docs" / "middleware" / "timeout.md"
    namespace: dict[str, Any] = {"__name__": "docs"}
    for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        exec(compile(block, str(page), "exec"), namespace)
    for thread in workers():
        thread.join(2)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["model call exceeded Timeout(model=0.05)"] * 2 + ["ok ok"]
