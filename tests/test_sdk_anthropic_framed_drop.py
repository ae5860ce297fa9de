"""A framed Anthropic stream (a hook dropped a chunk) whose connection drops: the events the
framer held for the ones after them (a text block's start and citation waiting for its
first text, the `message_delta` waiting for `message_stop`) go out before the error, as
the API sent them."""

from __future__ import annotations

from typing import Any

import pytest
from test_sdk_held_events import (
    CITATION,
    KWARGS,
    MESSAGE_START,
    PING,
    Pieces,
    anthropic_client,
    event_pieces,
    read_until_error,
)

import hookwrap as hw

pytest.importorskip("anthropic")

ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


@hw.on_chunk
def drop_thinking(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "reasoning" else None


THOUGHT: list[dict[str, Any]] = [
    MESSAGE_START,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "h"},
    },
    {"type": "content_block_stop", "index": 0},
]
TEXT_START = {
    "type": "content_block_start",
    "index": 1,
    "content_block": {"type": "text", "text": ""},
}


def read(events: list[dict[str, Any]], is_async: bool) -> list[Any]:
    body = Pieces(event_pieces(events), drops=True)
    client = hw.wrap(anthropic_client(body, is_async), use=[drop_thinking])
    return read_until_error(lambda: client.messages.create(stream=True, **KWARGS), is_async)


@ASYNC
def test_a_held_text_start_and_citation_go_out_before_the_error(is_async: bool) -> None:
    citation = {"type": "citations_delta", "citation": CITATION}
    events = [
        *THOUGHT,
        TEXT_START,
        PING,
        {"type": "content_block_delta", "index": 1, "delta": citation},
    ]
    items = read(events, is_async)
    assert [i.type for i in items][-2:] == ["content_block_start", "content_block_delta"]
    assert items[-1].delta.type == "citations_delta"
    assert items[-1].index == items[-2].index


@ASYNC
def test_a_held_message_delta_goes_out_before_the_error(is_async: bool) -> None:
    text = {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}}
    delta = {"stop_reason": "end_turn", "stop_sequence": None}
    events = [*THOUGHT, TEXT_START, text, {"type": "content_block_stop", "index": 1}]
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}})
    items = read(events, is_async)
    assert [i.type for i in items][-2:] == ["content_block_stop", "message_delta"]
    assert items[-1].delta.stop_reason == "end_turn"
    assert items[-1].usage.output_tokens == 2


@ASYNC
def test_a_held_text_stop_goes_out_before_the_error(is_async: bool) -> None:
    text = {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}}
    events = [*THOUGHT, TEXT_START, text, {"type": "content_block_stop", "index": 1}]
    items = read(events, is_async)
    assert [i.type for i in items][-3:] == [
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    ]
