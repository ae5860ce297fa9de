"""A `wrap_model` hook's stream: the caller's shape stays (a stream answered to a call that
does not stream is the hook's error, naming it), and a fail-open hook whose stream hands on
something else than Chunks is left out, as for any error of its."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "hi"}]


@hw.wrap_model
def chunked(request: hw.ModelRequest, call_next: Any) -> Any:
    call_next(request)
    return iter([hw.Chunk("text", "x")])


@hw.wrap_model
async def achunked(request: hw.ModelRequest, call_next: Any) -> Any:
    await call_next(request)

    async def chunks() -> Any:
        yield hw.Chunk("text", "x")

    return chunks()


@hw.wrap_model
def yielding(request: hw.ModelRequest) -> Any:
    yield request
    return iter([hw.Chunk("text", "x")])


@hw.wrap_model
def ayielding(request: hw.ModelRequest) -> Any:
    yield request

    async def chunks() -> Any:
        yield hw.Chunk("text", "x")

    return chunks()


def ask(messages: Any) -> str:
    return "hello"


async def aask(messages: Any) -> str:
    return "hello"


@pytest.mark.parametrize("hook", [chunked, yielding])
def test_a_stream_answered_to_a_whole_call_is_the_hooks_error(hook: Any) -> None:
    with pytest.raises(TypeError, match="this call does not stream") as caught:
        hw.model(ask, use=[hook])(USER)
    assert f"wrap_model hook '{hook.__hookwrap__.name}'" in str(caught.value)


@pytest.mark.parametrize("hook", [achunked, ayielding])
def test_a_stream_answered_to_a_whole_async_call_is_the_hooks_error(hook: Any) -> None:
    with pytest.raises(TypeError, match="this call does not stream"):
        asyncio.run(hw.model(aask, use=[hook])(USER))


def test_a_fail_open_hook_answering_a_stream_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Any:
        call_next(request)
        return iter(["x"])

    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert hw.model(ask, use=[audit])(USER) == "hello"
    assert "fail-open wrap_model hook" in caplog.text
    assert "expected a response: this call does not stream" in caplog.text


def test_a_model_stream_without_stream_asked_for_is_still_a_stream() -> None:
    """A function that returns an iterator streams, asked or not (SPEC §4); a hook may pass
    on that stream or one of its own."""

    @hw.wrap_model
    def own(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = call_next(request)
        return (chunk.replace(text=chunk.text.upper()) for chunk in stream)

    assert list(hw.model(lambda messages: iter(["a", "b"]), use=[own])(USER)) == ["A", "B"]


def _texts(stream: Any) -> Any:
    for chunk in stream:
        yield chunk.text  # the hook's mistake: str, not Chunk


async def _atexts(stream: Any) -> Any:
    async for chunk in stream:
        yield chunk.text


def test_a_fail_open_stream_of_no_chunks_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest) -> Any:
        stream = yield request
        return _texts(stream)

    def model(messages: Any) -> Any:
        yield from ["a", "b", "c"]

    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert list(hw.model(model, use=[audit])(USER)) == ["a", "b", "c"]
    assert "streamed str ('a'); expected Chunk objects" in caplog.text


def test_a_fail_open_async_stream_of_no_chunks_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest) -> Any:
        stream = yield request
        return _atexts(stream)

    async def model(messages: Any) -> Any:
        for text in ["a", "b", "c"]:
            yield text

    async def main() -> list[str]:
        return [text async for text in hw.model(model, use=[audit])(USER)]

    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert asyncio.run(main()) == ["a", "b", "c"]
    assert "streamed str ('a'); expected Chunk objects" in caplog.text


def test_a_stream_of_no_chunks_is_still_an_error_of_a_hook_not_fail_open() -> None:
    @hw.wrap_model
    def audit(request: hw.ModelRequest) -> Any:
        stream = yield request
        return _texts(stream)

    with pytest.raises(TypeError, match="expected Chunk objects"):
        list(hw.model(lambda messages: iter(["a"]), use=[audit])(USER))


def test_explain_shows_the_switches_where_they_apply() -> None:
    @hw.wrap_model
    def layer(request: hw.ModelRequest) -> Any:
        return (yield request)

    @hw.before_model
    def before(request: hw.ModelRequest) -> None:
        return None

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        return None

    @hw.on_finish
    def finished(info: Any) -> None:
        return None

    stack = hw.Stack(
        layer, before, after, finished, continue_on_error=True, continue_on_response=True
    )
    rows = {line.split()[0]: line for line in hw.explain(hw.model(ask, use=[stack])).splitlines()}
    assert rows["before_model"].endswith("continue-on-error, continue-on-response")
    assert rows["after_model"].endswith("continue-on-error")
    assert "continue" not in rows["wrap_model"]
    assert "continue" not in rows["on_finish"]
