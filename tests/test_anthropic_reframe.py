"""A framed Anthropic stream whose text a hook turned into thinking: the text block opens
with the first text that goes in it, so none is left empty (the API never sends one, and
refuses it when the answer is sent back)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.adapters._anthropic_wire import MessagesWire
from hookwrap.adapters._wire import Event, Made
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")
from anthropic.lib.streaming._messages import accumulate_event  # noqa: E402
from anthropic.types import RawMessageStreamEvent  # noqa: E402

# anthropic >= 1.5 keeps partial tool-input JSON in the caller's `json_bufs`
_JSON_BUFS = "json_bufs" in inspect.signature(accumulate_event).parameters
W = MessagesWire()
ASK: dict[str, Any] = {
    "model": "c",
    "max_tokens": 9,
    "messages": [{"role": "user", "content": "Hi"}],
}


def thinking_for(texts: set[str] | None) -> Any:
    """An on_chunk hook turning text chunks (those of `texts`, or all) into reasoning; it
    drops the stream's usage chunk too, so the stream is framed from its start on."""

    @hw.on_chunk
    def think(chunk: hw.Chunk) -> Any:
        if chunk.kind == "usage":
            return hw.DROP
        if chunk.kind == "text" and (texts is None or chunk.text in texts):
            return chunk.replace(kind="reasoning")
        return None

    return think


def blocks(content: Any) -> list[tuple[str, str]]:
    return [(b.type, b.text if b.type == "text" else b.thinking) for b in content]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (None, [("thinking", "abcdef")]),
        ({"ab"}, [("thinking", "ab"), ("text", "cdef")]),
        ({"cd"}, [("text", "ab"), ("thinking", "cd"), ("text", "ef")]),
    ],
)
def test_text_turned_into_thinking_leaves_no_empty_text_block(
    texts: set[str] | None, expected: list[tuple[str, str]]
) -> None:
    provider = FakeProvider(["abcdef", "abcdef"], chunk_size=2)
    client = hw.wrap(provider.anthropic(), use=[thinking_for(texts)])
    with client.messages.stream(**ASK) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    assert blocks(final.content) == expected
    assert all(b.signature == "" for b in final.content if b.type == "thinking")

    events = list(client.messages.create(**ASK, stream=True))
    starts = [e.index for e in events if e.type == "content_block_start"]
    stops = [e.index for e in events if e.type == "content_block_stop"]
    assert starts == stops == list(range(len(expected)))


def test_text_turned_into_thinking_leaves_no_empty_text_block_async() -> None:
    provider = FakeProvider(["abcdef"], chunk_size=2)
    client = hw.wrap(provider.anthropic(async_=True), use=[thinking_for(None)])

    async def main() -> Any:
        async with client.messages.stream(**ASK) as stream:
            return await stream.get_final_message()

    assert blocks(asyncio.run(main()).content) == [("thinking", "abcdef")]


def accumulated(events: list[Event]) -> list[tuple[str, str]]:
    snapshot: Any = None
    for event in events:
        parsed: Any = anthropic._models.construct_type(  # pyright: ignore[reportPrivateUsage]
            type_=RawMessageStreamEvent, value=event.data
        )
        more: Any = {"json_bufs": {}} if _JSON_BUFS else {}
        snapshot = accumulate_event(event=parsed, current_snapshot=snapshot, **more)
    return blocks(snapshot.content)


START = Event("message_start", {
    "type": "message_start",
    "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "c", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 0},
    },
})  # fmt: skip
TEXT_START = Event(
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)
TEXT_STOP = Event("content_block_stop", {"type": "content_block_stop", "index": 0})
END = [
    Event("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    }),
    Event("message_stop", {"type": "message_stop"}),
]  # fmt: skip


def thinking(text: str) -> Made:
    delta = {"type": "thinking_delta", "thinking": text}
    return Made("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})


def test_a_text_block_a_hook_left_empty_is_left_out() -> None:
    framer = W.framer(ASK)
    events = framer.events([START, TEXT_START, thinking("ab"), thinking("cd"), TEXT_STOP, *END])
    assert accumulated(events) == [("thinking", "abcd")]
    framer = W.framer(ASK)  # all its text dropped: no block at all
    assert accumulated(framer.events([START, TEXT_START, TEXT_STOP, *END])) == []


def test_a_text_block_whose_start_went_out_before_the_framer_stays_open() -> None:
    framer = W.framer(ASK)
    framer.replay([START, TEXT_START])  # out already: the framer takes over after it
    delta = {"type": "text_delta", "text": "ab"}
    made = Made("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    events = [START, TEXT_START, *framer.events([made, TEXT_STOP]), *framer.end()]
    assert accumulated(events) == [("text", "ab")]
    assert [e.data["index"] for e in events if e.event == "content_block_delta"] == [0]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (None, [("thinking", "abcdef")]),
        ({"ab"}, [("thinking", "ab"), ("text", "cdef")]),
        ({"cd"}, [("text", "ab"), ("thinking", "cd"), ("text", "ef")]),
    ],
)
def test_the_apis_text_block_start_waits_for_what_goes_in_it(
    texts: set[str] | None, expected: list[tuple[str, str]]
) -> None:
    @hw.on_chunk
    def think(chunk: hw.Chunk) -> Any:  # the stream is as the API framed it till then
        if chunk.kind == "text" and (texts is None or chunk.text in texts):
            return chunk.replace(kind="reasoning")
        return None

    provider = FakeProvider(["abcdef", "abcdef"], chunk_size=2)
    client = hw.wrap(provider.anthropic(), use=[think])
    with client.messages.stream(**ASK) as stream:
        assert blocks(stream.get_final_message().content) == expected
    events = list(client.messages.create(**ASK, stream=True))
    starts = [e.index for e in events if e.type == "content_block_start"]
    assert starts == list(range(len(expected)))


@pytest.mark.parametrize("is_async", [False, True])
def test_an_empty_text_a_hook_adds_opens_no_block(is_async: bool) -> None:
    """A hold-back hook releasing the text it held at the finish of an answer that has
    none (a tool call only) adds an empty text chunk: it opens no text block."""

    @hw.on_chunk
    def hold_back(chunk: hw.Chunk, ctx: hw.RunContext[Any]) -> Any:
        if chunk.kind == "text" and chunk.finish_reason is None:
            ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
            return hw.DROP
        if chunk.finish_reason is not None:
            return [hw.Chunk("text", ctx.call_state.pop("held", "")), chunk]
        return None

    call = hw.ToolCall(id="t1", name="f", arguments={"a": 1})
    provider = FakeProvider([hw.Message("assistant", "", tool_calls=(call,))])
    if is_async:
        client = hw.wrap(provider.anthropic(async_=True), use=[hold_back])

        async def final() -> Any:
            async with client.messages.stream(**ASK) as stream:
                return await stream.get_final_message()

        message = asyncio.run(final())
    else:
        with hw.wrap(provider.anthropic(), use=[hold_back]).messages.stream(**ASK) as stream:
            message = stream.get_final_message()
    assert [block.type for block in message.content] == ["tool_use"]


def test_a_citation_before_the_text_of_its_block_opens_the_block() -> None:
    """A citation can come before the text it supports: it is what goes in the block first,
    so the block opens with it (only an empty text delta opens none)."""
    citation = {
        "type": "char_location", "cited_text": "grass is green", "document_index": 0,
        "document_title": "facts", "start_char_index": 0, "end_char_index": 14,
    }  # fmt: skip
    cited = Event("content_block_delta", {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": "citations_delta", "citation": citation},
    })  # fmt: skip
    text = Event("content_block_delta", {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "the grass is green"},
    })  # fmt: skip
    framer = W.framer(ASK)
    events = framer.events([START, thinking("hm"), TEXT_START, cited, text, TEXT_STOP, *END])
    assert accumulated(events) == [("thinking", "hm"), ("text", "the grass is green")]
    kinds = [e.data["delta"]["type"] for e in events if e.event == "content_block_delta"]
    assert kinds == ["thinking_delta", "citations_delta", "text_delta"]


@pytest.mark.parametrize("after", ["thinking", "nothing"])
def test_a_citation_whose_text_a_hook_took_away_opens_no_block(after: str) -> None:
    """A citation waits for its block's first text: where a hook turned that text into
    thinking or dropped it, neither the citation nor an empty text block goes out."""
    citation = {
        "type": "char_location", "cited_text": "grass", "document_index": 0,
        "document_title": "facts", "start_char_index": 0, "end_char_index": 5,
    }  # fmt: skip
    cited = Event("content_block_delta", {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": "citations_delta", "citation": citation},
    })  # fmt: skip
    middle = [thinking("ab")] if after == "thinking" else []
    events = W.framer(ASK).events([START, TEXT_START, cited, *middle, TEXT_STOP, *END])
    assert accumulated(events) == ([("thinking", "ab")] if after == "thinking" else [])
