"""Call any model target hookwrap can wrap with a `ModelRequest`, for a `ModelResponse`.

A model function, an SDK client (OpenAI, Anthropic, Google GenAI; wrapped or not): the
target is wrapped once with private hooks (and any hooks its owner adds). The call starts
from a minimal native call (one placeholder message); a `before_model` hook puts the
neutral request in its place, which the target's adapter writes into the native call as
it does for any hook; an `after_model` hook keeps the neutral response, and an `on_chunk`
hook hands the neutral chunks of a streamed call to `stream`/`astream`. So a request made
for one provider runs on another, through each adapter's own mapping.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from contextvars import ContextVar
from typing import Any, cast

from ._errors import stopless
from ._hooks import after_model, before_model, on_chunk
from ._types import Chunk, ModelRequest, ModelResponse

__all__ = ["ModelCaller"]

# A native call: given the request (a model function) or the model name (a client), the
# neutral request, and whether to stream.
Entry = Callable[[Any, ModelRequest, bool], Any]

_PLACEHOLDER = "."
_DONE: Any = object()
_DEFAULT_MAX_TOKENS = 4096

# The request to send, where to put the answer and (streaming) the chunks, for the call
# being made.
_carried: ContextVar[tuple[ModelRequest, list[ModelResponse], list[Chunk] | None]] = ContextVar(
    "hookwrap_carried"
)
# Outside every other hook: the carried request is what the others see first, the kept
# response and chunks are what they leave last.
_OUTERMOST = 1 << 62

# Options every provider has, under each one's name for it.
_PORTABLE = {
    "temperature": ("temperature",),
    "top_p": ("top_p", "topP"),
    "max_tokens": ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"),
    "stop": ("stop", "stop_sequences", "stopSequences"),
}
_SPELLING = {
    "openai.chat": {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_tokens",
        "stop": "stop",
    },
    "openai.responses": {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_output_tokens",
    },
    "anthropic.messages": {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_tokens",
        "stop": "stop_sequences",
    },
    "google.models": {
        "temperature": "temperature",
        "top_p": "topP",
        "max_tokens": "maxOutputTokens",
        "stop": "stopSequences",
    },
}


def portable(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options every provider understands, by their portable names."""
    found: dict[str, Any] = {}
    for name, spellings in _PORTABLE.items():
        for spelling in spellings:
            if spelling in options:
                found[name] = options[spelling]
                break
    if isinstance(found.get("stop"), str):
        found["stop"] = [found["stop"]]
    return found


@before_model(name="hookwrap.carry_request", priority=_OUTERMOST)
def _carry(request: ModelRequest) -> ModelRequest:
    wanted = _carried.get()[0]
    # the native call's own options (a required `max_tokens`) stay unless the request sets them
    return wanted.replace(
        raw=request.raw,
        model=request.model,
        stream=request.stream,
        options={**request.options, **wanted.options},
    )


@after_model(name="hookwrap.keep_response", priority=_OUTERMOST)
def _keep(request: ModelRequest, response: ModelResponse) -> None:
    _carried.get()[1].append(response)


@on_chunk(name="hookwrap.keep_chunk", priority=-_OUTERMOST)
def _keep_chunk(chunk: Chunk) -> None:
    sink = _carried.get()[2]
    if sink is not None:
        sink.append(chunk)


def _sdk(target: Any) -> str | None:
    for name, module in (
        ("openai", "openai._base_client"),
        ("anthropic", "anthropic._base_client"),
    ):
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(target, loaded.BaseClient):
            return name
    genai = sys.modules.get("google.genai.client")
    if genai is not None and isinstance(target, (genai.Client, genai.AsyncClient)):
        return "google"
    return None


def _api(method: Any) -> str | None:
    """The API of a bound SDK method hookwrap can call with a neutral request, or None."""
    if not inspect.ismethod(method):
        return None
    owner = type(method.__self__)
    module, name = owner.__module__, method.__name__
    if module.startswith("openai.resources.chat.") and name == "create":
        return "openai.chat"
    if module.startswith("openai.resources.responses.") and name == "create":
        return "openai.responses"
    if (
        module.startswith("anthropic.resources.")
        and owner.__name__ in ("Messages", "AsyncMessages")
        and name == "create"
    ):
        return "anthropic.messages"
    if module == "google.genai.models" and name in ("generate_content", "generate_content_stream"):
        return "google.models"
    return None


def _unwrapped(method: Any) -> Any:
    """The SDK's own bound method behind one `hw.wrap` gave hooks to."""
    from ._wrap import _SdkMember  # pyright: ignore[reportPrivateUsage]

    return method.__wrapped__ if isinstance(method, _SdkMember) else method


def _resolve(
    given: object, model: str | None
) -> tuple[object, str | None, str | None, dict[str, Any]]:
    """`given` as (target, API of an SDK method or None, model, arguments bound to it).

    An SDK method (`client.chat.completions.create`, `client.models.generate_content`,
    wrapped with hooks or not) may come as a `functools.partial` with keyword arguments:
    its `model` names the model, the others are sent with every call unless the request
    sets them."""
    method: object = given
    original: object = given  # `given` narrows below; the type checkers keep this one whole
    bound, fixed = model, {}
    if isinstance(given, functools.partial):
        partial = cast("functools.partial[object]", given)
        if partial.args:  # positional arguments fixed: called as a function
            return partial, None, model, {}
        fixed = dict(partial.keywords)
        named = fixed.pop("model", None)
        method, bound = partial.func, model or (named if isinstance(named, str) else None)
    api = _api(_unwrapped(method))
    if api is None:
        _refuse_other_sdk_method(_unwrapped(method))
        return original, None, model, {}
    return method, api, bound, fixed


_SDK_MODULES = ("openai.", "anthropic.", "google.genai.")
_METHODS_TAKEN = (
    "chat.completions.create or responses.create (OpenAI), messages.create (Anthropic), "
    "models.generate_content or models.generate_content_stream (Google GenAI)"
)


def _refuse_other_sdk_method(method: object) -> None:
    """An SDK method other than the ones hookwrap calls with a neutral request (`.parse`,
    `messages.stream`, `chats.send_message`) would be taken for a model function and fail
    only at its first call, after sending a request: refuse it when it is given. So is
    one of a resource's response views (`with_raw_response.create`), a function around
    the method it gives the raw HTTP response of."""
    view = ""
    if not inspect.ismethod(method) and inspect.ismethod(getattr(method, "__wrapped__", None)):
        method, view = getattr(method, "__wrapped__"), " through a response view"  # noqa: B009
    if not inspect.ismethod(method):
        return
    owner = type(method.__self__)
    if owner.__module__.startswith(_SDK_MODULES):
        raise TypeError(
            f"{owner.__name__}.{method.__name__}{view} is an SDK method hookwrap cannot call with "
            f"a request of its own; give {_METHODS_TAKEN}, bound with its model "
            "(functools.partial(client.chat.completions.create, model=...)), or the client "
            "and its model: (client, 'model name')"
        )


class ModelCaller:
    """One model target, called with neutral requests.

    `model` names the model for an SDK client (None: the request's own). `use` adds
    model hooks around every call (inside the private ones that carry the request in and
    the response out). `is_async` tells whether `acall` must be used; a Google client
    serves both. `label` names the target for messages; `label_for` names the model one
    call goes to. `argument` names where the target was given (``"Agent(model=...)"``), in
    the error for one that is no model.
    """

    __slots__ = (
        "_async",
        "_named",
        "_sync",
        "accepts",
        "api",
        "is_async",
        "label",
        "model",
        "sdk",
        "wrapped",
    )

    def __init__(
        self, target: Any, model: str | None = None, use: Any = (), argument: str = ""
    ) -> None:
        from ._wrap import _refuse_sdk_class, wrap  # pyright: ignore[reportPrivateUsage]
        from ._wrap import model as hook_model

        target, api, model, fixed = _resolve(target, model)
        if model == "":  # else taken for "no model" and refused only at the first call
            raise ValueError(
                'a model name must be a non-empty str (got ""): give (client, "model-name")'
            )
        self.model = model
        self.sdk = _sdk(target) if api is None else api.partition(".")[0]
        self.api = api or _CLIENT_APIS.get(self.sdk or "")
        self._sync: Entry | None = None
        self._async: Entry | None = None
        self.accepts: Callable[[str], bool] = lambda option: True
        self._named: str | None = None  # a client's or method's name, without the model
        # the target as wrapped with `use`, its outermost layer (what `hw.explain` reads)
        self.wrapped: Any = None
        use = [_carry, use, _keep, _keep_chunk]
        if api is not None:
            raw = _unwrapped(target)
            owner = type(raw.__self__).__name__
            self._named = f"{owner}.{raw.__name__}"
            self.label = f"{self._named}({model or 'the same model'})"
            self.wrapped = wrap(target, use=use)
            entry = _method_entry(api, self.wrapped, fixed, raw.__name__)
            # the SDKs name their async resources so; their methods are not always
            # `async def` (a plain function may wrap one)
            if owner.startswith("Async"):
                self._async = entry
            else:
                self._sync = entry
        elif self.sdk is None:
            expected = f"{argument} expects" if argument else "expected"
            expected += " a model function or an SDK client"
            _refuse_sdk_class(target, expected)
            if not callable(target):
                raise TypeError(f"{expected} (got {type(target).__name__}: {target!r:.80})")
            self.label = model or _function_label(target)
            hooked: Any = hook_model(target, use=use)
            self.wrapped = hooked
            entry, self.accepts = _function_entry(hooked, target)
            if _is_async_callable(target):
                self._async = entry
            else:
                self._sync = entry
        else:
            self._named = target.__class__.__name__  # a wrapped client's: the SDK's class
            self.label = f"{self._named}({model or 'the same model'})"
            client = self.wrapped = wrap(target, use=use)
            self._sync, self._async = _client_entries(self.sdk, client)
        self.is_async = self._sync is None

    def __repr__(self) -> str:
        return f"<ModelCaller {self.label}>"

    def label_for(self, request: ModelRequest) -> str:
        """`label`, naming the model `request` is sent to: a client or method given no
        model of its own is called with the request's, so its label names that one."""
        if self._named is None or self.model is not None or request.model is None:
            return self.label
        return f"{self._named}({request.model})"

    def _request(self, request: ModelRequest) -> ModelRequest:
        """The request as the target can take it: only the options it understands."""
        if self.sdk is not None:
            kept = portable(request.options)
            spelling = _SPELLING[self.api or ""]
            options = {spelling[k]: v for k, v in kept.items() if k in spelling}
            return request.replace(options=options, stream=False)
        accepts = self.accepts
        options = {k: v for k, v in request.options.items() if accepts(k)}
        return request.replace(options=options, stream=False)

    def _model(self, request: ModelRequest) -> str:
        model = self.model or request.model
        if model is None:
            raise TypeError(
                f'{self.label}: the request names no model; give one, e.g. (client, "model")'
            )
        return model

    def call(self, request: ModelRequest) -> ModelResponse:
        """Answer `request` (never streamed), in a sync call."""
        if self._sync is None:
            raise TypeError(f"{self.label} is async: it cannot answer a sync call")
        box: list[ModelResponse] = []
        token = _carried.set((self._request(request), box, None))
        try:
            made = self._sync(self._first(request), request, False)
            if hasattr(made, "__next__"):  # a streaming function: read to its end
                for _ in made:
                    pass
        finally:
            _carried.reset(token)
        return box[-1]

    def _first(self, request: ModelRequest) -> Any:
        return request if self.sdk is None else self._model(request)

    def stream(self, request: ModelRequest) -> Generator[Chunk | ModelResponse, None, None]:
        """Answer `request` streamed, in a sync call: the chunks as the hooks pass them on,
        then the response (assembled from them). A target that does not stream gives only
        the response. Closing this generator closes the target's stream."""
        if self._sync is None:
            raise TypeError(f"{self.label} is async: it cannot answer a sync call")
        box: list[ModelResponse] = []
        sink: list[Chunk] = []
        # set around each step only, never across a `yield`: the consumer may pull each
        # item in another context (a worker thread, a copied context)
        carried = (self._request(request), box, sink)
        token = _carried.set(carried)
        try:
            made = self._sync(self._first(request), request, True)
        finally:
            _carried.reset(token)
        if hasattr(made, "__next__"):
            try:
                while True:
                    token = _carried.set(carried)
                    try:
                        item = next(made, _DONE)
                    finally:
                        _carried.reset(token)
                    yield from sink
                    sink.clear()
                    if item is _DONE:
                        break
            finally:
                close = getattr(made, "close", None)
                if close is not None:
                    close()
        yield box[-1]

    async def astream(self, request: ModelRequest) -> AsyncGenerator[Chunk | ModelResponse, None]:
        """`stream` for async callers; a sync target's stream is read in a worker thread,
        one item at a time, so the event loop stays free."""
        if self._async is None:
            items = self.stream(request)
            try:
                while (item := await asyncio.to_thread(next, items, _DONE)) is not _DONE:
                    yield item
            finally:
                if inspect.getgeneratorstate(items) != inspect.GEN_RUNNING:
                    items.close()  # (a pull still running in its thread ends it itself)
            return
        box: list[ModelResponse] = []
        sink: list[Chunk] = []
        carried = (self._request(request), box, sink)
        token = _carried.set(carried)
        try:
            made = self._async(self._first(request), request, True)
            if not hasattr(made, "__anext__"):
                made = await made
        finally:
            _carried.reset(token)
        if hasattr(made, "__anext__"):
            try:
                while True:
                    token = _carried.set(carried)
                    try:
                        item = await anext(made, _DONE)
                    finally:
                        _carried.reset(token)
                    for chunk in sink:
                        yield chunk
                    sink.clear()
                    if item is _DONE:
                        break
            finally:
                aclose = getattr(made, "aclose", None) or getattr(made, "close", None)
                closing = None if aclose is None else aclose()
                if inspect.isawaitable(closing):
                    await closing
        yield box[-1]

    async def acall(self, request: ModelRequest) -> ModelResponse:
        """Answer `request` (never streamed), in an async call; a sync target runs in a
        worker thread, so the event loop stays free."""
        if self._async is None:
            return await asyncio.to_thread(stopless, self.call, request)
        box: list[ModelResponse] = []
        token = _carried.set((self._request(request), box, None))
        try:
            made = self._async(self._first(request), request, False)
            if not hasattr(made, "__anext__"):
                made = await made  # `generate_content_stream` gives its stream when awaited
            if hasattr(made, "__anext__"):
                async for _ in made:
                    pass
        finally:
            _carried.reset(token)
        return box[-1]


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    method = getattr(cast("object", type(fn)), "__call__", None)  # noqa: B004 - its own __call__
    return not inspect.isfunction(fn) and (
        inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method)
    )


def _function_label(fn: object) -> str:
    """A model function's name: a partial's function's, a callable object's class's.
    Never a repr, whose memory address would change the label from run to run."""
    fn = inspect.unwrap(cast("Callable[..., Any]", fn))  # a wrapped one: what it wraps
    while isinstance(fn, functools.partial):
        fn = inspect.unwrap(fn.func)
    name: object = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


def _function_entry(hooked: Any, target: Any) -> tuple[Entry, Callable[[str], bool]]:
    """How to call a hooked model function so that the carried request replaces the call,
    and which options it takes."""
    from .adapters.function import FunctionAdapter

    adapter = FunctionAdapter(target)
    if adapter.form == "request":
        streams = adapter.streams

        def with_request(request: Any, carried: ModelRequest, stream: bool) -> Any:
            # Only a target that says it streams (a generator function, an iterator return
            # annotation) is asked to stream: a whole answer to a streamed call would pass
            # a `wrap_model` hook as text chunks, its tool calls lost.
            return hooked(request.replace(stream=stream and streams))

        return with_request, lambda option: True
    placeholder: Any = [] if adapter.form == "messages" else _PLACEHOLDER
    name = adapter.name
    taken = adapter.accepts - {name, "model", "stream"}
    var_kw = adapter.var_kw
    can_stream = var_kw or "stream" in adapter.accepts

    # the first parameter goes by position (it may be one Python takes only so: `/`)
    first = adapter.index == 0

    def with_placeholder(request: Any, carried: ModelRequest, stream: bool) -> Any:
        streams = {"stream": True} if stream and can_stream else {}
        if first:
            return hooked(placeholder, **streams)
        return hooked(**{name: placeholder}, **streams)

    return with_placeholder, lambda option: var_kw or option in taken


_CLIENT_APIS = {
    "openai": "openai.chat",
    "anthropic": "anthropic.messages",
    "google": "google.models",
}


def _method_entry(api: str, method: Any, fixed: Mapping[str, Any], name: str) -> Entry:
    """The minimal native call of an SDK method, with the arguments bound to it."""
    user = [{"role": "user", "content": _PLACEHOLDER}]

    def entry(model: str, request: ModelRequest, stream: bool) -> Any:
        kwargs: dict[str, Any] = {**fixed, "model": model}
        if api == "google.models":  # streams if it is `generate_content_stream`
            return method(**kwargs, contents=_PLACEHOLDER)
        if api == "openai.responses":
            kwargs["input"] = _PLACEHOLDER
        else:
            kwargs["messages"] = user
        if api == "anthropic.messages":
            limit = portable(request.options).get("max_tokens")
            kwargs["max_tokens"] = limit or fixed.get("max_tokens") or _DEFAULT_MAX_TOKENS
        if stream:
            kwargs["stream"] = True
            if api == "openai.chat":
                # the run counts it; a caller's own chat stream shows it only if that caller
                # asked (see the chat framer)
                kwargs.setdefault("stream_options", {"include_usage": True})
        return method(**kwargs)

    entry.__name__ = name
    return entry


def _client_entries(sdk: str, client: Any) -> tuple[Entry | None, Entry | None]:
    """The (sync, async) minimal native calls of a client; None where it has no such side."""
    if sdk != "google":
        resource = client.chat.completions if sdk == "openai" else client.messages
        entry = _method_entry(_CLIENT_APIS[sdk], resource.create, {}, "create")
        return (None, entry) if _async_client(client) else (entry, None)

    def on(models_of: Callable[[Any], Any]) -> Entry:
        def google_call(model: str, request: ModelRequest, stream: bool) -> Any:
            # the client is held, not only its `models`: its HTTP client closes with it
            models = models_of(client)
            call = models.generate_content_stream if stream else models.generate_content
            return call(model=model, contents=_PLACEHOLDER)

        return google_call

    if hasattr(client, "aio"):
        return on(lambda c: c.models), on(lambda c: c.aio.models)
    return None, on(lambda c: c.models)  # the AsyncClient itself: its `models` are async


def _async_client(client: Any) -> bool:
    return "Async" in type(getattr(client, "__wrapped__", client)).__name__
