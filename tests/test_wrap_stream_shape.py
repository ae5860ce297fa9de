"""A `wrap_model` hook's stream: a fail-open hook whose stream hands on something else than
Chunks is left out, as for any error of its; `hw.explain` shows a stack's switches only
where they change something."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "hi"}]


def ask(messages: Any) -> str:
    return "hello"


def test_a_model_stream_without_stream_asked_for_is_still_a_stream() -> None:
    """A function that returns an iterator streams, asked or not (SPEC §4); a hook may pass
    on that stream or one of its own. (Passes before the change too.)"""

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


def test_an_agent_takes_a_hooks_stream_for_a_whole_answer() -> None:
    """A replay hook answering chunks: the agent reads a stream or a whole answer alike."""

    @hw.wrap_model
    def replay(request: hw.ModelRequest, call_next: Any) -> Any:
        return iter([hw.Chunk("text", "cached "), hw.Chunk("text", "answer")])

    assert hw.Agent(lambda messages: "whole", use=[replay]).run("hi").text == "cached answer"
    events = list(hw.Agent(lambda messages: "whole", use=[replay]).stream("hi"))
    result = events[-1].result
    assert result is not None
    assert result.text == "cached answer"
