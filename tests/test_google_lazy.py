"""google-genai: what no hook reads is never parsed by hookwrap (the SDK parses the JSON it
gets anyway), a hook that reads the answer still sees it whole, and a stream handed on as the
SDK sent it still closes its HTTP body when closed early."""

# google-genai's signatures name `PIL.Image.Image`; without Pillow installed pyright sees
# Unknown in every `generate_content`, so only that report is off here.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.adapters import google
from hookwrap.adapters._wire import loads
from hookwrap.testing import FakeProvider

pytest.importorskip("google.genai")

MODEL = "gemini-2.0-flash"


def counted_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The bodies the google adapter parses from now on."""
    parsed: list[object] = []

    def counting(data: Any) -> Any:
        parsed.append(data)
        return loads(data)

    monkeypatch.setattr(google, "loads", counting)
    return parsed


def hooks(read: list[hw.ModelResponse]) -> list[Any]:
    """A before, after and wrap hook that look at nothing; the after hook keeps the answer
    in `read` (without reading it)."""

    @hw.before_model
    def before(request: hw.ModelRequest) -> None:
        return None

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        read.append(response)

    @hw.wrap_model
    def around(request: hw.ModelRequest) -> Generator[hw.ModelRequest, Any, Any]:
        return (yield request)

    return [before, after, around]


@pytest.mark.parametrize("streamed", [False, True])
def test_an_answer_no_hook_reads_is_not_parsed(
    monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    read: list[hw.ModelResponse] = []
    wrapped = hw.wrap(FakeProvider().genai(), use=hooks(read))
    parsed = counted_loads(monkeypatch)
    if streamed:
        chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
        text = "".join(c.text or "" for c in chunks)
    else:
        text = wrapped.models.generate_content(model=MODEL, contents="hi").text or ""
    assert text == "You said: hi"
    assert parsed == []
    assert len(read) == 1
    assert read[0].message.content == "You said: hi"  # read now: parsed now
    assert parsed


@pytest.mark.parametrize("streamed", [False, True])
def test_async_an_answer_no_hook_reads_is_not_parsed(
    monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    read: list[hw.ModelResponse] = []
    wrapped = hw.wrap(FakeProvider().genai(), use=hooks(read))
    parsed = counted_loads(monkeypatch)

    async def call() -> str:
        models = wrapped.aio.models
        if streamed:
            stream = await models.generate_content_stream(model=MODEL, contents="hi")
            return "".join([c.text or "" async for c in stream])
        return (await models.generate_content(model=MODEL, contents="hi")).text or ""

    assert asyncio.run(call()) == "You said: hi"
    assert parsed == []
    assert read[0].message.content == "You said: hi"
    assert parsed


@pytest.mark.parametrize("taken", [1, 2])
def test_a_stream_closed_early_closes_its_http_body(taken: int) -> None:
    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(), use=hooks([]))
    stream: Any = wrapped.models.generate_content_stream(model=MODEL, contents="hi")
    assert [next(stream).text for _ in range(taken)] == ["You ", "said"][:taken]
    stream.close()
    assert provider.closed == 1
