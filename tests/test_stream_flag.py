"""Whether a call streams is the caller's: it decides the native type the caller gets.
A hook that changes `request.stream` is refused with a `TypeError` saying so, neither
honoured (another type back) nor ignored. Real SDKs against the fake provider, and plain
functions, sync and async."""

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

USER: Any = [{"role": "user", "content": "hi"}]
KINDS = pytest.mark.parametrize("kind", ["anthropic", "chat", "completions", "gemini", "responses"])
SHAPES = pytest.mark.parametrize(
    ("is_async", "stream"), [(False, False), (True, False), (False, True), (True, True)]
)


@hw.before_model
def flip(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(stream=not request.stream)


@hw.before_model(priority=-1)  # after `flip`, with the request it left
def answer(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond("Cached.")


def call(
    kind: str, provider: FakeProvider, hooks: list[Any], *, is_async: bool, stream: bool
) -> Any:
    """One call of `kind` with `hooks`, read to its end: what the caller gets."""
    sdk = {"gemini": "google.genai", "anthropic": "anthropic"}.get(kind, "openai")
    pytest.importorskip(sdk)
    streams: dict[str, Any] = {"stream": True} if stream else {}
    make: Callable[[], Any]
    if kind == "gemini":
        client: Any = hw.wrap(provider.genai(), use=hooks)
        models = client.aio.models if is_async else client.models
        method = models.generate_content_stream if stream else models.generate_content
        make = lambda: method(model="gemini-x", contents="hi")  # noqa: E731
    elif kind == "anthropic":
        client = hw.wrap(provider.anthropic(is_async), use=hooks)
        make = lambda: client.messages.create(  # noqa: E731
            model="claude-x", max_tokens=5, messages=USER, **streams
        )
    else:
        client = hw.wrap(provider.openai(is_async), use=hooks)
        if kind == "chat":
            make = lambda: client.chat.completions.create(model="m", messages=USER, **streams)  # noqa: E731
        elif kind == "completions":
            make = lambda: client.completions.create(model="m", prompt="hi", **streams)  # noqa: E731
        else:
            make = lambda: client.responses.create(model="m", input="hi", **streams)  # noqa: E731

    async def aread() -> Any:
        made = await make()
        return [item async for item in made] if stream else made

    if is_async:
        return asyncio.run(aread())
    made = make()
    return list(made) if stream else made


@KINDS
@SHAPES
def test_a_hook_changing_stream_is_refused_before_anything_is_sent(
    kind: str, is_async: bool, stream: bool
) -> None:
    provider = FakeProvider()
    does = "streams" if stream else "does not stream"
    expected = rf"request\.stream={not stream}, but this call {does}; the call's shape"
    with pytest.raises(TypeError, match=expected):
        call(kind, provider, [flip], is_async=is_async, stream=stream)
    assert not provider.requests


@KINDS
@SHAPES
def test_a_hook_answering_after_changing_stream_is_refused(
    kind: str, is_async: bool, stream: bool
) -> None:
    does = "streams" if stream else "does not stream"
    with pytest.raises(TypeError, match=rf"request\.stream={not stream}, but this call {does}"):
        call(kind, FakeProvider(), [flip, answer], is_async=is_async, stream=stream)


def test_the_messages_stream_helper_refuses_a_hook_that_turns_streaming_off() -> None:
    pytest.importorskip("anthropic")
    client = hw.wrap(FakeProvider().anthropic(), use=[flip])
    stream = client.messages.stream(model="claude-x", max_tokens=5, messages=USER)
    refused = pytest.raises(TypeError, match=r"request\.stream=False, but this call streams")
    with refused, stream as events:
        events.get_final_text()


@hw.before_model
def same_stream(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(stream=request.stream, model="other")


@KINDS
@SHAPES
def test_a_hook_leaving_stream_as_it_came_changes_the_rest(
    kind: str, is_async: bool, stream: bool
) -> None:
    provider = FakeProvider("Hello")
    call(kind, provider, [same_stream], is_async=is_async, stream=stream)
    sent = provider.requests[-1]
    assert sent.request.model == "other"
    assert sent.request.stream is stream


# -- plain functions ---------------------------------------------------------------------------


def whole(messages: Any) -> str:
    return "Hello"


def words(messages: Any) -> Any:
    yield "Hel"
    yield "lo"


async def awhole(messages: Any) -> str:
    return "Hello"


async def awords(messages: Any) -> Any:
    yield "Hel"
    yield "lo"


def optional(messages: Any, stream: bool = False) -> Any:
    return iter(["Hel", "lo"]) if stream else "Hello"


def call_function(fn: Any, hooks: list[Any], streams: bool, **kwargs: Any) -> Any:
    made = hw.model(fn, use=hooks)(USER, **kwargs)
    if not hasattr(made, "__await__") and not hasattr(made, "__aiter__"):
        return list(made) if streams else made

    async def read() -> Any:
        return [item async for item in made] if streams else await made

    return asyncio.run(read())


FUNCTIONS = pytest.mark.parametrize(
    ("fn", "stream"), [(whole, False), (words, True), (awhole, False), (awords, True)]
)


@FUNCTIONS
@pytest.mark.parametrize("answers", [False, True])
def test_a_hook_changing_a_functions_stream_is_refused(
    fn: Any, stream: bool, answers: bool
) -> None:
    does = "streams" if stream else "does not stream"
    hooks = [flip, answer] if answers else [flip]
    with pytest.raises(TypeError, match=rf"request\.stream={not stream}, but this call {does}"):
        call_function(fn, hooks, stream)


@hw.before_model
def keep_stream(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(stream=request.stream)


@pytest.mark.parametrize("stream", [False, True])
def test_a_functions_own_stream_argument_is_the_callers_too(stream: bool) -> None:
    does = "streams" if stream else "does not stream"
    with pytest.raises(TypeError, match=rf"request\.stream={not stream}, but this call {does}"):
        call_function(optional, [flip], stream, stream=stream)
    assert call_function(optional, [keep_stream], stream, stream=stream) == (
        ["Hel", "lo"] if stream else "Hello"
    )


def test_a_function_answering_a_streamed_call_whole_keeps_its_answer_through_hooks() -> None:
    """A function may answer `stream=True` whole: no hook changed `stream`, so a hook that
    changes the answer is no reason to refuse it."""

    @hw.after_model
    def louder(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.upper()))

    def llm(messages: Any, stream: bool = False) -> str:
        return "hello"

    def loose(messages: Any, **options: Any) -> str:
        return "hello"

    assert hw.model(llm, use=[louder])(USER, stream=True) == "HELLO"
    assert hw.model(loose, use=[louder])(USER, stream=True) == "HELLO"
