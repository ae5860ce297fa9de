"""The `wrap_*` onion: nested closures built once per target, first hook outermost.

Two forms of hook: `call_next` style (called with the request and the inner layer) and the
generator form (`response = yield request`), driven here for sync and async calls alike.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from ._adapter import Call, is_stream
from ._errors import Aborted, Interrupt, add_note
from ._run import current_var
from ._stack import Hook, tell
from ._stages import SEEN, abort_if, bad_return, mark_seen
from ._types import Chunk, ModelRequest, ModelResponse, Respond, ToolCall

__all__ = ["aguarded", "as_call_next", "build", "build_async", "guarded"]

log = logging.getLogger("hookwrap")

Inner = Callable[[Any], Any]
AsyncInner = Callable[[Any], Awaitable[Any]]
# `coerce(hook, value, request=None, rest=None)`: a layer's answer as it goes out (given
# the layer's `request`, a stream the hook made is read through `guarded`; `rest` is what a
# fail-open hook's stream leaves once it failed)
Coerce = Callable[..., Any]
Streamed = Callable[[ModelResponse, ModelRequest, Call], Any]
_F = TypeVar("_F", bound=Callable[..., Any])

_REQUESTS = (ModelRequest, ToolCall)


_UNKNOWN: Any = object()  # no request to check: the error's context says whose it is


def _own(hook: Hook, exc: BaseException, request: Any = _UNKNOWN) -> None:
    """Note `exc` as the hook's own unless it came out of the inner call, or its layer was
    given no request (the error is then the outer hook's, that gave it)."""
    if (
        isinstance(exc, Exception)  # (cancellation, Ctrl-C, an exit: no hook's failure)
        and not getattr(exc, SEEN, False)
        and (request is _UNKNOWN or isinstance(request, _REQUESTS))
    ):
        add_note(exc, hook.note())
        mark_seen(exc)


def _forgiven(hook: Hook, exc: BaseException, request: Any = _UNKNOWN) -> bool:
    """A fail-open hook's own error, to be logged and skipped (see `_own`)."""
    if (
        hook.spec.fail_open
        and (request is _UNKNOWN or isinstance(request, _REQUESTS))
        and isinstance(exc, Exception)
        and not isinstance(exc, (Aborted, Interrupt))
        and not getattr(exc, SEEN, False)
    ):
        log.exception("fail-open %s failed; skipped", hook.label, exc_info=exc)
        return True
    return False


def _yielded(hook: Hook, value: Any) -> None:
    if not isinstance(value, _REQUESTS):
        abort_if(value)
        raise TypeError(
            f"{hook.label} yielded {type(value).__name__} ({value!r:.80}); expected the "
            "generator form to yield the request (or hw.Respond(response))"
        )


def as_call_next(fn: _F) -> _F:
    """`fn`, named as the hook that calls it knows it: `call_next()` called without the
    request says "call_next() missing 1 required positional argument"."""
    fn.__qualname__ = fn.__name__ = "call_next"
    return fn


def build(
    wraps: tuple[Hook, ...], inner: Inner, coerce: Coerce, streamed: Streamed | None = None
) -> Inner:
    """The sync onion: `wraps[0]` is outermost. `streamed(response, request, call)` is a
    whole answer as a stream of chunks (a model onion's)."""
    for hook in reversed(wraps):
        if hook.spec.form == "generator":
            inner = _generator_layer(hook, inner, coerce)
        else:
            given = inner  # the hook's call_next
            if streamed is not None and _is_stream_hook(hook):
                given = _streams_only(inner, streamed)
            if hook.spec.fail_open:
                inner = _forgiving_layer(hook, inner, coerce, given)
            else:
                inner = _layer(hook, given, coerce)
        if hook.trace:
            inner = _traced_layer(hook, inner)
        as_call_next(inner)
    return inner


def _is_stream_hook(hook: Hook) -> bool:
    """A `call_next` hook that is a generator function: it answers a stream, always."""
    target = hook.target
    return inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target)


def _streams_only(inner: Inner, streamed: Streamed) -> Inner:
    """`call_next` for a hook that answers a stream, always (a generator function): an
    inner layer's whole answer (a cache's, or the model's in a call whose shape only the
    model decides) is given to it as the stream of its chunks, not as a `ModelResponse`
    it could not iterate. (Where the caller waits for a whole answer, the hook's stream
    is refused when its layer returns it, before it runs: see the engine's `coerce`.)"""

    def streams_only(request: Any) -> Any:
        answer = inner(request)
        if isinstance(answer, ModelResponse) and isinstance(request.raw, Call):
            return streamed(answer, request, request.raw)
        return answer

    return as_call_next(streams_only)


def _traced_layer(hook: Hook, layer: Inner) -> Inner:
    """A layer whose request and answer (or error) its hook's watchers are told of."""

    def traced(request: Any) -> Any:
        tell(hook, "received", (request,))
        try:
            response = layer(request)
        except BaseException as exc:
            tell(hook, "raised", exc)
            raise
        tell(hook, "returned", response)
        return response

    return traced


def _atraced_layer(hook: Hook, layer: AsyncInner) -> AsyncInner:
    async def traced(request: Any) -> Any:
        tell(hook, "received", (request,))
        try:
            response = await layer(request)
        except BaseException as exc:
            tell(hook, "raised", exc)
            raise
        tell(hook, "returned", response)
        return response

    return traced


def _layer(hook: Hook, inner: Inner, coerce: Coerce) -> Inner:
    fn = hook.fn
    if hook.takes_ctx:

        def layer_ctx(request: Any) -> Any:
            try:
                result = fn(request, inner, ctx=current_var.get())
                return (
                    result if isinstance(result, ModelResponse) else coerce(hook, result, request)
                )
            except BaseException as exc:
                _own(hook, exc, request)  # its answer refused too: the hook's, not an outer one's
                raise

        return layer_ctx

    def layer(request: Any) -> Any:
        try:
            result = fn(request, inner)
            return result if isinstance(result, ModelResponse) else coerce(hook, result, request)
        except BaseException as exc:
            _own(hook, exc, request)  # its answer refused too: the hook's, not an outer one's
            raise

    return layer


def _forgiving_layer(hook: Hook, inner: Inner, coerce: Coerce, given: Inner) -> Inner:
    """A fail-open hook's layer: the hook calls `given` (`inner`, or a stream hook's view
    of it); once the hook is left out, `inner` answers as if it were not there (`given`,
    for the rest of the hook's stream)."""
    fn = hook.fn

    def layer(request: Any) -> Any:
        got: list[Any] = []  # what the inner call gave last: a response, or its _Failed

        @as_call_next
        def call_next(request: Any) -> Any:
            try:
                got.append(_taken(hook, given(request)))
            except BaseException as exc:
                _failed(got, exc)
                raise
            return got[-1]

        try:
            if hook.takes_ctx:
                result = fn(request, call_next, ctx=current_var.get())
            else:
                result = fn(request, call_next)
            # (the rest of a stream: `given`, which gives a whole answer as one too)
            return coerce(hook, _given(result), request, _Rest(got, given, request))
        except BaseException as exc:
            if not _forgiven(hook, exc, request):
                _own(hook, exc, request)
                raise
            return _last(got) if got else inner(request)

    return layer


class _Failed:
    """An inner call's error, as a fail-open `call_next` hook saw it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _failed(got: list[Any], exc: BaseException) -> None:
    """Note what the inner call raised; an error the inner call did not see (`call_next`
    given no request) left the model uncalled, so a skipped hook's call goes in as it came."""
    if getattr(exc, SEEN, False):
        got.append(_Failed(exc))


def _last(got: list[Any], streaming: bool = False) -> Any:
    """What a skipped fail-open hook leaves in place: the inner call's last response, or
    its error again (the model is not called a second time). Of a stream, what the hook did
    not answer for goes on first (see `_Taken`): all it took, when its layer failed before
    returning; when the stream it returned failed (`streaming`), the chunk it handled."""
    last = got[-1]
    if isinstance(last, _Failed):
        raise last.error
    if last.__class__ in _TAKEN:
        early = None if streaming else last.early
        again = early if early is not None else [last.taken]
        again = [item for item in again if item is not _NONE]
        last.taken, last.early = _NONE, None
        return last.rest(again) if again else last.stream
    return last


_NONE: Any = object()  # no chunk taken (see `_Taken`)


class _Rest:
    """What a fail-open hook's stream leaves once it failed: the inner call's last stream,
    read on from where the hook left it (or its error again), else the inner call made now
    (for an async onion, awaited by `aguarded`)."""

    __slots__ = ("got", "inner", "request")

    def __init__(self, got: list[Any], inner: Any, request: Any) -> None:
        self.got = got
        self.inner = inner
        self.request = request

    def __call__(self) -> Any:
        return _last(self.got, streaming=True) if self.got else self.inner(self.request)

    def reading(self) -> None:
        """The stream the hook's layer returned is being read: its body is done."""
        for given in self.got:
            if given.__class__ in _TAKEN:
                given.early = None

    def answered(self) -> None:
        """The hook's stream gave a chunk: the one it took from `call_next` is answered."""
        for given in self.got:
            if given.__class__ in _TAKEN:
                given.taken = _NONE
                given.early = None


class _Taken:
    """The stream `call_next` gave a fail-open hook, noting what the hook took from it, for
    `rest` to hand on if the hook fails.

    Every chunk it takes until its stream gives one out (`early`): a layer that fails before
    it returns gave none out, so all it read goes on. And the chunk the hook is handling
    (`taken`): the last it took, while its stream has given nothing since and the stream
    has not ended; that is what goes on when its stream fails. Chunks it took before are
    its own, dropped (a filter) or held (a window) on purpose: a hook that failed later
    must not let out what it kept back."""

    __slots__ = ("early", "stream", "taken")

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.taken: Any = _NONE
        self.early: list[Any] | None = []  # None once the hook's stream gave a chunk

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        self.taken = _NONE  # (the hook took the next: the last was its to keep or drop)
        self.taken = next(self.stream)
        if self.early is not None:
            self.early.append(self.taken)
        return self.taken

    def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            close()

    def rest(self, again: list[Any]) -> Iterator[Any]:
        """`again`, then the rest of the stream."""
        try:
            yield from again
            yield from self.stream
        finally:  # left early: closed now, not when collected
            self.close()


class _ATaken:
    """`_Taken` of an async stream."""

    __slots__ = ("early", "stream", "taken")

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.taken: Any = _NONE
        self.early: list[Any] | None = []

    def __aiter__(self) -> Any:
        return self

    async def __anext__(self) -> Any:
        self.taken = _NONE
        self.taken = await self.stream.__anext__()
        if self.early is not None:
            self.early.append(self.taken)
        return self.taken

    async def aclose(self) -> None:
        aclose = getattr(self.stream, "aclose", None)
        if aclose is not None:
            await aclose()

    async def rest(self, again: list[Any]) -> AsyncIterator[Any]:
        try:
            for item in again:
                yield item
            async for item in self.stream:
                yield item
        finally:  # left early: closed now, not when collected
            await self.aclose()


_TAKEN = (_Taken, _ATaken)


def _taken(hook: Hook, value: Any) -> Any:
    """`value` as `call_next` gives it to `hook`: a fail-open hook's stream noting what the
    hook takes from it (see `_Taken`)."""
    if not hook.spec.fail_open or not is_stream(value):
        return value
    return _ATaken(value) if hasattr(value.__class__, "__anext__") else _Taken(value)


def _given(value: Any) -> Any:
    """What the inner call gave, `value` being what the hook got or passed on of it."""
    return value.stream if value.__class__ in _TAKEN else value


def _inside(exc: BaseException, call: Any) -> bool:
    """Whether `exc` came out of a stream the model opened in `call` (read through a hook's
    stream), not out of the hook's own code: its traceback passes through one of them."""
    codes = {getattr(s, "gi_code", None) or getattr(s, "ag_code", None) for s in call.extra or ()}
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False


def _cut_short(exc: BaseException, call: Any) -> BaseException | None:
    """The model's error that the hook's own error `exc` arose while handling, if any:
    forgiving the hook must not leave a cut-off stream looking whole."""
    seen: set[int] = set()
    cause = exc.__context__
    while cause is not None and id(cause) not in seen:
        if _inside(cause, call):
            return cause
        seen.add(id(cause))
        cause = cause.__context__
    return None


def _failed_stream(hook: Hook, exc: BaseException, call: Any) -> bool:
    """An error out of a stream `hook` made: raised as the layer raises the hook's errors
    (one from the model passes unchanged), or True when the fail-open hook is to be left
    out of the rest of the stream."""
    if _inside(exc, call):
        mark_seen(exc)
        return False
    if not _forgiven(hook, exc):
        _own(hook, exc)
        return False
    return True


def _not_a_chunk(hook: Hook, item: Any) -> TypeError:
    """A fail-open hook's stream handed on something else than a Chunk: its failure, left
    out as an error of its would be (its stream closed first)."""
    return TypeError(
        f"{hook.label} streamed {type(item).__name__} ({item!r:.80}); expected Chunk objects"
    )


def _close_stream(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        close()


def guarded(hook: Hook, stream: Iterator[Any], call: Any, rest: _Rest | None) -> Iterator[Any]:
    """A stream a `wrap_model` hook made, read as the caller pulls it. The hook's code runs
    here, after its layer returned: an error it raises gets the note naming it, and a
    fail-open hook's is logged and the hook left out, the stream going on with `rest()`."""
    try:
        if rest is None or not hook.spec.fail_open:
            yield from stream
        else:
            rest.reading()
            for item in stream:
                if item.__class__ is not Chunk:
                    _close_stream(stream)
                    raise _not_a_chunk(hook, item)
                rest.answered()
                yield item
    except GeneratorExit:
        if rest is not None and hook.spec.fail_open:
            _close_stream(stream)
        raise
    except BaseException as exc:
        if not _failed_stream(hook, exc, call) or rest is None:
            raise
        lost = _cut_short(exc, call)
    else:
        return
    if lost is not None:  # the model's stream had failed: its error, as it came
        mark_seen(lost)
        raise lost
    again = rest()
    if is_stream(again):
        yield from again


async def _aclose_stream(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


async def aguarded(
    hook: Hook, stream: AsyncIterator[Any], call: Any, rest: _Rest | None
) -> AsyncIterator[Any]:
    again: Any = None
    if rest is not None:
        rest.reading()
    try:
        try:
            async for item in stream:
                if rest is not None:
                    if item.__class__ is not Chunk and hook.spec.fail_open:
                        await _aclose_stream(stream)
                        raise _not_a_chunk(hook, item)
                    rest.answered()
                yield item
        except GeneratorExit:
            # closed early: so is the hook's stream, now (as `yield from` does in `guarded`),
            # not by the loop's finalizer later, when the streams it reads are closed
            await _aclose_stream(stream)
            raise
        except BaseException as exc:
            if not _failed_stream(hook, exc, call) or rest is None:
                raise
            lost = _cut_short(exc, call)
        else:
            return
        if lost is not None:  # the model's stream had failed: its error, as it came
            mark_seen(lost)
            raise lost
        again = rest()
        if inspect.isawaitable(again):
            again = await again
        if is_stream(again):
            async for item in again:
                yield item
    finally:  # left early: the streams read here are closed now, not when collected
        for opened in (stream, again):
            aclose = getattr(opened, "aclose", None)
            if aclose is not None:
                await aclose()


def _generator_layer(hook: Hook, inner: Inner, coerce: Coerce) -> Inner:
    fn = hook.fn

    def layer(request: Any) -> Any:
        gen = fn(request, ctx=current_var.get()) if hook.takes_ctx else fn(request)
        got: list[Any] = []  # what the inner call gave each time: a response, or its _Failed
        try:  # the hook's own failures (its answers refused too) end in one place, below
            try:
                sent = next(gen)
            except StopIteration as stop:
                return coerce(hook, stop.value, request, _Rest(list(got), inner, request))
            while True:
                if isinstance(sent, Respond):
                    gen.close()
                    return coerce(hook, sent.value, request, _Rest(list(got), inner, request))
                _yielded(hook, sent)
                try:
                    response = _taken(hook, inner(sent))
                except BaseException as inner_exc:
                    got.append(_Failed(inner_exc))
                    try:
                        sent = gen.throw(inner_exc)
                    except StopIteration as stop:
                        return _swallowed(hook, stop.value, got, coerce, inner, request)
                    continue
                got.append(response)
                try:
                    sent = gen.send(response)
                except StopIteration as stop:
                    if stop.value is None:
                        return _given(response)
                    return coerce(
                        hook, _given(stop.value), request, _Rest(list(got), inner, request)
                    )
        except BaseException as exc:
            if not _forgiven(hook, exc, request):
                _own(hook, exc, request)
                raise
            return _last(got) if got else inner(request)
        finally:  # its errors' tracebacks hold this frame: no cycle left
            got.clear()

    return layer


def _swallowed(
    hook: Hook, value: Any, got: list[Any], coerce: Coerce, inner: Any, request: Any
) -> Any:
    """What a generator-form hook that caught the inner call's error and returned leaves:
    its own answer, else the inner call's last response, else that error again."""
    if value is not None:
        return coerce(hook, _given(value), request, _Rest(list(got), inner, request))
    for answer in reversed(got):
        if not isinstance(answer, _Failed):
            return _given(answer)
    raise got[-1].error


# -- async ----------------------------------------------------------------------------------


def _astreams_only(inner: AsyncInner, streamed: Streamed) -> AsyncInner:
    async def streams_only(request: Any) -> Any:
        answer = await inner(request)
        if isinstance(answer, ModelResponse) and isinstance(request.raw, Call):
            return streamed(answer, request, request.raw)
        return answer

    return as_call_next(streams_only)


def build_async(
    wraps: tuple[Hook, ...], inner: AsyncInner, coerce: Coerce, streamed: Streamed | None = None
) -> AsyncInner:
    """The async onion; generator-form hooks may be sync or async generators. `streamed`
    gives an async stream (see `build`)."""
    for hook in reversed(wraps):
        if hook.spec.form == "generator":
            if inspect.isasyncgenfunction(hook.target):
                inner = _agen_layer(hook, inner, coerce)
            else:
                inner = _sgen_layer(hook, inner, coerce)
        else:
            given = inner  # the hook's call_next
            if streamed is not None and _is_stream_hook(hook):
                given = _astreams_only(inner, streamed)
            inner = _alayer(hook, inner, coerce, given)
        if hook.trace:
            inner = _atraced_layer(hook, inner)
        as_call_next(inner)
    return inner


def _alayer(hook: Hook, inner: AsyncInner, coerce: Coerce, given: AsyncInner) -> AsyncInner:
    """(`given`: the hook's call_next, as in `_forgiving_layer`.)"""
    fn = hook.fn
    awaits = inspect.iscoroutinefunction(hook.target)  # an async generator returns a stream

    async def layer(request: Any) -> Any:
        got: list[Any] = []
        call_next: AsyncInner = given
        if hook.spec.fail_open:

            async def recorded(request: Any) -> Any:
                try:
                    got.append(_taken(hook, await given(request)))
                except BaseException as exc:
                    _failed(got, exc)
                    raise
                return got[-1]

            call_next = as_call_next(recorded)

        try:
            if hook.takes_ctx:
                result = fn(request, call_next, ctx=current_var.get())
            else:
                result = fn(request, call_next)
            if awaits:
                result = await result
            if isinstance(result, ModelResponse):
                return result
            rest = _Rest(got, given, request) if hook.spec.fail_open else None
            return coerce(hook, _given(result), request, rest)
        except BaseException as exc:
            if not _forgiven(hook, exc, request):
                _own(hook, exc, request)
                raise
            return _last(got) if got else await inner(request)

    return layer


def _sgen_layer(hook: Hook, inner: AsyncInner, coerce: Coerce) -> AsyncInner:
    """A sync generator-form hook driven in an async call."""
    fn = hook.fn

    async def layer(request: Any) -> Any:
        gen = fn(request, ctx=current_var.get()) if hook.takes_ctx else fn(request)
        got: list[Any] = []
        try:
            try:
                sent = next(gen)
            except StopIteration as stop:
                return coerce(hook, stop.value, request, _Rest(list(got), inner, request))
            while True:
                if isinstance(sent, Respond):
                    gen.close()
                    return coerce(hook, sent.value, request, _Rest(list(got), inner, request))
                _yielded(hook, sent)
                try:
                    response = _taken(hook, await inner(sent))
                except BaseException as inner_exc:
                    got.append(_Failed(inner_exc))
                    try:
                        sent = gen.throw(inner_exc)
                    except StopIteration as stop:
                        return _swallowed(hook, stop.value, got, coerce, inner, request)
                    continue
                got.append(response)
                try:
                    sent = gen.send(response)
                except StopIteration as stop:
                    if stop.value is None:
                        return _given(response)
                    return coerce(
                        hook, _given(stop.value), request, _Rest(list(got), inner, request)
                    )
        except BaseException as exc:
            if not _forgiven(hook, exc, request):
                _own(hook, exc, request)
                raise
            return _last(got) if got else await inner(request)
        finally:  # its errors' tracebacks hold this frame: no cycle left
            got.clear()

    return layer


def _agen_layer(hook: Hook, inner: AsyncInner, coerce: Coerce) -> AsyncInner:
    """An async generator-form hook: it cannot `return` a value, so it may end with
    `yield hw.Respond(response)` to replace the response; otherwise the last one stays."""
    fn = hook.fn

    async def layer(request: Any) -> Any:
        gen = fn(request, ctx=current_var.get()) if hook.takes_ctx else fn(request)
        got: list[Any] = []
        try:
            try:
                sent = await gen.__anext__()
            except StopAsyncIteration:
                raise bad_return(
                    hook, None, "`response = yield request` (or `yield hw.Respond(response)`)"
                ) from None
            while True:
                if isinstance(sent, Respond):
                    await gen.aclose()
                    return coerce(hook, sent.value, request, _Rest(list(got), inner, request))
                _yielded(hook, sent)
                try:
                    response = _taken(hook, await inner(sent))
                except BaseException as inner_exc:
                    got.append(_Failed(inner_exc))
                    try:
                        sent = await gen.athrow(inner_exc)
                    except StopAsyncIteration:
                        return _swallowed(hook, None, got, coerce, inner, request)
                    continue
                got.append(response)
                try:
                    sent = await gen.asend(response)
                except StopAsyncIteration:
                    return _given(response)
        except BaseException as exc:
            if not _forgiven(hook, exc, request):
                _own(hook, exc, request)
                raise
            return _last(got) if got else await inner(request)
        finally:  # its errors' tracebacks hold this frame: no cycle left
            got.clear()

    return layer
