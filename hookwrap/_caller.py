"""Call any model target hookwrap can wrap with a `ModelRequest`, for a `ModelResponse`.

A model function, an SDK client (OpenAI, Anthropic, Google GenAI; wrapped or not): the
target is wrapped once with two private hooks. The call starts from a minimal native call
(one placeholder message); a `before_model` hook puts the neutral request in its place,
which the target's adapter writes into the native call as it does for any hook, and an
`after_model` hook keeps the neutral response. So a request made for one provider runs on
another, through each adapter's own mapping.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, cast

from ._hooks import after_model, before_model
from ._types import ModelRequest, ModelResponse

__all__ = ["ModelCaller"]

# A native call: given the request (a model function) or the model name (a client), and
# the neutral request.
Entry = Callable[[Any, ModelRequest], Any]

_PLACEHOLDER = "."
_DEFAULT_MAX_TOKENS = 4096

# The request to send and where to put the answer, for the call being made.
_carried: ContextVar[tuple[ModelRequest, list[ModelResponse]]] = ContextVar("hookwrap_carried")

# Options every provider has, under each one's name for it.
_PORTABLE = {
    "temperature": ("temperature",),
    "top_p": ("top_p", "topP"),
    "max_tokens": ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"),
    "stop": ("stop", "stop_sequences", "stopSequences"),
}
_SPELLING = {
    "openai": {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens"},
    "anthropic": {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "max_tokens",
        "stop": "stop_sequences",
    },
    "google": {
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


@before_model(name="hookwrap.carry_request")
def _carry(request: ModelRequest) -> ModelRequest:
    wanted, _ = _carried.get()
    # the native call's own options (a required `max_tokens`) stay unless the request sets them
    return wanted.replace(
        raw=request.raw,
        model=request.model,
        stream=request.stream,
        options={**request.options, **wanted.options},
    )


@after_model(name="hookwrap.keep_response")
def _keep(request: ModelRequest, response: ModelResponse) -> None:
    _carried.get()[1].append(response)


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


class ModelCaller:
    """One model target, called with neutral requests.

    `model` names the model for an SDK client (None: the request's own). `is_async`
    tells whether `acall` must be used; a Google client serves both.
    """

    __slots__ = ("_async", "_sync", "accepts", "is_async", "label", "model", "sdk")

    def __init__(self, target: Any, model: str | None = None) -> None:
        from ._wrap import model as hook_model
        from ._wrap import wrap

        self.model = model
        self.sdk = _sdk(target)
        self._sync: Entry | None = None
        self._async: Entry | None = None
        self.accepts: Callable[[str], bool] = lambda option: True
        use = [_carry, _keep]
        if self.sdk is None:
            if not callable(target):
                raise TypeError(
                    f"expected a model function or an SDK client (got {type(target).__name__}: "
                    f"{target!r:.80})"
                )
            self.label = model or getattr(target, "__name__", None) or repr(target)
            hooked: Any = hook_model(target, use=use)
            entry, self.accepts = _function_entry(hooked, target)
            if _is_async_callable(target):
                self._async = entry
            else:
                self._sync = entry
        else:
            self.label = f"{type(target).__name__}({model or 'the same model'})"
            client = wrap(target, use=use)
            self._sync, self._async = _client_entries(self.sdk, client)
        self.is_async = self._sync is None

    def __repr__(self) -> str:
        return f"<ModelCaller {self.label}>"

    def _request(self, request: ModelRequest) -> ModelRequest:
        if self.sdk is not None:
            kept = portable(request.options)
            spelling = _SPELLING[self.sdk]
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
        token = _carried.set((self._request(request), box))
        try:
            made = self._sync(request if self.sdk is None else self._model(request), request)
            if hasattr(made, "__next__"):  # a streaming function: read to its end
                for _ in made:
                    pass
        finally:
            _carried.reset(token)
        return box[-1]

    async def acall(self, request: ModelRequest) -> ModelResponse:
        """Answer `request` (never streamed), in an async call; a sync target runs inline."""
        if self._async is None:
            return self.call(request)
        box: list[ModelResponse] = []
        token = _carried.set((self._request(request), box))
        try:
            made = self._async(request if self.sdk is None else self._model(request), request)
            if hasattr(made, "__anext__"):
                async for _ in made:
                    pass
            else:
                await made
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


def _function_entry(hooked: Any, target: Any) -> tuple[Entry, Callable[[str], bool]]:
    """How to call a hooked model function so that the carried request replaces the call,
    and which options it takes."""
    from .adapters.function import FunctionAdapter

    adapter = FunctionAdapter(target)
    if adapter.form == "request":

        def with_request(request: Any, carried: ModelRequest) -> Any:
            return hooked(request)

        return with_request, lambda option: True
    placeholder: Any = [] if adapter.form == "messages" else _PLACEHOLDER
    name = adapter.name
    taken = adapter.accepts - {name, "model", "stream"}
    var_kw = adapter.var_kw

    def with_placeholder(request: Any, carried: ModelRequest) -> Any:
        return hooked(**{name: placeholder})

    return with_placeholder, lambda option: var_kw or option in taken


def _client_entries(sdk: str, client: Any) -> tuple[Entry | None, Entry | None]:
    """The (sync, async) minimal native calls of a client; None where it has no such side."""
    user = [{"role": "user", "content": _PLACEHOLDER}]

    if sdk == "openai":

        def openai_call(model: str, request: ModelRequest) -> Any:
            return client.chat.completions.create(model=model, messages=user)

        return (None, openai_call) if _async_client(client) else (openai_call, None)
    if sdk == "anthropic":

        def anthropic_call(model: str, request: ModelRequest) -> Any:
            limit = portable(request.options).get("max_tokens", _DEFAULT_MAX_TOKENS)
            return client.messages.create(model=model, max_tokens=limit, messages=user)

        return (None, anthropic_call) if _async_client(client) else (anthropic_call, None)

    def google_call(model: str, request: ModelRequest) -> Any:
        return client.models.generate_content(model=model, contents=_PLACEHOLDER)

    def google_acall(model: str, request: ModelRequest) -> Any:
        return client.aio.models.generate_content(model=model, contents=_PLACEHOLDER)

    if hasattr(client, "aio"):
        return google_call, google_acall
    return None, google_call  # the AsyncClient itself: its `models` are async


def _async_client(client: Any) -> bool:
    return "Async" in type(getattr(client, "__wrapped__", client)).__name__
