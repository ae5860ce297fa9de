"""An error the API sends in the middle of a stream ends the call as an error.

The SDKs raise it as they read the event (Anthropic's `event: error`, an OpenAI chat
`{"error": ...}` line), above hookwrap's side of the stream: the hooks' `on_error` gets that
very exception, the one the caller gets, and `after_model` does not run. A raw response's
parsed stream goes the same way, and, like any stream hookwrap hands out, closes at once
when its caller drops it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

USER: Any = [{"role": "user", "content": "hi"}]

MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "c",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
ANTHROPIC_EVENTS = [
    ("message_start", {"type": "message_start", "message": MESSAGE}),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
    ),
    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
]
CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
OPENAI_EVENTS = [
    (
        None,
        {**CHUNK, "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]},
    ),
    (None, {"error": {"message": "boom", "type": "server_error"}}),
]


def _http_module(client_class: Any) -> Any:
    """httpx2, or httpx for older releases: what the SDK's own client is built on."""
    return next(
        sys.modules[root]
        for cls in client_class.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )


def client(sdk: str, is_async: bool) -> Any:
    """A client of `sdk` whose every stream sends some text, then an error event."""
    module = anthropic if sdk == "anthropic" else openai
    http_class = module.DefaultAsyncHttpxClient if is_async else module.DefaultHttpxClient
    httpx = _http_module(http_class)
    events = ANTHROPIC_EVENTS if sdk == "anthropic" else OPENAI_EVENTS
    body = b"".join(
        (f"event: {name}\n" if name else "").encode() + f"data: {json.dumps(data)}\n\n".encode()
        for name, data in events
    )

    def handle(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, content=body)

    http = http_class(transport=httpx.MockTransport(handle))
    if sdk == "anthropic":
        cls = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
        return cls(api_key="k", base_url="http://fake.invalid", http_client=http, max_retries=0)
    cls = openai.AsyncOpenAI if is_async else openai.OpenAI
    return cls(api_key="k", base_url="http://fake.invalid/v1", http_client=http, max_retries=0)


class Seen:
    """The hooks' side of a call: its terminal hooks and whether `after_model` ran."""

    def __init__(self, change: bool = False) -> None:
        self.ends: list[tuple[str, Any]] = []
        seen = self

        @hw.on_error
        def failed(info: hw.FinishInfo) -> None:
            seen.ends.append(("error", info.error))

        @hw.on_finish
        def finished(info: hw.FinishInfo) -> None:
            seen.ends.append(("finish", None))

        @hw.on_abort
        def aborted(info: hw.FinishInfo) -> None:
            seen.ends.append(("abort", info.reason))

        @hw.after_model
        def answered(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            seen.ends.append(("after_model", response.text))

        @hw.on_chunk
        def each(chunk: hw.Chunk) -> hw.Chunk | None:  # hooks that look at every chunk too
            if change and chunk.kind == "text":  # and rewrite it: the stream is framed anew
                return chunk.replace(text=chunk.text.upper())
            return None

        self.hooks = [failed, finished, aborted, answered, each]


def read(sdk: str, entry: str, wrapped: Any, is_async: bool) -> None:
    """Read a stream of `wrapped` to its end, through `entry`: `create(stream=True)`, the
    `.stream()` helper, or `.with_raw_response.create(stream=True)` then `.parse()`."""
    resource = wrapped.messages if sdk == "anthropic" else wrapped.chat.completions
    kwargs: dict[str, Any] = {"model": "m", "messages": USER}
    if sdk == "anthropic":
        kwargs["max_tokens"] = 5

    async def aread() -> None:
        if entry == "helper":
            async with resource.stream(**kwargs) as stream:
                async for _ in stream:
                    pass
            return
        if entry == "raw":
            raw = await resource.with_raw_response.create(**kwargs, stream=True)
            stream = raw.parse()
            stream = await stream if inspect.isawaitable(stream) else stream
        else:
            stream = await resource.create(**kwargs, stream=True)
        async for _ in stream:
            pass

    if is_async:
        asyncio.run(aread())
    elif entry == "helper":
        with resource.stream(**kwargs) as stream:
            for _ in stream:
                pass
    else:
        if entry == "raw":
            stream = resource.with_raw_response.create(**kwargs, stream=True).parse()
        else:
            stream = resource.create(**kwargs, stream=True)
        for _ in stream:
            pass


@pytest.mark.parametrize("change", [False, True], ids=["as sent", "text changed"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("entry", ["create", "helper", "raw"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_an_error_event_mid_stream_ends_the_call_with_the_sdks_own_error(
    sdk: str, entry: str, is_async: bool, change: bool
) -> None:
    seen = Seen(change)
    wrapped = hw.wrap(client(sdk, is_async), use=seen.hooks)
    expected = anthropic.APIStatusError if sdk == "anthropic" else openai.APIError
    with pytest.raises(expected) as caught:
        read(sdk, entry, wrapped, is_async)
    # the very object the caller got, once; nothing ran as if the stream had finished
    assert seen.ends == [("error", caught.value)]


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_in_a_run_the_call_fails_with_the_error_and_the_run_ends_with_it(sdk: str) -> None:
    seen = Seen()
    wrapped = hw.wrap(client(sdk, False), use=seen.hooks)
    caught: list[BaseException] = []
    try:
        with hw.run(use=[]):
            read(sdk, "create", wrapped, False)
    except Exception as exc:  # the SDK's own error, out of the run too
        caught.append(exc)
    assert len(caught) == 1
    assert seen.ends == [("error", caught[0])]


def test_an_error_in_the_callers_own_loop_is_still_a_close_by_the_consumer() -> None:
    seen = Seen()
    wrapped = hw.wrap(FakeProvider(["a" * 40], chunk_size=2).openai(), use=seen.hooks)
    with pytest.raises(KeyError):
        for _ in wrapped.chat.completions.create(model="m", messages=USER, stream=True):
            raise KeyError("the caller's own")
    assert seen.ends == [("abort", "closed by consumer")]


def test_a_stream_read_to_its_end_still_finishes() -> None:
    seen = Seen()
    wrapped = hw.wrap(FakeProvider(["hello"], chunk_size=2).anthropic(), use=seen.hooks)
    raw = wrapped.messages.with_raw_response.create(
        model="m", max_tokens=5, messages=USER, stream=True
    )
    assert [e.type for e in raw.parse()][-1] == "message_stop"
    assert raw.parse() is raw.parse()  # parsed once, as the SDK caches it
    assert seen.ends == [("after_model", "hello"), ("finish", None)]


@pytest.mark.usefixtures("no_gc")
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_parsed_raw_stream_left_by_break_closes_at_once(sdk: str) -> None:
    provider = FakeProvider(["hello there how are you"], chunk_size=2)
    seen = Seen()
    native: Any = provider.openai() if sdk == "openai" else provider.anthropic()
    wrapped = hw.wrap(native, use=seen.hooks)
    resource = wrapped.chat.completions if sdk == "openai" else wrapped.messages
    extra = {"max_tokens": 5} if sdk == "anthropic" else {}

    def first() -> None:
        raw = resource.with_raw_response.create(model="m", messages=USER, stream=True, **extra)
        for _ in raw.parse():
            break

    first()
    assert (provider.closed, seen.ends) == (1, [("abort", "closed by consumer")])


@pytest.mark.usefixtures("no_gc")
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_an_async_parsed_raw_stream_left_by_break_is_closed_by_the_loop(sdk: str) -> None:
    provider = FakeProvider(["hello there how are you"], chunk_size=2)
    seen = Seen()
    native: Any = provider.openai(True) if sdk == "openai" else provider.anthropic(True)
    wrapped = hw.wrap(native, use=seen.hooks)
    resource = wrapped.chat.completions if sdk == "openai" else wrapped.messages
    extra = {"max_tokens": 5} if sdk == "anthropic" else {}

    async def first() -> None:
        raw = await resource.with_raw_response.create(
            model="m", messages=USER, stream=True, **extra
        )
        stream = raw.parse()
        stream = await stream if inspect.isawaitable(stream) else stream
        async for _ in stream:
            break

    async def main() -> tuple[int, list[tuple[str, Any]]]:
        await first()
        for _ in range(10):
            await asyncio.sleep(0)
        return provider.closed, list(seen.ends)  # before the loop's shutdown closes it

    assert asyncio.run(main()) == (1, [("abort", "closed by consumer")])


@pytest.mark.parametrize("chunk_hooks", [False, True], ids=["as-is", "chunk-hooks"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_the_model_calls_span_records_the_error(sdk: str, chunk_hooks: bool) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hookwrap.middleware import Telemetry

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    hooks: list[Any] = [Telemetry(tracer_provider=tracer_provider)]
    if chunk_hooks:
        hooks += Seen().hooks
    wrapped = hw.wrap(client(sdk, False), use=hooks)
    with pytest.raises(Exception) as caught:
        read(sdk, "create", wrapped, False)
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["error.type"] == type(caught.value).__qualname__
    assert span.status.status_code.name == "ERROR"


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_wrap_model_hook_reading_the_stream_sees_the_error_come_up(sdk: str) -> None:
    seen: list[BaseException] = []

    @hw.wrap_model
    def watch(request: hw.ModelRequest) -> Any:
        stream = yield request

        def watched() -> Any:
            try:
                yield from stream
            except Exception as exc:
                seen.append(exc)
                raise

        return watched()

    wrapped = hw.wrap(client(sdk, False), use=[watch])
    with pytest.raises(Exception) as caught:
        read(sdk, "create", wrapped, False)
    assert seen == [caught.value]
