"""`Timeout`: a time limit for each model and tool call, with real cancellation in async
calls and a worker thread in sync ones (Python cannot stop a running sync function)."""

from __future__ import annotations

import asyncio
import contextvars
import queue
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from .._adapter import is_stream
from .._hooks import Middleware, async_twin, wrap_model, wrap_tool
from .._types import Chunk, ModelRequest, ToolCall
from ..stores._base import finite, shown, shown_number

__all__ = ["Timeout"]

_LATE: Any = object()  # what a call that missed its limit gives instead of a result
_END: Any = object()


class _GivenUp(threading.Event):
    """Set when the caller of a sync call has left before the call returned (its limit
    passed, or the wait was interrupted), or when the caller of a call it runs in has: a
    `Timeout` inside another is given up with it."""

    def __init__(self, outer: _GivenUp | None) -> None:
        super().__init__()
        self.outer = outer
        self.inner: set[_GivenUp] = set()
        if outer is not None:
            with _GIVING_UP:
                outer.inner.add(self)
                if outer.is_set():
                    super().set()

    def set(self) -> None:
        with _GIVING_UP:
            super().set()
            inner, self.inner = self.inner, set()
        for event in inner:
            event.set()

    def done(self) -> None:
        """The call returned in time: nothing around it gives it up any more."""
        if self.outer is not None:
            with _GIVING_UP:
                self.outer.inner.discard(self)


_GIVING_UP = threading.Lock()

# Set, in the context a sync call runs in inside its worker, to its `_GivenUp`. The call
# itself cannot be stopped; what it would start anew can be: `Retry` inside makes no
# further attempt once the event is set, and wakes from its backoff.
_given_up: contextvars.ContextVar[_GivenUp | None] = contextvars.ContextVar(
    "hookwrap.timeout_given_up", default=None
)


def given_up() -> threading.Event | None:
    """The event set once the `Timeout` around the running sync call has given up on it;
    None outside such a call."""
    return _given_up.get()


def gave_up() -> bool:
    """Whether a `Timeout` around the running sync call has given up on it (its caller
    has gone): nothing more should start for it."""
    gone = _given_up.get()
    return gone is not None and gone.is_set()


def _seconds(name: str, value: object) -> float | None:
    """`value` checked as a limit for `Timeout(name=...)`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"Timeout({name}=...) must be a number of seconds or None "
            f"(got {shown(value)}, a {type(value).__name__})"
        )
    if not finite(value) or value <= 0:
        raise ValueError(
            f"Timeout({name}=...) must be a finite number of seconds above 0, or None for "
            f"no limit (got {shown_number(value)})"
        )
    return value


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        close()


def _to(request: ModelRequest) -> str:
    return f" to {request.model!r}" if request.model else ""


class _Job:
    """One call run by a `_Worker`; holds its value or error once `done` is set."""

    __slots__ = ("args", "done", "error", "fn", "value")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def __call__(self, context: contextvars.Context) -> None:
        try:
            self.value = context.run(self.fn, *self.args)
        except BaseException as exc:  # handed to the waiting caller, or dropped if late
            self.error = exc
        finally:
            self.done.set()

    def result(self) -> Any:
        error = self.error
        if error is not None:
            self.error = None  # no cycle through the traceback
            raise error
        return self.value


class _Worker:
    """A daemon thread running calls one at a time, each in the context of the call it
    serves (so the run, `hw.current()` and every context variable are the caller's).

    A worker done with its call waits, idle, for the next one (starting a thread costs
    more than most calls it guards), and ends after `_IDLE` seconds without one. A worker
    whose call ran late goes back only once that call has returned.
    """

    __slots__ = ("context", "jobs", "late")

    def __init__(self) -> None:
        self.context = _EMPTY  # until `take` gives it a call's
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.late: _Job | None = None  # a call still running that nobody waits for
        threading.Thread(target=self._serve, name="hookwrap-timeout", daemon=True).start()

    @classmethod
    def take(cls, context: contextvars.Context) -> _Worker:
        """An idle worker, or a new one, to serve a call in `context`."""
        with _POOL_LOCK:
            worker = _POOL.pop() if _POOL else None
        if worker is None:
            worker = cls()
        worker.context = context
        return worker

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=_IDLE)
            except queue.Empty:
                with _POOL_LOCK:
                    if self not in _POOL:  # taken just now: its job is on the way
                        continue
                    _POOL.remove(self)
                return
            if job is None:
                return
            job(self.context)

    def run(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in the thread: its value, its error raised here, or `_LATE` when it
        has not returned within `seconds` (it goes on running; see `stop`)."""
        job = _Job(fn, args)
        self.late = job  # until it is back in time, also if this wait is interrupted
        self.jobs.put(job)
        # a thread waits at most TIMEOUT_MAX at a time (about 292 years, 49.7 days on
        # Windows): a longer limit is waited out in turns, up to the limit itself
        deadline = time.monotonic() + seconds
        while not job.done.wait(min(seconds, threading.TIMEOUT_MAX)):
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                return _LATE
        self.late = None
        return job.result()

    def stop(self, then: Callable[[], Any] | None = None) -> None:
        """Give the worker back once the call in progress returns. There, a late call's
        value is dropped (a stream is closed) and its error ignored, then `then` runs."""
        late, self.late = self.late, None
        if late is None and then is None:  # idle already: back at once
            self._release()
        else:
            self.jobs.put(_Job(self._done, (late, then)))

    def _done(self, late: _Job | None, then: Callable[[], Any] | None) -> None:
        try:
            if late is not None:
                if is_stream(late.value):
                    _close(late.value)
                late.value = late.error = None
            if then is not None:
                then()
        finally:
            self._release()

    def _release(self) -> None:
        self.context = _EMPTY  # the call's context goes with it
        with _POOL_LOCK:
            kept = len(_POOL) < _POOL_SIZE
            if kept:
                _POOL.append(self)
        if not kept:
            self.jobs.put(None)


_IDLE = 1.0  # seconds an idle worker waits for another call before it ends
_POOL_SIZE = 16  # idle workers kept at most
_POOL: list[_Worker] = []
_POOL_LOCK = threading.Lock()
_EMPTY = contextvars.Context()


def _limited(
    seconds: float, context: contextvars.Context, fn: Callable[[Any], Any], arg: Any
) -> Any:
    """`fn(arg)` run by a worker in `context`: its value, its error raised here, or `_LATE`.
    A call the caller leaves before it returns is marked given up (see `_given_up`)."""
    gone = _GivenUp(context.run(_given_up.get))  # given up with a Timeout around this one
    context.run(_given_up.set, gone)
    worker = _Worker.take(context)
    result: Any = _LATE
    try:
        result = worker.run(seconds, fn, arg)
        return result
    finally:
        if worker.late is not None:
            gone.set()
        elif not is_stream(result):  # a stream's chunks are still to come, in `context`
            gone.done()
        worker.stop()


if sys.version_info >= (3, 11):

    async def _within(awaitable: Awaitable[Any], seconds: float) -> Any:
        """`await awaitable`, cancelled after `seconds` (then `_LATE`); a `TimeoutError`
        from inside it is not taken for this limit."""
        scope = asyncio.timeout(seconds)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                return _LATE
            raise

else:

    async def _within(awaitable: Awaitable[Any], seconds: float) -> Any:
        try:
            return await asyncio.wait_for(awaitable, seconds)
        except asyncio.TimeoutError:  # asyncio's own class on 3.10, not the builtin
            return _LATE


class Timeout(Middleware):
    """A time limit, in seconds, for each model call (`model`) and each tool call (`tool`).

    `None` means no limit. A call over its limit raises the builtin `TimeoutError`. Async
    calls are cancelled (an SDK's HTTP request is aborted). Sync calls run in a worker
    thread, since Python cannot stop a running function: the caller gets the error at the
    limit while the call goes on in the background until it returns, and its result or
    error is then dropped (a `Retry` or `Fallback` inside starts no further attempt). In a streamed
    model call the limit applies to getting the stream (the request and the response
    headers) and to each wait for the next chunk, not to the time the caller spends reading.
    """

    name = "Timeout"

    def __init__(self, *, model: float | None = None, tool: float | None = None) -> None:
        self.model = _seconds("model", model)
        self.tool = _seconds("tool", tool)

    def __repr__(self) -> str:
        return f"Timeout(model={self.model!r}, tool={self.tool!r})"

    # -- model calls ----------------------------------------------------------------------

    async def _limit_model_async(
        self, request: ModelRequest, call_next: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        seconds = self.model
        if seconds is None:
            return await call_next(request)
        response = await _within(call_next(request), seconds)
        if response is _LATE:
            raise TimeoutError(f"model call{_to(request)} exceeded Timeout(model={seconds!r})")
        if is_stream(response):
            return self._pulled_async(response, seconds, request)
        return response

    @wrap_model
    @async_twin(_limit_model_async)
    def limit_model(self, request: ModelRequest, call_next: Callable[[ModelRequest], Any]) -> Any:
        """Call the model within `model` seconds, or raise `TimeoutError`."""
        seconds = self.model
        if seconds is None:
            return call_next(request)
        context = contextvars.copy_context()
        response = _limited(seconds, context, call_next, request)
        if response is _LATE:
            raise TimeoutError(f"model call{_to(request)} exceeded Timeout(model={seconds!r})")
        if is_stream(response):
            return self._pulled(response, context, seconds, request)
        return response

    def _pulled(
        self,
        stream: Iterator[Chunk],
        context: contextvars.Context,
        seconds: float,
        request: ModelRequest,
    ) -> Iterator[Chunk]:
        # the worker starts with the first pull: a stream closed unread needs no thread
        worker = _Worker.take(context)
        received = 0
        try:
            while True:
                chunk = worker.run(seconds, next, stream, _END)
                if chunk is _END:
                    return
                if chunk is _LATE:
                    raise TimeoutError(self._slow_chunk(request, seconds, received))
                received += 1
                yield chunk
        finally:
            if worker.late is None:
                _close(stream)
                worker.stop()
            else:  # the stream is busy in the worker: it is closed there once the pull returns
                worker.stop(lambda: _close(stream))

    async def _pulled_async(
        self, stream: AsyncIterator[Chunk], seconds: float, request: ModelRequest
    ) -> AsyncIterator[Chunk]:
        received = 0
        try:
            while True:
                try:
                    chunk = await _within(stream.__anext__(), seconds)
                except StopAsyncIteration:
                    return
                if chunk is _LATE:
                    raise TimeoutError(self._slow_chunk(request, seconds, received))
                received += 1
                yield chunk
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    @staticmethod
    def _slow_chunk(request: ModelRequest, seconds: float, received: int) -> str:
        return (
            f"model stream{_to(request)} exceeded Timeout(model={seconds!r}) waiting for a "
            f"chunk ({received} received)"
        )

    # -- tool calls -----------------------------------------------------------------------

    async def _limit_tool_async(
        self, call: ToolCall, call_next: Callable[[ToolCall], Awaitable[Any]]
    ) -> Any:
        seconds = self.tool
        if seconds is None:
            return await call_next(call)
        result = await _within(call_next(call), seconds)
        if result is _LATE:
            raise TimeoutError(f"tool {call.name!r} exceeded Timeout(tool={seconds!r})")
        return result

    @wrap_tool
    @async_twin(_limit_tool_async)
    def limit_tool(self, call: ToolCall, call_next: Callable[[ToolCall], Any]) -> Any:
        """Run the tool within `tool` seconds, or raise `TimeoutError`."""
        seconds = self.tool
        if seconds is None:
            return call_next(call)
        result = _limited(seconds, contextvars.copy_context(), call_next, call)
        if result is _LATE:
            raise TimeoutError(f"tool {call.name!r} exceeded Timeout(tool={seconds!r})")
        return result
