"""An SDK stream closed from another thread (or task) while the reader is inside a pull
ends there, as without hooks: the reader gets nothing more, the HTTP response is closed,
and the run ends with `on_abort("closed by consumer")`. The close was noted and then left
for the end of the stream, so the reader read every chunk and the run finished."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")
pytest.importorskip("anthropic")

USER = [{"role": "user", "content": "hi"}]
TEXT = "one two three four five six seven eight nine ten"


def ends(log: list[str]) -> list[Any]:
    @hw.on_abort
    def aborted(info: hw.AbortInfo) -> None:
        log.append(f"abort: {info.reason}")

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("finish")

    return [aborted, finished]


def open_stream(kind: str, client: Any) -> Any:
    if kind == "anthropic":
        return client.messages.create(model="m", max_tokens=50, messages=USER, stream=True)
    return client.chat.completions.create(model="m", messages=USER, stream=True)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_stream_closed_from_another_thread_during_a_pull_ends_there(kind: str) -> None:
    inside, closed = threading.Event(), threading.Event()
    seen: list[str] = []

    @hw.on_chunk
    def slow(chunk: hw.Chunk) -> None:
        if chunk.kind == "text" and not inside.is_set():
            inside.set()  # the reader is inside its pull now: close it from the main thread
            assert closed.wait(5)

    provider = FakeProvider(TEXT, chunk_size=4)
    client = hw.wrap(getattr(provider, kind)(), use=[slow, *ends(seen)])
    stream = open_stream(kind, client)
    read: list[Any] = []
    reader = threading.Thread(target=lambda: read.extend(stream))
    reader.start()
    assert inside.wait(5)
    stream.close()
    closed.set()
    reader.join(5)
    assert not reader.is_alive()
    assert seen == ["abort: closed by consumer"]
    assert provider.closed == 1
    assert len(read) < len(TEXT) // 4  # it stopped early


def test_an_async_stream_closed_from_another_task_during_a_pull_ends_there() -> None:
    seen: list[str] = []

    async def main() -> list[Any]:
        inside, closed = asyncio.Event(), asyncio.Event()

        @hw.on_chunk
        async def slow(chunk: hw.Chunk) -> None:
            if chunk.kind == "text" and not inside.is_set():
                inside.set()
                await asyncio.wait_for(closed.wait(), 5)

        provider = FakeProvider(TEXT, chunk_size=4)
        client = hw.wrap(provider.openai(True), use=[slow, *ends(seen)])
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        read: list[Any] = []

        async def consume() -> None:
            async for event in stream:
                read.append(event)

        reader = asyncio.create_task(consume())
        await asyncio.wait_for(inside.wait(), 5)
        await stream.close()
        closed.set()
        await asyncio.wait_for(reader, 5)
        assert provider.closed == 1
        return read

    read = asyncio.run(main())
    assert seen == ["abort: closed by consumer"]
    assert len(read) < len(TEXT) // 4
