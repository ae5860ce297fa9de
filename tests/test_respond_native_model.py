"""A hook's answer in place of the model's (`hw.Respond`, a `wrap_model` hook's own) names a
model in the native object the caller gets, as every API answer does: the model the call
asked for, unless the answer names its own. Real SDKs against the fake provider, sync and
async, whole and streamed."""

# google-genai's signatures name `PIL.Image.Image`; without Pillow installed pyright sees
# Unknown in every `generate_content`, so only that report is off here.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

USER: Any = [{"role": "user", "content": "hi"}]
ASKED = {"chat": "gpt-4o", "responses": "gpt-4o", "anthropic": "claude-x", "gemini": "gemini-x"}


def answers(kind: str, hook: Any, *, is_async: bool, stream: bool) -> list[Any]:
    """What the caller gets from one call of `kind` with `hook`: the native object, or the
    native items of the stream."""
    provider = FakeProvider()
    model = ASKED[kind]
    streams: dict[str, Any] = {"stream": True} if stream else {}
    make: Callable[[], Any]
    if kind == "gemini":
        client: Any = hw.wrap(provider.genai(), use=[hook])
        models = client.aio.models if is_async else client.models
        method = models.generate_content_stream if stream else models.generate_content
        make = lambda: method(model=model, contents="hi")  # noqa: E731
    elif kind == "anthropic":
        client = hw.wrap(provider.anthropic(is_async), use=[hook])
        make = lambda: client.messages.create(  # noqa: E731
            model=model, max_tokens=5, messages=USER, **streams
        )
    else:
        client = hw.wrap(provider.openai(is_async), use=[hook])
        if kind == "chat":
            make = lambda: client.chat.completions.create(model=model, messages=USER, **streams)  # noqa: E731
        else:
            make = lambda: client.responses.create(model=model, input="hi", **streams)  # noqa: E731

    async def aread() -> list[Any]:
        made = await make()
        return [item async for item in made] if stream else [made]

    if is_async:
        return asyncio.run(aread())
    made = make()
    assert not provider.requests  # answered by the hook: nothing was sent
    return list(made) if stream else [made]


def models_named(kind: str, items: list[Any]) -> list[Any]:
    """The models the native objects name (a stream names it in some of its events)."""
    field = "model_version" if kind == "gemini" else "model"
    found: list[Any] = []
    for item in items:
        inner = getattr(item, "message", None) or getattr(item, "response", None) or item
        if hasattr(inner, field):
            found.append(getattr(inner, field))
    return found


@hw.before_model
def respond(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond("Cached.")


@hw.wrap_model
def answer_whole(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
    return hw.ModelResponse(hw.Message.assistant("Cached."))


@hw.wrap_model
async def aanswer_whole(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
    return hw.ModelResponse(hw.Message.assistant("Cached."))


@hw.before_model
def respond_with_model(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond(hw.ModelResponse(hw.Message.assistant("Cached."), model="cache-v1"))


KINDS = pytest.mark.parametrize("kind", sorted(ASKED))
SHAPES = pytest.mark.parametrize(
    ("is_async", "stream"), [(False, False), (True, False), (False, True), (True, True)]
)


@KINDS
@SHAPES
@pytest.mark.parametrize("by", ["respond", "wrap_model"])
def test_a_hooks_answer_names_the_model_the_call_asked_for(
    kind: str, is_async: bool, stream: bool, by: str
) -> None:
    hook = respond if by == "respond" else aanswer_whole if is_async else answer_whole
    named = models_named(kind, answers(kind, hook, is_async=is_async, stream=stream))
    assert named
    assert set(named) == {ASKED[kind]}


@KINDS
@SHAPES
def test_an_answer_naming_its_own_model_keeps_it(kind: str, is_async: bool, stream: bool) -> None:
    named = models_named(kind, answers(kind, respond_with_model, is_async=is_async, stream=stream))
    assert named
    assert set(named) == {"cache-v1"}


def test_a_streamed_answer_names_the_model_a_hook_asked_for() -> None:
    @hw.before_model
    def other_model(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(model="gpt-4o-mini")

    @hw.before_model(priority=-1)  # after `other_model`
    def respond_late(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("Cached.")

    client: Any = hw.wrap(FakeProvider().openai(), use=[other_model, respond_late])
    chunks = list(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
    assert {chunk.model for chunk in chunks} == {"gpt-4o-mini"}
