"""The run: the context every hook of one logical operation shares."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any, Generic, Literal, NoReturn

from typing_extensions import TypeVar

from ._errors import Aborted, add_note
from ._stack import (
    MODEL_KINDS,
    RUN_KINDS,
    TERMINAL_KINDS,
    TOOL_KINDS,
    Chain,
    Hook,
    flatten,
    refuse_tools_only,
)
from ._stages import abort_if, failed
from ._types import Abort, FinishInfo, Usage

__all__ = ["RunContext", "State", "current", "run"]

log = logging.getLogger("hookwrap")

T = TypeVar("T", default=Any)
C = TypeVar("C", covariant=True, default=Any)  # a run's context: read, never set

Phase = Literal[
    "init",
    "before_model",
    "model",
    "model_stream",
    "after_model",
    "before_tool",
    "tool",
    "after_tool",
    "finished",
]

current_var: ContextVar[RunContext[Any] | None] = ContextVar("hookwrap.run", default=None)


def current() -> RunContext[Any]:
    """The `RunContext` of the run in progress; `LookupError` outside any run."""
    ctx = current_var.get()
    # (a run that ended where it was not opened stays set there: it is over all the same)
    if ctx is None or (ctx._run is not None and ctx._run.ended):  # pyright: ignore[reportPrivateUsage]
        raise LookupError(
            "hw.current() was called outside a run: call it from a hook, from code a "
            "wrapped call runs, or inside `with hw.run():`"
        )
    return ctx


_MISSING: Any = object()


class State:
    """A run-local key/value store, safe to use from several threads."""

    __slots__ = ("_data", "_lock")

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"state keys are str (got {key!r})")
        with self._lock:
            self._data[key] = value

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._data))

    def snapshot(self) -> dict[str, Any]:
        """A shallow copy of everything stored."""
        with self._lock:
            return dict(self._data)

    def __repr__(self) -> str:
        return f"State({self.snapshot()!r})"


class RunState:
    """What all calls of one run share."""

    __slots__ = (
        "_id",
        "agent",
        "context",
        "decisions",
        "deferred",
        "ended",
        "ending",
        "events",
        "is_async",
        "iteration",
        "lock",
        "one_call",
        "started",
        "state",
        "terminal",
        "usage",
    )

    def __init__(
        self,
        context: Any = None,
        is_async: bool = False,
        run_id: str | None = None,
        one_call: bool = False,
    ) -> None:
        self._id = run_id  # given when a run is resumed; else made on first read
        self.one_call = one_call  # made for one call outside `hw.run()` and any agent
        self.agent = False  # an `hw.Agent`'s run
        # its terminal hooks and deferred work run: a call they make is a run of its own
        self.ending = False
        self.ended = False  # and they ran
        self.context = context
        self.state = State()
        self.decisions: dict[str, Any] = {}
        self.deferred: list[Any] = []
        self.events: list[tuple[str, Any]] = []
        self.is_async = is_async
        self.iteration = 0
        self.lock = threading.Lock()
        self.started = time.perf_counter()
        self.terminal: list[Hook] = []  # lifecycle hooks of every stack that took part
        self.usage = Usage()

    @property
    def id(self) -> str:
        found = self._id
        if found is None:
            with self.lock:  # made on first read: threads of one run must all get the same
                if self._id is None:
                    self._id = uuid.uuid4().hex
                found = self._id
        return found

    def join(self, chain: Chain) -> list[Hook]:
        """Register a stack's lifecycle hooks; return its `on_start` hooks new to the run."""
        fresh: list[Hook] = []
        with self.lock:
            for kind in RUN_KINDS:
                for hook in chain[kind]:
                    if hook not in self.terminal:
                        if hook.is_async and not self.is_async:
                            raise TypeError(
                                f"{hook.label} is async but the run is sync (`with hw.run()`); "
                                "use `async with hw.run()` or a plain `def` hook"
                            )
                        self.terminal.append(hook)
                        if kind == "on_start":
                            fresh.append(hook)
        return fresh


class RunContext(Generic[C]):
    """The run as a hook sees it (from `hw.current()` or a `ctx` parameter).

    Run-wide: `run_id`, `state`, `context`, `iteration`, `decisions`, `is_one_call`. Per
    model or tool call: `phase`, `call_id`, `call_state`, `chunk_index`.
    """

    # (`_bound`, left unset but by a call of a tool made of a bound method: see `bound_to`;
    # `_either`, left unset but in a model call whose caller reads a stream or a whole answer
    # alike, an agent's or a `Fallback`'s, and in the layers of its target: see `reads_either`)
    __slots__ = (
        "_asked",
        "_async",
        "_bound",
        "_call_id",
        "_call_state",
        "_counted",
        "_either",
        "_run",
        "chunk_index",
        "phase",
    )

    _bound: Any
    _either: bool

    def __init__(self, run: RunState | None, phase: Phase = "init", is_async: bool = False) -> None:
        self._run = run
        self._async = is_async  # of a one-call run made on demand: whether its call is async
        self.phase: Phase = phase
        self.chunk_index = 0
        self._call_id: str | None = None
        self._call_state: dict[str, Any] | None = None
        # in a call made inside a tool call: the id `hw.interrupt` asks under (see `asked`)
        self._asked: str | None = None
        # whether a wrapped model inside this call added its usage to the run already
        self._counted = False

    # -- run-wide -------------------------------------------------------------------------

    @property
    def run(self) -> RunState:
        run = self._run
        if run is None:  # a one-call run creates its shared part only when asked
            run = self._run = RunState(is_async=self._async, one_call=True)
        return run

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def state(self) -> State:
        return self.run.state

    @property
    def context(self) -> C:
        return self.run.context  # type: ignore[no-any-return]

    @property
    def iteration(self) -> int:
        return 0 if self._run is None else self._run.iteration

    @property
    def is_one_call(self) -> bool:
        """Whether this run is the one-call run of a call made outside `hw.run()` and
        outside an agent (it starts and ends with that call)."""
        return self._run is None or self._run.one_call

    @property
    def decisions(self) -> dict[str, Any]:
        return self.run.decisions

    @property
    def events(self) -> tuple[tuple[str, Any], ...]:
        """What `emit` sent so far, as `(name, value)` pairs."""
        return tuple(self.run.events)

    # -- per call -------------------------------------------------------------------------

    @property
    def call_id(self) -> str:
        if self._call_id is None:
            self._call_id = "call_" + uuid.uuid4().hex[:24]
        return self._call_id

    @property
    def call_state(self) -> dict[str, Any]:
        if self._call_state is None:
            self._call_state = {}
        return self._call_state

    # -- actions --------------------------------------------------------------------------

    def abort(self, reason: str = "aborted") -> NoReturn:
        """End the run now: raises `hw.Aborted(reason)`; a reason that is no str is the
        `TypeError` `hw.Abort` gives, so both say the same of the same mistake."""
        raise Aborted(Abort(reason).reason)

    def defer(self, fn_or_awaitable: Callable[[], Any] | Awaitable[Any]) -> None:
        """Run this after the run's terminal hook; its failure is logged, never raised."""
        if not (callable(fn_or_awaitable) or inspect.isawaitable(fn_or_awaitable)):
            raise TypeError(
                f"ctx.defer() takes a callable or an awaitable (got {fn_or_awaitable!r})"
            )
        self.run.deferred.append(fn_or_awaitable)

    def emit(self, name: str, value: Any = None) -> None:
        """Send a custom event to the run's event stream."""
        if not isinstance(name, str):
            raise TypeError(f"ctx.emit() takes a str name (got {name!r})")
        self.run.events.append((name, value))

    def _child(self, phase: Phase) -> RunContext[C]:
        return RunContext(self.run, phase)

    def __repr__(self) -> str:
        return f"<RunContext phase={self.phase!r} iteration={self.iteration}>"


# -- lifecycle ------------------------------------------------------------------------------


def asked(ctx: RunContext[Any]) -> str | None:
    """The call id a decision for `hw.interrupt` in `ctx` is keyed by: its call's, or in a
    call made inside a tool call (a tool a tool calls, a model it asks, and their hooks),
    the outermost tool call's: the agent's, which its interrupt event names."""
    return ctx._asked or ctx._call_id  # pyright: ignore[reportPrivateUsage]


def inherit_asked(ctx: RunContext[Any], parent: RunContext[Any]) -> None:
    """`ctx`, a call made inside `parent`'s, asks under `parent`'s outermost tool call."""
    ctx._asked = parent._asked or (  # pyright: ignore[reportPrivateUsage]
        parent._call_id if parent.phase in _IN_TOOL else None  # pyright: ignore[reportPrivateUsage]
    )


_IN_TOOL = frozenset(("before_tool", "tool", "after_tool"))


def reads_either(ctx: RunContext[Any]) -> bool:
    """Whether the caller of `ctx`'s model call reads a stream or a whole answer alike."""
    return getattr(ctx, "_either", False)


def _info(run: RunState, error: BaseException | None, usage: Usage | None = None) -> FinishInfo:
    reason = error.reason if isinstance(error, Aborted) else None
    return FinishInfo(
        run_id=run.id,
        duration=time.perf_counter() - run.started,
        usage=usage if usage is not None else run.usage,
        error=None if isinstance(error, Aborted) else error,
        reason=reason,
    )


def terminal_kind(error: BaseException | None) -> str:
    if error is None:
        return "on_finish"
    return "on_abort" if isinstance(error, Aborted) else "on_error"


def ordered(hooks: list[Hook], kind: str) -> list[Hook]:
    return sorted((h for h in hooks if h.spec.kind == kind), key=lambda h: -h.priority)


def _call(hook: Hook, ctx: RunContext[Any], *args: Any) -> Any:
    return hook.fn(*args, ctx=ctx) if hook.takes_ctx else hook.fn(*args)


def start_sync(hooks: list[Hook], ctx: RunContext[Any]) -> None:
    """`on_start` hooks: all, in order, fail-fast unless their stack says otherwise; the
    phase is "init" while they run."""
    first: BaseException | None = None
    phase, ctx.phase = ctx.phase, "init"
    try:
        for hook in hooks:
            try:
                result = _call(hook, ctx)
                if result is not None:
                    abort_if(result)
            except BaseException as exc:
                first = failed(hook, exc, first)  # as every stage's: notes, switches, aborts
    finally:
        ctx.phase = phase
    if first is not None:
        raise first


async def start_async(hooks: list[Hook], ctx: RunContext[Any]) -> None:
    first: BaseException | None = None
    phase, ctx.phase = ctx.phase, "init"
    try:
        for hook in hooks:
            try:
                result = _call(hook, ctx)
                if hook.is_async:
                    result = await result
                if result is not None:
                    abort_if(result)
            except BaseException as exc:
                first = failed(hook, exc, first)
    finally:
        ctx.phase = phase
    if first is not None:
        raise first


# the reasons of the aborts hookwrap itself makes for a run whose caller stopped: the error
# goes to no one, so a terminal hook's failure noted on it would be lost
_UNSEEN = ("closed by consumer", "cancelled")


def _terminal_error(
    kind: str,
    hook: Hook,
    exc: BaseException,
    error: BaseException | None,
    raised: list[BaseException],
) -> None:
    if kind == "on_finish":
        if raised:  # the first goes on; the others are noted on it
            add_note(raised[0], f"{hook.label} failed too: {exc!r}")
            return
        add_note(exc, hook.note())
        raised.append(exc)
    else:
        assert error is not None
        add_note(error, f"{hook.label} failed too: {exc!r}")
        if isinstance(error, Aborted) and error.reason in _UNSEEN:  # no caller sees the note
            log.error("%s failed while the run ended (%s)", hook.label, error.reason, exc_info=exc)


def finish_sync(
    run: RunState,
    hooks: list[Hook],
    ctx: RunContext[Any],
    error: BaseException | None,
    usage: Usage | None = None,
) -> None:
    """Exactly one of on_finish/on_error/on_abort; every hook runs; then deferred work."""
    kind = terminal_kind(error)
    selected = ordered(hooks, kind)
    raised: list[BaseException] = []
    ctx.phase = "finished"
    run.ending = True
    if selected:
        info = _info(run, error, usage)
        for hook in selected:
            try:
                result = _call(hook, ctx, info)
                if result is not None:
                    abort_if(result)
            except Exception as exc:
                _terminal_error(kind, hook, exc, error, raised)
    _run_deferred_sync(run)
    run.ended = True
    if raised:
        raise raised[0]


async def finish_async(
    run: RunState,
    hooks: list[Hook],
    ctx: RunContext[Any],
    error: BaseException | None,
    usage: Usage | None = None,
) -> None:
    kind = terminal_kind(error)
    selected = ordered(hooks, kind)
    raised: list[BaseException] = []
    ctx.phase = "finished"
    run.ending = True
    cancelled: asyncio.CancelledError | None = None
    if selected:
        info = _info(run, error, usage)
        for hook in selected:
            try:
                result = _call(hook, ctx, info)
                if hook.is_async:
                    result = await result
                if result is not None:
                    abort_if(result)
            except Exception as exc:
                _terminal_error(kind, hook, exc, error, raised)
            except asyncio.CancelledError as exc:  # the others still run, and the deferred
                cancelled = cancelled or exc
    await _run_deferred_async(run)
    run.ended = True
    if cancelled is not None:
        raise cancelled
    if raised:
        raise raised[0]


def _run_deferred_sync(run: RunState) -> None:
    deferred, run.deferred = run.deferred, []
    for item in deferred:
        try:
            if inspect.isawaitable(item):
                _close_awaitable(item)
                log.error("deferred %r is awaitable but the run is sync; not run", item)
                continue
            result = item()
            if inspect.isawaitable(result):
                _close_awaitable(result)
                log.error("deferred %r returned an awaitable in a sync run; not run", item)
        except Exception:
            log.exception("deferred %r failed", item)


async def _run_deferred_async(run: RunState) -> None:
    deferred, run.deferred = run.deferred, []
    for item in deferred:
        try:
            result = item if inspect.isawaitable(item) else item()
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("deferred %r failed", item)


def _close_awaitable(item: Any) -> None:
    close = getattr(item, "close", None)
    if callable(close):
        close()


# -- hw.run() -------------------------------------------------------------------------------


def _home(kind: str) -> str:
    """Where a hook of this stage goes, for an error that says where instead."""
    if kind in MODEL_KINDS:
        return "a model: hw.model(fn, use=[...])"
    if kind in TOOL_KINDS:
        return "a tool: hw.tool(fn, use=[...])"
    return "an agent: hw.Agent(model, use=[...])"


class run(Generic[T]):
    """Open a run around any code: `with hw.run(context=..., use=[...]) as ctx:`.

    Every wrapped call inside shares the run; the lifecycle hooks of `use=` and of every
    stack whose calls took part fire once each on exit. Works with `async with` too.
    `use=` takes lifecycle hooks (`on_start`, `on_finish`, `on_error`, `on_abort`). Both
    are keywords: `hw.run([hook])` would make the hooks the context, and never run them.
    """

    __slots__ = ("_ctx", "_hooks", "_token", "context")

    def __init__(self, *, context: T = None, use: Any = ()) -> None:  # type: ignore[assignment]
        self.context = context
        refuse_tools_only(use, "hw.run")
        hooks = flatten(use)
        wrong = [h for h in hooks if h.spec.kind not in RUN_KINDS]
        if wrong:
            raise TypeError(
                f"hw.run(use=...) takes lifecycle hooks ({', '.join(RUN_KINDS)}); "
                f"{wrong[0].label} belongs on {_home(wrong[0].spec.kind)}"
            )
        self._hooks = Chain(hooks)
        self._ctx: RunContext[T] | None = None
        self._token: Token[RunContext[Any] | None] | None = None

    def _open(self, is_async: bool) -> tuple[RunContext[T], list[Hook]]:
        if self._ctx is not None:
            done = self._ctx.run.ending
            raise RuntimeError(
                f"this hw.run() is {'over' if done else 'already open'}; create a new one per run"
            )
        ctx: RunContext[T] = RunContext(RunState(self.context, is_async), "init")
        fresh = ctx.run.join(self._hooks)
        self._ctx = ctx
        self._token = current_var.set(ctx)
        return ctx, fresh

    def _close(self) -> None:
        assert self._token is not None
        try:
            current_var.reset(self._token)
        except ValueError:
            # closed in another context than it was opened in (a generator holding it,
            # closed from another thread or task): that context's run is its own to end,
            # and the ended run stays current only where it was opened, where a call made
            # now is a run of its own (see `RunState.ending`)
            pass

    def __enter__(self) -> RunContext[T]:
        ctx, fresh = self._open(False)
        try:
            start_sync(fresh, ctx)
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return ctx

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        ctx = self._ctx
        assert ctx is not None
        if isinstance(exc, asyncio.CancelledError):
            exc = Aborted("cancelled")
        elif isinstance(exc, GeneratorExit):  # a generator it is in, closed early
            exc = Aborted("closed by consumer")
        try:  # the run stays current while its terminal hooks run
            finish_sync(ctx.run, ctx.run.terminal, ctx, exc)
        finally:
            self._close()

    async def __aenter__(self) -> RunContext[T]:
        ctx, fresh = self._open(True)
        try:
            await start_async(fresh, ctx)
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return ctx

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        ctx = self._ctx
        assert ctx is not None
        if isinstance(exc, asyncio.CancelledError):
            reported: BaseException | None = Aborted("cancelled")
        elif isinstance(exc, GeneratorExit):
            reported = Aborted("closed by consumer")
        else:
            reported = exc
        try:  # the run stays current while its terminal hooks run
            await finish_async(ctx.run, ctx.run.terminal, ctx, reported)
        finally:
            self._close()


TERMINAL = TERMINAL_KINDS
