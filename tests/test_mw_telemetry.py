"""Telemetry (SPEC §8): OpenTelemetry spans for runs, model calls and tool calls with the
GenAI semantic conventions, token and duration metrics, streams spanned until they end or
close, content only when asked, and never a broken or changed call."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import _telemetry
from hookwrap.middleware._telemetry import Telemetry
from hookwrap.testing import FakeProvider

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

SHAPES = ("sync", "async", "stream", "astream")
USER = [{"role": "user", "content": "hi"}]
CLOSED = "closed by consumer"


class Otel:
    """Real SDK providers with in-memory exporters, passed explicitly (never global)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader], shutdown_on_exit=False)

    def telemetry(self, **kwargs: Any) -> Telemetry:
        return Telemetry(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **kwargs
        )

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.name or "").startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def points(self, name: str) -> list[tuple[dict[str, Any], float, int]]:
        """(attributes, sum, count) of each data point of histogram `name`."""
        data = self.reader.get_metrics_data()
        found: list[tuple[dict[str, Any], float, int]] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            found.append(
                                (dict(point.attributes or {}), point.sum, point.count)  # type: ignore[union-attr]
                            )
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    made = Otel()
    yield made
    made.tracer_provider.shutdown()
    made.meter_provider.shutdown()


def attrs_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def model_target(shape: str, seen: list[Any] | None = None) -> Callable[..., Any]:
    """A plain model function of this shape answering "Paris", 7 tokens in and 3 out; it
    notes the span current while it runs (and, for streams, while each chunk is pulled)."""

    def note() -> None:
        if seen is not None:
            seen.append(trace.get_current_span())

    answer = hw.ModelResponse(
        hw.Message.assistant("Paris"), hw.Usage(7, 3, 10), "stop", "paris-model-1"
    )
    pieces: list[Any] = [
        "Par",
        "is",
        {"kind": "usage", "usage": {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}},
        {"kind": "finish", "finish_reason": "stop"},
    ]
    if shape == "sync":

        def llm(messages: list[dict[str, str]], model: str = "", temperature: float = 1.0) -> Any:
            note()
            return answer

        return llm
    if shape == "async":

        async def allm(
            messages: list[dict[str, str]], model: str = "", temperature: float = 1.0
        ) -> Any:
            note()
            return answer

        return allm
    if shape == "stream":

        def sllm(
            messages: list[dict[str, str]], model: str = "", temperature: float = 1.0
        ) -> Iterator[Any]:
            for piece in pieces:
                note()
                yield piece

        return sllm

    async def asllm(
        messages: list[dict[str, str]], model: str = "", temperature: float = 1.0
    ) -> AsyncIterator[Any]:
        for piece in pieces:
            note()
            yield piece

    return asllm


def text_of(item: Any) -> str:
    """The text of an answer or a chunk as the caller gets it."""
    if isinstance(item, hw.ModelResponse):
        return item.text
    if isinstance(item, dict):
        return str(item.get("text", ""))
    return item if isinstance(item, str) else ""


def call(shape: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """Call `fn` in its shape and read the answer whole, as text."""
    if shape == "sync":
        return text_of(fn(*args, **kwargs))
    if shape == "stream":
        return "".join(text_of(i) for i in fn(*args, **kwargs))

    async def main() -> str:
        if shape == "async":
            return text_of(await fn(*args, **kwargs))
        return "".join([text_of(i) async for i in fn(*args, **kwargs)])

    return asyncio.run(main())


def call_in_run(shape: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """`call`, inside `with hw.run()` (`async with` for the async shapes)."""
    if shape in ("sync", "stream"):
        with hw.run():
            return call(shape, fn, *args, **kwargs)

    async def main() -> str:
        async with hw.run():
            if shape == "async":
                return text_of(await fn(*args, **kwargs))
            return "".join([text_of(i) async for i in fn(*args, **kwargs)])

    return asyncio.run(main())


# -- plain functions, every shape -----------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_a_model_call_is_a_client_span(otel: Otel, shape: str) -> None:
    seen: list[Any] = []
    chat = hw.model(model_target(shape, seen), use=[otel.telemetry()])
    answer = call(shape, chat, USER, model="paris-model", temperature=0.2)
    assert answer == "Paris"

    [model] = otel.spans()  # a call outside a run: its own span, and no run span
    assert model.name == "chat paris-model"
    assert model.kind is SpanKind.CLIENT
    assert model.parent is None
    expected: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "function",
        "gen_ai.request.model": "paris-model",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
    }
    if shape in ("sync", "async"):  # a whole response names its model; these chunks do not
        expected["gen_ai.response.model"] = "paris-model-1"
    assert attrs_of(model) == expected
    assert model.status.status_code is StatusCode.UNSET
    # the model span is current while the model runs, and while each chunk is pulled
    assert seen
    assert all(s.get_span_context().span_id == span_id(model) for s in seen)
    assert trace.get_current_span() is trace.INVALID_SPAN  # and nothing stays attached


@pytest.mark.parametrize("shape", SHAPES)
def test_token_and_duration_metrics(otel: Otel, shape: str) -> None:
    chat = hw.model(model_target(shape), use=[otel.telemetry()])
    call(shape, chat, USER, model="paris-model")
    call(shape, chat, USER, model="paris-model")

    tokens = {p[0]["gen_ai.token.type"]: p for p in otel.points("gen_ai.client.token.usage")}
    assert set(tokens) == {"input", "output"}
    assert tokens["input"][1:] == (14, 2)  # two calls of 7 tokens in
    assert tokens["output"][1:] == (6, 2)
    assert tokens["input"][0]["gen_ai.provider.name"] == "function"
    assert tokens["input"][0]["gen_ai.request.model"] == "paris-model"
    [(attributes, total, count)] = otel.points("gen_ai.client.operation.duration")
    assert count == 2
    assert 0 < total < 5
    assert attributes["gen_ai.operation.name"] == "chat"
    assert "error.type" not in attributes


def test_a_stream_span_stays_open_until_the_stream_ends(otel: Otel) -> None:
    chat = hw.model(model_target("stream"), use=[otel.telemetry()])
    stream = chat(USER)
    assert next(stream) == "Par"
    assert otel.spans() == []  # the call is still going on
    assert list(stream) == [
        "is",
        {"kind": "usage", "usage": {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}},
        {"kind": "finish", "finish_reason": "stop"},
    ]
    assert [s.name for s in otel.spans()] == ["chat"]


# -- SDK clients through the fake provider ---------------------------------------------------


ANSWER = hw.ModelResponse(
    hw.Message.assistant("Paris is the capital."), hw.Usage(11, 5, 16), None, "gpt-4o-2024-08-06"
)


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("stream", [False, True])
def test_openai_client_spans_carry_models_usage_and_options(
    otel: Otel, is_async: bool, stream: bool
) -> None:
    provider = FakeProvider([ANSWER])
    client = hw.wrap(provider.openai(async_=is_async), use=[otel.telemetry()])
    kwargs: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": USER,
        "temperature": 0.5,
        "max_tokens": 64,
        "top_p": 0.9,
    }
    if stream:
        kwargs |= {"stream": True, "stream_options": {"include_usage": True}}

    async def acreate() -> str:
        made = await client.chat.completions.create(**kwargs)
        if stream:
            return "".join([c.choices[0].delta.content or "" async for c in made if c.choices])
        return str(made.choices[0].message.content)

    if is_async:
        text = asyncio.run(acreate())
    else:
        made = client.chat.completions.create(**kwargs)
        if stream:
            text = "".join(c.choices[0].delta.content or "" for c in made if c.choices)
        else:
            text = made.choices[0].message.content
    assert text == "Paris is the capital."

    span = otel.one("chat")
    assert span.name == "chat gpt-4o"
    assert span.kind is SpanKind.CLIENT
    got = attrs_of(span)
    assert got["gen_ai.operation.name"] == "chat"
    assert got["gen_ai.provider.name"] == "openai"
    assert got["gen_ai.request.model"] == "gpt-4o"
    assert got["gen_ai.response.model"] == "gpt-4o-2024-08-06"
    assert got["gen_ai.response.id"].startswith("chatcmpl-")
    assert got["gen_ai.request.temperature"] == 0.5
    assert got["gen_ai.request.max_tokens"] == 64
    assert got["gen_ai.request.top_p"] == 0.9
    assert got["gen_ai.response.finish_reasons"] == ("stop",)
    assert (got["gen_ai.usage.input_tokens"], got["gen_ai.usage.output_tokens"]) == (11, 5)
    assert (got["server.address"], got["server.port"]) == ("fake-llm.test", 80)
    assert "gen_ai.input.messages" not in got
    assert "gen_ai.output.messages" not in got
    tokens = {p[0]["gen_ai.token.type"]: p[1] for p in otel.points("gen_ai.client.token.usage")}
    assert tokens == {"input": 11, "output": 5}
    [(attributes, _, _)] = otel.points("gen_ai.client.operation.duration")
    assert attributes["gen_ai.response.model"] == "gpt-4o-2024-08-06"


@pytest.mark.parametrize("is_async", [False, True])
def test_anthropic_client_spans_and_streams(otel: Otel, is_async: bool) -> None:
    provider = FakeProvider(["Bonjour", "Salut"])
    client = hw.wrap(provider.anthropic(async_=is_async), use=[otel.telemetry()])
    kwargs: dict[str, Any] = {"model": "claude-test", "max_tokens": 32, "messages": USER}

    async def both() -> list[str]:
        message = await client.messages.create(**kwargs)
        async with client.messages.stream(**kwargs) as stream:
            streamed = await stream.get_final_text()
        return [message.content[0].text, streamed]

    if is_async:
        texts = asyncio.run(both())
    else:
        message = client.messages.create(**kwargs)
        with client.messages.stream(**kwargs) as stream:
            texts = [message.content[0].text, stream.get_final_text()]
    assert texts == ["Bonjour", "Salut"]

    spans = otel.named("chat")
    assert [s.name for s in spans] == ["chat claude-test", "chat claude-test"]
    for span, out in zip(spans, (2, 2), strict=True):
        got = attrs_of(span)
        assert got["gen_ai.provider.name"] == "anthropic"
        assert got["gen_ai.request.max_tokens"] == 32
        assert got["gen_ai.response.model"] == "claude-test"
        assert got["gen_ai.response.id"].startswith("msg_")
        assert got["gen_ai.response.finish_reasons"] == ("end_turn",)
        assert got["gen_ai.usage.input_tokens"] == 1  # "hi": one token, 4 chars each
        assert got["gen_ai.usage.output_tokens"] == out
    assert otel.named("hookwrap.run") == []  # calls outside a run: no run span
    assert [s.parent for s in otel.spans()] == [None, None]


def test_openai_responses_and_legacy_completions(otel: Otel) -> None:
    client = hw.wrap(FakeProvider(["a", "b"]).openai(), use=[otel.telemetry()])
    client.responses.create(model="gpt-4o", input="hi")
    client.completions.create(model="davinci-002", prompt="hi")
    responses, completions = otel.named("chat") + otel.named("text_completion")
    assert responses.name == "chat gpt-4o"
    assert attrs_of(responses)["gen_ai.response.id"].startswith("resp_")
    assert attrs_of(responses)["gen_ai.response.finish_reasons"] == ("completed",)
    assert completions.name == "text_completion davinci-002"
    assert attrs_of(completions)["gen_ai.operation.name"] == "text_completion"


def genai_client(provider: FakeProvider) -> Any:
    """A google-genai client on the fake provider; the test is skipped without the SDK
    (it needs Python 3.11 or newer)."""
    pytest.importorskip("google.genai")
    return provider.genai()


def vertex_client(provider: FakeProvider) -> Any:
    """A google-genai client for Vertex AI (express mode: an API key) on the fake provider."""
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    args = {"transport": provider.transport()}
    options = types.HttpOptions(
        base_url="http://fake-llm.test/", client_args=args, async_client_args=args
    )
    return genai.Client(vertexai=True, api_key="test", http_options=options)


@pytest.mark.parametrize(
    ("backend", "provider_name"), [("gemini", "gcp.gemini"), ("vertex", "gcp.vertex_ai")]
)
def test_gemini_is_a_generate_content_span_of_its_backend(
    otel: Otel, backend: str, provider_name: str
) -> None:
    provider = FakeProvider(["Hallo", "Servus"])
    made = genai_client(provider) if backend == "gemini" else vertex_client(provider)
    client = hw.wrap(made, use=[otel.telemetry()])
    assert client.models.generate_content(model="gemini-test", contents="hi").text == "Hallo"

    async def acall() -> str:
        answer = await client.aio.models.generate_content(model="gemini-test", contents="hi")
        return str(answer.text)

    assert asyncio.run(acall()) == "Servus"
    spans = otel.named("generate_content")
    assert [s.name for s in spans] == ["generate_content gemini-test"] * 2
    for span in spans:
        assert attrs_of(span)["gen_ai.provider.name"] == provider_name
        assert attrs_of(span)["gen_ai.response.model"] == "gemini-test"


def test_a_google_client_that_does_not_say_its_backend_is_gcp_gen_ai() -> None:
    assert _telemetry._google_provider(object()) == "gcp.gen_ai"


# -- errors, aborts, early close -------------------------------------------------------------


class Boom(Exception):
    """An error raised on purpose."""


def failing_target(shape: str) -> Callable[..., Any]:
    if shape == "sync":

        def llm(prompt: str) -> str:
            raise Boom("model down")

        return llm
    if shape == "async":

        async def allm(prompt: str) -> str:
            raise Boom("model down")

        return allm
    if shape == "stream":

        def sllm(prompt: str) -> Iterator[str]:
            yield "partial"
            raise Boom("model down")

        return sllm

    async def asllm(prompt: str) -> AsyncIterator[str]:
        yield "partial"
        raise Boom("model down")

    return asllm


@pytest.mark.parametrize("shape", SHAPES)
def test_an_error_marks_the_spans_and_propagates_unchanged(otel: Otel, shape: str) -> None:
    chat = hw.model(failing_target(shape), use=[otel.telemetry()])
    with pytest.raises(Boom, match="model down"):
        call_in_run(shape, chat, "hi")  # the error ends the run too
    model, run = otel.one("chat"), otel.one("hookwrap.run")
    assert parent_id(model) == span_id(run)
    for span in (model, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "Boom: model down"
        assert attrs_of(span)["error.type"] == "Boom"
    assert [e.name for e in model.events] == ["exception"]
    [(attributes, _, count)] = otel.points("gen_ai.client.operation.duration")
    assert (attributes["error.type"], count) == ("Boom", 1)


def test_an_http_error_of_an_sdk_is_its_error_type(otel: Otel) -> None:
    openai = pytest.importorskip("openai")
    provider = FakeProvider()
    provider.fail(500)
    client = hw.wrap(provider.openai(max_retries=0), use=[otel.telemetry()])
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-4o", messages=USER)
    span = otel.one("chat")
    assert attrs_of(span)["error.type"] == "InternalServerError"
    assert span.status.status_code is StatusCode.ERROR


def test_an_abort_is_a_reason_not_an_error(otel: Otel) -> None:
    @hw.wrap_model
    def refuse(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> Any:
        ctx.abort("not today")
        yield request

    chat = hw.model(model_target("sync"), use=[otel.telemetry(), refuse])
    with pytest.raises(hw.Aborted), hw.run():  # the abort ends the run too
        chat(USER)
    for span in (otel.one("chat"), otel.one("hookwrap.run")):
        assert span.status.status_code is StatusCode.UNSET
        assert attrs_of(span)["hookwrap.abort.reason"] == "not today"
        assert "error.type" not in attrs_of(span)


@pytest.mark.parametrize("how", ["break", "close", "drop"])
def test_an_early_break_ends_the_stream_span_at_once(otel: Otel, no_gc: None, how: str) -> None:
    chat = hw.model(model_target("stream"), use=[otel.telemetry()])
    if how == "break":
        for _ in chat(USER):
            break
    else:
        stream = chat(USER)
        next(stream)
        if how == "close":
            stream.close()
        else:
            del stream
    [model] = otel.spans()  # a call outside a run: no run span
    assert model.name == "chat"
    assert attrs_of(model)["hookwrap.abort.reason"] == CLOSED
    assert model.status.status_code is StatusCode.UNSET
    assert "gen_ai.usage.input_tokens" not in attrs_of(model)  # usage never arrived
    [(_, _, count)] = otel.points("gen_ai.client.operation.duration")
    assert count == 1
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_an_early_aclose_ends_the_async_stream_span_at_once(otel: Otel) -> None:
    chat = hw.model(model_target("astream"), use=[otel.telemetry()])

    async def main() -> None:
        async with hw.run():
            stream = chat(USER)
            assert await stream.__anext__() == "Par"
            await stream.aclose()
            assert attrs_of(otel.one("chat"))["hookwrap.abort.reason"] == CLOSED
            assert otel.named("hookwrap.run") == []  # the run goes on
        assert "hookwrap.abort.reason" not in attrs_of(otel.one("hookwrap.run"))

    asyncio.run(main())


@pytest.mark.parametrize("how", ["with", "close"])
def test_leaving_an_openai_stream_by_with_or_close_ends_its_span_at_once(
    otel: Otel, no_gc: None, how: str
) -> None:
    client = hw.wrap(FakeProvider(["a long answer"]).openai(), use=[otel.telemetry()])
    stream = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
    if how == "with":
        with stream:
            for _ in stream:
                break
    else:
        for _ in stream:
            break
        stream.close()
    assert attrs_of(otel.one("chat"))["hookwrap.abort.reason"] == CLOSED


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "genai"])
def test_a_bare_break_out_of_an_sdk_stream_ends_its_span_at_once(
    otel: Otel, no_gc: None, sdk: str
) -> None:
    provider = FakeProvider(["a long answer"], chunk_size=3)
    telemetry = otel.telemetry()
    if sdk == "openai":
        client = hw.wrap(provider.openai(), use=[telemetry])
        for _ in client.chat.completions.create(model="m", messages=USER, stream=True):
            break
    elif sdk == "anthropic":
        aclient = hw.wrap(provider.anthropic(), use=[telemetry])
        for _ in aclient.messages.create(model="m", max_tokens=9, messages=USER, stream=True):
            break
    else:
        gclient = hw.wrap(genai_client(provider), use=[telemetry])
        for _ in gclient.models.generate_content_stream(model="m", contents="hi"):
            break
    [span] = otel.spans()
    assert attrs_of(span)["hookwrap.abort.reason"] == CLOSED


@pytest.mark.parametrize("how", ["async with", "close"])
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_leaving_an_async_sdk_stream_by_async_with_or_close_ends_its_span_at_once(
    otel: Otel, no_gc: None, sdk: str, how: str
) -> None:
    provider = FakeProvider(["a long answer"], chunk_size=3)
    telemetry = otel.telemetry()

    async def main() -> None:
        if sdk == "openai":
            client = hw.wrap(provider.openai(async_=True), use=[telemetry])
            stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        else:
            aclient = hw.wrap(provider.anthropic(async_=True), use=[telemetry])
            stream = await aclient.messages.create(
                model="m", max_tokens=9, messages=USER, stream=True
            )
        if how == "async with":
            async with stream:
                async for _ in stream:
                    break
        else:
            async for _ in stream:
                break
            await stream.close()
        [span] = otel.spans()
        assert attrs_of(span)["hookwrap.abort.reason"] == CLOSED

    asyncio.run(main())


# -- tools and runs --------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
def test_a_tool_call_is_an_execute_tool_span(otel: Otel, is_async: bool) -> None:
    seen: list[Any] = []
    telemetry = otel.telemetry()
    if is_async:

        @hw.tool(use=[telemetry])
        async def aweather(city: str) -> str:
            """Weather in a city."""
            seen.append(trace.get_current_span())
            return f"{city}: 20c"

        assert asyncio.run(aweather("Paris")) == "Paris: 20c"
    else:

        @hw.tool(use=[telemetry])
        def weather(city: str) -> str:
            """Weather in a city."""
            seen.append(trace.get_current_span())
            return f"{city}: 20c"

        assert weather("Paris") == "Paris: 20c"
    span = otel.one("execute_tool")
    name = "aweather" if is_async else "weather"
    assert span.name == f"execute_tool {name}"
    assert span.kind is SpanKind.INTERNAL
    got = attrs_of(span)
    assert got["gen_ai.operation.name"] == "execute_tool"
    assert got["gen_ai.tool.name"] == name
    assert got["gen_ai.tool.call.id"]
    assert "gen_ai.tool.call.arguments" not in got
    assert "gen_ai.tool.call.result" not in got
    assert [s.get_span_context().span_id for s in seen] == [span_id(span)]
    assert otel.spans() == [span]  # a call outside a run: no run span
    assert span.parent is None


def test_a_failing_tool_marks_its_span(otel: Otel) -> None:
    @hw.tool(use=[otel.telemetry()])
    def broken(city: str) -> str:
        """Always fails."""
        raise Boom(f"no weather for {city}")

    with pytest.raises(Boom):
        broken("Paris")
    span = otel.one("execute_tool")
    assert attrs_of(span)["error.type"] == "Boom"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize("shape", SHAPES)
def test_a_call_outside_a_run_has_no_run_span(otel: Otel, shape: str) -> None:
    chat = hw.model(model_target(shape), use=[otel.telemetry()])
    assert call(shape, chat, USER, model="alone") == "Paris"
    [alone] = otel.spans()  # exactly one span, a root span
    assert alone.name == "chat alone"
    assert alone.parent is None

    otel.exporter.clear()
    with otel.tracer_provider.get_tracer("app").start_as_current_span("request handler"):
        call(shape, chat, USER, model="alone")
    model, handler = otel.spans()  # the caller's span is the parent, with none between
    assert (model.name, handler.name) == ("chat alone", "request handler")
    assert parent_id(model) == span_id(handler)

    otel.exporter.clear()
    assert call_in_run(shape, chat, USER, model="inside") == "Paris"
    model, run = otel.spans()  # the same call inside a run: under the run's span
    assert (model.name, run.name) == ("chat inside", "hookwrap.run")
    assert parent_id(model) == span_id(run)
    assert run.parent is None
    assert run.kind is SpanKind.INTERNAL
    assert attrs_of(run)["hookwrap.run.id"]


def test_one_run_is_the_parent_of_its_model_and_tool_spans(otel: Otel) -> None:
    telemetry = otel.telemetry()
    chat = hw.model(model_target("sync"), use=[telemetry])

    @hw.tool(use=[telemetry])
    def weather(city: str) -> str:
        """Weather in a city, as a model says it."""
        return chat([{"role": "user", "content": city}]).text  # a model call inside a tool

    with hw.run():
        chat(USER, model="first")
        assert weather("Paris") == "Paris"
        chat(USER, model="second")
        assert otel.named("hookwrap.run") == []

    run = otel.one("hookwrap.run")
    first, inner, second = otel.named("chat")
    tool = otel.one("execute_tool")
    assert (first.name, second.name) == ("chat first", "chat second")
    assert {parent_id(first), parent_id(tool), parent_id(second)} == {span_id(run)}
    assert parent_id(inner) == span_id(tool)  # the tool's span was current
    assert len({s.context.trace_id for s in otel.spans() if s.context}) == 1
    assert telemetry._runs == {}  # nothing is kept after the run


def test_the_callers_span_is_the_parent_of_the_run(otel: Otel) -> None:
    chat = hw.model(model_target("sync"), use=[otel.telemetry()])
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("request handler"), hw.run():
        chat(USER)
        chat(USER)
    handler = otel.one("request handler")
    run = otel.one("hookwrap.run")
    assert parent_id(run) == span_id(handler)
    assert [parent_id(s) for s in otel.named("chat")] == [span_id(run)] * 2


def test_concurrent_async_calls_of_one_run_share_its_span(otel: Otel) -> None:
    chat = hw.model(model_target("async"), use=[otel.telemetry()])

    async def main() -> None:
        async with hw.run():
            await asyncio.gather(*(chat(USER) for _ in range(3)))

    asyncio.run(main())
    run = otel.one("hookwrap.run")
    assert [parent_id(s) for s in otel.named("chat")] == [span_id(run)] * 3


# -- content ---------------------------------------------------------------------------------


def test_record_content_records_messages_and_tool_io_as_json(otel: Otel) -> None:
    telemetry = otel.telemetry(record_content=True)
    call_ = hw.ToolCall("call_1", "weather", {"city": "Paris"})
    history = [
        hw.Message.system("Be brief."),
        hw.Message.user("Weather?"),
        hw.Message.assistant("", [call_]),
        hw.Message.tool("20c", "call_1"),
    ]

    def llm(request: hw.ModelRequest) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant("It is 20c."), finish_reason="stop")

    chat = hw.model(llm, use=[telemetry])
    chat(hw.ModelRequest(history))

    @hw.tool(use=[telemetry])
    def weather(city: str) -> dict[str, int]:
        """Weather in a city."""
        return {"celsius": 20}

    weather("Paris")

    model = attrs_of(otel.one("chat"))
    assert json.loads(model["gen_ai.input.messages"]) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]},
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_1",
                    "name": "weather",
                    "arguments": {"city": "Paris"},
                }
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "20c"}],
        },
    ]
    assert json.loads(model["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is 20c."}],
            "finish_reason": "stop",
        }
    ]
    tool = attrs_of(otel.one("execute_tool"))
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(tool["gen_ai.tool.call.result"]) == {"celsius": 20}


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Color(enum.Enum):
    RED = "red"


def test_a_tool_result_that_is_not_a_str_is_recorded_as_the_model_reads_it(otel: Otel) -> None:
    results: dict[str, Any] = {
        "point": Point(1, 2),  # through the cattrs converter, as JSON
        "color": Color.RED,
        "odd": {(1, 2): 3},  # not JSON even so: its repr
    }

    def lookup(name: str) -> Any:
        """A result of any kind."""
        return results[name]

    sent: dict[str, str] = {}

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            calls = [hw.ToolCall(name, "lookup", {"name": name}) for name in results]
            return hw.Message.assistant("", calls)
        sent.update((m.tool_call_id or "", m.text) for m in request.messages if m.role == "tool")
        return hw.Message.assistant("done")

    agent = hw.Agent(model, tools=[lookup], use=[otel.telemetry(record_content=True)])
    assert agent.run("go").text == "done"
    recorded = {
        attrs_of(s)["gen_ai.tool.call.id"]: attrs_of(s)["gen_ai.tool.call.result"]
        for s in otel.named("execute_tool")
    }
    assert recorded == {"point": '{"x": 1, "y": 2}', "color": '"red"', "odd": "{(1, 2): 3}"}
    assert recorded == sent


def test_record_content_of_a_stream_is_the_text_the_model_sent(otel: Otel) -> None:
    chat = hw.model(model_target("stream"), use=[otel.telemetry(record_content=True)])
    call("stream", chat, USER)
    output = json.loads(attrs_of(otel.one("chat"))["gen_ai.output.messages"])
    assert output == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Paris"}],
            "finish_reason": "stop",
        }
    ]


def test_content_is_off_by_default(otel: Otel) -> None:
    telemetry = otel.telemetry()
    assert telemetry.record_content is False
    chat = hw.model(model_target("stream"), use=[telemetry])
    call("stream", chat, [{"role": "user", "content": "my secret"}])
    for span in otel.spans():
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output")) for k in attrs_of(span))
        assert "my secret" not in repr(attrs_of(span))


# -- fail-open -------------------------------------------------------------------------------


class Broken:
    """Stands in for any OpenTelemetry object: every method raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"broken telemetry: {name}")


class BrokenTracer:
    def __init__(self, spans: bool) -> None:
        self.spans = spans

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        if self.spans:
            return Broken()  # a span whose every method raises
        raise RuntimeError("broken tracer")


class BrokenTracerProvider:
    def __init__(self, spans: bool) -> None:
        self.spans = spans

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return BrokenTracer(self.spans)


class BrokenMeter:
    def create_histogram(self, *args: Any, **kwargs: Any) -> Any:
        return Broken()


class BrokenMeterProvider:
    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        return BrokenMeter()


class FailingExporter(SpanExporter):
    def export(self, spans: Any) -> Any:
        raise RuntimeError("collector down")


def broken_telemetries() -> list[Callable[[], Telemetry]]:
    def failing_exporter() -> Telemetry:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(FailingExporter()))
        meter_provider: Any = BrokenMeterProvider()
        return Telemetry(tracer_provider=provider, meter_provider=meter_provider)

    return [
        lambda: Telemetry(
            tracer_provider=BrokenTracerProvider(spans=False),  # type: ignore[arg-type]
            meter_provider=BrokenMeterProvider(),  # type: ignore[arg-type]
        ),
        lambda: Telemetry(
            tracer_provider=BrokenTracerProvider(spans=True),  # type: ignore[arg-type]
            meter_provider=BrokenMeterProvider(),  # type: ignore[arg-type]
            record_content=True,
        ),
        failing_exporter,
    ]


@pytest.mark.parametrize("make", broken_telemetries(), ids=["tracer", "spans", "exporter"])
@pytest.mark.parametrize("shape", SHAPES)
def test_broken_telemetry_never_breaks_or_changes_a_call(
    make: Callable[[], Telemetry], shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    telemetry = make()
    chat = hw.model(model_target(shape), use=[telemetry])
    plain = hw.model(model_target(shape))
    with caplog.at_level(logging.CRITICAL):
        assert call(shape, chat, USER, model="m") == call(shape, plain, USER, model="m")
        with hw.run():
            assert call(shape, chat, USER) == "Paris"
        failing = hw.model(failing_target(shape), use=[telemetry])
        with pytest.raises(Boom):
            call(shape, failing, "hi")
        if shape == "stream":
            for _ in chat(USER):
                break

        @hw.tool(use=[telemetry])
        def weather(city: str) -> str:
            """Weather in a city."""
            return f"{city}: 20c"

        assert weather("Paris") == "Paris: 20c"
    assert trace.get_current_span() is trace.INVALID_SPAN


class RaisingTracerProvider:
    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no tracer today")


class RaisingMeterProvider:
    """Around a real meter provider: `get_meter` raises (`broken` ``"get_meter"``), or the
    meters it gives cannot make the histogram named `broken` (``"*"``: any)."""

    def __init__(self, real: MeterProvider, broken: str) -> None:
        self.real = real
        self.broken = broken

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken == "get_meter":
            raise RuntimeError("no meter today")
        return RaisingMeter(self.real.get_meter(*args, **kwargs), self.broken)


class RaisingMeter:
    def __init__(self, real: Any, broken: str) -> None:
        self.real = real
        self.broken = broken

    def create_histogram(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.broken in (name, "*"):
            raise RuntimeError(f"no histogram {name} today")
        return self.real.create_histogram(name, *args, **kwargs)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_tracer_that_cannot_be_had_costs_the_spans_only(
    otel: Otel, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        telemetry = Telemetry(
            tracer_provider=RaisingTracerProvider(),  # type: ignore[arg-type]
            meter_provider=otel.meter_provider,
        )
    assert "Telemetry could not get a tracer" in caplog.text
    assert "no tracer today" in caplog.text
    seen: list[Any] = []
    chat = hw.model(model_target(shape, seen), use=[telemetry])

    @hw.tool(use=[telemetry])
    def weather(city: str) -> str:
        """Weather in a city."""
        seen.append(trace.get_current_span())
        return f"{city}: 20c"

    with otel.tracer_provider.get_tracer("app").start_as_current_span("caller") as caller:
        assert call_in_run(shape, chat, USER) == "Paris"
        assert weather("Paris") == "Paris: 20c"
    assert [s.name for s in otel.spans()] == ["caller"]  # none of Telemetry's
    # the model and the tool still run under the caller's span: the code below them nests there
    assert seen
    assert all(s.get_span_context() == caller.get_span_context() for s in seen)
    tokens = {p[0]["gen_ai.token.type"]: p[1] for p in otel.points("gen_ai.client.token.usage")}
    assert tokens == {"input": 7, "output": 3}
    [(_, _, count)] = otel.points("gen_ai.client.operation.duration")
    assert count == 1
    assert trace.get_current_span() is trace.INVALID_SPAN


@pytest.mark.parametrize(
    "broken", ["get_meter", "*", "gen_ai.client.token.usage", "gen_ai.client.operation.duration"]
)
def test_a_meter_that_cannot_be_had_costs_its_metrics_only(
    otel: Otel, broken: str, caplog: pytest.LogCaptureFixture
) -> None:
    meter_provider: Any = RaisingMeterProvider(otel.meter_provider, broken)
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        telemetry = Telemetry(tracer_provider=otel.tracer_provider, meter_provider=meter_provider)
    assert "today" in caplog.text
    assert "Telemetry could not" in caplog.text
    chat = hw.model(model_target("sync"), use=[telemetry])
    with hw.run():
        assert chat(USER).text == "Paris"
    assert sorted(s.name for s in otel.spans()) == ["chat", "hookwrap.run"]
    assert attrs_of(otel.one("chat"))["gen_ai.usage.input_tokens"] == 7
    made = {
        name
        for name in ("gen_ai.client.token.usage", "gen_ai.client.operation.duration")
        if otel.points(name)
    }
    assert (
        made
        == {
            "get_meter": set(),
            "*": set(),
            "gen_ai.client.token.usage": {"gen_ai.client.operation.duration"},
            "gen_ai.client.operation.duration": {"gen_ai.client.token.usage"},
        }[broken]
    )


def test_broken_telemetry_failures_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    telemetry = Telemetry(
        tracer_provider=BrokenTracerProvider(spans=True),  # type: ignore[arg-type]
        meter_provider=BrokenMeterProvider(),  # type: ignore[arg-type]
    )
    chat = hw.model(model_target("sync"), use=[telemetry])
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert chat(USER).text == "Paris"
    assert "broken telemetry" in caplog.text


# -- construction, imports, docs -------------------------------------------------------------


def test_arguments_are_keyword_only_and_checked() -> None:
    with pytest.raises(TypeError):
        Telemetry(None)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"Telemetry\(tracer_provider=\.\.\.\) expects .*TracerProvider.*got str"
    ):
        Telemetry(tracer_provider="jaeger")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"Telemetry\(meter_provider=\.\.\.\) expects .*MeterProvider.*got int: 3"
    ):
        Telemetry(meter_provider=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"record_content=\.\.\.\) expects True or False .*got str"):
        Telemetry(record_content="yes")  # type: ignore[arg-type]
    telemetry = Telemetry()  # the global providers
    assert isinstance(telemetry, hw.Middleware)
    assert repr(telemetry) == "Telemetry(record_content=False)"


def test_every_hook_is_fail_open() -> None:
    hooks = [
        getattr(Telemetry, name).__hookwrap__
        for name in dir(Telemetry)
        if hasattr(getattr(Telemetry, name), "__hookwrap__")
    ]
    assert {h.kind for h in hooks} == {
        "on_start",
        "on_finish",
        "on_error",
        "on_abort",
        "wrap_model",
        "wrap_tool",
    }
    assert all(h.fail_open for h in hooks)


def test_without_opentelemetry_construction_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    _telemetry._api.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pip install 'hookwrap\[otel\]'"):
            Telemetry()
    finally:
        _telemetry._api.cache_clear()


def test_importing_hookwrap_imports_no_opentelemetry() -> None:
    code = (
        "import sys, hookwrap, hookwrap.middleware, hookwrap.middleware._telemetry\n"
        "found = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "assert not found, found\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_an_agent_run_is_an_invoke_agent_span_over_its_model_and_tool_spans(otel: Otel) -> None:
    @hw.tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "weather", {"city": "Paris"})])
        return hw.Message.assistant(f"It is {request.messages[-1].text}.")

    agent = hw.Agent(model, tools=[weather], use=[otel.telemetry()])
    assert agent.run("Weather?").text == "It is sunny in Paris."
    run = otel.one("invoke_agent")
    assert run.name == "invoke_agent"
    assert attrs_of(run)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs_of(run)["hookwrap.run.id"]
    assert otel.named("hookwrap.run") == []
    children = [s for s in otel.spans() if parent_id(s) == span_id(run)]
    assert sorted(s.name.split()[0] for s in children) == ["chat", "chat", "execute_tool"]


def agent_model(sdk: str, provider: FakeProvider) -> Any:
    if sdk == "openai":
        return (provider.openai(), "gpt-4o")
    if sdk == "anthropic":
        return (provider.anthropic(), "claude-test")
    if sdk == "gemini":
        return (genai_client(provider), "gemini-test")
    if sdk == "vertex":
        return (vertex_client(provider), "gemini-test")

    def llm(request: hw.ModelRequest) -> str:
        return "done"

    return llm


@pytest.mark.parametrize(
    ("sdk", "provider_name"),
    [
        ("openai", "openai"),
        ("anthropic", "anthropic"),
        ("gemini", "gcp.gemini"),
        ("vertex", "gcp.vertex_ai"),
        ("function", "function"),
    ],
)
def test_an_agent_run_names_the_provider_its_model_calls_name(
    otel: Otel, sdk: str, provider_name: str
) -> None:
    agent = hw.Agent(agent_model(sdk, FakeProvider(["done"])), use=[otel.telemetry()])
    assert agent.run("hi").text == "done"
    [model] = [s for s in otel.spans() if s.kind is SpanKind.CLIENT]
    assert attrs_of(model)["gen_ai.provider.name"] == provider_name
    assert attrs_of(otel.one("invoke_agent"))["gen_ai.provider.name"] == provider_name


def test_an_agent_run_without_a_model_call_has_the_provider_other(otel: Otel) -> None:
    @hw.before_model
    def canned(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(hw.Message.assistant("canned"))

    agent = hw.Agent(agent_model("openai", FakeProvider()), use=[canned, otel.telemetry()])
    assert agent.run("hi").text == "canned"
    assert [s.name for s in otel.spans()] == ["invoke_agent"]  # no model span
    assert attrs_of(otel.one("invoke_agent"))["gen_ai.provider.name"] == "_OTHER"


def test_a_run_that_is_not_an_agents_names_no_provider(otel: Otel) -> None:
    chat = hw.model(model_target("sync"), use=[otel.telemetry()])
    with hw.run():
        chat(USER)
    assert attrs_of(otel.one("chat"))["gen_ai.provider.name"] == "function"
    assert "gen_ai.provider.name" not in attrs_of(otel.one("hookwrap.run"))
