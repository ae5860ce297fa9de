"""A hook's usage counts on a finish chunk that shows the server's usage.

Where a server puts its usage on its finish chunk, that chunk waits for the next event in
a framed stream: the counts a hook added by then go in it. Only the server's own usage
chunk (no choices) after it takes them instead; any other chunk after it (a hook's, another
choice's) does not, so a request that did not ask for usage still shows them in the
finish chunk, which is where the SDK reads the final usage from.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_sdk_held_events import (
    SERVER_USAGE,
    Pieces,
    add_usage,
    chat_chunk,
    data_pieces,
    openai_client,
)

import hookwrap as hw

pytest.importorskip("openai")

ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


@hw.on_chunk
def text_after_finish(chunk: hw.Chunk) -> Any:
    if chunk.kind == "finish":
        return [chunk, hw.Chunk(kind="text", text="!")]
    return None


def read_all(make: Any, is_async: bool) -> list[Any]:
    """Every item of the stream `make` gives."""

    async def run() -> list[Any]:
        return [item async for item in await make()]

    return asyncio.run(run()) if is_async else list(make())


def totals(items: list[Any]) -> list[int | None]:
    return [None if i.usage is None else i.usage.total_tokens for i in items]


@ASYNC
def test_counts_go_in_the_finish_chunk_before_a_hooks_chunk(is_async: bool) -> None:
    events = [chat_chunk("A"), chat_chunk("B"), chat_chunk(None, "stop", usage=SERVER_USAGE)]
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, is_async), use=[add_usage, text_after_finish])
    make = lambda: client.chat.completions.create(  # noqa: E731
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    items = read_all(make, is_async)
    assert [i.choices[0].delta.content for i in items] == ["A", "B", None, "!"]
    assert totals(items) == [None, None, 14, None]


@ASYNC
def test_counts_go_in_the_finish_chunk_before_another_choices_chunk(is_async: bool) -> None:
    def second(content: str | None, finish: str | None = None) -> dict[str, Any]:
        chunk = chat_chunk(content, finish)
        return {**chunk, "choices": [{**chunk["choices"][0], "index": 1}]}

    events = [chat_chunk("A"), chat_chunk("B"), chat_chunk(None, "stop", usage=SERVER_USAGE)]
    events += [second("x"), second(None, "stop")]
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, is_async), use=[add_usage])
    make = lambda: client.chat.completions.create(  # noqa: E731
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True, n=2
    )
    items = read_all(make, is_async)
    assert [i.choices[0].index for i in items] == [0, 0, 0, 1, 1]
    assert totals(items) == [None, None, 14, None, None]


@ASYNC
def test_completions_counts_go_in_the_finish_chunk_before_a_hooks_chunk(is_async: bool) -> None:
    head = {"id": "c", "object": "text_completion", "created": 1, "model": "m"}
    events: list[Any] = [
        {**head, "choices": [{"index": 0, "text": text, "finish_reason": None}]}
        for text in ("A", "B")
    ]
    finish = [{"index": 0, "text": "", "finish_reason": "stop"}]
    events.append({**head, "choices": finish, "usage": SERVER_USAGE})
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, is_async), use=[add_usage, text_after_finish])
    make = lambda: client.completions.create(model="m", prompt="hi", stream=True)  # noqa: E731
    items = read_all(make, is_async)
    assert [i.choices[0].text for i in items] == ["A", "B", "", "!"]
    assert totals(items) == [None, None, 14, None]


@ASYNC
def test_the_servers_usage_chunk_takes_the_counts_instead(is_async: bool) -> None:
    """Where the server's usage chunk follows, it shows the counts: once, in the last."""
    events = [chat_chunk("A"), chat_chunk("B"), chat_chunk(None, "stop", usage=SERVER_USAGE)]
    events.append({**chat_chunk(None), "choices": [], "usage": SERVER_USAGE})
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, is_async), use=[add_usage])
    make = lambda: client.chat.completions.create(  # noqa: E731
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    items = read_all(make, is_async)
    assert [len(i.choices) for i in items] == [1, 1, 1, 0]
    assert totals(items) == [None, None, 7, 14]


@ASYNC
def test_a_request_asking_for_usage_ends_with_the_counts_shown_once(is_async: bool) -> None:
    """A chunk after the finish chunk shows no usage: the SDK keeps the finish chunk's, so
    no usage chunk follows to show the hook's counts alone (it showed 11, not 14, and the
    SDK's final usage was 11)."""
    events = [chat_chunk("A"), chat_chunk("B"), chat_chunk(None, "stop", usage=SERVER_USAGE)]
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, is_async), use=[add_usage, text_after_finish])
    make = lambda: client.chat.completions.create(  # noqa: E731
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    items = read_all(make, is_async)
    shown = [total for total in totals(items) if total is not None]
    assert shown == [14]
