"""A `Respond`ed answer to a plain function (SPEC §4, docs/streams.md "When the model never
runs") comes back in the form the function's return annotation names, read from the type it
resolves to (not from the spelling of its name), and as a stream when that annotation is an
iterator, whether or not the function is a generator function."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Mapping
from typing import Annotated, Any, Optional, TypedDict

import pytest

import hookwrap as hw

MESSAGES = [{"role": "user", "content": "hi"}]


class ChatMessage(TypedDict):  # a dict, whatever its name says
    role: str
    content: str


class Reply(TypedDict):
    role: str
    content: str


class TextChunk(TypedDict):  # a dict chunk
    kind: str
    text: str


class Verdict:  # no dict, though its name holds "dict"
    pass


@pytest.fixture(params=[False, True], ids=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@hw.before_model
def canned(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond("Canned.")


def annotated(fn: Callable[..., Any], returns: Any) -> Callable[..., Any]:
    """`fn` with `returns` as its return annotation (a type, or text resolved as if written
    in this module)."""
    fn.__annotations__["return"] = returns
    return fn


def whole(is_async: bool, returns: Any, answer: Any = "model") -> Callable[..., Any]:
    """A model function giving `answer` whole, annotated `-> returns`."""
    if is_async:

        async def allm(messages: list[Any]) -> Any:
            return answer

        return annotated(allm, returns)

    def llm(messages: list[Any]) -> Any:
        return answer

    return annotated(llm, returns)


def streaming(is_async: bool, generator: bool, returns: Any) -> Callable[..., Any]:
    """A model function streaming "model", as a generator function or as a plain function
    returning an iterator."""
    if is_async:

        async def agen(messages: list[Any]) -> AsyncIterator[str]:
            yield "model"

        async def areturns(messages: list[Any]) -> Any:
            return agen(messages)

        return annotated(agen if generator else areturns, returns)

    def gen(messages: list[Any]) -> Iterator[str]:
        yield "model"

    def returns_iterator(messages: list[Any]) -> Any:
        return iter(["model"])

    return annotated(gen if generator else returns_iterator, returns)


def call(fn: Callable[..., Any], is_async: bool) -> Any:
    """`fn(MESSAGES)`, awaited when it is async."""
    if not is_async:
        return fn(MESSAGES)

    async def main() -> Any:
        return await fn(MESSAGES)

    return asyncio.run(main())


def pull(fn: Callable[..., Any], is_async: bool) -> list[Any]:
    """Every item of the stream `fn(MESSAGES)` gives (awaited first when it is awaitable)."""
    if not is_async:
        return list(fn(MESSAGES))

    async def main() -> list[Any]:
        stream = fn(MESSAGES)
        if hasattr(stream, "__await__"):
            stream = await stream
        return [item async for item in stream]

    return asyncio.run(main())


AS_STR = "Canned."
AS_DICT = {"role": "assistant", "content": "Canned."}


@pytest.mark.parametrize(
    ("returns", "expected"),
    [
        (ChatMessage, AS_DICT),
        (Reply, AS_DICT),
        (Annotated[Reply, "meta"], AS_DICT),
        (Optional[Reply], AS_DICT),  # noqa: UP045 - the spelling under test
        (Mapping[str, Any], AS_DICT),
        (dict[str, str] | None, AS_DICT),
        (Reply | str, AS_DICT),  # the first member decides
        (str | Reply, AS_STR),
        (Verdict, AS_STR),
        ("Verdict | str", AS_STR),
        (str, AS_STR),
        ("hw.Message", "Message"),
        (Optional[hw.Message], "Message"),  # noqa: UP045
        # not resolvable: the text is read by whole names
        ("Unknown | ChatMessage", AS_STR),
        ("UnknownVerdict", AS_STR),
        ("Unknown | hw.Message", "Message"),
        ("dict[str, Unknown]", AS_DICT),
    ],
    ids=str,
)
def test_a_responded_answer_takes_the_form_the_annotation_resolves_to(
    is_async: bool, returns: Any, expected: Any
) -> None:
    got = call(hw.model(whole(is_async, returns), use=[canned]), is_async)
    if expected == "Message":
        assert isinstance(got, hw.Message)
        assert got.text == "Canned."
    else:
        assert got == expected


@pytest.mark.parametrize("generator", [True, False], ids=["generator", "returns an iterator"])
@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (str, AS_STR),
        (dict[str, Any], {"kind": "text", "text": "Canned."}),
        (TextChunk, {"kind": "text", "text": "Canned."}),
        (hw.Chunk, hw.Chunk("text", "Canned.")),
    ],
    ids=["str", "dict", "TypedDict", "Chunk"],
)
def test_a_responded_answer_streams_when_the_annotation_is_an_iterator(
    is_async: bool, generator: bool, item: Any, expected: Any
) -> None:
    """A plain function annotated `-> Iterator[...]` streams as a generator function does:
    hooks see a streamed call, and the caller gets a stream of one chunk of that form."""
    seen: list[bool] = []

    @hw.before_model
    def streamed(request: hw.ModelRequest) -> None:
        seen.append(request.stream)

    returns = AsyncIterator[item] if is_async else Iterator[item]
    fn = streaming(is_async, generator, returns)
    assert pull(hw.model(fn), is_async) == ["model"]
    got = pull(hw.model(fn, use=[streamed, canned]), is_async)
    assert got == [expected]
    assert type(got[0]) is type(expected)
    assert seen == [True]


@pytest.mark.parametrize(
    ("returns", "expected"),
    [
        (Iterable[str], AS_STR),
        (Generator[str, None, None], AS_STR),
        (Annotated[Iterator[Reply], "meta"], {"kind": "text", "text": "Canned."}),
        (Optional[Iterator[str]], AS_STR),  # noqa: UP045
        ("Iterator[Unknown]", AS_STR),
        ("Iterator[hw.Chunk | Unknown]", hw.Chunk("text", "Canned.")),
    ],
    ids=str,
)
def test_every_spelling_of_a_sync_stream_streams(returns: Any, expected: Any) -> None:
    fn = streaming(False, False, returns)
    assert pull(hw.model(fn, use=[canned]), False) == [expected]


def test_a_function_annotated_as_a_stream_that_answers_whole_still_answers_whole(
    is_async: bool,
) -> None:
    """When the model runs, what it returned decides: a whole answer comes back whole (a
    `str` is an `Iterable[str]` too)."""
    log: list[str] = []

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(response.text)

    fn = whole(is_async, AsyncIterator[str] if is_async else Iterable[str], "whole")
    assert call(hw.model(fn), is_async) == "whole"
    assert call(hw.model(fn, use=[after]), is_async) == "whole"
    assert log == ["whole"]


def test_a_whole_answer_passed_through_a_wrap_hook_still_answers_whole(is_async: bool) -> None:
    """A `wrap_model` hook that hands the model's own whole answer on leaves it whole; only
    an answer of the hook's own becomes a stream of a call known to stream."""

    @hw.wrap_model
    def passing(request: hw.ModelRequest) -> Generator[Any, Any, Any]:
        response = yield request
        return response

    @hw.wrap_model
    def own(request: hw.ModelRequest) -> Generator[Any, Any, Any]:
        yield request
        return "cached"

    fn = whole(is_async, AsyncIterator[str] if is_async else Iterable[str], "whole")
    assert call(hw.model(fn, use=[passing]), is_async) == "whole"
    assert pull(hw.model(fn, use=[own]), is_async) == ["cached"]
