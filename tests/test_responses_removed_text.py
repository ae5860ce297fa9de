"""Text a hook takes out of a Responses stream without `hw.DROP` (an `on_chunk` hook's
expansion to nothing, a `wrap_model` hook filtering the chunks): the closing events and
`get_final_response()` say what the caller read, as with `hw.DROP`, not the model's text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from canned_sse import sse, sse_client

import hookwrap as hw
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

TEXT = "the SECRET is 42"
CLOSING = (
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
)


@hw.on_chunk
def expanded_to_nothing(chunk: hw.Chunk) -> Any:
    return [] if chunk.kind == "text" else None


@hw.on_chunk
def dropped(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "text" else None


@hw.wrap_model
def filtered(request: hw.ModelRequest, call_next: Any) -> Any:
    """The iterator pattern of the wrap_model page, leaving the text out."""
    response = call_next(request)
    if isinstance(response, hw.ModelResponse):
        return response
    return (c for c in response if c.kind != "text")


@hw.wrap_model
async def filtered_async(request: hw.ModelRequest, call_next: Any) -> Any:
    response = await call_next(request)
    if isinstance(response, hw.ModelResponse):
        return response

    async def chunks() -> Any:
        async for chunk in response:
            if chunk.kind != "text":
                yield chunk

    return chunks()


def _events(client: Any, is_async: bool) -> list[Any]:
    args = {"model": "m", "input": "hi", "stream": True}
    if not is_async:
        return list(client.responses.create(**args))

    async def read() -> list[Any]:
        return [event async for event in await client.responses.create(**args)]

    return asyncio.run(read())


def _final(client: Any, is_async: bool) -> tuple[str, str]:
    """The text `responses.stream()`'s deltas gave, and its final response's."""
    if not is_async:
        with client.responses.stream(model="m", input="hi") as stream:
            text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
            return text, stream.get_final_response().output_text

    async def read() -> tuple[str, str]:
        async with client.responses.stream(model="m", input="hi") as stream:
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            return "".join(deltas), (await stream.get_final_response()).output_text

    return asyncio.run(read())


def _closing_texts(events: list[Any]) -> list[str]:
    """The text each closing event repeats."""
    out: list[str] = []
    for event in events:
        if event.type == "response.output_text.done":
            out.append(event.text)
        elif event.type == "response.content_part.done":
            out.append(event.part.text)
        elif event.type == "response.output_item.done":
            out.append("".join(c.text for c in event.item.content))
        elif event.type == "response.completed":
            out.append(event.response.output_text)
    return out


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("how", ["expanded_to_nothing", "filtered", "dropped"])
def test_removed_text_is_gone_from_the_closing_events_and_the_final_response(
    how: str, is_async: bool
) -> None:
    hook = {
        "expanded_to_nothing": expanded_to_nothing,
        "dropped": dropped,
        "filtered": filtered_async if is_async else filtered,
    }[how]
    seen: list[str] = []

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    provider = FakeProvider([TEXT] * 2, chunk_size=6)
    client = hw.wrap(provider.openai(async_=is_async), use=[hook, after])
    events = _events(client, is_async)
    assert [e.type for e in events if e.type in CLOSING] == list(CLOSING)
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == ""
    assert _closing_texts(events) == ["", "", "", ""]
    assert _final(client, is_async) == ("", "")
    assert seen == ["", ""]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_part_opening_expanded_to_nothing_is_framed_as_if_dropped(is_async: bool) -> None:
    """An expansion to nothing is a drop: a stream the API framed is framed again from there."""

    @hw.on_chunk
    def no_part_opening(chunk: hw.Chunk) -> Any:
        return [] if chunk.name == "openai.responses.response.content_part.added" else None

    provider = FakeProvider([TEXT] * 2, chunk_size=6)
    client = hw.wrap(provider.openai(async_=is_async), use=[no_part_opening])
    kinds = [e.type for e in _events(client, is_async)]
    assert kinds.count("response.content_part.added") == 1  # the framer's own
    assert kinds.index("response.content_part.added") < kinds.index("response.output_text.delta")
    assert _final(client, is_async) == (TEXT, TEXT)


LOGPROBS = [{"token": "x", "logprob": -0.5, "bytes": [120], "top_logprobs": []}]


def _logprobs_client() -> Any:
    """A client whose Responses stream has logprobs in its text deltas and closing events."""
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": TEXT, "annotations": [], "logprobs": LOGPROBS}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    response: dict[str, Any] = {
        "id": "resp_1", "object": "response", "created_at": 1, "model": "m", "output": [],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": None,
        "status": "in_progress", "error": None, "incomplete_details": None,
        "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0,
    }  # fmt: skip
    item = {**message, "content": [part]}
    done: dict[str, Any] = {**response, "status": "completed", "output": [item]}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {"type": "response.content_part.added", **at, "part": {**part, "text": "", "logprobs": []}},
        {"type": "response.output_text.delta", **at, "delta": TEXT, "logprobs": LOGPROBS},
        {"type": "response.output_text.done", **at, "text": TEXT, "logprobs": LOGPROBS},
        {"type": "response.content_part.done", **at, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": done},
    ]  # fmt: skip
    body = sse({**e, "sequence_number": n} for n, e in enumerate(events))
    return sse_client(openai, False, body)


def test_closing_events_of_a_changed_text_carry_no_logprobs_of_the_old_one() -> None:
    @hw.on_chunk
    def redact(chunk: hw.Chunk) -> Any:
        return chunk.replace(text="[redacted]") if chunk.kind == "text" else None

    events = _events(hw.wrap(_logprobs_client(), use=[redact]), False)
    closing = {e.type: e for e in events}
    assert closing["response.output_text.delta"].logprobs == []
    assert closing["response.output_text.done"].logprobs == []
    assert closing["response.content_part.done"].part.logprobs == []
    assert closing["response.output_item.done"].item.content[0].logprobs == []
    assert closing["response.completed"].response.output[0].content[0].logprobs == []
    assert _closing_texts(events) == ["[redacted]"] * 4

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        return None

    kept = _events(hw.wrap(_logprobs_client(), use=[look]), False)  # an unchanged text keeps them
    assert {e.type: e for e in kept}["response.output_text.done"].logprobs[0].token == "x"
