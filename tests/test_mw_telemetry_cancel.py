"""Telemetry and cancellation: a span's `hookwrap.abort.reason` is the reason `on_abort`
reports. Cancelling the task that reads a stream closes the stream early ("closed by
consumer"); cancelling an awaited call that is no stream is "cancelled"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Telemetry

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

CLOSED = "closed by consumer"
REASON = "hookwrap.abort.reason"


class Seen:
    """Spans in memory, and the reasons `on_abort` was given."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reasons: list[str | None] = []

        @hw.on_abort
        def aborted(info: hw.FinishInfo) -> None:
            self.reasons.append(info.reason)

        self.hooks: list[Any] = [Telemetry(tracer_provider=self.provider), aborted]

    def span_reasons(self) -> dict[str, Any]:
        spans: list[ReadableSpan] = list(self.exporter.get_finished_spans())
        return {span.name: dict(span.attributes or {}).get(REASON) for span in spans}


@pytest.fixture
def seen() -> Iterator[Seen]:
    made = Seen()
    yield made
    made.provider.shutdown()


async def cancel_once_started(
    read: Callable[[asyncio.Event], Coroutine[Any, Any, None]],
) -> None:
    """Run `read` in a task, and cancel the task once `read` sets the event."""
    started = asyncio.Event()
    task = asyncio.create_task(read(started))
    waiting = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    assert not task.done(), task  # it failed before it started: its error shows here
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def two_words_then_wait(messages: list[dict[str, str]]) -> AsyncIterator[str]:
    """A streaming model that sends a little, then waits until its reader goes."""
    yield "one "
    yield "two "
    await asyncio.Event().wait()
    yield "never"


def test_cancelling_the_reader_of_a_stream_is_a_close_in_the_span_too(seen: Seen) -> None:
    model = hw.model(two_words_then_wait, use=seen.hooks)

    async def read(started: asyncio.Event) -> None:
        async for _ in model([{"role": "user", "content": "hi"}]):
            started.set()

    asyncio.run(cancel_once_started(read))
    assert seen.reasons == [CLOSED]
    assert seen.span_reasons() == {"chat": CLOSED}


def test_cancelling_an_awaited_call_stays_cancelled(seen: Seen) -> None:
    started = asyncio.Event()

    async def slow(messages: list[dict[str, str]]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    model = hw.model(slow, use=seen.hooks)

    async def main() -> None:
        task = asyncio.create_task(model([{"role": "user", "content": "hi"}]))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert seen.reasons == ["cancelled"]
    assert seen.span_reasons() == {"chat": "cancelled"}


def test_cancelling_the_reader_of_an_agent_stream_ends_both_spans_as_on_abort_says(
    seen: Seen,
) -> None:
    agent = hw.Agent(two_words_then_wait, use=seen.hooks)

    async def read(started: asyncio.Event) -> None:
        async for event in agent.astream("hi"):
            if event.kind == "chunk":
                started.set()

    asyncio.run(cancel_once_started(read))
    assert seen.reasons == [CLOSED]
    assert seen.span_reasons() == {"chat": CLOSED, "invoke_agent": CLOSED}


def test_a_stream_cancelled_inside_a_run_ends_the_run_span_as_on_abort_says(
    seen: Seen,
) -> None:
    model = hw.model(two_words_then_wait, use=seen.hooks)

    async def read(started: asyncio.Event) -> None:
        async with hw.run():
            async for _ in model([{"role": "user", "content": "hi"}]):
                started.set()

    asyncio.run(cancel_once_started(read))
    assert seen.reasons == ["cancelled"]  # the run was cancelled, not a stream of its own
    assert seen.span_reasons() == {"chat": CLOSED, "hookwrap.run": "cancelled"}
