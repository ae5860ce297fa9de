"""A server that puts its usage on the finish chunk gets it shown once, with a hook's counts.

Some OpenAI-compatible servers send a stream's usage on the chunk with the finish reason,
not in a usage chunk of its own. A usage chunk a hook adds before that chunk went out has
its counts go in it (the highest of each), rather than in a usage chunk after it that would
show the server's counts a second time to a caller that sums them. The SDK runs for real, on a mock
HTTP transport that sends one event at a time.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from native_turns import HTTPX

import hookwrap as hw

openai = pytest.importorskip("openai")

SERVER_USAGE = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


class Pieces(HTTPX.SyncByteStream, HTTPX.AsyncByteStream):  # type: ignore[misc]
    def __init__(self, events: list[Any]) -> None:
        self.pieces = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
        self.pieces.append(b"data: [DONE]\n\n")

    def __iter__(self) -> Any:
        return iter(self.pieces)

    async def __aiter__(self) -> Any:
        for piece in self.pieces:
            yield piece


def client_of(events: list[Any], is_async: bool) -> Any:
    def handle(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return HTTPX.Response(200, headers=headers, stream=Pieces(events))

    transport = HTTPX.MockTransport(handle)
    if is_async:
        http: Any = openai.DefaultAsyncHttpxClient(transport=transport)
        return openai.AsyncOpenAI(api_key="k", base_url="http://x/v1", http_client=http)
    http = openai.DefaultHttpxClient(transport=transport)
    return openai.OpenAI(api_key="k", base_url="http://x/v1", http_client=http)


def read(make: Any, is_async: bool) -> list[Any]:
    if not is_async:
        return list(make())

    async def run() -> list[Any]:
        return [item async for item in await make()]

    return asyncio.run(run())


def counts(items: list[Any]) -> list[tuple[int, int, int]]:
    """The usage of each item that shows one, as a caller summing them reads it."""
    return [
        (i.usage.prompt_tokens, i.usage.completion_tokens, i.usage.total_tokens)
        for i in items
        if i.usage
    ]


@hw.on_chunk
def usage_after_text(chunk: hw.Chunk) -> Any:
    if chunk.kind == "text":
        return [chunk, hw.Chunk(kind="usage", usage=hw.Usage(10, 1, 11))]
    return None


ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


@ASYNC
def test_chat_shows_the_usage_once(is_async: bool) -> None:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    events = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "A"}}]},
        {
            **head,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": SERVER_USAGE,
        },
    ]
    client = hw.wrap(client_of(events, is_async), use=[usage_after_text])

    def make() -> Any:
        return client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )

    items = read(make, is_async)
    assert counts(items) == [(10, 4, 14)]
    assert items[-1].choices[0].finish_reason == "stop"


@ASYNC
def test_legacy_completions_show_the_usage_once(is_async: bool) -> None:
    head = {"id": "c", "object": "text_completion", "created": 1, "model": "m"}
    events = [
        {**head, "choices": [{"index": 0, "text": "A", "finish_reason": None}]},
        {
            **head,
            "choices": [{"index": 0, "text": "", "finish_reason": "stop"}],
            "usage": SERVER_USAGE,
        },
    ]
    client = hw.wrap(client_of(events, is_async), use=[usage_after_text])

    def make() -> Any:
        return client.completions.create(
            model="m", prompt="hi", stream=True, stream_options={"include_usage": True}
        )

    items = read(make, is_async)
    assert counts(items) == [(10, 4, 14)]
    assert items[-1].choices[0].finish_reason == "stop"
