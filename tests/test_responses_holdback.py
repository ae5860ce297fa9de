"""Text a hook holds back and releases later (the recipe of the on_chunk page): in a
Responses stream it comes after its message item's `.done` events, and still fills that
item, so the caller gets the one message item it would get without hooks, not an empty
one and another."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from canned_sse import footer, hold_back, hold_back_before_calls, sse, sse_client

import hookwrap as hw

openai = pytest.importorskip("openai")

TEXT = ["Write to ", "ada@", "example.org"]
ARGS = '{"to": "ada"}'
USAGE = {
    "input_tokens": 3,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 8,
}


def _response(status: str, output: list[Any], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_1", "object": "response", "created_at": 1, "status": status,
        "model": "m", "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
        "tools": [], "usage": usage, "error": None, "incomplete_details": None,
        "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0,
    }  # fmt: skip


def _opening(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A stream's first events, up to its message item's opening."""
    return [
        {"type": "response.created", "response": _response("in_progress", [], None)},
        {"type": "response.in_progress", "response": _response("in_progress", [], None)},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
    ]


def _sse(with_call: bool) -> bytes:
    """A stream as the API sends it: a message item, then maybe a function call item."""
    text = "".join(TEXT)
    part: dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        *_opening(message),
        {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
        *({"type": "response.output_text.delta", **at, "delta": t, "logprobs": []} for t in TEXT),
        {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**message, "content": [part]},
        },
    ]
    output: list[Any] = [{**message, "content": [part]}]
    if with_call:
        call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "mail"}
        where = {"item_id": "fc_1", "output_index": 1}
        done = {**call, "arguments": ARGS, "status": "completed"}
        events += [
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {**call, "arguments": "", "status": "in_progress"},
            },
            {"type": "response.function_call_arguments.delta", **where, "delta": ARGS},
            {"type": "response.function_call_arguments.done", **where, "arguments": ARGS},
            {"type": "response.output_item.done", "output_index": 1, "item": done},
        ]
        output.append(done)
    events.append({"type": "response.completed", "response": _response("completed", output, USAGE)})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return sse(events)


def _client(is_async: bool, with_call: bool = False) -> Any:
    return sse_client(openai, is_async, _sse(with_call))


HELD = "".join(TEXT).upper()
ARGS_IN = {"model": "m", "input": "q"}


def _events(is_async: bool, hooks: list[Any], with_call: bool = False) -> list[Any]:
    client = hw.wrap(_client(is_async, with_call), use=hooks)
    if not is_async:
        return list(client.responses.create(**ARGS_IN, stream=True))

    async def read() -> list[Any]:
        return [event async for event in await client.responses.create(**ARGS_IN, stream=True)]

    return asyncio.run(read())


def _final(is_async: bool, hooks: list[Any], with_call: bool = False) -> tuple[Any, str]:
    """`responses.stream()`'s final response, and the text its text deltas gave."""
    client = hw.wrap(_client(is_async, with_call), use=hooks)
    if not is_async:
        with client.responses.stream(**ARGS_IN) as stream:
            text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
            return stream.get_final_response(), text

    async def read() -> tuple[Any, str]:
        async with client.responses.stream(**ARGS_IN) as stream:
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            return await stream.get_final_response(), "".join(deltas)

    return asyncio.run(read())


def _shape(events: list[Any]) -> list[tuple[str, Any]]:
    """Each event's type (its `response.` cut) and output index; the sequence numbers
    count from 0 with no gap."""
    assert [e.sequence_number for e in events] == list(range(len(events)))
    return [(e.type[9:], getattr(e, "output_index", None)) for e in events]


def _output(response: Any) -> list[tuple[str, str]]:
    """A response's output items: each one's type and text (a call's arguments)."""
    return [
        (i.type, "".join(c.text for c in i.content) if i.type == "message" else i.arguments)
        for i in response.output
    ]


MESSAGE = [
    ("output_item.added", 0),
    ("content_part.added", 0),
    ("output_text.delta", 0),
    ("output_text.done", 0),
    ("content_part.done", 0),
    ("output_item.done", 0),
]
CALL = [
    ("output_item.added", 1),
    ("function_call_arguments.delta", 1),
    ("function_call_arguments.done", 1),
    ("output_item.done", 1),
]
OPEN = [("created", None), ("in_progress", None)]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_at_the_finish_fills_its_own_item(is_async: bool) -> None:
    events = _events(is_async, [hold_back])
    assert _shape(events) == [*OPEN, *MESSAGE, ("completed", None)]
    assert events[4].delta == events[5].text == events[6].part.text == HELD
    assert (events[7].item.id, events[7].item.content[0].text) == ("msg_1", HELD)
    assert _output(events[-1].response) == [("message", HELD)]

    response, text = _final(is_async, [hold_back])
    assert _output(response) == [("message", HELD)]
    assert response.output_text == text == HELD


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_before_a_tool_call_fills_its_item_ahead_of_the_call(
    is_async: bool,
) -> None:
    events = _events(is_async, [hold_back_before_calls], with_call=True)
    assert _shape(events) == [*OPEN, *MESSAGE, *CALL, ("completed", None)]
    assert (events[7].item.id, events[7].item.content[0].text) == ("msg_1", HELD)
    assert events[-1].response.output[1].id == events[8].item.id == "fc_1"
    want = [("message", HELD), ("function_call", ARGS)]
    assert _output(events[-1].response) == want

    response, text = _final(is_async, [hold_back_before_calls], with_call=True)
    assert _output(response) == want
    assert response.output_text == text == HELD


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_text_released_after_a_tool_call_comes_after_it(is_async: bool) -> None:
    """The message item cannot wait past the call's item: the text goes after it."""
    events = _events(is_async, [hold_back], with_call=True)
    text_item = [(k, 2) for k, _ in MESSAGE]
    empty = [e for e in MESSAGE if e[0] != "output_text.delta"]
    assert _shape(events) == [*OPEN, *empty, *CALL, *text_item, ("completed", None)]
    want = [("message", ""), ("function_call", ARGS), ("message", HELD)]
    assert _output(events[-1].response) == want

    response, text = _final(is_async, [hold_back], with_call=True)
    assert _output(response) == want
    assert response.output_text == text == HELD


@pytest.mark.parametrize("with_call", [False, True])
def test_a_stream_no_hook_changed_comes_as_the_api_sent_it(with_call: bool) -> None:
    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        return None

    plain = list(_client(False, with_call).responses.create(**ARGS_IN, stream=True))
    events = _events(False, [look], with_call)
    assert [e.to_dict() for e in events] == [e.to_dict() for e in plain]


def test_text_added_at_the_finish_after_an_item_with_text_goes_into_that_item() -> None:
    """A message item the API filled waits for text too, once the stream is framed (a
    dropped chunk): the caller gets the one item the API would have sent."""

    response, text = _final(False, [footer])
    assert _output(response) == [("message", "Write to example.org (sent)")]
    assert text == "Write to example.org (sent)"


def test_text_released_after_an_empty_items_end_went_out_opens_an_item() -> None:
    """Held back without dropping (emptied), the text's item ended as it came: the text
    released then cannot go back into it, and the events that follow are numbered on."""

    @hw.on_chunk
    def empty_out(chunk: hw.Chunk, ctx: hw.RunContext) -> Any:
        if chunk.kind == "text" and chunk.finish_reason is None:
            ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
            return chunk.replace(text="")
        if chunk.finish_reason is not None:
            return [hw.Chunk("text", ctx.call_state.pop("held", "").upper()), chunk]
        return None

    emptied = [e for e in MESSAGE for _ in (TEXT if e[0] == "output_text.delta" else [0])]
    text_item = [(k, 1) for k, _ in MESSAGE]
    assert _shape(_events(False, [empty_out])) == [
        *OPEN, *emptied, *text_item, ("completed", None)
    ]  # fmt: skip
    response, text = _final(False, [empty_out])
    assert _output(response) == [("message", ""), ("message", HELD)]
    assert text == HELD


def test_a_held_item_end_goes_out_before_an_error_event_after_it() -> None:
    """The item's end waits for held text only until the API's next event: an `error`
    after the item finds the item ended first, as the API sent it."""
    events = _sse(False).split(b"\n\n")
    completed = next(i for i, e in enumerate(events) if e.startswith(b"event: response.completed"))
    error = {"type": "error", "code": "server_error", "message": "boom", "param": None}
    events[completed] = sse([{**error, "sequence_number": completed}]).rstrip(b"\n")
    client = hw.wrap(sse_client(openai, False, b"\n\n".join(events)), use=[footer])
    kinds = [event.type for event in client.responses.create(**ARGS_IN, stream=True)]
    at = kinds.index("error")
    assert "response.output_item.done" in kinds[:at]
    assert "response.output_text.done" not in kinds[at:]
    # the stream ended with the API's error: nothing reports a success after it
    assert kinds[-1] == "error"


def _cited() -> bytes:
    """A message of two output texts, the second citing a source, as the API streams it."""
    texts = ["See it. ", "X says so"]
    cite = {
        "type": "url_citation",
        "url": "https://x",
        "title": "x",
        "start_index": 0,
        "end_index": 1,
    }
    parts = [
        {"type": "output_text", "text": texts[0], "annotations": []},
        {"type": "output_text", "text": texts[1], "annotations": [cite]},
    ]
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    events: list[dict[str, Any]] = [
        *_opening(message),
    ]
    for i, part in enumerate(parts):
        at = {"item_id": "msg_1", "output_index": 0, "content_index": i}
        events += [
            {
                "type": "response.content_part.added",
                **at,
                "part": {**part, "text": "", "annotations": []},
            },
            {"type": "response.output_text.delta", **at, "delta": part["text"], "logprobs": []},
            {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []},
            {"type": "response.content_part.done", **at, "part": part},
        ]
    done = {**message, "content": parts}
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": _response("completed", [done], USAGE)},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return sse(events)


def test_a_framed_streams_message_keeps_its_citations_where_its_text_is_unchanged() -> None:
    """A dropped chunk frames the stream, which ends a message with one text part: the
    API's citations stay on it, moved by the length of the parts before theirs."""

    @hw.on_chunk
    def drop_progress(chunk: hw.Chunk) -> Any:
        return (
            hw.DROP
            if chunk.kind == "custom" and chunk.name == "openai.responses.response.in_progress"
            else None
        )

    client = hw.wrap(sse_client(openai, False, _cited()), use=[drop_progress])
    with client.responses.stream(**ARGS_IN) as stream:
        final = stream.get_final_response()
    (part,) = final.output[0].content  # type: ignore[union-attr]
    assert part.text == "See it. X says so"  # type: ignore[union-attr]
    (cite,) = part.annotations  # type: ignore[union-attr]
    assert (cite.start_index, cite.end_index) == (8, 9)  # type: ignore[union-attr]
