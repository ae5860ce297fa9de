"""A before_model hook that adds or removes a message and also changes others (README's
`use=[add_system, redact]`): each changed message is written over its own original, so an
assistant's thinking block (and its signature) and a text block's `cache_control` stay,
and the message a hook added takes nothing of its neighbours. Through the real `anthropic`
SDK against the fake provider, as the body reaches the wire."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("anthropic")

CACHE = {"type": "ephemeral"}
THINKING = {"type": "thinking", "thinking": "hmm", "signature": "SIG"}


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "an old secret"},
        {"role": "assistant", "content": "an old secret answer"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "the secret", "cache_control": CACHE}],
        },
        {
            "role": "assistant",
            "content": [
                THINKING,
                {"type": "text", "text": "ok secret"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "secret"}],
        },
    ]


def redacted(message: hw.Message) -> hw.Message:
    if isinstance(message.content, str):
        return message.replace(content=message.content.replace("secret", "[x]"))
    return message.replace(
        content=[
            p.replace(text=p.text.replace("secret", "[x]")) if isinstance(p, hw.TextPart) else p
            for p in message.content
        ]
    )


@hw.before_model
def redact(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=[redacted(m) for m in request.messages])


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=[hw.Message.system("Be brief."), *request.messages])


@hw.before_model
def add_system_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    messages = [redacted(m) for m in request.messages]
    return request.replace(messages=[hw.Message.system("Be brief."), *messages])


@hw.before_model
def add_first_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    messages = [redacted(m) for m in request.messages]
    return request.replace(messages=[hw.Message.user("some context"), *messages])


@hw.before_model
def remove_first_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=[redacted(m) for m in request.messages[1:]])


HOOKS = {
    "add-system": [add_system_and_redact],
    "add-first": [add_first_and_redact],
    "remove-first": [remove_first_and_redact],
    "two-hooks": [add_system, redact],
}


def sent(hooks: list[Any], how: str) -> dict[str, Any]:
    """The body the wrapped client sent for `conversation()`."""
    provider = FakeProvider(["fine"])
    args: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": conversation()}
    if how == "async":
        client = hw.wrap(provider.anthropic(async_=True), use=hooks)
        asyncio.run(client.messages.create(**args))
    else:
        client = hw.wrap(provider.anthropic(), use=hooks)
        if how == "stream":
            with client.messages.stream(**args) as stream:
                stream.get_final_message()
        else:
            client.messages.create(**args)
    body: dict[str, Any] = provider.requests[0].body
    return body


def blocks_with(messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [b for m in messages if isinstance(m["content"], list) for b in m["content"] if key in b]


@pytest.mark.parametrize("how", ["sync", "async", "stream"])
@pytest.mark.parametrize("name", list(HOOKS))
def test_changed_messages_keep_their_blocks_when_a_hook_adds_or_removes_one(
    name: str, how: str
) -> None:
    messages = sent(HOOKS[name], how)["messages"]
    assert "secret" not in json.dumps(messages)
    cached = blocks_with(messages, "cache_control")
    assert cached == [{"type": "text", "text": "the [x]", "cache_control": CACHE}]
    assert blocks_with(messages, "signature") == [THINKING]
    answer = next(m["content"] for m in messages if m["content"][0] == THINKING)
    assert answer[1:] == [
        {"type": "text", "text": "ok [x]"},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
    ]
    if name == "add-first":
        assert messages[0] == {"role": "user", "content": "some context"}
    if name == "remove-first":
        assert messages[0] == {"role": "assistant", "content": "an old [x] answer"}


def test_a_system_prompt_added_before_a_changed_one_takes_nothing_of_it() -> None:
    provider = FakeProvider(["fine"])
    client = hw.wrap(provider.anthropic(), use=[add_system, redact])
    system = [{"type": "text", "text": "Keep the secret.", "cache_control": CACHE}]
    client.messages.create(model="m", max_tokens=10, system=system, messages=conversation())
    assert provider.requests[0].body["system"] == [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "Keep the [x].", "cache_control": CACHE},
    ]
