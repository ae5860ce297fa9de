"""Parameters the SDKs take as any iterable (Anthropic `messages`, `system`, `tools`, a
message's blocks, a tool result's blocks; Responses `input` and `tools`) given as a tuple
or a generator: hooks see them as they see a list, a hook's change is written over them,
and what goes out when no hook changes anything is what the SDK sends without hooks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from iterable_requests import (
    RESULT_BLOCKS,
    SHAPES,
    SYSTEM,
    anthropic_kwargs,
    redactor,
)

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("anthropic")
pytest.importorskip("openai")


def send_anthropic(client: Any, mode: str, kwargs: dict[str, Any]) -> None:
    if mode == "async":
        asyncio.run(client.messages.create(**kwargs))
    elif mode == "helper":
        with client.messages.stream(**kwargs) as stream:
            stream.get_final_message()
    else:
        client.messages.create(**kwargs)


def through(hook: Any, mode: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    provider = FakeProvider(["4"])
    client = hw.wrap(provider.anthropic(async_=mode == "async"), use=[hook])
    send_anthropic(client, mode, kwargs)
    body: dict[str, Any] = provider.requests[-1].body
    return body


def unhooked(kwargs: dict[str, Any]) -> dict[str, Any]:
    provider = FakeProvider(["4"])
    provider.anthropic().messages.create(**kwargs)
    body: dict[str, Any] = provider.requests[-1].body
    return body


def recorder(seen: list[hw.ModelRequest], change: bool) -> Any:
    """A hook that looks at every field; with `change`, adds a message and a tool."""

    @hw.before_model
    def look(request: hw.ModelRequest) -> hw.ModelRequest:
        assert request.messages is not None  # read here, before the call is sent
        assert request.tools is not None
        seen.append(request)
        if not change:
            return request
        return request.replace(
            messages=(*request.messages, hw.Message.user("P.S. be brief")),
            tools=(*request.tools, hw.ToolSpec("extra", "", {"type": "object"})),
        )

    return look


@pytest.mark.parametrize("mode", ["create", "async", "helper"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_anthropic_iterables_are_seen_as_lists(shape: str, mode: str) -> None:
    seen: list[hw.ModelRequest] = []
    through(recorder(seen, False), mode, anthropic_kwargs(list))
    through(recorder(seen, False), mode, anthropic_kwargs(SHAPES[shape]))
    as_list, given = seen
    assert given.messages == as_list.messages
    assert given.tools == as_list.tools
    assert [m.role for m in given.messages] == ["system", "user", "assistant", "tool"]
    assert given.messages[3].text == "4"
    assert [t.name for t in given.tools] == ["calc"]


@pytest.mark.parametrize("mode", ["create", "async", "helper"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_anthropic_iterables_a_hook_reads_go_out_as_without_hooks(shape: str, mode: str) -> None:
    expected = unhooked(anthropic_kwargs(SHAPES[shape]))
    assert expected == unhooked(anthropic_kwargs(list))
    body = through(recorder([], False), mode, anthropic_kwargs(SHAPES[shape]))
    assert body["messages"] == expected["messages"]
    assert body["system"] == expected["system"]
    assert body["tools"] == expected["tools"]


@pytest.mark.parametrize("mode", ["create", "async", "helper"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_anthropic_a_hooks_additions_keep_the_callers_iterables(shape: str, mode: str) -> None:
    expected = through(recorder([], True), mode, anthropic_kwargs(list))
    body = through(recorder([], True), mode, anthropic_kwargs(SHAPES[shape]))
    assert body["messages"] == expected["messages"]
    assert body["tools"] == expected["tools"]
    assert body["system"] == SYSTEM
    assert body["messages"][0]["content"] == [{"type": "text", "text": "What is 2+2?"}]
    assert body["messages"][2]["content"][0]["content"] == RESULT_BLOCKS
    assert body["messages"][-1] == {"role": "user", "content": "P.S. be brief"}
    assert [t["name"] for t in body["tools"]] == ["calc", "extra"]


# -- Responses ----------------------------------------------------------------------------------

INPUT = [{"role": "user", "content": "What is 2+2?"}]
FUNCTIONS = [{"type": "function", "name": "calc", "parameters": {"type": "object"}}]


def responses_through(hook: Any, items: Any, tools: Any, is_async: bool = False) -> dict[str, Any]:
    provider = FakeProvider(["4"])
    client = hw.wrap(provider.openai(async_=is_async), use=[hook])
    made = client.responses.create(model="m", input=items, tools=tools)
    if is_async:
        asyncio.run(made)
    body: dict[str, Any] = provider.requests[-1].body
    return body


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_responses_input_and_tools_are_seen_as_lists(shape: str, is_async: bool) -> None:
    seen: list[hw.ModelRequest] = []
    responses_through(recorder(seen, False), INPUT, FUNCTIONS, is_async)
    given = SHAPES[shape]
    body = responses_through(recorder(seen, False), given(INPUT), given(FUNCTIONS), is_async)
    as_list, read = seen
    assert read.messages == as_list.messages == (hw.Message.user("What is 2+2?"),)
    assert read.tools == as_list.tools
    assert [t.name for t in read.tools] == ["calc"]
    assert body["input"] == INPUT
    assert body["tools"] == FUNCTIONS


@pytest.mark.parametrize("shape", list(SHAPES))
def test_responses_a_hooks_additions_keep_the_callers_input(shape: str) -> None:
    given = SHAPES[shape]
    body = responses_through(recorder([], True), given(INPUT), given(FUNCTIONS))
    assert body["input"][0] == INPUT[0]
    assert body["input"][-1]["content"] == "P.S. be brief"
    assert [t["name"] for t in body["tools"]] == ["calc", "extra"]


def test_responses_output_items_in_an_input_tuple_are_seen_and_redacted() -> None:
    answer = hw.Message.assistant("my secret", tool_calls=[hw.ToolCall("call_1", "f", {"x": 1})])
    output = FakeProvider([answer]).openai().responses.create(model="m", input="hi").output
    result = {"type": "function_call_output", "call_id": "call_1", "output": "42"}
    seen: list[tuple[hw.Message, ...]] = []
    redact = redactor(seen)
    as_tuple = responses_through(redact, (*INPUT, *output, result), None)
    as_list = responses_through(redact, [*INPUT, *output, result], None)
    assert seen[0] == seen[1]
    assert seen[0][1].text == "my secret"
    assert seen[0][1].tool_calls == (hw.ToolCall("call_1", "f", {"x": 1}),)
    assert as_tuple["input"] == as_list["input"]
    assert as_tuple["input"][1]["content"][0]["text"] == "my XXX"
