"""`Fallback`: when the model call fails, ask the next model in a list."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import Any, cast

from .._adapter import Call
from .._caller import ModelCaller
from .._errors import Aborted, Interrupt, add_note
from .._hooks import Middleware, async_twin, describe, wrap_model
from .._patch import holding, passing
from .._run import current_var
from .._types import Chunk, ModelRequest, ModelResponse
from ._shared import aprimed, error_matcher, primed
from ._timeout import gave_up

__all__ = ["Fallback"]

log = logging.getLogger("hookwrap")

# what `on` takes: as `Retry(retry_on=...)`, exception types or a predicate of the error
FallbackOn = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]


class _Misused(TypeError):
    """A configuration error found during a call: raised, never a reason to fall back."""


class _SameTarget:
    """An alternative that is the same target with another model name."""

    __slots__ = ("label", "model")

    def __init__(self, model: str) -> None:
        self.model = model
        self.label = model

    def label_for(self, request: ModelRequest) -> str:
        return self.label


def _takes_no_model(request: ModelRequest) -> str | None:
    """The model function `request` goes to, described, if it cannot be given another
    model (no `model` parameter, no `**kwargs`), where the function adapter would leave a
    changed `request.model` out; None for any other target."""
    from ..adapters.function import takes_model

    call = request.raw
    if not isinstance(call, Call):
        return None
    # (None: not a model function, but an SDK's own request, which sends the model)
    return describe(call.fn) if takes_model(call.fn) is False else None


def _alternative(item: object) -> _SameTarget | ModelCaller:
    if isinstance(item, str):
        if not item:
            raise ValueError("Fallback(models=...): a model name must not be empty")
        return _SameTarget(item)
    target: object = item
    model: str | None = None
    if isinstance(item, tuple):
        pair = cast("tuple[object, ...]", item)
        if len(pair) != 2 or not isinstance(pair[1], str):
            raise TypeError(
                f"Fallback(models=...): a pair must be (client, 'model name') (got {item!r:.80})"
            )
        target, model = pair[0], pair[1]
    try:
        return ModelCaller(target, model)
    except TypeError as exc:
        raise TypeError(
            "Fallback(models=...) takes model names (str), model functions, SDK clients and "
            f"(client, 'model name') pairs; {exc}"
        ) from None


def _tuple_given(models: tuple[object, ...]) -> str:
    """The refusal of a tuple given as `models`: a tuple is how one alternative is written,
    `(client, "model")`, so a pair given without the list around it would otherwise be
    read as two alternatives (the client, then the first target with that model name)."""
    message = f"Fallback(models=...) must be a list, not a tuple (got {models!r:.80})"
    if len(models) == 2 and not isinstance(models[0], str) and isinstance(models[1], str):
        return (
            f"{message}; a (client, 'model name') pair is one alternative: write "
            f"models=[(client, {models[1]!r})]"
        )
    return f"{message}; write the alternatives in a list: models=[...]"


def _streamed(alternative: ModelCaller, request: ModelRequest) -> Any:
    """A streamed answer of `alternative`: its chunks, read up to the first one now (so a
    failure before it falls back further), or its whole response if it does not stream."""
    items = alternative.stream(request)
    try:
        first = next(items)
    except BaseException:
        items.close()
        raise
    if isinstance(first, ModelResponse):
        items.close()
        return first
    return _chunks(first, items)


def _carried(chunk: Chunk) -> Chunk | None:
    """`chunk` as the caller's stream takes it: its content, not the alternative's native
    event (read as the caller's own, its ids and model would be the alternative's).

    The event that opens an OpenAI chat stream (the role, and nothing else) is left out:
    taken for the opening of the caller's stream, it would keep the caller's stream from
    being framed anew, under one id and the model the caller asked for. Other custom
    chunks (a refusal, a signature, a citation) carry content of the same SDK's caller."""
    if chunk.kind == "custom" and chunk.name == "openai.chat.role" and not _refusal(chunk):
        return None
    return chunk.replace(raw=None)


def _refusal(chunk: Chunk) -> bool:
    """Whether a chat chunk's event carries refusal text."""
    data: object = chunk.value
    if not isinstance(data, dict):
        return False
    choices: object = cast("dict[str, object]", data).get("choices")
    if not isinstance(choices, list):
        return False
    for choice in cast("list[object]", choices):
        if isinstance(choice, dict):
            delta: object = cast("dict[str, object]", choice).get("delta")
            if isinstance(delta, dict) and cast("dict[str, object]", delta).get("refusal"):
                return True
    return False


def _chunks(first: Chunk, items: Generator[Chunk | ModelResponse, None, None]) -> Iterator[Chunk]:
    try:
        if (chunk := _carried(first)) is not None:
            yield chunk
        for item in items:
            if isinstance(item, Chunk) and (chunk := _carried(item)) is not None:
                yield chunk
    finally:
        items.close()


async def _astreamed(alternative: ModelCaller, request: ModelRequest) -> Any:
    """`_streamed` in an async call (a sync model's stream is read in a worker thread)."""
    items = alternative.astream(request)
    try:
        first = await anext(items)
    except BaseException:
        await items.aclose()
        raise
    if not isinstance(first, Chunk):  # the response of a model that does not stream
        await items.aclose()
        return first
    return _achunks(first, items)


async def _achunks(
    first: Chunk, items: AsyncGenerator[Chunk | ModelResponse, None]
) -> AsyncIterator[Chunk]:
    try:
        if (chunk := _carried(first)) is not None:
            yield chunk
        async for item in items:
            if isinstance(item, Chunk) and (chunk := _carried(item)) is not None:
                yield chunk
    finally:
        await items.aclose()


def _model_of(alternative: _SameTarget | ModelCaller, request: ModelRequest) -> str:
    """The model `alternative` is called with: its own, the request's for an SDK client
    given none, else its label (a model function's name)."""
    if alternative.model:
        return alternative.model
    if isinstance(alternative, ModelCaller) and alternative.sdk is not None and request.model:
        return request.model
    return alternative.label_for(request)


class Fallback(Middleware):
    """When the model call fails, try each of `models` in turn until one answers.

    An alternative is a model name (the same target, called with `model=` that name), a
    model function, an SDK client (the request's own model name), or a `(client, "model")`
    pair, of any provider: the request is carried over through the neutral types, and
    the answer is written back in the caller's own format. `on` picks the errors that
    fall back (exception types or a predicate; by default every `Exception` but
    `hw.Aborted` and `hw.Interrupt`). When every model failed, the last error propagates,
    with notes naming the earlier failures. `ctx.call_state["fallback"]` names the
    alternative that answered and `ctx.call_state["fallback_model"]` the model it was
    called with (both None when the first model did); an alternative's response carries
    its `model`.
    """

    name = "Fallback"

    def __init__(self, *, models: list[Any], on: FallbackOn | None = None) -> None:
        given: object = models  # checked as given: an untyped caller may pass anything
        if isinstance(given, tuple):
            raise TypeError(_tuple_given(cast("tuple[object, ...]", given)))
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
            raise TypeError(f"Fallback(models=...) must be a list (got {given!r:.80})")
        items = cast("Sequence[object]", given)
        if not items:
            raise ValueError("Fallback(models=...) needs at least one alternative model")
        self.models: tuple[_SameTarget | ModelCaller, ...] = tuple(map(_alternative, items))
        self.on = error_matcher("Fallback(on=...)", on, lambda exc: True)

    def __repr__(self) -> str:
        return f"Fallback(models=[{', '.join(m.label for m in self.models)}])"

    def _falls_back(self, error: BaseException) -> bool:
        if not isinstance(error, Exception) or isinstance(error, (Aborted, Interrupt)):
            return False
        if gave_up():  # a sync call its Timeout gave up on
            return False
        return bool(self.on(error))

    def _answered(
        self, response: Any, alternative: _SameTarget | ModelCaller | None, request: ModelRequest
    ) -> Any:
        ctx = current_var.get()
        label = None if alternative is None else alternative.label_for(request)
        if ctx is not None:
            ctx.call_state["fallback"] = label
            # the model the alternative was called with: a stream's chunks name the one
            # the caller asked for, and a response's `model` is the API's name for it
            ctx.call_state["fallback_model"] = (
                None if alternative is None else _model_of(alternative, request)
            )
        if alternative is None or not isinstance(response, ModelResponse):
            return response
        if request.stream:  # the caller's own stream, under the model it asked for
            return response.replace(raw=None, model=request.model)
        # another provider's raw answer would be read as the caller's own: leave it out
        return response.replace(
            raw=None, model=response.model or getattr(alternative, "model", None) or label
        )

    def _failed(
        self, error: BaseException, errors: list[tuple[str, BaseException]], label: str
    ) -> None:
        if not self._falls_back(error) or isinstance(error, _Misused):
            raise error
        log.warning("Fallback: %s failed (%s: %s)", label, type(error).__name__, error)
        errors.append((label, error))

    def _check(self, request: ModelRequest, first: BaseException) -> None:
        """Refuse model names as alternatives when the target cannot take a model: it
        would be called again as it was. Known only now, from the call (a `Fallback` is
        made before the target it serves)."""
        names = [m.label for m in self.models if isinstance(m, _SameTarget)]
        if not names:
            return
        target = _takes_no_model(request)
        if target is not None:
            raise _Misused(
                f"Fallback(models=...): {', '.join(map(repr, names))} would call the same "
                f"target with another model, but {target} takes no `model` parameter (nor "
                "`**kwargs`); give it one, or give the alternative as a model function or a "
                "(client, 'model name') pair"
            ) from first

    def _ask(self, alternative: ModelCaller, request: ModelRequest) -> Any:
        """`alternative`'s answer. A patched SDK's stack that holds this `Fallback` runs
        around the call that failed already: the alternative's request passes it by (else
        a client of that SDK would fall back to itself, and each hook run twice)."""
        token = passing.set((*passing.get(), *holding(self)))
        try:
            return _streamed(alternative, request) if request.stream else alternative.call(request)
        finally:
            passing.reset(token)

    async def _aask(self, alternative: ModelCaller, request: ModelRequest) -> Any:
        """`_ask` in an async call (a sync model runs in a worker thread)."""
        token = passing.set((*passing.get(), *holding(self)))
        try:
            if request.stream:
                return await _astreamed(alternative, request)
            return await alternative.acall(request)
        finally:
            passing.reset(token)

    def _give_up(self, errors: list[tuple[str, BaseException]]) -> BaseException:
        last = errors[-1][1]
        for label, error in errors[:-1]:
            add_note(last, f"Fallback: {label} failed before: {type(error).__name__}: {error}")
        return last

    async def _amodel(self, request: ModelRequest, call_next: Any) -> Any:
        errors: list[tuple[str, BaseException]] = []
        try:
            try:
                response = await call_next(request)
                if hasattr(response, "__anext__"):
                    response = await aprimed(response)
                return self._answered(response, None, request)
            except BaseException as error:
                self._failed(error, errors, "the first model")
            self._check(request, errors[0][1])
            for alternative in self.models:
                label = alternative.label_for(request)
                try:
                    if isinstance(alternative, _SameTarget):
                        response = await call_next(request.replace(model=alternative.model))
                        if hasattr(response, "__anext__"):
                            response = await aprimed(response)
                    else:
                        response = await self._aask(alternative, request)
                    return self._answered(response, alternative, request)
                except BaseException as error:
                    self._failed(error, errors, label)
            raise self._give_up(errors)
        finally:  # the errors' tracebacks hold this frame: no cycle left
            errors.clear()

    @wrap_model
    @async_twin(_amodel)
    def model(self, request: ModelRequest, call_next: Any) -> Any:
        errors: list[tuple[str, BaseException]] = []
        try:
            try:
                response = call_next(request)
                if hasattr(response, "__next__"):
                    response = primed(response)
                return self._answered(response, None, request)
            except BaseException as error:
                self._failed(error, errors, "the first model")
            self._check(request, errors[0][1])
            for alternative in self.models:
                label = alternative.label_for(request)
                try:
                    if isinstance(alternative, _SameTarget):
                        response = call_next(request.replace(model=alternative.model))
                        if hasattr(response, "__next__"):
                            response = primed(response)
                    elif alternative.is_async:
                        raise _Misused(f"Fallback: {label} is async and cannot answer a sync call")
                    else:
                        response = self._ask(alternative, request)
                    return self._answered(response, alternative, request)
                except BaseException as error:
                    self._failed(error, errors, label)
            raise self._give_up(errors)
        finally:  # the errors' tracebacks hold this frame: no cycle left
            errors.clear()
