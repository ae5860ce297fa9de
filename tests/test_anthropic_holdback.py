"""Text a hook holds back and releases later (the recipe of the on_chunk page): in an
Anthropic stream it comes after its text block's stop, and still fills that block, so the
caller gets the one text block it would get without hooks, not an empty one and another."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from canned_sse import footer, hold_back, hold_back_before_calls, sse, sse_client

import hookwrap as hw

anthropic = pytest.importorskip("anthropic")

USER = [{"role": "user", "content": "q"}]
TEXT = ["Write to ", "ada@", "example.org"]
CALL = {"type": "tool_use", "id": "toolu_1", "name": "mail", "input": {}}
USAGE = {"input_tokens": 3, "output_tokens": 5}


def _sse(with_call: bool) -> bytes:
    """A stream as the API sends it, pings included: a text block, then maybe a tool call."""
    message: dict[str, Any] = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {**USAGE, "output_tokens": 1},
    }  # fmt: skip
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
            for t in TEXT
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "ping"},
    ]
    if with_call:
        delta = {"type": "input_json_delta", "partial_json": '{"to": "ada"}'}
        events += [
            {"type": "content_block_start", "index": 1, "content_block": CALL},
            {"type": "content_block_delta", "index": 1, "delta": delta},
            {"type": "content_block_stop", "index": 1},
        ]
    stop = {"stop_reason": "tool_use" if with_call else "end_turn", "stop_sequence": None}
    events += [
        {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return sse(events)


def _client(is_async: bool, with_call: bool = False) -> Any:
    return sse_client(anthropic, is_async, _sse(with_call))


HELD = "".join(TEXT).upper()


def _events(is_async: bool, hooks: list[Any], with_call: bool = False) -> list[Any]:
    client = hw.wrap(_client(is_async, with_call), use=hooks)
    args: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": USER, "stream": True}
    if not is_async:
        return list(client.messages.create(**args))

    async def read() -> list[Any]:
        return [event async for event in await client.messages.create(**args)]

    return asyncio.run(read())


def _final(is_async: bool, hooks: list[Any], with_call: bool = False) -> tuple[Any, str]:
    """`messages.stream()`'s final message, and the text its `text_stream` gave."""
    client = hw.wrap(_client(is_async, with_call), use=hooks)
    args: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": USER}
    if not is_async:
        with client.messages.stream(**args) as stream:
            text = "".join(stream.text_stream)
            return stream.get_final_message(), text

    async def read() -> tuple[Any, str]:
        async with client.messages.stream(**args) as stream:
            text = "".join([t async for t in stream.text_stream])
            return await stream.get_final_message(), text

    return asyncio.run(read())


def _shape(events: list[Any]) -> list[tuple[str, Any]]:
    return [(e.type, getattr(e, "index", None)) for e in events]


def test_pings_stay_while_a_blocks_stop_waits() -> None:
    """The SDK's streams skip pings: the response's own lines show them."""
    client = hw.wrap(_client(False), use=[hold_back])
    args: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": USER, "stream": True}
    with client.messages.with_streaming_response.create(**args) as response:
        names = [line[7:] for line in response.iter_lines() if line.startswith("event: ")]
    assert names == [
        "message_start",
        "ping",
        "ping",  # came while the block's start waited for its text
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_at_the_finish_fills_its_own_block(is_async: bool) -> None:
    events = _events(is_async, [hold_back])
    assert _shape(events) == [
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("message_delta", None),
        ("message_stop", None),
    ]
    assert events[2].delta.text == HELD
    assert events[4].delta.stop_reason == "end_turn"

    message, text = _final(is_async, [hold_back])
    assert [(b.type, b.text) for b in message.content] == [("text", HELD)]
    assert message.content[0].text == text == HELD
    assert message.stop_reason == "end_turn"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_before_a_tool_call_fills_its_block_ahead_of_the_call(
    is_async: bool,
) -> None:
    events = _events(is_async, [hold_back_before_calls], with_call=True)
    assert _shape(events) == [
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("message_delta", None),
        ("message_stop", None),
    ]
    message, text = _final(is_async, [hold_back_before_calls], with_call=True)
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].text == text == HELD
    assert (message.content[1].name, message.content[1].input) == ("mail", {"to": "ada"})


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_after_a_tool_call_comes_after_it(is_async: bool) -> None:
    """The text block's stop cannot wait past the call's block: the text goes after it."""
    events = _events(is_async, [hold_back], with_call=True)
    assert _shape(events) == [  # no empty text block before the call
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("message_delta", None),
        ("message_stop", None),
    ]
    message, text = _final(is_async, [hold_back], with_call=True)
    assert [b.type for b in message.content] == ["tool_use", "text"]
    assert message.content[1].text == text == HELD
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize("with_call", [False, True])
def test_a_stream_no_hook_changed_comes_as_the_api_sent_it(with_call: bool) -> None:
    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        return None

    plain = list(_client(False, with_call).messages.create(
        model="m", max_tokens=10, messages=USER, stream=True
    ))  # fmt: skip
    events = _events(False, [look], with_call)
    assert [e.to_dict() for e in events] == [e.to_dict() for e in plain]


def test_text_added_at_the_finish_after_a_block_with_text_goes_into_that_block() -> None:
    """A block the API filled waits for text too, once the stream is framed (a dropped
    chunk): the caller gets the one text block the API would have sent."""

    message, text = _final(False, [footer])
    assert [b.text for b in message.content] == ["Write to example.org (sent)"]
    assert text == "Write to example.org (sent)"


def test_text_released_after_an_empty_blocks_stop_went_out_opens_a_block() -> None:
    """Held back without dropping (emptied), the text's block closed as it came: the text
    released then cannot go back into it."""

    @hw.on_chunk
    def empty_out(chunk: hw.Chunk, ctx: hw.RunContext) -> Any:
        if chunk.kind == "text" and chunk.finish_reason is None:
            ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
            return chunk.replace(text="")
        if chunk.finish_reason is not None:
            return [hw.Chunk("text", ctx.call_state.pop("held", "").upper()), chunk]
        return None

    assert _shape(_events(False, [empty_out])) == [
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_delta", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("message_delta", None),
        ("message_stop", None),
    ]
    message, text = _final(False, [empty_out])
    assert [b.text for b in message.content] == ["", HELD]
    assert text == HELD


@hw.on_chunk
def hold_after_first(chunk: hw.Chunk, ctx: hw.RunContext) -> Any:
    """Lets the first text chunk through, holds the rest back until the finish."""
    if chunk.kind == "text" and chunk.finish_reason is None:
        if ctx.call_state.get("first out"):
            ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
            return hw.DROP
        ctx.call_state["first out"] = True
        return None
    if chunk.finish_reason is not None:
        return [hw.Chunk("text", ctx.call_state.pop("held", "")), chunk]
    return None


def test_text_held_after_some_went_out_is_released_into_the_same_block_and_item() -> None:
    from hookwrap.testing import FakeProvider

    fake = FakeProvider(["Hello world, friend"] * 2, chunk_size=4)
    client = hw.wrap(fake.anthropic(), use=[hold_after_first])
    with client.messages.stream(model="m", max_tokens=9, messages=USER) as stream:
        message = stream.get_final_message()
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "Hello world, friend")
    ]
    responses = hw.wrap(fake.openai(), use=[hold_after_first])
    with responses.responses.stream(model="m", input="x") as rstream:
        final = rstream.get_final_response()
    assert [[p.text for p in o.content] for o in final.output] == [["Hello world, friend"]]  # type: ignore[union-attr]


def test_a_blocks_held_stop_goes_out_before_an_error_event_after_it() -> None:
    """The stop waits for held text only until the API's next event: an `error` after the
    block finds the block ended first, as the API sent it."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": USAGE,
    }
    events = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Let "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "me see"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]

    @hw.on_chunk
    def drop_let(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.kind == "text" and chunk.text == "Let " else None

    client = hw.wrap(sse_client(anthropic, False, sse(events)), use=[drop_let])
    got: list[str] = []
    with (
        pytest.raises(anthropic.APIStatusError),
        client.messages.stream(model="m", max_tokens=9, messages=USER) as stream,
    ):
        got.extend(event.type for event in stream)
    assert got[-1] == "content_block_stop"
