"""google-genai clients: hooks around every model call, streamed or not, sync or `aio`.

Every `generate_content` (and `generate_content_stream`, chats, automatic function calling)
ends in one call of the SDK's API client: `request` / `async_request` with the JSON body as
a dict, or `request_streamed` / `async_request_streamed`, which yield one `HttpResponse` per
streamed JSON object. The wrapped client's `models`, `chats` and `aio` are built over a
proxy of that API client whose four methods run `:generateContent` and
`:streamGenerateContent` calls through the hooks (every other request passes straight
through): hooks see the body going out and the JSON coming back, and the SDK builds its
native `GenerateContentResponse`s from what the hooks left. The user's client is not changed.
`hw.patch` puts the same interception on the SDK's `BaseApiClient` class instead, for every
client at once. Nothing imports `google.genai` until a client is wrapped or the SDK patched.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import itertools
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from .._adapter import Adapter, Call, Natives, lost_call, same_shape
from .._convert import answer_from
from .._engine import ModelEngine
from .._patch import lend, passing
from .._proxy import ObjectProxy
from .._stack import Chain
from .._types import (
    DROP,
    Chunk,
    Message,
    ModelRequest,
    ModelResponse,
    Usage,
    deferred_response,
    new_message,
    new_response,
)
from ._google_wire import GeminiWire, model_of
from ._wire import Event, loads

__all__ = [
    "GeminiAdapter",
    "GeminiAsyncClient",
    "GeminiClient",
    "is_client",
    "patch",
    "unpatch",
    "wrap",
    "wrap_client",
]

_WIRE = GeminiWire()


class _Sent(Event):
    """A streamed object as the SDK yielded it, with its `HttpResponse`, handed back as is
    while the chunk made from it is unchanged."""

    __slots__ = ("http",)

    def __init__(self, http: Any) -> None:  # one per streamed object: no call to `Event`'s
        body = http.body
        data: Any = loads(body) if body else {}
        self.data = data
        self.event = self.raw = self.text = None
        self.http = http


class _Exchange:
    """One model call's native side, beside the SDK's own arguments in `Call.args`."""

    __slots__ = ("bare", "headers", "path", "pending", "template", "usage")

    def __init__(self, path: str) -> None:
        self.path = path
        self.pending: list[Chunk] = []  # a call streamed in pieces, until it is whole
        self.template: Event | None = None  # the stream's first object (model, response id)
        self.headers: dict[str, str] = {}  # the headers of the HTTP response, for new ones
        self.bare = False  # whether the stream hands on the SDK's objects as they came
        self.usage: Usage | None = None  # the counts new chunks gave so far (`native_chunk`)


def _body(http: Any) -> Any:
    body = http.body
    return loads(body) if body else {}


def _response_of(http: Any) -> ModelResponse:
    return _WIRE.response(_body(http))


def _responses(native: Any) -> Iterator[Any]:
    """The `HttpResponse`s of the SDK's stream generator `native`, closing it (and the HTTP
    response it reads) when closed."""
    stream = None
    try:
        for http in native:  # the first: the SDK's generator holds it once started
            stream = _stream_of(native)
            yield http
            break
        # the rest, handed on by the interpreter: no loop of ours per item
        yield from native.gen if isinstance(native, _Primed) else native
    finally:
        native.close()
        if stream is not None:
            stream.close()


async def _aresponses(native: Any) -> AsyncIterator[Any]:
    stream = None
    try:
        async for http in native:
            if stream is None:
                stream = _stream_of(native)
            yield http
    finally:
        await native.aclose()
        if stream is not None:
            aclose = getattr(stream, "aclose", None)
            await aclose() if aclose is not None else stream.close()


def _named(
    response: ModelResponse, base: Mapping[str, Any] | None, model: str | None
) -> ModelResponse:
    """`response` naming `model`, the model the call asked for, if neither it nor the JSON
    it is written into (`base`) names one: a hook's answer (`hw.Respond("...")`) stands
    for the model's, and the API names the model version in every answer."""
    if response.model is not None or model is None:
        return response
    if base is not None and (base.get("modelVersion") or base.get("model_version")):
        return response
    return response.replace(model=model)


def _whole(text: str) -> bool:
    """Whether `text` is a call's whole arguments: a JSON object."""
    try:
        return isinstance(loads(text), dict)
    except ValueError:
        return False


def _whole_call(pieces: list[Chunk], text: str) -> Chunk:
    """One `tool_call_start` for a call streamed in `pieces`, with the arguments `text`
    (`{}` when they never became a JSON object)."""
    start = next((c for c in pieces if c.kind == "tool_call_start"), pieces[0])
    finish = next((c.finish_reason for c in reversed(pieces) if c.finish_reason), None)
    usage = next((c.usage for c in reversed(pieces) if c.usage is not None), None)
    return Chunk(
        "tool_call_start",
        text if _whole(text) else "{}",
        start.tool_call_id,
        start.tool_name,
        usage,
        finish,
    )


def _chunks_of(http: Any) -> list[Chunk]:
    return _WIRE.chunks(_Sent(http))


class _Primed:
    """The SDK's sync stream generator with its first object read: reading it sends the
    request, so an error opening the stream (a 429, a 500) comes up inside the call of the
    model, where `wrap_model` hooks see it, as in the SDK's async streams and the other
    SDKs' (the SDK's generator sends nothing until it is pulled)."""

    __slots__ = ("first", "gen")

    def __init__(self, gen: Iterator[Any]) -> None:
        self.gen = gen
        self.first = list(itertools.islice(gen, 1))

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        if self.first:
            return self.first.pop()
        return next(self.gen)

    def close(self) -> None:
        self.first = []
        close = getattr(self.gen, "close", None)
        if close is not None:
            close()


def _stream_of(gen: Any) -> Any:
    """The HTTP response under the SDK's streaming generator, to close it with the generator.

    Closing the SDK's async generator does not close the HTTP response it reads (the event
    loop's finalizer does, later); its frame holds it as `session_response` (sync, once
    started) or `response` (async: a variable of the function that made it, there from the
    start).
    """
    if isinstance(gen, _Primed):
        gen = gen.gen
    frame = getattr(gen, "gi_frame", None) or getattr(gen, "ag_frame", None)
    if frame is None:
        return None
    found = frame.f_locals.get("session_response") or frame.f_locals.get("response")
    stream = getattr(found, "response_stream", None)
    return None if stream is None or isinstance(stream, list) else stream


def _note_sent(native: Any, call: Call) -> None:
    """Note the HTTP response of a stream whose request is sent among the streams the model
    opened, for the engine to close with them: the SDK's generator, and the chunks made of
    it, leave it open if closed before their first pull (a wrap hook that answered in place
    of the stream it opened, or failed)."""
    http = _stream_of(native)
    if http is not None:
        call.extra = [*(call.extra or ()), http]


class GeminiAdapter(Adapter):
    """Neutral views of an API client call's JSON; the SDK parses what hooks leave.

    A `Call` holds the original bound method and `(http_method, path, request_dict,
    http_options, exchange)`.
    """

    __slots__ = ("http_cls", "is_async")
    notes_chunks = True

    def __init__(self, is_async: bool, http_cls: Callable[..., Any] | None = None) -> None:
        if http_cls is None:
            from google.genai import types

            http_cls = types.HttpResponse
        self.is_async = is_async
        self.http_cls = http_cls

    # -- the request ------------------------------------------------------------------------

    def request(self, call: Call) -> ModelRequest:
        request = _WIRE.view(call.args[2], call, call.args[1])
        call.request = request
        return request

    def invoke(self, request: ModelRequest) -> Any:
        call = request.raw
        if not isinstance(call, Call):
            raise lost_call()
        method, path, body, options = call.args[:4]
        if request is not call.request:
            same_shape(request.stream, call.request)
            body = _WIRE.write_request(request, body)
            path = _WIRE.write_path(request, path)
        native = call.fn(method, path, body, options)
        if not self.is_async and inspect.isgenerator(native):
            return _Primed(native)
        return native

    # -- the answer -------------------------------------------------------------------------

    def response(self, native: Any, call: Call | None) -> ModelResponse:
        response: ModelResponse = deferred_response(_response_of, native)
        if call is not None:
            call.response = response
            call.result = native
        return response

    def _seen(self, http: Any, ex: _Exchange) -> _Sent:
        event = _Sent(http)
        if ex.template is None:
            ex.template = event
            ex.headers = dict(http.headers or {})
        return event

    def chunks(self, native: Any, call: Call | None) -> Iterator[Chunk]:
        assert call is not None
        _note_sent(native, call)  # the request is sent (see `_Primed`)
        return self._chunks(native, call)

    def _chunks(self, native: Any, call: Call) -> Iterator[Chunk]:
        ex: _Exchange = call.args[4]
        call.made = None  # pulled: no other reading of the stream now
        chunk = _WIRE.chunk
        for http in _responses(native):
            event = self._seen(http, ex)
            for one in _WIRE.split(event) or (event,):  # one chunk per thing it holds
                made = call.seen = chunk(one)
                yield made

    def achunks(self, native: Any, call: Call | None) -> AsyncIterator[Chunk]:
        assert call is not None
        _note_sent(native, call)  # the SDK sent the request when it was awaited
        return self._achunks(native, call)

    async def _achunks(self, native: Any, call: Call) -> AsyncIterator[Chunk]:
        ex: _Exchange = call.args[4]
        call.made = None  # pulled: no other reading of the stream now
        chunk = _WIRE.chunk
        async for http in _aresponses(native):
            event = self._seen(http, ex)
            for one in _WIRE.split(event) or (event,):
                made = call.seen = chunk(one)
                yield made

    def items(self, native: Any, call: Call, is_async: bool) -> Natives | None:
        call.args[4].bare = True  # the SDK's own objects go back as they came
        return (_aresponses if is_async else _responses)(native), _chunks_of

    def native_chunk(self, chunk: Chunk, call: Call | None) -> Any:
        assert call is not None
        raw = chunk.raw
        ex: _Exchange = call.args[4]
        if chunk is call.seen or (isinstance(raw, Event) and _WIRE.chunk(raw) == chunk):
            return raw  # unchanged (the very chunk read, or one equal to it)
        if ex.template is None:  # a stream of new chunks only (a Fallback's): the model asked
            ex.template = Event(None, {"modelVersion": model_of(ex.path) or ""})
        if chunk.usage is not None and raw is None:
            # Gemini counts running totals (the SDK's last is the answer's); another API's
            # chunks (a Fallback's) may count apart: Anthropic's input first, output last
            was = ex.usage or chunk.usage
            inp = max(was.input_tokens, chunk.usage.input_tokens)
            out = max(was.output_tokens, chunk.usage.output_tokens)
            total = max(was.total_tokens, chunk.usage.total_tokens, inp + out)
            ex.usage = Usage(inp, out, total)
            chunk = chunk.replace(usage=ex.usage)
        kind = chunk.kind
        if kind == "tool_call_args" or (kind == "tool_call_start" and not _whole(chunk.text)):
            # a call streamed in pieces (another API's, a Fallback's): Gemini sends a call
            # whole, once its arguments are
            ex.pending.append(chunk)
            text = "".join(c.text for c in ex.pending)
            if not _whole(text) and chunk.finish_reason is None:
                return DROP
            chunk = _whole_call(ex.pending, text)
            ex.pending = []
        elif ex.pending:  # a call whose arguments never became a JSON object: without them
            events = _WIRE.write_chunk(_whole_call(ex.pending, ""), ex.template)
            ex.pending = []
            return [*events, *_WIRE.write_chunk(chunk, ex.template)] or DROP
        return _WIRE.write_chunk(chunk, ex.template) or DROP

    def respond_chunks(self, response: ModelResponse, request: ModelRequest) -> list[Chunk]:
        call = request.raw
        if isinstance(call, Call):
            same_shape(request.stream, call.request)
        raw = response.raw
        base = cast("Mapping[str, Any]", raw) if isinstance(raw, Mapping) else None
        events = _WIRE.stream_events(_named(response, base, request.model))
        if isinstance(call, Call) and call.args[4].template is None:
            call.args[4].template = events[0]
        return [_WIRE.chunk(event) for event in events]

    def coerce(self, value: Any, call: Call | None) -> ModelResponse:
        if isinstance(value, ModelResponse):
            return value
        if isinstance(value, str):
            made: ModelResponse = new_response(
                new_message("assistant", value), None, None, None, None
            )
            return made
        if isinstance(value, Message):
            return ModelResponse(value)
        if isinstance(value, Mapping):
            item: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            if "candidates" in item:  # a Gemini response body
                return _WIRE.response(item)
            return ModelResponse(answer_from(item))
        if type(value).__name__ == "GenerateContentResponse":  # the SDK's own, e.g. cached
            return _WIRE.response(value.model_dump(mode="json", by_alias=True, exclude_none=True))
        raise TypeError(
            "a google-genai model call answers with a ModelResponse, Message, str, dict or "
            "GenerateContentResponse "
            f"(got {type(value).__name__}: {value!r})"
        )

    # -- back to the SDK --------------------------------------------------------------------

    def native(self, response: ModelResponse, call: Call | None) -> Any:
        assert call is not None
        if response is call.response:
            return call.result
        # a whole answer to a streamed call: the engine streams it (`respond_chunks`) unless
        # a hook set `request.stream` false
        same_shape(False, call.request)
        ex: _Exchange = call.args[4]
        raw = response.raw
        base = cast("Mapping[str, Any]", raw) if isinstance(raw, Mapping) else None
        response = _named(response, base, model_of(ex.path))
        data = _WIRE.write_response(response, base)
        result = call.result
        headers = dict(result.headers or {}) if result is not None else {}
        return self.http_cls(headers=headers, body=json.dumps(data))

    def _http(self, item: Any, ex: _Exchange) -> Iterator[Any]:
        if isinstance(item, _Sent):
            yield item.http
        elif isinstance(item, Event):
            yield self.http_cls(headers=ex.headers, body=json.dumps(item.data))
        else:  # the objects standing for one changed chunk
            for event in item:
                yield self.http_cls(headers=ex.headers, body=json.dumps(event.data))

    def stream_result(self, stream: Any, call: Call | None) -> Any:
        assert call is not None
        ex: _Exchange = call.args[4]
        if ex.bare:  # it yields the SDK's own objects as they came (`items`, run when the
            return stream  # engine primed it): nothing to turn back, no generator of ours
        if self.is_async:
            return self._ahttp_stream(stream, ex)
        return self._http_stream(stream, ex)

    def _http_stream(self, stream: Iterator[Any], ex: _Exchange) -> Iterator[Any]:
        try:
            for item in stream:
                if item.__class__ is _Sent:  # unchanged: the SDK's own response
                    yield item.http
                else:
                    yield from self._http(item, ex)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    async def _ahttp_stream(self, stream: Any, ex: _Exchange) -> AsyncIterator[Any]:
        try:
            if hasattr(stream, "__anext__"):
                async for item in stream:
                    if item.__class__ is _Sent:  # unchanged: the SDK's own response
                        yield item.http
                        continue
                    for http in self._http(item, ex):
                        yield http
            else:
                for item in stream:
                    for http in self._http(item, ex):
                        yield http
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()


# -- installing the hooks ---------------------------------------------------------------------


_SHAPE = {False: "sync", True: "async"}


def _is_model_call(method: str, path: str) -> bool:
    # the model calls (streamed or not), told apart from the client's other requests
    return (":generateContent" in path or ":streamGenerateContent" in path) and (
        method == "POST" or method.lower() == "post"
    )


class _Layer:
    """One stack of hooks: its sync and async engines, built once.

    A client (and the patched SDK) serves both shapes; a stack one shape cannot run (an
    async hook for sync calls, a sync `call_next` hook for async ones) is refused when that
    shape is called, and when wrapping (or patching) if it fits neither.
    """

    __slots__ = ("__weakref__", "aengine", "chain", "engine", "refused", "shapes", "what")

    def __init__(self, chain: Chain, what: str, shapes: Sequence[bool] = (False, True)) -> None:
        self.what = what
        self.shapes = tuple(shapes)
        self.run(chain)
        if self.engine is None and self.aengine is None:
            if len(self.refused) == 1:
                raise next(iter(self.refused.values()))
            reasons = "\n".join(f"- {exc}" for exc in self.refused.values())
            raise TypeError(f"these hooks fit neither sync nor async calls of {what}:\n{reasons}")

    def run(self, chain: Chain) -> None:
        """Run the hooks of `chain`, all or some of those it was made with (`_patch.lend`)."""
        engines: dict[bool, ModelEngine] = {}
        refused: dict[bool, TypeError] = {}
        for is_async in self.shapes:
            side = self.what
            if len(self.shapes) > 1:
                side = f"the {_SHAPE[is_async]} side of {side}"
            try:
                engines[is_async] = ModelEngine(GeminiAdapter(is_async), chain, is_async, side)
            except TypeError as exc:
                refused[is_async] = exc
        # each set whole, for calls under way in other threads
        self.chain = chain
        self.refused = refused
        self.engine = engines.get(False)
        self.aengine = engines.get(True)

    def refuse(self, is_async: bool) -> TypeError:
        return TypeError(str(self.refused[is_async]))


def _call(layer: _Layer, fn: Any, method: str, path: str, body: Any, options: Any) -> Any:
    """One sync `request` / `request_streamed` through `layer`; `fn` sends it."""
    if not _is_model_call(method, path):
        return fn(method, path, body, options)
    engine = layer.engine
    if engine is None:
        raise layer.refuse(False)
    return engine.call(fn, None, (method, path, body, options, _Exchange(path)), {})


async def _acall(layer: _Layer, fn: Any, method: str, path: str, body: Any, options: Any) -> Any:
    """`_call` for `async_request` / `async_request_streamed`."""
    if not _is_model_call(method, path):
        return await fn(method, path, body, options)
    engine = layer.aengine
    if engine is None:
        raise layer.refuse(True)
    return await engine.acall(fn, None, (method, path, body, options, _Exchange(path)), {})


class _HookedApi:
    """What `_hooked_api` puts before the SDK's API client class: its model calls run
    through the layer of the twin's class (`_hw_layer`); `__wrapped__` is the API client
    the twin stands for, whose own methods send them."""

    __wrapped__: Any
    _hw_layer: _Layer

    def request(
        self, http_method: str, path: str, request_dict: Any, http_options: Any = None
    ) -> Any:
        fn = type(self).__wrapped__.request
        return _call(type(self)._hw_layer, fn, http_method, path, request_dict, http_options)

    def request_streamed(
        self, http_method: str, path: str, request_dict: Any, http_options: Any = None
    ) -> Any:
        fn = type(self).__wrapped__.request_streamed
        return _call(type(self)._hw_layer, fn, http_method, path, request_dict, http_options)

    async def async_request(
        self, http_method: str, path: str, request_dict: Any, http_options: Any = None
    ) -> Any:
        fn = type(self).__wrapped__.async_request
        layer = type(self)._hw_layer
        return await _acall(layer, fn, http_method, path, request_dict, http_options)

    async def async_request_streamed(
        self, http_method: str, path: str, request_dict: Any, http_options: Any = None
    ) -> Any:
        fn = type(self).__wrapped__.async_request_streamed
        layer = type(self)._hw_layer
        return await _acall(layer, fn, http_method, path, request_dict, http_options)

    def __del__(self) -> None:
        """Nothing to close: the HTTP clients are the API client's, closed with it."""

    def __repr__(self) -> str:
        return f"<hookwrap {type(self).__wrapped__!r}>"


def chains_of(member: Any) -> list[Chain]:
    """The layers a resource (`wrapped.models`, say) or method runs through because its API
    client is hooked, outermost first."""
    owner = member.__self__ if inspect.ismethod(member) else member
    chains: list[Chain] = []
    api = getattr(owner, "_api_client", None)
    while isinstance(api, _HookedApi):
        own = type(api).__dict__
        chains.append(own["_hw_layer"].chain)
        api = own["__wrapped__"]
    return chains


def _hooked_api(api: Any, layer: _Layer) -> Any:
    """A twin of the SDK's API client `api` whose model calls go through `layer`.

    The twin is an object of a subclass made for it that shares `api`'s very attributes
    (its `__dict__`): the SDK reads them at full speed, and what it sets on either object
    both see, as for one client. A proxy answered each read, dozens per streamed chunk, by
    failing a lookup of its own first, which cost a fifth of a streamed call. `api` itself
    is left as it was.
    """
    if not layer.chain.hooks:  # a stack with no hooks at all: calls go straight to the SDK
        return api
    cls: type[Any] = api.__class__
    if not hasattr(api, "__dict__"):
        raise TypeError(f"hw.wrap: cannot hook {cls.__qualname__}, which keeps no __dict__")
    own = {"__wrapped__": api, "_hw_layer": layer}
    bases = (cls,) if isinstance(api, _HookedApi) else (_HookedApi, cls)  # a twin's: outside
    twin: Any = object.__new__(type(f"Hooked{cls.__name__}", bases, own))
    twin.__dict__ = api.__dict__
    return twin


class GeminiAsyncClient(ObjectProxy):
    """`client.aio` of a wrapped client (or a wrapped `AsyncClient`): `models` and `chats`
    go through the hooks, everything else is the SDK's own."""

    def __init__(self, aio: Any, api: Any, layer: _Layer) -> None:
        super().__init__(aio)
        from google.genai.models import AsyncModels

        self._self_api = api
        self._self_layer = layer
        self._self_models = AsyncModels(api)

    @property
    def _self_chain(self) -> Chain:
        """For `hw.explain`, which then follows `__wrapped__` inward."""
        return self._self_layer.chain

    @property
    def models(self) -> Any:
        return self._self_models

    @property
    def chats(self) -> Any:
        from google.genai.chats import AsyncChats

        return AsyncChats(modules=self._self_models)

    async def __aenter__(self) -> Any:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self.__wrapped__.__aexit__(*exc_info)  # (wrapt 1.x forwards no `__aexit__`)

    def __copy__(self) -> Any:
        # as the SDK's own copy shares the API client, the copy shares the hooked one
        aio = copy.copy(self.__wrapped__)
        return GeminiAsyncClient(aio, self._self_api, self._self_layer)

    def __repr__(self) -> str:
        return f"<hookwrap client {self.__wrapped__!r}>"


class GeminiClient(ObjectProxy):
    """What `hw.wrap(genai.Client(...))` returns: the client, `isinstance` and untouched
    attributes intact, whose `models`, `chats` and `aio` call the model through the hooks."""

    def __init__(self, client: Any, api: Any, layer: _Layer) -> None:
        super().__init__(client)
        from google.genai.models import Models

        self._self_api = api
        self._self_layer = layer
        self._self_models = Models(api)
        self._self_aio = GeminiAsyncClient(client.aio, api, layer)

    @property
    def _self_chain(self) -> Chain:
        """For `hw.explain`, which then follows `__wrapped__` inward."""
        return self._self_layer.chain

    @property
    def models(self) -> Any:
        return self._self_models

    @property
    def chats(self) -> Any:
        from google.genai.chats import Chats

        return Chats(modules=self._self_models)

    @property
    def aio(self) -> Any:
        return self._self_aio

    def __enter__(self) -> Any:
        self.__wrapped__.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        return self.__wrapped__.__exit__(*exc_info)

    def __copy__(self) -> Any:
        # as the SDK's own copy shares the API client, the copy shares the hooked one
        return GeminiClient(copy.copy(self.__wrapped__), self._self_api, self._self_layer)

    def __repr__(self) -> str:
        return f"<hookwrap client {self.__wrapped__!r}>"


def _sdk() -> Any:
    return sys.modules.get("google.genai")


def is_client(obj: object) -> bool:
    """A `google.genai.Client` or its `AsyncClient` (wrapped or not); never imports google."""
    genai = _sdk()
    if genai is None:
        return False
    from google.genai.client import AsyncClient

    return isinstance(obj, (genai.Client, AsyncClient))


def wrap_client(client: Any, chain: Chain) -> Any:
    """`client` with `chain` around its model calls (outside the hooks it already has).

    Returns a `GeminiClient` for a `Client`, a `GeminiAsyncClient` for an `AsyncClient`;
    of a wrapped one, a proxy of that proxy, so `__wrapped__` leads to the inner layer.
    """
    wrapped = isinstance(client, (GeminiClient, GeminiAsyncClient))
    inner = getattr(client, "_self_api" if wrapped else "_api_client")
    from google.genai.client import AsyncClient

    if isinstance(client, AsyncClient):
        layer = _Layer(chain, "a google-genai AsyncClient", (True,))
        proxy: Any = GeminiAsyncClient(client, _hooked_api(inner, layer), layer)
    else:
        layer = _Layer(chain, "a google-genai Client")
        proxy = GeminiClient(client, _hooked_api(inner, layer), layer)
    lend(layer, proxy.models)  # (an object of the SDK, which `client` may be a proxy of)
    return proxy


wrap = wrap_client


def is_resource(obj: object) -> bool:
    """`client.models` or `client.aio.models` (sync or async) of a google-genai client."""
    genai = _sdk()
    if genai is None:
        return False
    from google.genai.models import AsyncModels, Models

    return isinstance(obj, (Models, AsyncModels))


def hook_resource(resource: Any, chain: Chain) -> Any:
    """A twin of `resource` whose model calls go through `chain`."""
    from google.genai.models import AsyncModels

    is_async = isinstance(resource, AsyncModels)
    what = f"google-genai {type(resource).__name__}"
    layer = _Layer(chain, what, (is_async,))
    hooked = type(resource)(_hooked_api(resource._api_client, layer))
    lend(layer, resource)
    return hooked


# -- hw.patch -------------------------------------------------------------------------------

_PATCHED = ("request", "request_streamed", "async_request", "async_request_streamed")


def _base_class() -> Any:
    return importlib.import_module("google.genai._api_client").BaseApiClient


def _hooked(original: Any, layer: _Layer) -> Any:
    """`original` (a `BaseApiClient` method) with its model calls run through `layer`."""
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def arequest(
            self: Any, http_method: str, path: str, request_dict: Any, http_options: Any = None
        ) -> Any:
            fn = original.__get__(self)
            if layer.chain in passing.get():  # asked by a `Fallback` of this very stack
                return await fn(http_method, path, request_dict, http_options)
            return await _acall(layer, fn, http_method, path, request_dict, http_options)

        return arequest

    @functools.wraps(original)
    def request(
        self: Any, http_method: str, path: str, request_dict: Any, http_options: Any = None
    ) -> Any:
        fn = original.__get__(self)
        if layer.chain in passing.get():  # asked by a `Fallback` of this very stack
            return fn(http_method, path, request_dict, http_options)
        return _call(layer, fn, http_method, path, request_dict, http_options)

    return request


def patch(chain: Chain) -> None:
    """`hw.patch("google-genai")`: every client's model calls through `chain`.

    The four request methods of the SDK's `BaseApiClient` are replaced on the class, so
    clients made before the patch, their `aio` side and their chats are reached too, and
    a client wrapped with `hw.wrap` runs its own hooks outside these. One layer serves
    sync and async clients: a stack only async calls can run (async hooks) is accepted,
    and a sync call then raises the `TypeError` naming the hook.
    """
    cls = _base_class()
    if "__hookwrap_saved__" in cls.__dict__:
        raise AssertionError(f"{cls.__qualname__} is patched already")
    layer = _Layer(chain, "the patched google-genai SDK")
    saved = {name: cls.__dict__[name] for name in _PATCHED}
    for name, original in saved.items():
        setattr(cls, name, _hooked(original, layer) if chain.hooks else original)
    cls.__hookwrap_saved__ = saved


def unpatch() -> None:
    """Put back the very functions `patch` replaced (nothing when not patched)."""
    cls = _base_class()
    saved: dict[str, Any] | None = cls.__dict__.get("__hookwrap_saved__")
    if saved is None:
        return
    for name, original in saved.items():
        setattr(cls, name, original)
    del cls.__hookwrap_saved__
