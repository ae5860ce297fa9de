"""A streamed answer from a `Fallback` alternative of the caller's own SDK (another OpenAI
client) reaches the caller as one stream under the model it asked for, as an answer from
any other alternative does: one id on every chunk, the caller's model on every chunk."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import openai
import pytest
from canned_sse import sse_client

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")

USER: Any = [{"role": "user", "content": "hi there friend"}]
CALL = hw.Message.assistant("", [hw.ToolCall("call_1", "get_weather", {"city": "Paris"})])
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    """The first model's failure is logged as the fallback happens: not the point here."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def chat_chunks(answer: str | hw.Message, is_async: bool, **options: Any) -> list[Any]:
    """The chunks an OpenAI chat caller for `gpt-asked` streams when its model fails and
    another OpenAI client's `gpt-other` answers `answer`."""
    primary, other = FakeProvider(["never"]), FakeProvider([answer])
    primary.fail(500)
    alternative = (other.openai(async_=is_async, max_retries=0), "gpt-other")
    client = hw.wrap(
        primary.openai(async_=is_async, max_retries=0), use=[Fallback(models=[alternative])]
    )
    request: dict[str, Any] = {"model": "gpt-asked", "messages": USER, "stream": True, **options}
    if not is_async:
        return list(client.chat.completions.create(**request))

    async def read() -> list[Any]:
        return [chunk async for chunk in await client.chat.completions.create(**request)]

    return asyncio.run(read())


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_chat_stream_from_another_openai_client_is_one_stream_under_the_asked_model(
    is_async: bool,
) -> None:
    chunks = chat_chunks("the answer here", is_async, stream_options={"include_usage": True})
    assert len({chunk.id for chunk in chunks}) == 1
    assert {chunk.model for chunk in chunks} == {"gpt-asked"}
    assert len({chunk.created for chunk in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "the answer here"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_calls_streamed_by_another_openai_client_still_reach_the_caller(
    is_async: bool,
) -> None:
    chunks = chat_chunks(CALL, is_async, tools=TOOLS)
    assert len({chunk.id for chunk in chunks}) == 1
    assert {chunk.model for chunk in chunks} == {"gpt-asked"}
    calls = [call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or ()]
    assert calls[0].id == "call_1"
    assert calls[0].function.name == "get_weather"
    assert "".join(call.function.arguments or "" for call in calls) == '{"city": "Paris"}'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"


def test_the_stream_helper_gives_the_asked_model_and_one_id() -> None:
    primary, other = FakeProvider(["never"]), FakeProvider(["the answer here"])
    primary.fail(500)
    fallback = Fallback(models=[(other.openai(max_retries=0), "gpt-other")])
    client = hw.wrap(primary.openai(max_retries=0), use=[fallback])
    ids: set[str] = set()
    with client.chat.completions.stream(model="gpt-asked", messages=USER) as stream:
        for event in stream:
            if event.type == "chunk":
                ids.add(event.chunk.id)
        final = stream.get_final_completion()
    assert final.model == "gpt-asked"
    assert ids == {final.id}
    assert final.choices[0].message.content == "the answer here"


def test_a_refusal_streamed_by_another_openai_client_reaches_the_caller() -> None:
    """Its own SDK's content that has no neutral form (a refusal) is carried over too."""
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-alt"}
    deltas = [{"role": "assistant", "content": ""}, {"content": "Hi"}, {"refusal": "No."}, {}]
    events = [
        {**head, "choices": [{"index": 0, "delta": d, "finish_reason": None if d else "stop"}]}
        for d in deltas
    ]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    primary = FakeProvider()
    primary.fail(500)
    alternative = sse_client(openai, False, body.encode())
    client: Any = hw.wrap(primary.openai(max_retries=0), use=[Fallback(models=[alternative])])
    with client.chat.completions.stream(
        model="gpt-asked", messages=[{"role": "user", "content": "q"}]
    ) as stream:
        message = stream.get_final_completion().choices[0].message
    assert (message.content, message.refusal) == ("Hi", "No.")
