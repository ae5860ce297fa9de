"""`Telemetry`: OpenTelemetry spans and metrics for runs, model calls and tool calls, named
as the OpenTelemetry GenAI semantic conventions name them.

Only the OpenTelemetry API is used, and only once a `Telemetry` is made: importing this
module imports no part of OpenTelemetry.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Generator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import urlsplit

from .._convert import json_text, result_text
from .._engine import assemble
from .._errors import Aborted, Interrupt
from .._hooks import Middleware, on_abort, on_error, on_finish, on_start, wrap_model, wrap_tool
from .._run import RunContext
from .._types import Chunk, FinishInfo, ImagePart, Message, ModelRequest, ModelResponse, ToolCall

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Span, SpanKind, TracerProvider
    from opentelemetry.util.types import Attributes

__all__ = ["Telemetry"]

log = logging.getLogger("hookwrap")

# Names from the GenAI semantic conventions (written out: `opentelemetry-semantic-conventions`
# is not a dependency, and it marks its GenAI names as moved elsewhere).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
TOKEN_TYPE = "gen_ai.token.type"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
TOKEN_USAGE = "gen_ai.client.token.usage"
DURATION = "gen_ai.client.operation.duration"
# hookwrap's own
RUN_SPAN = "hookwrap.run"
RUN_ID = "hookwrap.run.id"
AGENT_OPERATION = "invoke_agent"  # an agent's run: its span's name and operation
ABORT_REASON = "hookwrap.abort.reason"
# an agent run's provider when none of its model calls told it: the conventions list
# well-known providers and allow other values; `_OTHER` is what they use elsewhere (as in
# `error.type`) for a value the instrumentation cannot name
UNKNOWN_PROVIDER = "_OTHER"

# the bucket boundaries the conventions advise for the two histograms
TOKEN_BUCKETS = tuple(float(4**n) for n in range(14))  # 1, 4, 16, ... 67108864
DURATION_BUCKETS = tuple(round(0.01 * 2**n, 2) for n in range(14))  # 0.01, 0.02, ... 81.92

CLOSED = "closed by consumer"

_NUMBER_OPTIONS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "topP": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "topK": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "maxOutputTokens": "gen_ai.request.max_tokens",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "frequencyPenalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "presencePenalty": "gen_ai.request.presence_penalty",
    "seed": "gen_ai.request.seed",
}
_STOP_OPTIONS = ("stop", "stop_sequences", "stopSequences")
STOP_SEQUENCES = "gen_ai.request.stop_sequences"
# Anthropic's models served by other clouds: client class name part -> provider
_ANTHROPIC_HOSTS = (("Bedrock", "aws.bedrock"), ("Vertex", "gcp.vertex_ai"))


class _Api:
    """The parts of the OpenTelemetry API a call uses, imported once."""

    def __init__(self) -> None:
        try:
            from opentelemetry import context, metrics, trace
        except ImportError as exc:
            raise ImportError(
                "Telemetry needs OpenTelemetry, which is not installed; "
                "install it with: pip install 'hookwrap[otel]'"
            ) from exc
        self.attach = context.attach
        self.detach = context.detach
        self.get_tracer = trace.get_tracer
        self.get_meter = metrics.get_meter
        self.current_span = trace.get_current_span
        self.in_context = trace.set_span_in_context
        self.no_span = trace.NonRecordingSpan
        self.no_histogram = metrics.NoOpHistogram
        self.status = trace.Status
        self.error = trace.StatusCode.ERROR
        self.client = trace.SpanKind.CLIENT
        self.internal = trace.SpanKind.INTERNAL


@functools.cache
def _api() -> _Api:
    return _Api()


class _Tracer(Protocol):
    """What Telemetry asks of a tracer."""

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = ...,
        attributes: Attributes = None,
    ) -> Span: ...


class _NoTracer:
    """Stands in for a tracer that could not be had: its spans record nothing and carry
    their parent's context, so making one current changes nothing for the code below."""

    __slots__ = ("api",)

    def __init__(self, api: _Api) -> None:
        self.api = api

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
    ) -> Span:
        api = self.api
        return api.no_span(api.current_span(context).get_span_context())


class _Kit:
    """What every span and measurement of one `Telemetry` uses. A tracer, meter or
    histogram that cannot be had is logged and replaced by one that records nothing, so a
    broken provider costs its own signal only, never the construction or the other."""

    __slots__ = ("api", "duration", "record_content", "tokens", "tracer")

    def __init__(
        self,
        tracer_provider: TracerProvider | None,
        meter_provider: MeterProvider | None,
        record_content: bool,
    ) -> None:
        from .. import __version__

        api = self.api = _api()
        self.record_content = record_content
        self.tracer: _Tracer
        try:
            self.tracer = api.get_tracer("hookwrap", __version__, tracer_provider)
        except Exception:
            log.exception("Telemetry could not get a tracer; it records no spans")
            self.tracer = _NoTracer(api)
        meter: Meter | None = None
        try:
            meter = api.get_meter("hookwrap", __version__, meter_provider)
        except Exception:
            log.exception("Telemetry could not get a meter; it records no metrics")
        self.tokens = _histogram(
            api,
            meter,
            TOKEN_USAGE,
            "{token}",
            "Number of input and output tokens used.",
            TOKEN_BUCKETS,
        )
        self.duration = _histogram(
            api, meter, DURATION, "s", "GenAI operation duration.", DURATION_BUCKETS
        )


def _histogram(
    api: _Api,
    meter: Meter | None,
    name: str,
    unit: str,
    description: str,
    buckets: tuple[float, ...],
) -> Histogram:
    """The histogram `name`, or one that records nothing when the meter cannot make it."""
    if meter is None:
        return api.no_histogram(name)
    try:
        try:
            return meter.create_histogram(
                name,
                unit=unit,
                description=description,
                explicit_bucket_boundaries_advisory=buckets,
            )
        except TypeError:  # opentelemetry-api before 1.23 takes no advice on buckets
            return meter.create_histogram(name, unit=unit, description=description)
    except Exception:
        log.exception("Telemetry could not make the histogram %s; it records nothing", name)
        return api.no_histogram(name)


class _Run:
    """A run's span, the context holding it, the span that was current when it began, and
    for an agent's run whether its provider is noted yet (by its first model call)."""

    __slots__ = ("context", "outer", "span", "unnamed")

    def __init__(self, span: Span, context: Context, outer: int, agent: bool) -> None:
        self.span = span
        self.context = context
        self.outer = outer
        self.unnamed = agent  # an agent's run whose provider no model call told yet

    def name_provider(self, provider: str) -> None:
        """Note the agent's provider on the run's span (never raises)."""
        self.unnamed = False
        try:
            self.span.set_attribute(PROVIDER, provider)
        except Exception:
            log.exception("Telemetry could not note the agent's provider; the run goes on")


class Telemetry(Middleware):
    """OpenTelemetry spans for runs, model calls and tool calls, with token and duration
    metrics, following the OpenTelemetry GenAI semantic conventions.

    A run (`hw.run()`, an agent's run) is a ``hookwrap.run`` span; each model call a
    ``chat {model}`` span (kind CLIENT) and each tool call an ``execute_tool {name}`` span,
    children of the run's span. A call made outside any run has its own span only, under
    whatever span is current. Metrics: ``gen_ai.client.token.usage`` and
    ``gen_ai.client.operation.duration``. Every hook is fail-open, and nothing Telemetry
    does changes a call; a tracer, meter or histogram that cannot be had when it is made
    is logged and costs only its own spans or metrics.

    Args:
        tracer_provider: where spans go; `None` is the global tracer provider.
        meter_provider: where metrics go; `None` is the global meter provider.
        record_content: also record messages, tool arguments and tool results (off by
            default: they may hold personal data).
    """

    name = "Telemetry"

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        record_content: bool = False,
    ) -> None:
        _api()  # first: without OpenTelemetry nothing else matters
        _check_provider("tracer_provider", tracer_provider, "get_tracer", "TracerProvider")
        _check_provider("meter_provider", meter_provider, "get_meter", "MeterProvider")
        if not isinstance(record_content, bool):
            raise TypeError(
                "Telemetry(record_content=...) expects True or False "
                f"(got {type(record_content).__name__}: {record_content!r})"
            )
        self.record_content = record_content
        self._kit = _Kit(tracer_provider, meter_provider, record_content)
        self._runs: dict[str, _Run] = {}  # by run id; a run's terminal hook removes it

    def __repr__(self) -> str:
        return f"Telemetry(record_content={self.record_content!r})"

    # -- the run --------------------------------------------------------------------------

    @on_start(fail_open=True)
    def start_run(self, ctx: RunContext[Any]) -> None:
        """Open the run's ``hookwrap.run`` span, parent of the run's model and tool spans
        (not for the one-call run of a call made outside a run: its span stands alone)."""
        if ctx.is_one_call:
            return
        api = self._kit.api
        outer = api.current_span().get_span_context().span_id
        run_id = ctx.run_id
        attributes: dict[str, Any] = {RUN_ID: run_id}
        name = RUN_SPAN
        if ctx.run.agent:  # the conventions' span of an agent invoked in this process
            name = attributes[OPERATION] = AGENT_OPERATION
        span = self._kit.tracer.start_span(name, kind=api.internal, attributes=attributes)
        self._runs[run_id] = _Run(span, api.in_context(span), outer, ctx.run.agent)

    @on_finish(fail_open=True)
    def finish_run(self, info: FinishInfo) -> None:
        """End the run's span."""
        self._end_run(info)

    @on_error(fail_open=True)
    def fail_run(self, info: FinishInfo) -> None:
        """End the run's span with status ERROR and ``error.type``."""
        self._end_run(info)

    @on_abort(fail_open=True)
    def abort_run(self, info: FinishInfo) -> None:
        """End the run's span, noting the abort reason as ``hookwrap.abort.reason``."""
        self._end_run(info)

    def _end_run(self, info: FinishInfo) -> None:
        run = self._runs.pop(info.run_id, None)
        if run is not None:
            if run.unnamed:  # none of the run's model calls reached Telemetry
                run.name_provider(UNKNOWN_PROVIDER)
            _end(
                run.span,
                self._kit.api,
                info.error or (Aborted(info.reason) if info.reason else None),
            )

    def _parent(self, run: _Run | None) -> Context | None:
        """The run's span, unless a span opened since the run began is current (a tool's
        span, or the caller's own): that one is the parent (None: the current context)."""
        if run is None:
            return None
        current = self._kit.api.current_span().get_span_context()
        if current.is_valid and current.span_id != run.outer:
            return None
        return run.context

    # -- model calls ----------------------------------------------------------------------

    @wrap_model(fail_open=True)
    def trace_model(
        self, request: ModelRequest, ctx: RunContext[Any]
    ) -> Generator[ModelRequest, Any, Any]:
        """Span the model call, current while the model runs (and while a stream is read),
        and record its duration and token metrics when it ends."""
        run = self._runs.get(ctx.run_id)
        call = _ModelCall(self._kit, request, self._parent(run))
        if run is not None and run.unnamed:  # an agent's first model call names its provider
            run.name_provider(call.provider)
        token = call.attach()
        try:
            response = yield request
        except BaseException as exc:
            call.detach(token)
            call.end(exc)
            raise
        call.detach(token)
        if request.stream:  # the caller's stream is under its own model: which answered
            call.answered_by = ctx.call_state.get("fallback_model")
        if isinstance(response, ModelResponse):
            call.respond(response)
            call.end(None)
            return response
        if hasattr(response, "__anext__"):
            return _AsyncWatched(response, call)
        return _Watched(response, call)

    # -- tool calls -----------------------------------------------------------------------

    @wrap_tool(fail_open=True)
    def trace_tool(self, call: ToolCall, ctx: RunContext[Any]) -> Generator[ToolCall, Any, Any]:
        """Span the tool call (``execute_tool {name}``), current while the tool runs."""
        kit = self._kit
        api = kit.api
        attributes: dict[str, Any] = {
            OPERATION: "execute_tool",
            TOOL_NAME: call.name,
            TOOL_CALL_ID: call.id,
            TOOL_TYPE: "function",
        }
        if kit.record_content:
            attributes[TOOL_ARGUMENTS] = _json(dict(call.arguments))
        span = kit.tracer.start_span(
            f"execute_tool {call.name}",
            context=self._parent(self._runs.get(ctx.run_id)),
            kind=api.internal,
            attributes=attributes,
        )
        token = _attach(api, span)
        try:
            result = yield call
        except BaseException as exc:
            _detach(api, token)
            _end(span, api, exc)
            raise
        _detach(api, token)
        try:
            if kit.record_content:  # as the agent writes it for the model
                span.set_attribute(TOOL_RESULT, result_text(result))
        finally:
            _end(span, api, None)
        return None


def _check_provider(argument: str, value: object, method: str, kind: str) -> None:
    if value is not None and not callable(getattr(value, method, None)):
        raise TypeError(
            f"Telemetry({argument}=...) expects an OpenTelemetry {kind} (with .{method}()) "
            f"or None (got {type(value).__name__}: {value!r})"
        )
    if isinstance(value, type):  # the class has the method too, unbound
        raise TypeError(
            f"Telemetry({argument}=...) expects an OpenTelemetry {kind} instance, not the "
            f"class {value.__name__}; pass an instance: {value.__name__}()"
        )


# -- spans ----------------------------------------------------------------------------------


def _attach(api: _Api, span: Span) -> Token[Context] | None:
    try:
        return api.attach(api.in_context(span))
    except Exception:
        log.exception("Telemetry could not make its span current; the call goes on")
        return None


def _detach(api: _Api, token: Token[Context] | None) -> None:
    if token is not None:
        try:
            api.detach(token)
        except Exception:
            log.exception("Telemetry could not restore the context; the call goes on")


def _is_failure(error: BaseException) -> bool:
    """Errors mark a span ERROR; aborts, interrupts and early closes do not."""
    return not isinstance(error, (Aborted, Interrupt, GeneratorExit, asyncio.CancelledError))


def _reason(error: BaseException) -> str | None:
    if isinstance(error, Aborted):
        return error.reason
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    if isinstance(error, GeneratorExit):
        return CLOSED
    return None


def _end(span: Span, api: _Api, error: BaseException | None) -> None:
    """Note how the operation ended and end the span, whatever the notes cost."""
    try:
        if error is not None:
            if _is_failure(error):
                span.set_attribute(ERROR_TYPE, type(error).__qualname__)
                span.record_exception(error)
                span.set_status(api.status(api.error, f"{type(error).__name__}: {error}"))
            else:
                reason = _reason(error)
                if reason is not None:
                    span.set_attribute(ABORT_REASON, reason)
    finally:
        span.end()


class _ModelCall:
    """One model call's span and what its end reports: response model, finish reason,
    usage, duration. Everything here logs its own failures instead of raising them."""

    __slots__ = (
        "answered_by",
        "api",
        "chunks",
        "ended",
        "finish",
        "kit",
        "metric_attributes",
        "provider",
        "request",
        "response",
        "response_id",
        "response_model",
        "span",
        "started",
        "usage",
    )

    def __init__(self, kit: _Kit, request: ModelRequest, parent: Context | None) -> None:
        self.kit = kit
        self.api = kit.api
        self.request = request
        self.ended = False
        self.response: ModelResponse | None = None
        self.chunks: list[Chunk] | None = [] if kit.record_content else None
        self.finish: str | None = None
        self.response_model: str | None = None
        self.answered_by: str | None = None  # a Fallback alternative's model, for a stream
        self.response_id: str | None = None
        self.usage: tuple[int, int] | None = None
        operation, provider, server = _origin(request)
        self.provider = provider
        model = request.model
        common: dict[str, Any] = {OPERATION: operation, PROVIDER: provider}
        if model:
            common[REQUEST_MODEL] = model
        if server is not None:
            common[SERVER_ADDRESS], common[SERVER_PORT] = server
        self.metric_attributes = common
        attributes = {**common, **_options(request.options)}
        if kit.record_content:
            attributes[INPUT_MESSAGES] = _json([_message(m) for m in request.messages])
        self.span = kit.tracer.start_span(
            f"{operation} {model}" if model else operation,
            context=parent,
            kind=self.api.client,
            attributes=attributes,
        )
        self.started = time.perf_counter()

    def attach(self) -> Token[Context] | None:
        return _attach(self.api, self.span)

    def detach(self, token: Token[Context] | None) -> None:
        _detach(self.api, token)

    def respond(self, response: ModelResponse) -> None:
        """Take what a whole (not streamed) response reports."""
        try:
            if self.kit.record_content:
                self.response = response
            self.finish = response.finish_reason
            self.response_model = response.model
            self.response_id = _found(response.raw, ("id", "responseId", "response_id"))
            usage = response.usage
            if usage is not None:
                self.usage = (usage.input_tokens, usage.output_tokens)
        except Exception:
            log.exception("Telemetry could not read the response; the call goes on")

    def observe(self, chunk: Any) -> None:
        """Take what one chunk of a stream reports (usage: the largest count seen, as
        providers report running totals)."""
        try:
            usage = chunk.usage
            if usage is not None:
                seen = self.usage or (0, 0)
                self.usage = (
                    max(seen[0], usage.input_tokens),
                    max(seen[1], usage.output_tokens),
                )
            if chunk.finish_reason:
                self.finish = chunk.finish_reason
            if self.response_model is None:
                self.response_model = _found(chunk.raw, ("model", "modelVersion"))
            if self.response_id is None:
                self.response_id = _found(chunk.raw, ("id", "responseId", "response_id"))
            if self.chunks is not None:
                self.chunks.append(chunk)
        except Exception:
            log.exception("Telemetry could not read a chunk; the stream goes on")

    def end(self, error: BaseException | None) -> None:
        """End the span and record the metrics, once."""
        if self.ended:
            return
        self.ended = True
        try:
            self._note()
        except Exception:
            log.exception("Telemetry could not describe the model call; the call goes on")
        try:
            _end(self.span, self.api, error)
        except Exception:
            log.exception("Telemetry could not end the model call's span; the call goes on")
        try:
            self._measure(error)
        except Exception:
            log.exception("Telemetry could not record metrics; the call goes on")

    def _note(self) -> None:
        if self.answered_by:
            self.response_model = self.answered_by
        attributes: dict[str, Any] = {}
        if self.response_model:
            attributes[RESPONSE_MODEL] = self.response_model
        if self.response_id:
            attributes[RESPONSE_ID] = self.response_id
        if self.finish:
            attributes[FINISH_REASONS] = (self.finish,)
        if self.usage is not None:
            attributes[INPUT_TOKENS], attributes[OUTPUT_TOKENS] = self.usage
        if self.kit.record_content:
            response = self.response
            if response is None and self.chunks:
                response = assemble(self.chunks, self.request.model)
            if response is not None:
                output = {**_message(response.message), "finish_reason": self.finish}
                if not self.finish:
                    del output["finish_reason"]
                attributes[OUTPUT_MESSAGES] = _json([output])
        if attributes:
            self.span.set_attributes(attributes)

    def _measure(self, error: BaseException | None) -> None:
        attributes = dict(self.metric_attributes)
        if self.response_model:
            attributes[RESPONSE_MODEL] = self.response_model
        if self.usage is not None:
            tokens = self.kit.tokens
            tokens.record(self.usage[0], {**attributes, TOKEN_TYPE: "input"})
            tokens.record(self.usage[1], {**attributes, TOKEN_TYPE: "output"})
        if error is not None and _is_failure(error):
            attributes[ERROR_TYPE] = type(error).__qualname__
        duration = self.kit.duration
        duration.record(time.perf_counter() - self.started, attributes)


class _Watched:
    """A sync stream handed on chunk by chunk; the model call's span ends with it: at its
    end, at an error, or when it is closed (or dropped) early."""

    __slots__ = ("_call", "_chunks")

    def __init__(self, chunks: Iterator[Any], call: _ModelCall) -> None:
        self._chunks = chunks
        self._call = call

    def __iter__(self) -> _Watched:
        return self

    def __next__(self) -> Any:
        call = self._call
        token = call.attach()
        try:
            chunk = next(self._chunks)
        except StopIteration:
            call.end(None)
            raise
        except BaseException as exc:
            call.end(exc)
            raise
        finally:
            call.detach(token)
        call.observe(chunk)
        return chunk

    def close(self) -> None:
        try:
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
        finally:
            self._call.end(GeneratorExit())

    def __del__(self) -> None:
        call: _ModelCall | None = getattr(self, "_call", None)
        if call is not None:
            call.end(GeneratorExit())


class _AsyncWatched:
    """`_Watched` for an async stream."""

    __slots__ = ("_call", "_chunks")

    def __init__(self, chunks: AsyncIterator[Any], call: _ModelCall) -> None:
        self._chunks = chunks
        self._call = call

    def __aiter__(self) -> _AsyncWatched:
        return self

    async def __anext__(self) -> Any:
        call = self._call
        token = call.attach()
        try:
            chunk = await self._chunks.__anext__()
        except StopAsyncIteration:
            call.end(None)
            raise
        except asyncio.CancelledError:
            # its reader's task was cancelled: the stream is closed early, as `on_abort` says
            call.end(GeneratorExit())
            raise
        except BaseException as exc:
            call.end(exc)
            raise
        finally:
            call.detach(token)
        call.observe(chunk)
        return chunk

    async def aclose(self) -> None:
        try:
            aclose = getattr(self._chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._call.end(GeneratorExit())

    def __del__(self) -> None:
        call: _ModelCall | None = getattr(self, "_call", None)
        if call is not None:
            call.end(GeneratorExit())


# -- what a request says --------------------------------------------------------------------


def _origin(request: ModelRequest) -> tuple[str, str, tuple[str, int] | None]:
    """The operation, provider and server (host, port) of a call, read from the SDK client
    the call goes through; a plain function is provider ``"function"``, with no server."""
    call = request.raw
    fn = getattr(call, "fn", None)
    owner = getattr(fn, "__self__", None)
    module: str = getattr(fn, "__module__", None) or ""
    kind = type(owner).__name__
    root = module.partition(".")[0]
    if root == "openai":
        provider = "azure.ai.openai" if "Azure" in kind else "openai"
        args: tuple[Any, ...] = getattr(call, "args", ())
        path = getattr(args[1], "url", "") if len(args) > 1 else ""
        legacy = isinstance(path, str) and path.endswith("/completions") and "chat" not in path
        operation = "text_completion" if legacy else "chat"
        return operation, provider, _server(getattr(owner, "base_url", None))
    if root == "anthropic":
        provider = next((p for k, p in _ANTHROPIC_HOSTS if k in kind), "anthropic")
        return "chat", provider, _server(getattr(owner, "base_url", None))
    if module.startswith("google.genai"):
        base = getattr(getattr(owner, "_http_options", None), "base_url", None)
        return "generate_content", _google_provider(owner), _server(base)
    return "chat", "function", None


def _google_provider(owner: object) -> str:
    """Vertex AI or the Gemini Developer API, as the google-genai client (or its API
    client) says; ``gcp.gen_ai``, the conventions' name for either, when it does not."""
    for holder in (owner, getattr(owner, "_api_client", None)):
        if holder is not None and hasattr(holder, "vertexai"):
            return "gcp.vertex_ai" if getattr(holder, "vertexai", None) else "gcp.gemini"
    return "gcp.gen_ai"


def _server(base_url: object) -> tuple[str, int] | None:
    if base_url is None:
        return None
    parts = urlsplit(str(base_url))
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The request options the conventions name, of the types they give."""
    found: dict[str, Any] = {}
    for key, value in options.items():
        name = _NUMBER_OPTIONS.get(key)
        if name is not None:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = value
        elif key in _STOP_OPTIONS:
            if isinstance(value, str):
                found[STOP_SEQUENCES] = (value,)
            elif isinstance(value, (list, tuple)):
                stops = cast("Iterable[object]", value)
                found[STOP_SEQUENCES] = tuple(str(s) for s in stops)
    return found


def _found(raw: Any, keys: tuple[str, ...]) -> str | None:
    """A string under one of `keys` in a native answer or stream event (in its `data`, or
    its `message` or `response` object, where Anthropic and OpenAI Responses put them)."""
    data = getattr(raw, "data", raw)
    if not isinstance(data, Mapping):
        return None
    top: Mapping[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    for holder in (top, top.get("message"), top.get("response")):
        if isinstance(holder, Mapping):
            inner: Mapping[str, Any] = holder  # pyright: ignore[reportUnknownVariableType]
            for key in keys:
                value = inner.get(key)
                if isinstance(value, str) and value:
                    return value
    return None


def _message(message: Message) -> dict[str, Any]:
    """A message as the conventions' JSON shows it: a role and typed parts."""
    parts: list[dict[str, Any]] = []
    if message.role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.text}
        )
    elif isinstance(message.content, str):
        if message.content:
            parts.append({"type": "text", "content": message.content})
    else:
        for part in message.content:
            if isinstance(part, ImagePart):
                parts.append(_image(part))
            else:
                parts.append({"type": "text", "content": part.text})
    for call in message.tool_calls:
        parts.append(
            {
                "type": "tool_call",
                "id": call.id,
                "name": call.name,
                "arguments": dict(call.arguments),
            }
        )
    return {"role": message.role, "parts": parts}


def _image(part: ImagePart) -> dict[str, Any]:
    head, comma, data = part.url.partition(",")
    if part.url.startswith("data:") and comma and head.endswith(";base64"):
        mime = head[5:-7] or part.media_type
        return {"type": "blob", "modality": "image", "mime_type": mime, "content": data}
    found = {"type": "uri", "modality": "image", "uri": part.url}
    if part.media_type:
        found["mime_type"] = part.media_type
    return found


def _json(value: Any) -> str:
    # an int of more digits than `str` writes is written out, as a tool result is
    return json_text(value, default=str)
