"""`Timeout` around `Retry` (SPEC §8): once the Timeout has answered the caller, the call it
gave up on starts no further attempt, in sync calls (whose attempt under way runs on in
the worker) and async ones (cancelled); `Retry` around `Timeout` still retries each late
attempt."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Retry, Timeout
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]
QUICK = 0.05  # the limit the first attempt misses
WAIT = 5.0  # the most a test waits for the worker's call to end (it ends long before)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event the first attempt waits on, past its limit; set at the end at the latest."""
    event = threading.Event()
    yield event
    event.set()


class Attempts:
    """Two wrap hooks: `ended` (outside `Retry`) notes when Retry's loop is over, as the
    caller of the timed-out call would have seen it; `attempt` (inside) counts the attempts
    and holds the first one until `release` is set."""

    def __init__(self, release: threading.Event | None = None) -> None:
        self.count = 0
        self.done = threading.Event()
        self.release = release

        @hw.wrap_model
        def ended(request: hw.ModelRequest, call_next: Any) -> Any:
            try:
                return call_next(request)
            finally:
                self.done.set()

        @hw.wrap_model
        def attempt(request: hw.ModelRequest, call_next: Any) -> Any:
            self.count += 1
            if self.count == 1 and self.release is not None:
                self.release.wait(WAIT)
            return call_next(request)

        self.ended, self.attempt = ended, attempt

    def settled(self) -> int:
        """The attempts made, once Retry's loop in the worker has ended."""
        assert self.done.wait(WAIT), "Retry is still waiting for another attempt"
        return self.count


# -- sync: no attempt after the caller has gone ----------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_sync_attempt_failing_after_the_timeout_is_not_retried(
    release: threading.Event, stream: bool
) -> None:
    seen = Attempts()
    retry = Retry(max_retries=3, initial_delay=0)
    use = [Timeout(model=QUICK), seen.ended, retry, seen.attempt]

    def llm(prompt: str) -> str:
        release.wait(WAIT)
        raise ConnectionError("connection reset")

    def streamed(prompt: str) -> Iterator[str]:
        release.wait(WAIT)
        raise ConnectionError("connection reset")  # before the first chunk: retryable
        yield "never"

    ask = hw.model(streamed if stream else llm, use=use)
    with pytest.raises(TimeoutError):
        list(ask("hi")) if stream else ask("hi")
    release.set()  # the attempt under way fails now, its caller gone
    assert seen.settled() == 1


def test_sync_backoff_ends_when_the_timeout_gives_up() -> None:
    seen = Attempts()
    retry = Retry(max_retries=3, initial_delay=60, jitter=False)

    def llm(prompt: str) -> str:
        raise ConnectionError("connection reset")

    ask = hw.model(llm, use=[Timeout(model=QUICK), seen.ended, retry, seen.attempt])
    with pytest.raises(TimeoutError):
        ask("hi")
    assert seen.settled() == 1  # woken from its 60 s wait, not retried


def test_sync_sdk_call_makes_no_request_after_the_timeout(release: threading.Event) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["too late"])
    provider.fail(503, times=5)
    seen = Attempts(release)
    retry = Retry(max_retries=3, initial_delay=0)
    client = hw.wrap(
        provider.openai(max_retries=0), use=[Timeout(model=QUICK), seen.ended, retry, seen.attempt]
    )
    with pytest.raises(TimeoutError):
        client.chat.completions.create(model="gpt", messages=USER)
    release.set()
    assert seen.settled() == 1
    assert [r.status for r in provider.requests] == [503]  # no paid request behind it


def test_sync_tool_is_not_retried_after_the_timeout(release: threading.Event) -> None:
    calls: list[str] = []
    done = threading.Event()

    @hw.wrap_tool
    def ended(call: hw.ToolCall, call_next: Any) -> Any:
        try:
            return call_next(call)
        finally:
            done.set()

    def weather(city: str) -> str:
        """The weather."""
        calls.append(city)
        if len(calls) == 1:
            release.wait(WAIT)
        raise ConnectionError("weather service down")

    retry = Retry(max_retries=3, initial_delay=0, tools=True)
    tool = hw.tool(weather, use=[Timeout(tool=QUICK), ended, retry])
    with pytest.raises(TimeoutError):
        tool("Paris")
    release.set()
    assert done.wait(WAIT)
    assert calls == ["Paris"]


# -- async: the cancellation ends Retry's loop ------------------------------------------------


@pytest.mark.parametrize("where", ["attempt", "backoff", "stream"])
def test_async_retry_is_cancelled_with_the_call(where: str) -> None:
    attempts: list[str] = []
    done = asyncio.Event()

    @hw.wrap_model
    async def ended(request: hw.ModelRequest, call_next: Any) -> Any:
        try:
            return await call_next(request)
        finally:
            done.set()

    retry = Retry(max_retries=3, initial_delay=60, jitter=False)

    async def llm(prompt: str) -> str:
        attempts.append(prompt)
        if where == "attempt":
            await asyncio.sleep(60)
        raise ConnectionError("connection reset")

    async def streamed(prompt: str) -> AsyncIterator[str]:
        attempts.append(prompt)
        raise ConnectionError("connection reset")
        yield "never"

    use = [Timeout(model=QUICK), ended, retry]
    ask: Any = hw.model(streamed, use=use) if where == "stream" else hw.model(llm, use=use)

    async def main() -> None:
        with pytest.raises(TimeoutError):
            if where == "stream":
                [chunk async for chunk in ask("hi")]
            else:
                await ask("hi")
        assert done.is_set()  # Retry's loop ended before the caller got the error

    asyncio.run(main())
    assert attempts == ["hi"]


# -- Retry around Timeout: each attempt has its own limit -------------------------------------


@pytest.mark.parametrize("outer", [False, True], ids=["alone", "inside-another-timeout"])
def test_sync_late_attempt_is_retried_when_retry_is_outside(
    release: threading.Event, outer: bool
) -> None:
    seen = Attempts(release)
    use = [Retry(max_retries=1, initial_delay=0), Timeout(model=QUICK), seen.attempt]
    if outer:  # a limit for all attempts, which the first attempt's own does not end
        use = [Timeout(model=WAIT), *use]

    @hw.model(use=use)
    def llm(prompt: str) -> str:
        return "in time"

    assert llm("hi") == "in time"
    assert seen.count == 2


def test_async_late_attempt_is_retried_when_retry_is_outside() -> None:
    calls: list[str] = []

    @hw.model(use=[Retry(max_retries=1, initial_delay=0), Timeout(model=QUICK)])
    async def llm(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            await asyncio.sleep(60)
        return "in time"

    assert asyncio.run(llm("hi")) == "in time"
    assert calls == ["hi", "hi"]


# -- Fallback: no alternative asked for a call its Timeout gave up on ------------------------------


@pytest.mark.parametrize("alternative", ["function", "model name"])
def test_sync_fallback_asks_no_alternative_after_the_timeout(
    release: threading.Event, alternative: str
) -> None:
    """A `Fallback` inside a sync `Timeout` whose first model fails after the limit asks
    none of its alternatives: each would be another (paid) model call nobody waits for."""
    from hookwrap.middleware import Fallback

    asked: list[str] = []
    seen = Attempts()

    def backup(prompt: str) -> str:
        asked.append(prompt)
        return "backup"

    def llm(prompt: str, model: str = "main") -> str:
        if model == "main":
            release.wait(WAIT)
            raise ConnectionError("connection reset")
        asked.append(model)
        return "other model"

    models: list[Any] = [backup] if alternative == "function" else ["other"]
    wrapped = hw.model(llm, use=[Timeout(model=QUICK), seen.ended, Fallback(models=models)])
    with pytest.raises(TimeoutError):
        wrapped("hi")
    release.set()
    seen.settled()
    assert asked == []


def test_sync_fallback_inside_the_limit_still_answers() -> None:
    """The guard: an alternative answers a call whose first model failed in time."""
    from hookwrap.middleware import Fallback

    def llm(prompt: str) -> str:
        raise ConnectionError("connection reset")

    def backup(prompt: str) -> str:
        return "backup"

    wrapped = hw.model(llm, use=[Timeout(model=WAIT), Fallback(models=[backup])])
    assert wrapped("hi") == "backup"


# -- nested Timeouts: given up with the outer one ------------------------------------------------


def test_a_retry_inside_nested_timeouts_stops_when_the_outer_one_gives_up(
    release: threading.Event,
) -> None:
    """The inner Timeout's limit is far off, but its caller (the outer Timeout's worker) has
    gone with the outer one: no attempt follows, and a backoff wait ends at once."""
    seen = Attempts()
    retry = Retry(max_retries=3, initial_delay=60, jitter=False)

    def llm(prompt: str) -> str:
        release.wait(WAIT)
        raise ConnectionError("connection reset")

    use = [Timeout(model=QUICK), Timeout(model=60), seen.ended, retry, seen.attempt]
    with pytest.raises(TimeoutError, match=r"Timeout\(model=0.05\)"):
        hw.model(llm, use=use)("hi")
    release.set()
    assert seen.settled() == 1


def test_a_timeout_inside_one_that_gave_up_already_is_given_up_from_the_start() -> None:
    """A Timeout whose call starts after the one around it gave up (a late attempt's own
    Timeout) is given up at once: its Retry makes no attempt after the first."""
    from hookwrap.middleware._timeout import _GivenUp

    outer = _GivenUp(None)
    outer.set()
    inner = _GivenUp(outer)
    assert inner.is_set()
    later = _GivenUp(_GivenUp(None))
    assert not later.is_set()


def test_inner_timeouts_that_returned_in_time_are_not_kept_by_the_outer_one() -> None:
    """A Timeout's call that returned in time lets go of the one around it: a long outer
    call making many inner ones keeps none of them."""
    from hookwrap.middleware._timeout import given_up

    inner = hw.model(lambda prompt: prompt, use=[Timeout(model=WAIT)])
    kept: list[int] = []

    def outer_model(prompt: str) -> str:
        for _ in range(50):
            inner(prompt)
        outer = given_up()
        assert outer is not None
        kept.append(len(outer.inner))  # type: ignore[attr-defined]
        return prompt

    assert hw.model(outer_model, use=[Timeout(model=WAIT)])("hi") == "hi"
    assert kept == [0]


def test_an_inner_timeouts_stream_is_given_up_with_the_outer_one(
    release: threading.Event,
) -> None:
    """An inner Timeout's stream came back in time, but its chunks are read later, under
    the inner Timeout still: the outer one giving up reaches what they do."""
    from hookwrap.middleware._timeout import given_up

    seen: list[bool] = []
    done = threading.Event()

    @hw.model(use=[Timeout(model=WAIT)])
    def inner(prompt: str) -> Iterator[str]:
        yield "a"
        release.wait(WAIT)  # the outer Timeout gives up meanwhile
        gone = given_up()
        seen.append(gone is not None and gone.is_set())
        done.set()
        yield "b"

    def outer_model(prompt: str) -> str:
        return "".join(inner(prompt))

    with pytest.raises(TimeoutError):
        hw.model(outer_model, use=[Timeout(model=QUICK)])("hi")
    release.set()
    assert done.wait(WAIT)
    assert seen == [True]
