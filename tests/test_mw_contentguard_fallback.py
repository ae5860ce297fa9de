"""ContentGuard after a Fallback in `use=` (the order the middleware page shows): an
alternative's streamed answer, which the Fallback gets outside the guard's `wrap_model`
hook, is guarded as the first model's would be: as one text however it was split, the
held-back tail released at its end, `block=True` ending it, each change reported once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback, Retry
from hookwrap.middleware._contentguard import ContentGuard, Filtered
from hookwrap.testing import FakeProvider

KINDS = ("sync", "async")
KEY = (r"sk-[a-z0-9]{8,20}", "[key]")
SECRET = "sk-zzzzzzzz9999"
ANSWER = f"backup key {SECRET} end"
SPLIT = ["backup key sk-zz", "zzzzzz99", "99 end"]  # the key spread over three chunks
USER = [{"role": "user", "content": "hi"}]


def down(kind: str) -> Callable[..., Any]:
    """A streaming model that fails before its first chunk (its stream was already made)."""
    if kind == "sync":

        def llm(messages: list[dict[str, str]]) -> Iterator[str]:
            raise ConnectionError("down")
            yield ""  # pragma: no cover

        return llm

    async def allm(messages: list[dict[str, str]]) -> AsyncIterator[str]:
        raise ConnectionError("down")
        yield ""  # pragma: no cover

    return allm


def up(kind: str, pieces: list[str]) -> Callable[..., Any]:
    """A streaming model that answers `pieces`."""
    if kind == "sync":

        def llm(messages: list[dict[str, str]]) -> Iterator[str]:
            yield from pieces

        return llm

    async def allm(messages: list[dict[str, str]]) -> AsyncIterator[str]:
        for piece in pieces:
            yield piece

    return allm


def streamed_backup(messages: list[dict[str, str]]) -> Iterator[str]:
    yield from SPLIT


def whole_backup(messages: list[dict[str, str]]) -> str:
    return ANSWER


def consume(kind: str, fn: Callable[..., Any], into: list[str] | None = None) -> str:
    """The text `fn(USER)` streams; `into` gets each piece as it comes."""
    received: list[str] = [] if into is None else into
    if kind == "sync":
        received.extend(fn(USER))
    else:

        async def main() -> None:
            async for piece in fn(USER):
                received.append(piece)

        asyncio.run(main())
    return "".join(received)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backup", [streamed_backup, whole_backup])
@pytest.mark.parametrize("retry", [False, True])
def test_an_alternative_stream_is_guarded_as_one_text(
    kind: str, backup: Callable[..., Any], retry: bool
) -> None:
    records: list[Filtered] = []
    guard = ContentGuard(rules=[KEY], window=20, on_filtered=records.append)
    use: list[Any] = [Fallback(models=[backup]), guard]
    if retry:
        use.insert(1, Retry(max_retries=0))
    assert consume(kind, hw.model(down(kind), use=use)) == "backup key [key] end"
    assert records == [Filtered(KEY, SECRET, "[key]")]  # once: not filtered again


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_model_stream_is_still_guarded_once(kind: str) -> None:
    records: list[Filtered] = []
    guard = ContentGuard(rules=[KEY], window=20, on_filtered=records.append)
    model = hw.model(up(kind, SPLIT), use=[Fallback(models=[whole_backup]), guard])
    assert consume(kind, model) == "backup key [key] end"
    assert records == [Filtered(KEY, SECRET, "[key]")]


@pytest.mark.parametrize("kind", KINDS)
def test_text_of_an_alternative_is_released_before_its_stream_ends(kind: str) -> None:
    """Held back up to the window, not to the end: the caller gets text as it comes."""
    pieces = ["a" * 30, "b" * 30, "c" * 30]

    def backup(messages: list[dict[str, str]]) -> Iterator[str]:
        yield from pieces

    guard = ContentGuard(rules=[KEY], window=20)
    received: list[str] = []
    text = consume(kind, hw.model(down(kind), use=[Fallback(models=[backup]), guard]), received)
    assert text == "".join(pieces)
    assert len(received) > 1
    assert received[0] == "a" * 9  # all but the last `window + 1` characters


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backup", [streamed_backup, whole_backup])
def test_block_ends_an_alternative_stream(kind: str, backup: Callable[..., Any]) -> None:
    reasons: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    guard = ContentGuard(rules=[KEY], window=20, block=True)
    received: list[str] = []
    model = hw.model(down(kind), use=[Fallback(models=[backup]), guard, aborted])
    with pytest.raises(hw.Aborted, match=r"ContentGuard blocked .* rule 0 .* matched"):
        consume(kind, model, received)
    assert "sk-" not in "".join(received)
    assert [reason and reason.split(":")[0] for reason in reasons] == [
        "ContentGuard blocked the model's output"
    ]


def test_an_agent_stream_from_an_alternative_is_guarded() -> None:
    guard = ContentGuard(rules=[KEY], window=20)
    agent = hw.Agent(down("sync"), use=[Fallback(models=[streamed_backup]), guard])
    events = list(agent.stream("hi"))
    assert "".join(e.text or "" for e in events if e.kind == "chunk") == "backup key [key] end"
    assert events[-1].result is not None
    assert events[-1].result.text == "backup key [key] end"


# -- SDK clients: an OpenAI caller that falls back to Claude ---------------------------------


def openai_to_claude(kind: str, guard: ContentGuard) -> tuple[FakeProvider, Any]:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary = FakeProvider(["never sent"])
    backup = FakeProvider([ANSWER], chunk_size=3)  # the key over several chunks
    is_async = kind == "async"
    claude = backup.anthropic(is_async, max_retries=0)
    client = hw.wrap(
        primary.openai(is_async, max_retries=0),
        use=[Fallback(models=[(claude, "claude")]), Retry(max_retries=0), guard],
    )
    primary.fail(503)
    return primary, client


def read_openai(kind: str, client: Any, into: list[str]) -> str:
    def text(chunk: Any) -> str:
        return (chunk.choices[0].delta.content or "") if chunk.choices else ""

    if kind == "sync":
        stream = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
        into.extend(text(chunk) for chunk in stream)
    else:

        async def main() -> None:
            stream = await client.chat.completions.create(
                model="gpt-4o", messages=USER, stream=True
            )
            async for chunk in stream:
                into.append(text(chunk))

        asyncio.run(main())
    return "".join(into)


@pytest.mark.parametrize("kind", KINDS)
def test_an_sdk_alternative_stream_is_guarded(kind: str) -> None:
    records: list[Filtered] = []
    guard = ContentGuard(rules=[KEY], window=20, on_filtered=records.append)
    _, client = openai_to_claude(kind, guard)
    assert read_openai(kind, client, []) == "backup key [key] end"
    assert records == [Filtered(KEY, SECRET, "[key]")]


@pytest.mark.parametrize("kind", KINDS)
def test_block_ends_an_sdk_alternative_stream(kind: str) -> None:
    guard = ContentGuard(rules=[KEY], window=20, block=True)
    _, client = openai_to_claude(kind, guard)
    received: list[str] = []
    with pytest.raises(hw.Aborted, match=r"ContentGuard blocked .* rule 0 .* matched"):
        read_openai(kind, client, received)
    assert "sk-" not in "".join(received)
