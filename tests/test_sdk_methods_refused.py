"""SDK methods hookwrap cannot drive with a neutral request are refused when given, as an
agent's model or a `Fallback` alternative, before anything is sent (agent.md, fallback.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")
pytest.importorskip("anthropic")

METHODS: dict[str, Callable[[FakeProvider], Any]] = {
    "Completions.parse": lambda p: p.openai().chat.completions.parse,
    "Responses.parse": lambda p: p.openai().responses.parse,
    "Messages.stream": lambda p: p.anthropic().messages.stream,
    "Messages.parse": lambda p: p.anthropic().beta.messages.parse,
    "AsyncCompletions.parse": lambda p: p.openai(True).chat.completions.parse,
    "Completions.parse ": lambda p: hw.wrap(p.openai(), use=[]).chat.completions.parse,
}


def test_the_listed_methods_are_what_the_sdks_have() -> None:
    provider = FakeProvider()
    for name, method in METHODS.items():
        found = method(provider)
        owner = type(getattr(found, "__wrapped__", found).__self__).__name__
        assert f"{owner}.{found.__name__}" == name.strip()


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize("bound", [True, False], ids=["partial", "bare"])
@pytest.mark.parametrize("where", ["agent", "fallback"])
def test_a_method_hookwrap_cannot_drive_is_refused_when_given(
    name: str, bound: bool, where: str
) -> None:
    provider = FakeProvider(["never sent"])
    method = METHODS[name](provider)
    given = functools.partial(method, model="m") if bound else method
    with pytest.raises(TypeError) as caught:
        if where == "agent":
            hw.Agent(given)
        else:
            Fallback(models=[given])
    message = str(caught.value)
    assert f"{name.strip()} is an SDK method hookwrap cannot call" in message
    assert "chat.completions.create or responses.create (OpenAI)" in message
    assert provider.requests == []


def test_the_methods_it_drives_are_still_taken() -> None:
    provider = FakeProvider(["from chat", "from messages"])
    chat = functools.partial(provider.openai().chat.completions.create, model="m")
    messages = functools.partial(provider.anthropic().messages.create, model="m")
    assert hw.Agent(chat).run("hi").text == "from chat"
    assert hw.Agent(messages).run("hi").text == "from messages"
