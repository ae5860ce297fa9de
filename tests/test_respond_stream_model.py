"""A whole answer streamed in the model's place (a `Respond`, a wrap hook's own answer)
names its own model to the hooks at the stream's end, as the chunks the caller gets do
and as `after_model` sees it in a call that does not stream (docs/hooks/before-model.md:
the `after_model` hooks "see `x` as the response")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

ASKED = [{"role": "user", "content": "hi"}]


@hw.before_model
def canned(request: hw.ModelRequest) -> hw.Respond:
    answer = hw.Message.assistant("Canned.")
    return hw.Respond(hw.ModelResponse(answer, finish_reason="length", model="m-x"))


@hw.wrap_model
def own_answer(request: hw.ModelRequest) -> Any:
    yield hw.Respond(hw.ModelResponse(hw.Message.assistant("Mine."), model="m-y"))


def seen_by_after_model(use: list[Any], call: Any) -> list[str | None]:
    seen: list[str | None] = []

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.model)

    call([*use, keep])
    return seen


@pytest.mark.parametrize(("hook", "model"), [(canned, "m-x"), (own_answer, "m-y")])
def test_a_plain_function_stream(hook: Any, model: str) -> None:
    def llm(messages: Any) -> Iterator[str]:
        yield "never"

    async def allm(messages: Any) -> AsyncIterator[str]:
        yield "never"

    async def read(chat: Any) -> list[Any]:
        return [c async for c in chat(ASKED)]

    assert seen_by_after_model([hook], lambda use: list(hw.model(llm, use=use)(ASKED))) == [model]
    seen = seen_by_after_model([hook], lambda use: asyncio.run(read(hw.model(allm, use=use))))
    assert seen == [model]


def test_an_openai_stream_and_an_anthropic_helper_stream() -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    provider = FakeProvider()

    def openai(use: list[Any]) -> None:
        client = hw.wrap(provider.openai(), use=use)
        chunks = list(client.chat.completions.create(model="gpt-4o", messages=ASKED, stream=True))
        assert {c.model for c in chunks} == {"m-x"}

    def anthropic(use: list[Any]) -> None:
        client = hw.wrap(provider.anthropic(), use=use)
        with client.messages.stream(model="claude-x", max_tokens=9, messages=ASKED) as stream:
            assert stream.get_final_message().model == "m-x"

    assert seen_by_after_model([canned], openai) == ["m-x"]
    assert seen_by_after_model([canned], anthropic) == ["m-x"]
