"""A `wrap_model` hook answering a stream to a call whose caller waits for a whole answer
is that hook's error (SPEC §4: the caller gets its native kind of answer), while a call
whose shape only the model decides, and an agent (it reads either), still take it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]
CACHED = [hw.Chunk("text", "cached "), hw.Chunk("text", "answer")]


async def _achunks() -> AsyncIterator[hw.Chunk]:
    for chunk in CACHED:
        yield chunk


@hw.wrap_model
def after_model_ran(request: hw.ModelRequest, call_next: Any) -> Any:
    call_next(request)
    return iter(CACHED)


@hw.wrap_model
def replay(request: hw.ModelRequest, call_next: Any) -> Any:
    return iter(CACHED)  # the model is never asked


@hw.wrap_model
def yielding(request: hw.ModelRequest) -> Any:
    yield request
    return iter(CACHED)


@hw.wrap_model
async def areplay(request: hw.ModelRequest, call_next: Any) -> Any:
    await call_next(request)
    return _achunks()


@hw.wrap_model
def ayielding(request: hw.ModelRequest) -> Any:
    yield request
    return _achunks()


def answer(messages: Any) -> str:
    return "whole"


async def aanswer(messages: Any) -> str:
    return "whole"


def unannotated(messages):  # type: ignore[no-untyped-def]
    return "whole"


def _refused(caught: pytest.ExceptionInfo[TypeError], hook: Any) -> None:
    assert "this call does not stream" in str(caught.value)
    assert f"wrap_model hook '{hook.__hookwrap__.name}'" in str(caught.value)


@pytest.mark.parametrize("hook", [after_model_ran, replay, yielding])
def test_a_stream_for_a_call_annotated_whole_is_the_hooks_error(hook: Any) -> None:
    with pytest.raises(TypeError) as caught:
        hw.model(answer, use=[hook])(USER)
    _refused(caught, hook)


@pytest.mark.parametrize("hook", [areplay, ayielding])
def test_a_stream_for_an_async_call_annotated_whole_is_the_hooks_error(hook: Any) -> None:
    with pytest.raises(TypeError) as caught:
        asyncio.run(hw.model(aanswer, use=[hook])(USER))
    _refused(caught, hook)


def test_a_stream_after_an_unannotated_model_answered_whole_is_the_hooks_error() -> None:
    """The model's answer decides the shape of a call its annotation does not."""
    with pytest.raises(TypeError) as caught:
        hw.model(unannotated, use=[after_model_ran])(USER)
    _refused(caught, after_model_ran)


def test_a_replay_for_an_unannotated_model_never_asked_streams() -> None:
    """Nothing says the call is whole: the hook's stream is the answer."""
    assert list(hw.model(unannotated, use=[replay])(USER)) == ["cached ", "answer"]


def test_a_model_annotated_whole_that_streams_is_no_hooks_error() -> None:
    """The function streamed (whatever its annotation says): a hook passing its stream on,
    or one of its own over it, is not blamed."""

    def streams(messages: Any) -> str:
        return iter(["a", "b"])  # type: ignore[return-value]

    @hw.wrap_model
    def upper(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        return (chunk.replace(text=chunk.text.upper()) for chunk in call_next(request))

    assert list(hw.model(streams, use=[upper])(USER)) == ["A", "B"]


def test_a_fail_open_hook_streaming_to_a_whole_call_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Any:
        call_next(request)
        return iter(CACHED)

    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert hw.model(answer, use=[audit])(USER) == "whole"
    assert "this call does not stream" in caplog.text


def _needs(sdk: str) -> None:
    if sdk.startswith("google"):  # (not installed on every Python this runs on)
        pytest.importorskip("google.genai")


def _sdk_calls(provider: FakeProvider, is_async: bool, sdk: str) -> tuple[Any, Any]:
    """The client named `sdk` and its whole call."""
    _needs(sdk)
    calls: dict[str, tuple[Any, Any]] = {
        "openai": (
            lambda: provider.openai(is_async),
            lambda c: c.chat.completions.create(model="m", messages=USER),
        ),
        "openai responses": (
            lambda: provider.openai(is_async),
            lambda c: c.responses.create(model="m", input="hi"),
        ),
        "anthropic": (
            lambda: provider.anthropic(is_async),
            lambda c: c.messages.create(model="m", max_tokens=10, messages=USER),
        ),
        "google": (
            provider.genai,
            (lambda c: c.aio.models.generate_content(model="m", contents="hi"))
            if is_async
            else (lambda c: c.models.generate_content(model="m", contents="hi")),
        ),
    }
    make, call = calls[sdk]
    return make(), call


@pytest.mark.parametrize("sdk", ["openai", "openai responses", "anthropic", "google"])
def test_a_stream_for_a_whole_sdk_call_is_the_hooks_error(sdk: str) -> None:
    provider = FakeProvider(["hello"])
    client, call = _sdk_calls(provider, False, sdk)
    with pytest.raises(TypeError) as caught:
        call(hw.wrap(client, use=[yielding]))
    _refused(caught, yielding)
    assert provider.requests  # the model was asked: the hook's answer is refused after


@pytest.mark.parametrize("sdk", ["openai", "openai responses", "anthropic", "google"])
def test_a_stream_for_a_whole_async_sdk_call_is_the_hooks_error(sdk: str) -> None:
    client, call = _sdk_calls(FakeProvider(["hello"]), True, sdk)
    with pytest.raises(TypeError) as caught:
        asyncio.run(call(hw.wrap(client, use=[ayielding])))
    _refused(caught, ayielding)


def _agent_model(provider: FakeProvider, is_async: bool, model: str) -> Any:
    _needs(model)
    models: dict[str, Any] = {
        "function": lambda: aanswer if is_async else answer,
        "openai": lambda: (provider.openai(is_async), "m"),
        "anthropic": lambda: (provider.anthropic(is_async), "m"),
        "google": lambda: (provider.genai(), "m"),
    }
    return models[model]()


@pytest.mark.parametrize("model", ["function", "openai", "anthropic", "google"])
def test_an_agent_reads_a_hooks_stream_for_a_whole_call(model: str) -> None:
    seen: list[str] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    agent = hw.Agent(_agent_model(FakeProvider(["hello"]), False, model), use=[replay, record])
    assert agent.run("hi").text == "cached answer"
    assert seen == ["cached answer"]


@pytest.mark.parametrize("model", ["function", "openai", "anthropic", "google"])
def test_an_async_agent_reads_a_hooks_stream_for_a_whole_call(model: str) -> None:
    @hw.wrap_model
    async def areplay_only(request: hw.ModelRequest, call_next: Any) -> Any:
        return _achunks()

    agent = hw.Agent(_agent_model(FakeProvider(["hello"]), True, model), use=[areplay_only])
    assert asyncio.run(agent.arun("hi")).text == "cached answer"
