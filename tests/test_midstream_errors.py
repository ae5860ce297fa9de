"""A connection that drops in the middle of a stream ends the call with the SDK's own error.

Recent OpenAI releases raise a transport's error met while a stream is read (a reset
connection, a read timeout) as an `APIConnectionError` or `APITimeoutError` made from it,
as they do when the request itself fails; older ones, and Anthropic's, let it through as it
is. Either way the caller gets what the SDK alone raises, and the hooks (`on_error`, a
`wrap_model` hook reading the stream) get that very object, so a note an `on_error` hook
adds lands on the error the caller catches.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

USER: Any = [{"role": "user", "content": "hi"}]
EVENTS_BEFORE_THE_DROP = 3


def _http_module(sdk: Any) -> Any:
    """httpx2, or httpx for older releases: what the SDK's own client is built on."""
    return next(
        sys.modules[root]
        for cls in sdk.DefaultHttpxClient.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )


def client(sdk_name: str, is_async: bool, error: str) -> Any:
    """A client of `sdk_name` whose streams raise the transport's `error` (an httpx error
    class name) after a few events, as a connection reset mid-stream does."""
    sdk = anthropic if sdk_name == "anthropic" else openai
    httpx = _http_module(sdk)
    inner = FakeProvider("alpha beta gamma delta epsilon zeta", chunk_size=2).transport(httpx)

    def dropped(events: int) -> bool:
        return events >= EVENTS_BEFORE_THE_DROP

    class Dropping(httpx.BaseTransport, httpx.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        def handle_request(self, request: Any) -> Any:
            answer = inner.handle_request(request)

            class Body(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
                def __iter__(self) -> Iterator[bytes]:
                    events = 0
                    for data in answer.stream:
                        yield data
                        events += data.count(b"\n\n")
                        if dropped(events):
                            raise getattr(httpx, error)("connection reset", request=request)

            return httpx.Response(answer.status_code, headers=answer.headers, stream=Body())

        async def handle_async_request(self, request: Any) -> Any:
            answer = await inner.handle_async_request(request)

            class Body(httpx.AsyncByteStream):  # type: ignore[misc,name-defined]
                async def __aiter__(self) -> AsyncIterator[bytes]:
                    events = 0
                    async for data in answer.stream:
                        yield data
                        events += data.count(b"\n\n")
                        if dropped(events):
                            raise getattr(httpx, error)("connection reset", request=request)

            return httpx.Response(answer.status_code, headers=answer.headers, stream=Body())

    if is_async:
        http: Any = sdk.DefaultAsyncHttpxClient(transport=Dropping())
        made: Any = (anthropic.AsyncAnthropic if sdk is anthropic else openai.AsyncOpenAI)(
            api_key="x", base_url="http://fake/v1", http_client=http, max_retries=0
        )
        return made
    http = sdk.DefaultHttpxClient(transport=Dropping())
    cls: Any = anthropic.Anthropic if sdk is anthropic else openai.OpenAI
    return cls(api_key="x", base_url="http://fake/v1", http_client=http, max_retries=0)


def read(target: Any, is_async: bool, in_run: bool = False, how: str = "create") -> BaseException:
    """Stream a call of `target` to its end, in a `hw.run()` if `in_run`: what it raised.

    `how`: "create", or through `with_raw_response` ("raw") or `with_streaming_response`
    ("streaming") and then the stream `parse()` makes, or "lines": the latter's lines."""
    if isinstance(target, anthropic.Anthropic | anthropic.AsyncAnthropic):
        resource = target.messages
        kwargs: dict[str, Any] = {"model": "c", "max_tokens": 50, "messages": USER}
    else:
        resource = target.chat.completions
        kwargs = {"model": "m", "messages": USER}
    kwargs["stream"] = True
    if is_async:

        async def main() -> None:
            async with hw.run() if in_run else contextlib.nullcontext():
                if how == "create":
                    stream = await resource.create(**kwargs)
                elif how == "raw":  # (OpenAI's raw response parses at once, Anthropic's not)
                    stream = (await resource.with_raw_response.create(**kwargs)).parse()
                    stream = await stream if inspect.isawaitable(stream) else stream
                else:
                    async with resource.with_streaming_response.create(**kwargs) as response:
                        lines = response.iter_lines() if how == "lines" else await response.parse()
                        async for _ in lines:
                            pass
                    return
                async for _ in stream:
                    pass

        with pytest.raises(Exception) as caught:
            asyncio.run(main())
        return caught.value
    with pytest.raises(Exception) as caught, hw.run() if in_run else contextlib.nullcontext():
        if how == "create":
            stream = resource.create(**kwargs)
        elif how == "raw":
            stream = resource.with_raw_response.create(**kwargs).parse()
        else:
            with resource.with_streaming_response.create(**kwargs) as response:
                stream = response.iter_lines() if how == "lines" else response.parse()
                for _ in stream:
                    pass
        for _ in stream:
            pass
    return caught.value


def watching(is_async: bool, seen: list[tuple[str, BaseException]]) -> list[Any]:
    """An `on_error` hook and a `wrap_model` hook reading the stream, noting what they get."""

    @hw.on_error
    def noted(info: hw.FinishInfo) -> None:
        assert info.error is not None
        seen.append(("on_error", info.error))

    if is_async:

        @hw.wrap_model
        async def awatch(request: hw.ModelRequest, call_next: Any) -> Any:
            stream = await call_next(request)

            async def watched() -> AsyncIterator[hw.Chunk]:
                try:
                    async for chunk in stream:
                        yield chunk
                except Exception as error:
                    seen.append(("wrap_model", error))
                    raise

            return watched()

        return [noted, awatch]

    @hw.wrap_model
    def watch(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = call_next(request)

        def watched() -> Iterator[hw.Chunk]:
            try:
                yield from stream
            except Exception as error:
                seen.append(("wrap_model", error))
                raise

        return watched()

    return [noted, watch]


SDKS = ["openai", "anthropic"]
ERRORS = ["ReadError", "ReadTimeout"]


@pytest.mark.parametrize("in_run", [False, True], ids=["call", "in_run"])
@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", SDKS)
def test_hooks_and_caller_get_the_sdks_error(
    sdk: str, is_async: bool, error: str, in_run: bool
) -> None:
    alone = read(client(sdk, is_async, error), is_async)
    seen: list[tuple[str, BaseException]] = []
    hooked = hw.wrap(client(sdk, is_async, error), use=watching(is_async, seen))

    caught = read(hooked, is_async, in_run)

    assert type(caught) is type(alone)  # openai: APIConnectionError, APITimeoutError (recent)
    assert type(caught.__cause__) is type(alone.__cause__)  # the transport's, wrapped once
    if isinstance(alone, openai.APIError):  # the request, as the SDK sets it
        ours: Any = caught
        theirs: Any = alone
        assert str(ours.request.url) == str(theirs.request.url)
    assert seen == [("wrap_model", caught), ("on_error", caught)]
    assert all(found is caught for _, found in seen)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", SDKS)
def test_a_failing_on_error_hook_notes_the_callers_error(sdk: str, is_async: bool) -> None:
    @hw.on_error
    def failing(info: hw.FinishInfo) -> None:
        raise RuntimeError("log handler closed")

    caught = read(hw.wrap(client(sdk, is_async, "ReadError"), use=[failing]), is_async)

    notes = getattr(caught, "__notes__", [])
    assert len(notes) == 1
    assert "failing' (priority 0) failed too" in notes[0]
    assert "log handler closed" in notes[0]


@pytest.mark.parametrize("how", ["layers", "raw", "streaming", "lines"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", SDKS)
def test_every_entry_point_and_layer_gets_the_one_error(sdk: str, is_async: bool, how: str) -> None:
    """Two layers of hooks, a raw response's parsed stream: all as above. A raw response's
    lines are read without the SDK's stream, which the transport's error then reaches as it
    is, as without hooks."""
    way = "create" if how == "layers" else how
    alone = read(client(sdk, is_async, "ReadError"), is_async, how=way)
    seen: list[tuple[str, BaseException]] = []
    hooked = hw.wrap(client(sdk, is_async, "ReadError"), use=watching(is_async, seen))
    if how == "layers":
        hooked = hw.wrap(hooked, use=watching(is_async, seen))

    caught = read(hooked, is_async, how=way)

    assert type(caught) is type(alone)
    assert type(caught.__cause__) is type(alone.__cause__)
    assert [found for _, found in seen] == [caught] * len(seen)
    assert len(seen) == (4 if how == "layers" else 2)
