"""`hw.model` of an SDK method with keywords bound (`functools.partial(create, model=...)`):
the method is hooked as `hw.model(create)` hooks it, the keywords bound alike, so it answers
with the SDK's own objects, called directly or as an agent's model."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

USER = [{"role": "user", "content": "hi"}]


def noting(log: list[Any]) -> Any:
    @hw.before_model
    def note(request: hw.ModelRequest) -> None:
        log.append(request.model)

    return note


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_called_directly_it_runs_its_hooks_and_answers_as_the_sdk(is_async: bool) -> None:
    log: list[Any] = []
    client = FakeProvider(["hello"]).openai(is_async)
    create = functools.partial(client.chat.completions.create, model="gpt-4o")
    model: Any = hw.model(create, use=[noting(log)])
    made = model(messages=USER)
    answer = asyncio.run(made) if is_async else made
    assert isinstance(answer, openai.types.chat.ChatCompletion)
    assert answer.choices[0].message.content == "hello"
    assert log == ["gpt-4o"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_as_an_agents_model_it_runs_its_hooks_and_explain_shows_them(is_async: bool) -> None:
    log: list[Any] = []
    client = FakeProvider(["hello"]).openai(is_async)
    create = functools.partial(client.chat.completions.create, model="gpt-4o")
    agent = hw.Agent(hw.model(create, use=[noting(log)]))
    result = asyncio.run(agent.arun("hi")) if is_async else agent.run("hi")
    assert result.text == "hello"
    assert log == ["gpt-4o"]
    rows = [row.split() for row in hw.explain(agent).splitlines()[2:]]
    assert [(row[0], row[2], row[-1]) for row in rows] == [
        ("before_model", "noting.<locals>.note", "model")
    ]
