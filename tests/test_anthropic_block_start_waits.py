"""An Anthropic text block's start waits for its first text, past a `ping` and a citation.

The API sends a `ping` right after the first `content_block_start`, and a citation may come
before the text it is for. A hook that drops the block's text, turns it into thinking or
adds thinking before it must still leave no empty text block in the message
`messages.stream()` builds: the start waits on with those events, so that the framer the
hook's change brings in still holds it. And a hook that drops a server tool's start drops
the input the API streams for it: framed alone, it would be a `tool_use` with no name.
The SDK runs for real, on a mock HTTP transport that sends one event at a time.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_sdk_held_events import (
    CITATION,
    KWARGS,
    MESSAGE_START,
    PING,
    Pieces,
    event_pieces,
    transport,
)

import hookwrap as hw

anthropic = pytest.importorskip("anthropic")


def stream_of(*blocks: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A whole stream of `blocks`, each its start and what comes after it (deltas, pings)."""
    events: list[dict[str, Any]] = [MESSAGE_START]
    for index, (block, after) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for event in after:
            events.append(event if event is PING else {**event, "index": index})
        events.append({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": "end_turn", "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}})
    events.append({"type": "message_stop"})
    return events


def delta(**fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "delta": fields}


def text(value: str) -> dict[str, Any]:
    return delta(type="text_delta", text=value)


TEXT_BLOCK: dict[str, Any] = {"type": "text", "text": ""}


def final_blocks(events: list[dict[str, Any]], hooks: list[Any], is_async: bool) -> list[Any]:
    """The blocks of the message `messages.stream()` builds from the stream the caller gets."""

    http_transport = transport(Pieces(event_pieces(events), drops=False))
    if is_async:

        async def run() -> Any:
            http = anthropic.DefaultAsyncHttpxClient(transport=http_transport)
            client = anthropic.AsyncAnthropic(api_key="k", base_url="http://x", http_client=http)
            async with hw.wrap(client, use=hooks).messages.stream(**KWARGS) as stream:
                return await stream.get_final_message()

        message = asyncio.run(run())
    else:
        http = anthropic.DefaultHttpxClient(transport=http_transport)
        client = anthropic.Anthropic(api_key="k", base_url="http://x", http_client=http)
        with hw.wrap(client, use=hooks).messages.stream(**KWARGS) as stream:
            message = stream.get_final_message()
    return [b.model_dump(exclude_none=True) for b in message.content]


@hw.on_chunk
def drop_text(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "text" else None


@hw.on_chunk
def to_thinking(chunk: hw.Chunk) -> Any:
    return chunk.replace(kind="reasoning") if chunk.kind == "text" else None


@hw.on_chunk
def think_first(chunk: hw.Chunk) -> Any:
    return [hw.Chunk(kind="reasoning", text="hmm"), chunk] if chunk.kind == "text" else None


@hw.on_chunk
def drop_secret(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "text" and chunk.text == "Secret" else None


@hw.on_chunk
def drop_customs(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "custom" else None


THINKING = {"type": "thinking", "thinking": "Hello", "signature": ""}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("hook", "expected"),
    [(drop_text, []), (to_thinking, [THINKING])],
    ids=["dropped", "to-thinking"],
)
def test_a_ping_before_the_text_leaves_no_empty_text_block(
    hook: Any, expected: list[Any], is_async: bool
) -> None:
    events = stream_of((TEXT_BLOCK, [PING, text("Hello")]))
    assert final_blocks(events, [hook], is_async) == expected


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_thinking_added_before_the_text_after_a_ping_comes_first(is_async: bool) -> None:
    events = stream_of((TEXT_BLOCK, [PING, text("Answer")]))
    assert final_blocks(events, [think_first], is_async) == [
        {"type": "thinking", "thinking": "hmm", "signature": ""},
        {"type": "text", "text": "Answer"},
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_citation_before_a_dropped_text_goes_with_its_block(is_async: bool) -> None:
    events = stream_of(
        (TEXT_BLOCK, [delta(type="citations_delta", citation=CITATION), text("Secret")]),
        (TEXT_BLOCK, [text("Kept")]),
    )
    assert final_blocks(events, [drop_secret], is_async) == [{"type": "text", "text": "Kept"}]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_unchanged_stream_keeps_its_ping_and_citation_in_place(is_async: bool) -> None:
    """The start that waited goes out with the events that waited with it, as they came."""
    events = stream_of(
        (TEXT_BLOCK, [PING, delta(type="citations_delta", citation=CITATION), text("Hi")])
    )
    assert final_blocks(events, [], is_async) == [
        {"type": "text", "text": "Hi", "citations": [CITATION]}
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_dropping_a_server_tools_start_drops_its_input(is_async: bool) -> None:
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    events = stream_of(
        (server, [delta(type="input_json_delta", partial_json='{"query": "x"}')]),
        (TEXT_BLOCK, [text("Answer")]),
    )
    assert final_blocks(events, [drop_customs], is_async) == [{"type": "text", "text": "Answer"}]


@hw.on_chunk
def drop_call_starts(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "tool_call_start" else None


def test_dropping_a_client_calls_start_drops_its_arguments() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
    events = stream_of(
        (TEXT_BLOCK, [text("Adding")]),
        (call, [delta(type="input_json_delta", partial_json='{"a": 1}')]),
    )
    assert final_blocks(events, [drop_call_starts], False) == [{"type": "text", "text": "Adding"}]
