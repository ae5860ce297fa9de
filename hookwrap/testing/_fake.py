"""A scripted fake of the OpenAI, Anthropic and Gemini HTTP APIs, for tests and offline runs.

Bodies are read and answers written by the same `Wire`s the SDK adapters use, so what the
fake answers is what those adapters parse. The HTTP side is an httpx/httpx2 `MockTransport`
or a loopback server (`_server.py`); both drive `FakeProvider._answer`, which does no I/O.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import itertools
import json
import math
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, Union, cast, overload

import attrs

from .._caller import _is_async_callable  # pyright: ignore[reportPrivateUsage]
from .._errors import check_int
from .._hooks import describe
from .._types import Message, ModelRequest, ModelResponse, Usage
from ..adapters._wire import Event, Wire
from ._server import Answer, SSEStream, serve

if TYPE_CHECKING:
    import anthropic
    import google.genai
    import openai

__all__ = ["FakeProvider", "Received", "Reply"]

#: A scripted answer: text, an assistant message, a whole response, or a function of the
#: request returning one of those.
Reply = Union[
    str, Message, ModelResponse, Callable[[ModelRequest], Union[str, Message, ModelResponse]]
]

_HOST = "http://fake-llm.test"  # what the transport-backed clients think they talk to
_GEMINI = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$"
)
_USAGE_OPT_IN = ("/chat/completions", "/completions")  # streams carry usage only if asked
_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))
_Error = Union[tuple[int, str], None]  # an HTTP status and message to answer with


@attrs.frozen
class Received:
    """One request the fake received: URL `path` (no query), JSON `body`, `headers` (lower-cased
    names), `request` (the neutral request the wire reads from the body; an empty one when it
    could not be read) and the HTTP `status` it was answered with."""

    path: str
    body: Mapping[str, Any]
    headers: Mapping[str, str]
    request: ModelRequest
    status: int = 200


@attrs.define
class _Failure:
    status: int
    times: int
    body: Mapping[str, Any] | None
    retry_after: float | None


_stream_classes: dict[str, type[SSEStream]] = {}


def _stream_class(module: ModuleType) -> type[SSEStream]:
    """`SSEStream` as an httpx (or httpx2) `SyncByteStream` and `AsyncByteStream`."""
    cls = _stream_classes.get(module.__name__)
    if cls is None:
        bases = (SSEStream, module.SyncByteStream, module.AsyncByteStream)
        cls = _stream_classes[module.__name__] = type("FakeStream", bases, {})
    return cls


def _check_flag(method: str, async_: object) -> None:
    if not isinstance(async_, bool):
        raise TypeError(
            f"FakeProvider.{method}(async_) expects True or False (got "
            f"{type(async_).__name__}: {async_!r:.60})"
        )


def _httpx_module(module: ModuleType | None = None, sdk_client: type | None = None) -> ModuleType:
    """`module`, else the httpx flavour `sdk_client` derives from, else httpx2 or httpx."""
    if module is not None:
        if not isinstance(module, ModuleType) or module.__name__ not in ("httpx", "httpx2"):
            raise TypeError(
                "FakeProvider.transport(module) expects the httpx or httpx2 module (got "
                f"{type(module).__name__}: {module!r:.60})"
            )
        return module
    if sdk_client is not None:
        for cls in sdk_client.__mro__:
            root = cls.__module__.partition(".")[0]
            if root in ("httpx", "httpx2"):
                return sys.modules[root]
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


@functools.cache
def _routes() -> tuple[tuple[Wire, ...], Wire]:
    """The wires matched by path suffix, longest suffix first ("/chat/completions" before
    "/completions"), and the Gemini wire (matched by `_GEMINI`)."""
    from ..adapters._anthropic_wire import MessagesWire
    from ..adapters._google_wire import GeminiWire
    from ..adapters._openai_wire import ChatCompletionsWire, CompletionsWire, ResponsesWire

    wires: list[Wire] = [ChatCompletionsWire(), ResponsesWire(), CompletionsWire(), MessagesWire()]
    return tuple(sorted(wires, key=lambda w: -len(w.path))), GeminiWire()


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _error_body(path: str, status: int, message: str) -> dict[str, Any]:
    """The error JSON of the API `path` belongs to."""
    if ":" in path.rpartition("/")[2]:  # Gemini: models/{model}:method
        reason = _GOOGLE_STATUS.get(status, "UNKNOWN")
        return {"error": {"code": status, "message": message, "status": reason}}
    if path.endswith("/messages"):
        kind = _ANTHROPIC_TYPE.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = _OPENAI_TYPE.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


_OPENAI_TYPE = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}
_ANTHROPIC_TYPE = {**_OPENAI_TYPE, 529: "overloaded_error"}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _split(events: list[Event], wire: Wire, size: int) -> list[Event]:
    """`events` with each run of text events re-cut into pieces of `size` characters.

    Each piece is a copy of the run's first event with its text replaced, so indexes, ids
    and every other field stay as the wire wrote them; `sequence_number`s are renumbered.
    """
    out: list[Event] = []
    run: list[tuple[Event, str]] = []

    def flush() -> None:
        text = "".join(t for _, t in run)
        first, old = run[0]
        copies = [
            _replace_text(first.data, old, text[i : i + size]) for i in range(0, len(text), size)
        ]
        if all(found == 1 for _, found in copies):
            out.extend(Event(first.event, data) for data, _ in copies)
        else:  # the text is not one distinct string of the event: leave the run as it is
            out.extend(e for e, _ in run)
        run.clear()

    for event in events:
        chunk = wire.chunk(event)
        if chunk.kind == "text" and chunk.text:
            run.append((event, chunk.text))
            continue
        if run:
            flush()
        out.append(event)
    if run:
        flush()
    numbered = [e for e in out if "sequence_number" in _object(e.data)]
    for n, event in enumerate(numbered):
        event.data = {**_object(event.data), "sequence_number": n}
        event.raw = None
    return out


def _replace_text(data: Any, old: str, new: str) -> tuple[Any, int]:
    """`data` rebuilt with each string equal to `old` set to `new`, and how many there were."""
    if isinstance(data, str):
        return (new, 1) if data == old else (data, 0)
    if isinstance(data, dict):
        items = {k: _replace_text(v, old, new) for k, v in _object(data).items()}
        return {k: v for k, (v, _) in items.items()}, sum(n for _, n in items.values())
    if isinstance(data, list):
        values = [_replace_text(v, old, new) for v in cast("Iterable[Any]", data)]
        return [v for v, _ in values], sum(n for _, n in values)
    return data, 0


def _object(data: Any) -> dict[str, Any]:
    """`data` if it is a JSON object, else an empty one."""
    return cast("dict[str, Any]", data) if isinstance(data, dict) else {}


def _check_reply(reply: object, where: str) -> None:
    """Refuse a reply that cannot answer a call, before that call: it would fail there only
    as an HTTP 400 from the fake (and an async function's coroutine, never awaited)."""
    if isinstance(reply, (str, Message, ModelResponse)):
        return
    expected = (
        "a str, an assistant Message, a ModelResponse or a function of the ModelRequest "
        "returning one"
    )
    if not callable(reply):
        raise TypeError(f"{where} must be {expected} (got {type(reply).__name__}: {reply!r:.60})")
    if _is_async_callable(reply):
        raise TypeError(
            f"{where} ({describe(reply)}) is async: a reply function must be a plain def of "
            "the ModelRequest returning a str, an assistant Message or a ModelResponse (the "
            "fake calls it and cannot await it)"
        )
    try:
        signature = inspect.signature(reply)
    except (TypeError, ValueError):  # no signature to read (some builtins): called as it is
        return
    try:
        signature.bind(None)
    except TypeError as exc:
        raise TypeError(
            f"{where} ({describe(reply)}) must be a function of one argument, the "
            f"ModelRequest; called with one, it fails: {exc}"
        ) from None


class FakeProvider:
    """A fake LLM provider speaking the OpenAI (Chat Completions, Responses, Completions),
    Anthropic (Messages) and Gemini (generateContent, streamGenerateContent) HTTP APIs.

    Each model call is answered with the next of `replies` (a `str`, an assistant `Message`,
    a `ModelResponse`, or a plain function of the `ModelRequest` returning one of those;
    one of them given alone is a script of one reply, ``FakeProvider("Hi")``); when
    none are left, with an echo: ``"You said: <text of the last user message>"``. A missing
    model is the request's (or ``"fake-model"``), a missing finish reason the API's own for
    a complete answer (or for tool calls), and missing usage is counted as one token per 4
    characters, rounded up: the text of all request messages in, the reply's text and
    tool-call arguments (as JSON) out.

    A request whose body says ``"stream": true`` (or the Gemini stream method) is answered
    with server-sent events, the text split into pieces of `chunk_size` characters (about
    a token each by default). OpenAI Chat Completions and Completions streams carry usage
    only when the request asks for it (``stream_options.include_usage``), as the real API does.

    Plug it in with `openai()`, `anthropic()` or `genai()` (real SDK clients), `transport()`
    (an httpx `MockTransport`) or `serve()` (a loopback HTTP server). Attributes: `replies`
    (the script, a deque you may extend: a reply added there is checked when its call comes,
    one given here when the provider is made), `requests` (every `Received` request, failed ones
    included), `closed` (how many streams the client closed before their end).
    """

    def __init__(
        self, replies: Iterable[Reply] | Reply | None = None, *, chunk_size: int = 4
    ) -> None:
        check_int("FakeProvider(chunk_size=...)", chunk_size, 1)
        if isinstance(replies, (str, Message, ModelResponse)) or callable(replies):
            replies = [replies]  # one reply, not a str's characters
        elif replies is not None and (
            not isinstance(replies, Iterable) or isinstance(replies, (bytes, bytearray, Mapping))
        ):  # bytes would be read as ints, a dict as its keys
            given = cast(object, replies)  # of any type: it is refused
            raise TypeError(
                "FakeProvider(replies=...) expects a list of replies (got "
                f"{type(given).__name__}: {given!r:.60}); a reply is a str, an assistant "
                "Message, a ModelResponse or a function of the ModelRequest returning one"
            )
        script: list[Reply] = list(replies or ())
        for i, reply in enumerate(script):
            _check_reply(reply, f"FakeProvider(replies=...)[{i}]")
        self.replies: deque[Reply] = deque(script)
        self.requests: list[Received] = []
        self.closed = 0
        self.chunk_size = chunk_size
        self._failures: deque[_Failure] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<FakeProvider: {len(self.replies)} replies left, {len(self.requests)} received>"

    def fail(
        self,
        status: int = 503,
        times: int = 1,
        body: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        """Answer the next `times` model calls with HTTP `status` and the API's error JSON
        (or `body`), with ``Retry-After`` (seconds) and ``retry-after-ms`` headers when
        `retry_after` is set. Failed calls do not use up a scripted reply."""
        check_int("FakeProvider.fail(status=...)", status, 400)
        if status > 599:
            raise ValueError(
                f"FakeProvider.fail(status=...) expects an HTTP error status, 400 to 599 "
                f"(got {status})"
            )
        check_int("FakeProvider.fail(times=...)", times, 1)
        if body is not None and not isinstance(body, Mapping):
            raise TypeError(
                "FakeProvider.fail(body=...) expects a dict (the error's JSON) or None (got "
                f"{type(body).__name__}: {body!r:.60})"
            )
        if retry_after is not None and not (  # a negative wait too: what a server may send
            isinstance(retry_after, (int, float))
            and not isinstance(retry_after, bool)
            and math.isfinite(retry_after)
        ):
            raise TypeError(
                "FakeProvider.fail(retry_after=...) expects a finite number of seconds or None "
                f"(got {type(retry_after).__name__}: {retry_after!r:.60})"
            )
        with self._lock:
            self._failures.append(_Failure(status, times, body, retry_after))

    # -- HTTP ------------------------------------------------------------------------------

    def transport(self, module: ModuleType | None = None) -> Any:
        """An httpx `MockTransport` answering as this provider, for sync and async clients.

        `module` is ``httpx`` or ``httpx2`` (default: httpx2 if installed, else httpx).
        Streams are real byte streams: the client reads them event by event.
        """
        httpx = _httpx_module(module)
        stream_class = _stream_class(httpx)

        def handle(request: Any) -> Any:
            url = request.url
            answer = self._answer(url.path, dict(request.headers), request.content, stream_class)
            headers = list(answer.headers)
            if answer.stream is None:
                return httpx.Response(answer.status, headers=headers, content=answer.body)
            return httpx.Response(answer.status, headers=headers, stream=answer.stream)

        return httpx.MockTransport(handle)

    def async_transport(self, module: ModuleType | None = None) -> Any:
        """The same as `transport()`, which serves async clients too; named for readability."""
        return self.transport(module)

    @contextlib.contextmanager
    def serve(self) -> Generator[str, None, None]:
        """Serve this provider over HTTP on 127.0.0.1 (an ephemeral port) in a daemon thread;
        yields the base URL (``http://127.0.0.1:<port>``) and shuts the server down on exit.

        Streams are sent with chunked encoding, flushed after every event.
        """
        with serve(self._answer) as url:
            yield url

    def _closed_early(self) -> None:
        with self._lock:
            self.closed += 1

    # -- SDK clients -----------------------------------------------------------------------

    @overload
    def openai(
        self, async_: Literal[False] = False, *, max_retries: int = 2, url: str | None = None
    ) -> openai.OpenAI: ...
    @overload
    def openai(
        self, async_: Literal[True], *, max_retries: int = 2, url: str | None = None
    ) -> openai.AsyncOpenAI: ...
    @overload
    def openai(
        self, async_: bool, *, max_retries: int = 2, url: str | None = None
    ) -> openai.OpenAI | openai.AsyncOpenAI: ...
    def openai(
        self, async_: bool = False, *, max_retries: int = 2, url: str | None = None
    ) -> openai.OpenAI | openai.AsyncOpenAI:
        """An OpenAI client (`AsyncOpenAI` with `async_`) talking to this provider: through
        the transport, or over HTTP to `url` (what `serve()` yields). API key ``"test"``."""
        import openai

        _check_flag("openai", async_)
        base_url = f"{url or _HOST}/v1"
        if async_:
            http = None if url else self._client(openai.DefaultAsyncHttpxClient)
            return openai.AsyncOpenAI(
                api_key="test", base_url=base_url, max_retries=max_retries, http_client=http
            )
        sync_http = None if url else self._client(openai.DefaultHttpxClient)
        return openai.OpenAI(
            api_key="test", base_url=base_url, max_retries=max_retries, http_client=sync_http
        )

    @overload
    def anthropic(
        self, async_: Literal[False] = False, *, max_retries: int = 2, url: str | None = None
    ) -> anthropic.Anthropic: ...
    @overload
    def anthropic(
        self, async_: Literal[True], *, max_retries: int = 2, url: str | None = None
    ) -> anthropic.AsyncAnthropic: ...
    @overload
    def anthropic(
        self, async_: bool, *, max_retries: int = 2, url: str | None = None
    ) -> anthropic.Anthropic | anthropic.AsyncAnthropic: ...
    def anthropic(
        self, async_: bool = False, *, max_retries: int = 2, url: str | None = None
    ) -> anthropic.Anthropic | anthropic.AsyncAnthropic:
        """An Anthropic client (`AsyncAnthropic` with `async_`) talking to this provider:
        through the transport, or over HTTP to `url`. API key ``"test"``."""
        import anthropic

        _check_flag("anthropic", async_)
        base_url = url or _HOST
        if async_:
            http = None if url else self._client(anthropic.DefaultAsyncHttpxClient)
            return anthropic.AsyncAnthropic(
                api_key="test", base_url=base_url, max_retries=max_retries, http_client=http
            )
        sync_http = None if url else self._client(anthropic.DefaultHttpxClient)
        return anthropic.Anthropic(
            api_key="test", base_url=base_url, max_retries=max_retries, http_client=sync_http
        )

    def genai(self, *, max_retries: int = 2, url: str | None = None) -> google.genai.Client:
        """A google-genai client (its `.aio` side included) talking to this provider: through
        the transport, or over HTTP to `url`. API key ``"test"``; retries wait 10 ms."""
        from google import genai
        from google.genai import types

        retry = None
        if max_retries > 0:
            retry = types.HttpRetryOptions(
                attempts=max_retries + 1, initial_delay=0.01, max_delay=0.1, jitter=0
            )
        args: dict[str, Any] | None = None
        if url is None:
            args = {"transport": self.transport()}
        options = types.HttpOptions(
            base_url=f"{url or _HOST}/",
            client_args=args,
            async_client_args=args,
            retry_options=retry,
        )
        return genai.Client(api_key="test", http_options=options)

    def _client(self, cls: type[Any]) -> Any:
        """An instance of the SDK's default httpx client class on this provider's transport."""
        return cls(transport=self.transport(_httpx_module(sdk_client=cls)))

    # -- answering -------------------------------------------------------------------------

    def _answer(
        self,
        path: str,
        headers: Mapping[str, str],
        content: bytes,
        stream_class: type[SSEStream] = SSEStream,
    ) -> Answer:
        """The answer to a POST of `content` to `path` (a streamed one's body is a
        `stream_class`); records the request."""
        wire, body, request, error = _read(path, content)
        with self._lock:
            failure = self._failures[0] if self._failures and error is None else None
            if failure is not None:
                failure.times -= 1
                if not failure.times:
                    self._failures.popleft()
            reply = self.replies.popleft() if self.replies and not (failure or error) else None
            number = next(self._ids)
        if failure is not None:
            answer = self._failed(path, failure)
        elif error is not None:
            answer = _error(path, *error)
        else:
            assert wire is not None  # `_read` names a wire whenever there is no error
            try:
                response = self._response(reply, request)
            except Exception as exc:
                answer = _error(path, 400, f"FakeProvider: the scripted reply failed: {exc!r}")
            else:
                answer = self._success(wire, body, request, response, stream_class)
        received = Received(path, body, {k.lower(): v for k, v in headers.items()}, request)
        with self._lock:
            self.requests.append(attrs.evolve(received, status=answer.status))
        # OpenAI's SDK reads `x-request-id`, Anthropic's `request-id`
        ids = (("x-request-id", f"req_fake_{number}"), ("request-id", f"req_fake_{number}"))
        return attrs.evolve(answer, headers=(*answer.headers, *ids))

    def _response(self, reply: Reply | None, request: ModelRequest) -> ModelResponse:
        """The response for `reply` (the echo when None), missing fields filled in."""
        if reply is None:
            last = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
            reply = f"You said: {last}"
        elif not isinstance(reply, (str, Message, ModelResponse)):
            _check_reply(reply, "the next of FakeProvider.replies")  # one appended later
            reply = reply(request)
        if isinstance(reply, str):
            response = ModelResponse(Message.assistant(reply))
        elif isinstance(reply, Message):
            response = ModelResponse(reply)
        elif isinstance(reply, ModelResponse):
            response = reply
        else:
            raise TypeError(f"a reply must be a str, Message or ModelResponse (got {reply!r})")
        message = response.message
        if response.usage is None:
            calls = "".join(json.dumps(c.arguments) for c in message.tool_calls)
            spent = _tokens("".join(m.text for m in request.messages))
            made = _tokens(message.text + calls)
            response = response.replace(usage=Usage(spent, made, spent + made))
        if response.model is None:
            response = response.replace(model=request.model or "fake-model")
        return response

    def _success(
        self,
        wire: Wire,
        body: Mapping[str, Any],
        request: ModelRequest,
        response: ModelResponse,
        stream_class: type[SSEStream],
    ) -> Answer:
        if not request.stream:
            data = json.dumps(wire.write_response(response, None)).encode()
            return Answer(200, (("content-type", "application/json"),), data)
        asked = _object(body.get("stream_options")).get("include_usage")
        if wire.path in _USAGE_OPT_IN and not asked:
            response = response.replace(usage=None)
        events = _split(wire.stream_events(response), wire, self.chunk_size)
        sse = stream_class([e.encode() for e in events], self._closed_early)
        return Answer(200, _SSE_HEADERS, stream=sse)

    def _failed(self, path: str, failure: _Failure) -> Answer:
        answer = _error(path, failure.status, "FakeProvider: a scripted failure", failure.body)
        if failure.retry_after is None:
            return answer
        seconds = failure.retry_after
        # HTTP's `Retry-After` counts whole seconds; the SDKs read the exact wait in ms first
        retry = (
            ("retry-after", str(math.ceil(seconds))),
            ("retry-after-ms", f"{seconds * 1000:.0f}"),
        )
        return attrs.evolve(answer, headers=(*answer.headers, *retry))


def _read(path: str, content: bytes) -> tuple[Wire | None, dict[str, Any], ModelRequest, _Error]:
    """The wire serving `path`, the JSON body, the neutral request (model and stream also
    taken from a Gemini path), or the error to answer with."""
    wires, gemini = _routes()
    match = _GEMINI.search(path)
    wire = gemini if match else next((w for w in wires if path.endswith(w.path)), None)
    if wire is None:
        return None, {}, ModelRequest(), (404, f"FakeProvider does not serve {path!r}")
    try:
        parsed: object = json.loads(content or b"{}")
        if not isinstance(parsed, dict):
            raise ValueError("the body is not a JSON object")
        body = cast("dict[str, Any]", parsed)
        request = wire.request(body)
    except Exception as exc:
        return wire, {}, ModelRequest(), (400, f"FakeProvider could not read the body: {exc!r}")
    if match:
        stream = match["method"] == "streamGenerateContent"
        request = request.replace(model=request.model or match["model"], stream=stream)
    elif body.get("stream") is True and not request.stream:
        request = request.replace(stream=True)
    return wire, body, request, None


def _error(path: str, status: int, message: str, body: Mapping[str, Any] | None = None) -> Answer:
    """An error answer: `body`, or the error JSON of the API `path` belongs to."""
    if body is None:
        body = _error_body(path, status, message)
    return Answer(status, (("content-type", "application/json"),), json.dumps(body).encode())
