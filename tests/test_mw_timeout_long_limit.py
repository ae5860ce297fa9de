"""A `Timeout` limit longer than a thread can wait (`threading.TIMEOUT_MAX`) is no limit in
effect: sync model calls, streams and tool calls work under it, as async ones do."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import hookwrap as hw
from hookwrap.middleware import Timeout

LIMITS = [threading.TIMEOUT_MAX * 2, 1e300]


@pytest.mark.parametrize("limit", LIMITS, ids=["past TIMEOUT_MAX", "1e300"])
def test_sync_model_call_under_a_long_limit(limit: float) -> None:
    def answer(prompt: str) -> str:
        return "answer"

    ask = hw.model(answer, use=[Timeout(model=limit)])
    assert ask("q") == "answer"


@pytest.mark.parametrize("limit", LIMITS, ids=["past TIMEOUT_MAX", "1e300"])
def test_sync_stream_under_a_long_limit(limit: float) -> None:
    def stream(prompt: str) -> Iterator[str]:
        yield "a"
        yield "b"

    ask = hw.model(stream, use=[Timeout(model=limit)])
    assert "".join(ask("q")) == "ab"


@pytest.mark.parametrize("limit", LIMITS, ids=["past TIMEOUT_MAX", "1e300"])
def test_sync_tool_call_under_a_long_limit(limit: float) -> None:
    @hw.tool(use=[Timeout(tool=limit)])
    def t() -> str:
        """t"""
        return "tool ok"

    assert t() == "tool ok"
