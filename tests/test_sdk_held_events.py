"""Events held for the ones after them: which are held, and that none is lost.

A Chat or legacy Completions finish chunk that shows a usage waits for the next event (a
hook's counts may still come for it); an Anthropic text block's start waits past a `ping`
and a citation for its text. Where the connection drops first, what was held still goes
out before the error, as the API sent it. Chunks that are not the last to show a usage (a
server may put its usage on every chunk) and the starts of blocks that are not text go out
as they come. A hook's new `tool_call_start` in place of the API's gets the input the API
streams for that block. The SDKs run for real, on a mock HTTP transport that sends one
event at a time and counts what it sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from native_turns import HTTPX

import hookwrap as hw

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
SERVER_USAGE = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


class Pieces(HTTPX.SyncByteStream, HTTPX.AsyncByteStream):  # type: ignore[misc]
    """A response body sent one piece at a time (`sent` counts them), that ends with a
    dropped connection where `drops`."""

    def __init__(self, pieces: list[bytes], drops: bool) -> None:
        self.pieces = pieces
        self.drops = drops
        self.sent = 0

    def __iter__(self) -> Any:
        for piece in self.pieces:
            self.sent += 1
            yield piece
        if self.drops:
            raise HTTPX.RemoteProtocolError("peer closed connection")

    async def __aiter__(self) -> Any:
        for piece in self:
            yield piece


def transport(body: Pieces) -> Any:
    headers = {"content-type": "text/event-stream"}
    return HTTPX.MockTransport(lambda request: HTTPX.Response(200, headers=headers, stream=body))


def read_until_error(make: Callable[[], Any], is_async: bool) -> list[Any]:
    """What the caller reads of the stream `make` gives, then the error it ends with."""
    items: list[Any] = []

    async def run() -> None:
        async for item in await make():
            items.append(item)

    with pytest.raises(Exception, match="onnection"):
        if is_async:
            asyncio.run(run())
        else:
            items.extend(make())
    return items


# -- OpenAI Chat and legacy Completions ---------------------------------------------------


def openai_client(body: Pieces, is_async: bool) -> Any:
    if is_async:
        http: Any = openai.DefaultAsyncHttpxClient(transport=transport(body))
        return openai.AsyncOpenAI(
            api_key="k", base_url="http://x/v1", http_client=http, max_retries=0
        )
    http = openai.DefaultHttpxClient(transport=transport(body))
    return openai.OpenAI(api_key="k", base_url="http://x/v1", http_client=http, max_retries=0)


def data_pieces(events: list[Any], done: bool) -> list[bytes]:
    pieces = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    return [*pieces, b"data: [DONE]\n\n"] if done else pieces


CHAT_HEAD = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chat_chunk(content: str | None, finish: str | None = None, **more: Any) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {**CHAT_HEAD, "choices": [choice], **more}


def chat(client: Any) -> Callable[[], Any]:
    return lambda: client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )


@hw.on_chunk
def drop_b(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.text == "B" else None


@ASYNC
def test_chat_finish_chunk_goes_out_before_a_dropped_connection(is_async: bool) -> None:
    events = [chat_chunk("A"), chat_chunk("B"), chat_chunk(None, "stop", usage=SERVER_USAGE)]
    body = Pieces(data_pieces(events, done=False), drops=True)
    client = hw.wrap(openai_client(body, is_async), use=[drop_b])
    items = read_until_error(chat(client), is_async)
    assert [(i.choices[0].delta.content, i.choices[0].finish_reason) for i in items] == [
        ("A", None),
        (None, "stop"),
    ]
    assert items[-1].usage.total_tokens == 7


@ASYNC
def test_completions_finish_chunk_goes_out_before_a_dropped_connection(is_async: bool) -> None:
    head = {"id": "c", "object": "text_completion", "created": 1, "model": "m"}
    events = [
        {**head, "choices": [{"index": 0, "text": text, "finish_reason": None}]}
        for text in ("A", "B")
    ]
    finish = [{"index": 0, "text": "", "finish_reason": "stop"}]
    events.append({**head, "choices": finish, "usage": SERVER_USAGE})
    body = Pieces(data_pieces(events, done=False), drops=True)
    client = hw.wrap(openai_client(body, is_async), use=[drop_b])
    items = read_until_error(
        lambda: client.completions.create(model="m", prompt="hi", stream=True), is_async
    )
    assert [(i.choices[0].text, i.choices[0].finish_reason) for i in items] == [
        ("A", None),
        ("", "stop"),
    ]
    assert items[-1].usage.total_tokens == 7


def usage_of(prompt: int, completion: int) -> dict[str, int]:
    total = prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


@hw.on_chunk
def add_usage(chunk: hw.Chunk) -> Any:
    if chunk.text == "A":
        return [chunk, hw.Chunk(kind="usage", usage=hw.Usage(10, 1, 11))]
    return None


def test_usage_on_every_chunk_goes_out_as_it_comes_with_added_counts_once() -> None:
    """A server sending usage on every chunk (vLLM's `continuous_usage_stats`): each chunk
    goes out as soon as it comes, though a hook dropped one (the stream is framed); the
    counts a hook added go in the last chunk only, which the SDK keeps."""
    events = [chat_chunk(text, usage=usage_of(3, n)) for n, text in enumerate("ABCD", start=1)]
    events.append(chat_chunk(None, "stop", usage=usage_of(3, 4)))
    body = Pieces(data_pieces(events, done=True), drops=False)
    client = hw.wrap(openai_client(body, False), use=[add_usage, drop_b])
    seen = [(i.choices[0].delta.content, i.usage.total_tokens, body.sent) for i in chat(client)()]
    # (content, total tokens shown, pieces the server had sent when the caller got it)
    assert seen == [("A", 4, 1), ("C", 6, 3), ("D", 7, 4), (None, 14, 6)]


# -- Anthropic Messages --------------------------------------------------------------------


def anthropic_client(body: Pieces, is_async: bool) -> Any:
    if is_async:
        http: Any = anthropic.DefaultAsyncHttpxClient(transport=transport(body))
        return anthropic.AsyncAnthropic(
            api_key="k", base_url="http://x", http_client=http, max_retries=0
        )
    http = anthropic.DefaultHttpxClient(transport=transport(body))
    return anthropic.Anthropic(api_key="k", base_url="http://x", http_client=http, max_retries=0)


def event_pieces(events: list[dict[str, Any]]) -> list[bytes]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


MESSAGE_START: dict[str, Any] = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
PING: dict[str, Any] = {"type": "ping"}
CITATION: dict[str, Any] = {
    "type": "char_location",
    "cited_text": "x",
    "document_index": 0,
    "document_title": "Doc",
    "start_char_index": 0,
    "end_char_index": 1,
}
KWARGS: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Hi"}],
}


def block_start(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": 0, "content_block": block}


def block_delta(**delta: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def ending(stop_reason: str) -> list[dict[str, Any]]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]


@hw.on_chunk
def no_change(chunk: hw.Chunk) -> Any:
    return None


@ASYNC
def test_a_held_text_start_goes_out_before_a_dropped_connection(is_async: bool) -> None:
    events = [
        MESSAGE_START,
        block_start({"type": "text", "text": ""}),
        PING,
        block_delta(type="citations_delta", citation=CITATION),
    ]
    body = Pieces(event_pieces(events), drops=True)
    client = hw.wrap(anthropic_client(body, is_async), use=[no_change])
    items = read_until_error(lambda: client.messages.create(stream=True, **KWARGS), is_async)
    assert [i.type for i in items] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
    ]


def test_a_thinking_start_waits_for_no_ping() -> None:
    """Only a text block's start waits past a `ping` (the framer leaves out only an empty
    text block): another goes out with the event after it, as before."""
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    events = [MESSAGE_START, block_start(thinking), PING, PING]
    events += [block_delta(type="thinking_delta", thinking="hm"), *ending("end_turn")]
    body = Pieces(event_pieces(events), drops=False)
    client = hw.wrap(anthropic_client(body, False), use=[no_change])
    seen: list[tuple[str, int]] = []
    with client.messages.with_streaming_response.create(stream=True, **KWARGS) as response:
        for line in response.iter_lines():
            if line.startswith("event: "):
                seen.append((line[len("event: ") :], body.sent))
    assert seen[:4] == [
        ("message_start", 1),
        ("content_block_start", 3),
        ("ping", 3),
        ("ping", 4),
    ]


@hw.on_chunk
def rename_call(chunk: hw.Chunk) -> Any:
    if chunk.kind != "tool_call_start":
        return None
    return hw.Chunk(
        kind="tool_call_start", tool_call_id=chunk.tool_call_id, tool_name="G", value=chunk.value
    )


@ASYNC
def test_a_new_call_start_in_place_of_the_apis_gets_its_input(is_async: bool) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "g", "input": {}}
    events = [MESSAGE_START, block_start(call)]
    events += [block_delta(type="input_json_delta", partial_json='{"b": 2}'), *ending("tool_use")]
    body = Pieces(event_pieces(events), drops=False)
    seen: list[Any] = []

    @hw.after_model
    def look(call: Any, response: Any) -> None:
        seen.extend((c.name, c.arguments) for c in response.message.tool_calls or ())

    client = hw.wrap(anthropic_client(body, is_async), use=[rename_call, look])
    if is_async:

        async def run() -> Any:
            async with client.messages.stream(**KWARGS) as stream:
                return await stream.get_final_message()

        message = asyncio.run(run())
    else:
        with client.messages.stream(**KWARGS) as stream:
            message = stream.get_final_message()
    assert [(b.type, b.name, b.input) for b in message.content] == [("tool_use", "G", {"b": 2})]
    assert seen == [("G", {"b": 2})]
