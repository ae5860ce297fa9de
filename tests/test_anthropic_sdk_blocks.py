"""Anthropic content blocks given as the SDK's own objects (`{"role": "assistant",
"content": response.content}`, the tool-use pattern) are what hooks see and change, as the
same blocks given as dicts are; blocks the hooks leave go out as the SDK sends them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from iterable_requests import redactor

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")

USER = [{"role": "user", "content": "hello"}]
RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "42"}],
}
ANSWER = hw.Message.assistant("my secret", tool_calls=[hw.ToolCall("call_1", "f", {"x": 1})])
MODES = ["create", "async", "stream", "helper", "beta", "beta_helper"]


def sdk_blocks(beta: bool) -> list[Any]:
    """The content of an answer, as the SDK gives it, with a thinking block first."""
    client = FakeProvider([ANSWER]).anthropic()
    messages = client.beta.messages if beta else client.messages
    answer = messages.create(model="m", max_tokens=5, messages=USER)
    types = anthropic.types.beta if beta else anthropic.types
    thinking = (types.BetaThinkingBlock if beta else types.ThinkingBlock)(
        type="thinking", thinking="so", signature="sig"
    )
    return [thinking, *answer.content]


def as_sent(block: Any) -> dict[str, Any]:
    """A block as the SDK puts it in a request body."""
    dumped: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dumped


def send(client: Any, mode: str, messages: list[Any]) -> None:
    """One request through `client` (made for `mode`), its answer read to the end."""
    kw: dict[str, Any] = {"model": "m", "max_tokens": 5, "messages": messages}
    if mode == "async":
        asyncio.run(client.messages.create(**kw))
    elif mode == "stream":
        for _ in client.messages.create(stream=True, **kw):
            pass
    elif mode in ("helper", "beta_helper"):
        api = client.beta.messages if mode == "beta_helper" else client.messages
        with api.stream(**kw) as stream:
            stream.get_final_message()
    elif mode == "beta":
        client.beta.messages.create(**kw)
    else:
        client.messages.create(**kw)


def hooked(mode: str, messages: list[Any], hook: Any) -> dict[str, Any]:
    """The body sent for `messages` through a client wrapped with `hook`."""
    provider = FakeProvider(["done"])
    client = hw.wrap(provider.anthropic(async_=mode == "async"), use=[hook])
    send(client, mode, messages)
    body: dict[str, Any] = provider.requests[-1].body
    return body


@pytest.mark.parametrize("mode", MODES)
def test_sdk_blocks_are_seen_and_redacted_as_the_same_blocks_as_dicts(mode: str) -> None:
    blocks = sdk_blocks(mode.startswith("beta"))
    seen: list[tuple[hw.Message, ...]] = []
    as_objects = hooked(
        mode, [*USER, {"role": "assistant", "content": blocks}, RESULT], redactor(seen)
    )
    dicts = [as_sent(b) for b in blocks]
    as_dicts = hooked(
        mode, [*USER, {"role": "assistant", "content": dicts}, RESULT], redactor(seen)
    )

    assert seen[0] == seen[1]
    assistant = seen[0][1]
    assert assistant.text == "my secret"
    assert assistant.tool_calls == (hw.ToolCall("call_1", "f", {"x": 1}),)
    assert as_objects == as_dicts
    assert as_objects["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "so", "signature": "sig"},
        {"type": "text", "text": "my XXX"},
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {"x": 1}},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_sdk_blocks_a_hook_leaves_go_out_as_the_sdk_sends_them(mode: str) -> None:
    blocks = sdk_blocks(mode.startswith("beta"))
    messages = [*USER, {"role": "assistant", "content": blocks}, RESULT]

    @hw.before_model
    def shout(request: hw.ModelRequest) -> hw.ModelRequest:
        first = request.messages[0]
        return request.replace(messages=(first.replace(content="HELLO"), *request.messages[1:]))

    body = hooked(mode, messages, shout)
    assert body["messages"][0] == {"role": "user", "content": "HELLO"}
    assert body["messages"][1]["content"] == [as_sent(b) for b in blocks]
    assert body["messages"][2] == RESULT


def test_a_hooks_change_to_a_call_is_written_over_its_sdk_block() -> None:
    blocks = sdk_blocks(False)

    @hw.before_model
    def retarget(request: hw.ModelRequest) -> hw.ModelRequest:
        assistant = request.messages[1]
        call = assistant.tool_calls[0].replace(arguments={"x": 2})
        changed = assistant.replace(tool_calls=(call,))
        return request.replace(messages=(request.messages[0], changed, *request.messages[2:]))

    body = hooked("create", [*USER, {"role": "assistant", "content": blocks}, RESULT], retarget)
    assert body["messages"][1]["content"] == [
        as_sent(blocks[0]),
        as_sent(blocks[1]),
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {"x": 2}},
    ]


def test_a_system_prompt_of_sdk_text_blocks_is_seen() -> None:
    system = [anthropic.types.TextBlock(type="text", text="Be brief.")]
    provider = FakeProvider(["done"])
    seen: list[hw.ModelRequest] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        seen.append(request)

    client = hw.wrap(provider.anthropic(), use=[look])
    client.messages.create(model="m", max_tokens=5, system=system, messages=USER)
    assert seen[0].messages[0] == hw.Message.system((hw.TextPart("Be brief."),))
    assert provider.requests[-1].body["system"] == [{"type": "text", "text": "Be brief."}]
