"""A streamed answer from a `Fallback` alternative of the caller's own SDK (another OpenAI
client) reaches the caller as one stream under the model it asked for, as an answer from
any other alternative does: one id on every chunk, the caller's model on every chunk."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

import pytest

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


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_responses_stream_from_another_responses_method_names_the_asked_model(
    is_async: bool,
) -> None:
    primary, other = FakeProvider(["never"]), FakeProvider(["the answer here"])
    primary.fail(500)
    method = other.openai(async_=is_async, max_retries=0).responses.create
    fallback = Fallback(models=[functools.partial(method, model="gpt-other")])
    client: Any = hw.wrap(primary.openai(async_=is_async, max_retries=0), use=[fallback])
    if is_async:

        async def read() -> list[Any]:
            stream = await client.responses.create(model="gpt-asked", input="hi", stream=True)
            return [event async for event in stream]

        events = asyncio.run(read())
    else:
        events = list(client.responses.create(model="gpt-asked", input="hi", stream=True))
    answers = [event.response for event in events if hasattr(event, "response")]
    assert answers
    assert {(a.id, a.model) for a in answers} == {(answers[0].id, "gpt-asked")}
    assert answers[-1].output_text == "the answer here"
