"""`hw.model` of an SDK method with keywords bound (`functools.partial(create, model=...)`):
the method is hooked as `hw.model(create)` hooks it, the keywords bound alike, so it answers
with the SDK's own objects, called directly or as an agent's model."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
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


@pytest.mark.parametrize("view", ["with_raw_response", "with_streaming_response"])
@pytest.mark.parametrize("hooked", [False, True], ids=["bare", "hw.model"])
def test_a_response_view_of_the_method_is_refused_when_the_agent_is_made(
    view: str, hooked: bool
) -> None:
    """It answers with the HTTP response, no model's answer: refused as any SDK method the
    agent cannot call is, when the agent is made (not with an error at the first call)."""
    client = FakeProvider(["hello"]).openai()
    method: Any = functools.partial(getattr(client.chat.completions, view).create, model="gpt-4o")
    given = hw.model(method, use=[noting([])]) if hooked else method
    with pytest.raises(TypeError, match=r"Completions\.create through a response view is an SDK"):
        hw.Agent(given)
    with pytest.raises(TypeError, match="Fallback"):
        Fallback(models=[given])
