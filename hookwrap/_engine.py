"""One model or tool call, start to end: this is where every stage is called, in order.

Built once per wrapped target (`ModelEngine`, `ToolEngine`); a call walks the tuples
computed then. Sync and async are twins; streams end in a generator that keeps the run
open until the caller is done with it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import operator
import time
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from types import CoroutineType
from typing import Any, cast

from ._adapter import Adapter, Call, Natives, is_stream
from ._convert import tool_arguments
from ._errors import Aborted, Interrupt
from ._onion import aguarded, as_call_next, build, build_async, guarded
from ._run import (
    RunContext,
    RunState,
    current_var,
    finish_async,
    finish_sync,
    inherit_asked,
    reads_either,
    start_async,
    start_sync,
)
from ._stack import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Chain, Hook, refuse_idle
from ._stages import (
    FROM_TOOL,
    abort_if,
    after_model,
    after_model_async,
    after_tool,
    after_tool_async,
    bad_return,
    before_model,
    before_model_async,
    before_tool,
    before_tool_async,
    call_all,
    call_all_async,
    left_of,
    mark_seen,
    on_chunk,
    on_chunk_async,
    refused,
)
from ._tool import ToolBinding, instance_of
from ._types import (
    DROP,
    Chunk,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolOutcome,
    Usage,
    deferred_response,
    new_full_message,
    new_response,
    new_usage,
)

__all__ = ["ModelEngine", "ToolEngine", "check_shape"]

CLOSED = "closed by consumer"
_PRIMED: Any = object()
_ids = itertools.count(1)
_PREFIX = uuid.uuid4().hex[:10]


def new_call_id() -> str:
    return f"call_{_PREFIX}{next(_ids)}"


def check_shape(chain: Chain, kinds: tuple[str, ...], is_async: bool, what: str) -> None:
    """Refuse, at wrap time, hooks that cannot run in this call shape, and hook functions
    of a stage this target never has (a middleware object may serve several targets, so
    its hooks for other stages are left for those, unless none of its hooks run here)."""
    allowed = (*kinds, *RUN_KINDS)
    target = "a tool" if "before_tool" in kinds else "a model call"
    for hook in chain.hooks:
        stage = hook.spec.kind
        if stage in allowed:
            continue
        owner = getattr(hook.target, "__self__", None)
        if owner is not None:
            refuse_idle(owner, hook.origin, allowed, target)
        else:
            raise TypeError(
                f"{hook.label} ({hook.origin}) can never run on {what}: {target} has the "
                f"stages {', '.join(kinds)} and the run's {', '.join(RUN_KINDS)}"
                + (
                    "; agent stages run in an hw.Agent"
                    if "agent" in stage or "iter" in stage
                    else ""
                )
            )
    for kind in allowed:
        for hook in chain[kind]:
            spec = hook.spec
            if spec.form == "call_next" and spec.is_async != is_async:
                want = "async def" if is_async else "def"
                arg, out = ("call", "result") if kind == "wrap_tool" else ("request", "response")
                raise TypeError(
                    f"{hook.label} takes call_next but is "
                    f"{'async' if spec.is_async else 'sync'} while {what} is "
                    f"{'async' if is_async else 'sync'}: a call_next hook must be `{want}`; "
                    "or write it once in the generator form, which serves every call shape:\n"
                    f"    def hook({arg}):\n        {out} = yield {arg}\n        return {out}"
                )
            if spec.is_async and not is_async:
                raise TypeError(
                    f"{hook.label} is async but {what} is sync; make the hook a plain `def` "
                    "(or wrap an async target)"
                )


_INPUT = operator.attrgetter("input_tokens")
_OUTPUT = operator.attrgetter("output_tokens")
_TOTAL = operator.attrgetter("total_tokens")
_KIND = operator.attrgetter("kind")
_TEXT = operator.attrgetter("text")
_USAGE = operator.attrgetter("usage")
_FINISH = operator.attrgetter("finish_reason")
_RAW = operator.attrgetter("raw")
_IS_TEXT = "text".__eq__
_TOOL_KINDS = frozenset({"tool_call_start", "tool_call_args"})

#: How an API's wire reads a streamed call's native form (a Gemini function call part, a
#: Chat Completions tool call) back from the `raw`s of the call's chunks: the `raw` that
#: `assemble` gives the call, as its non-streamed twin has it, for the next request to
#: send back whole (a signature among its keys). Each wire adds its reader; a reader
#: answers None for another API's.
CALL_READERS: list[Callable[[list[Any]], Any]] = []
#: How an API's wire reads a streamed answer's record (`Message.raw`: its thinking blocks,
#: reasoning items, thought parts) back from the `raw`s of the chunks delivered: the record
#: its non-streamed twin has, of the same tag and shape, for the next request to write the
#: message over. Each wire adds its reader; a reader answers None for another API's.
ANSWER_READERS: list[Callable[[list[Any]], Any]] = []


def _usage_of(found: list[Usage]) -> Usage | None:
    """Usage reported by a stream: most providers report running totals, so keep the max."""
    if not found:
        return None
    inp = max(map(_INPUT, found))
    out = max(map(_OUTPUT, found))
    total = max(max(map(_TOTAL, found)), inp + out)
    made: Usage = new_usage(inp, out, total)
    return made


def assemble(
    chunks: list[Chunk], model: str | None = None, sent: list[Any] | None = None
) -> ModelResponse:
    """The response the caller received, rebuilt from the chunks delivered.

    It runs at the end of every stream with `after_model` or `on_usage` hooks, so the
    chunks are read by mapping attribute getters over them (in C), not one by one;
    only tool call chunks are walked, and the native events behind the chunks by the
    reader of their API (see `ANSWER_READERS`). Chunks a hook made have none: the record
    holds what the API sent, and the message's own fields are written over it."""
    kinds = list(map(_KIND, chunks))
    text = "".join(itertools.compress(map(_TEXT, chunks), map(_IS_TEXT, kinds)))
    # providers also put usage and the finish reason on text chunks (Gemini does)
    usages: list[Usage] = list(filter(None, map(_USAGE, chunks)))
    finishes: list[str] = list(filter(None, map(_FINISH, chunks)))
    tool_calls: tuple[ToolCall, ...] = ()
    if not _TOOL_KINDS.isdisjoint(kinds):
        tool_calls = _tool_calls(c for c in chunks if c.kind in _TOOL_KINDS)
    # the answer's record is of what the API sent (`sent`: what the model gave before the
    # `on_chunk` hooks, a reasoning text they dropped included), else of what they left
    raws: list[Any] = list(filter(None, sent if sent is not None else map(_RAW, chunks)))
    raw = _native_answer(raws) if raws else None
    message = new_full_message("assistant", text, tool_calls, None, None, raw=raw)
    made: ModelResponse = new_response(
        message, _usage_of(usages), finishes[-1] if finishes else None, model, None
    )
    return made


def _native_answer(raws: list[Any]) -> Any:
    """The record of the answer streamed in chunks with these `raw`s, as its API's reader
    finds it; None for an API with no reader."""
    for read in ANSWER_READERS:
        found = read(raws)
        if found is not None:
            return found
    return None


def _tool_calls(chunks: Iterable[Chunk]) -> tuple[ToolCall, ...]:
    """The whole tool calls streamed as `tool_call_start` and `tool_call_args` chunks.

    A chunk belongs to the call its `tool_call_id` names; one without an id, to the call
    started last with the same index (`value`: the APIs number calls, which may
    interleave), else to a new call if it starts one, else to the latest call. A call
    started without an id keeps none (`""`). Its `raw` is what its API's reader (see
    `CALL_READERS`) makes of its chunks' own."""
    calls: dict[object, list[Any]] = {}  # key -> [id, name, argument fragments, raws]
    started: dict[Any, object] = {}  # a start chunk's index -> its call's key
    key: object = None
    for c in chunks:
        index = c.value if c.value.__class__ is int else None
        if c.tool_call_id:
            key = c.tool_call_id
            # a start of no index with an id seen before is a call of its own: Gemini names
            # calls that come without an id by their name and arguments, alike for the same
            if c.kind == "tool_call_start" and index is None and key in calls:
                key = object()
        elif index is not None and index in started:
            key = started[index]
        elif index is not None and c.kind == "tool_call_args":
            continue  # the input of a block no call opened (an Anthropic server tool's)
        elif c.kind == "tool_call_start" or key is None:
            key = object()  # a call of its own, though it has no id
        entry = calls.get(key)
        if entry is None:
            entry = calls[key] = [c.tool_call_id or "", c.tool_name or "", [], []]
        if c.kind == "tool_call_start" and index is not None:
            started[index] = key
        if c.tool_name and not entry[1]:
            entry[1] = c.tool_name
        if c.text:  # a start may carry the first fragment, or (Gemini) all of them
            entry[2].append(c.text)
        if c.raw is not None:
            entry[3].append(c.raw)
    return tuple(
        ToolCall(call_id, name, tool_arguments("".join(parts)), _native_call(raws))
        for call_id, name, parts, raws in calls.values()
    )


def _native_call(raws: list[Any]) -> Any:
    """The native form of a call streamed in chunks with these `raw`s, as its API's reader
    finds it; None for a call of chunks a hook made, or of an API with no reader."""
    for read in CALL_READERS if raws else ():
        found = read(raws)
        if found is not None:
            return found
    return None


class _Shared:
    """What model and tool engines both need: the chain and the run bookkeeping."""

    __slots__ = ("chain", "either", "is_async", "lifecycle")

    def __init__(self, chain: Chain, is_async: bool) -> None:
        self.chain = chain.shaped(is_async)
        self.is_async = is_async
        self.lifecycle = self.chain.any(RUN_KINDS)
        self.either = False  # whether its caller reads a stream or a whole answer alike

    def _open(self, parent: RunContext[Any] | None, phase: Any) -> RunContext[Any]:
        if parent is None:
            run = RunState(is_async=self.is_async, one_call=True) if self.lifecycle else None
            ctx: RunContext[Any] = RunContext(run, phase, self.is_async)
        else:
            ctx = RunContext(parent.run, phase)
            inherit_asked(ctx, parent)
            if _handover.get() is parent:
                # the target of `parent`'s call, wrapped itself: the same call, one layer in
                _handover.set(None)
                ctx._call_id = parent.call_id  # pyright: ignore[reportPrivateUsage]
                ctx._call_state = parent.call_state  # pyright: ignore[reportPrivateUsage]
                if reads_either(parent):
                    ctx._either = True  # pyright: ignore[reportPrivateUsage]
        if self.either:
            ctx._either = True  # pyright: ignore[reportPrivateUsage]
        return ctx

    def _end_sync(
        self, ctx: RunContext[Any], error: BaseException | None, usage: Usage | None = None
    ) -> None:
        run = ctx._run  # pyright: ignore[reportPrivateUsage]
        if run is not None:
            finish_sync(run, run.terminal, ctx, error, usage)

    async def _end_async(
        self, ctx: RunContext[Any], error: BaseException | None, usage: Usage | None = None
    ) -> None:
        run = ctx._run  # pyright: ignore[reportPrivateUsage]
        if run is not None:
            await finish_async(run, run.terminal, ctx, error, usage)


class ModelEngine(_Shared):
    """Runs model calls of one wrapped target through its chain."""

    __slots__ = (
        "adapter",
        "after",
        "answer",
        "answers_parent",
        "before",
        "chunk_hooks",
        "coerce",
        "hands_over",
        "keep_chunks",
        "onion",
        "raw_direct",
        "unseen",
        "usage",
        "what",
    )

    def __init__(self, adapter: Adapter, chain: Chain, is_async: bool, what: str) -> None:
        super().__init__(chain, is_async)
        chain = self.chain
        check_shape(chain, MODEL_KINDS, is_async, what)
        self.what = what
        self.adapter = adapter
        self.before = chain["before_model"]
        self.after = chain["after_model"]
        self.chunk_hooks = chain["on_chunk"]
        self.usage = chain["on_usage"]
        self.keep_chunks = bool(self.after or self.usage or self.lifecycle)
        # Without wrap hooks every chunk reaching the engine is the adapter's own, so an
        # unchanged one can hand back its native form as is; a wrap hook may have rebuilt it.
        self.raw_direct = not chain["wrap_model"]
        # No hook sees the answer of a call outside a run: no response view is made for it
        # (a run sums the usage its calls report, so a call inside one always has a view).
        self.unseen = not (chain["wrap_model"] or self.keep_chunks)
        self.hands_over = adapter.hands_over()
        # a model a `Fallback` or `Agent` asks in place of the call it runs in (hookwrap's
        # caller puts this hook on it): its answer is that call's, and so is its usage
        self.answers_parent = any(h.spec.name == "hookwrap.carry_request" for h in chain.hooks)
        self.either = self.answers_parent  # (an agent reads a stream or a whole answer alike)

        # what a stream from a wrap hook must be in this shape, decided once
        step, shape = ("__anext__", "an async") if is_async else ("__next__", "an")

        guard = aguarded if is_async else guarded

        def coerce(hook: Hook, value: Any, request: Any = None, rest: Any = None) -> Any:
            if isinstance(value, ModelResponse):
                return value
            if is_stream(value):
                if not hasattr(value.__class__, step):
                    raise bad_return(hook, value, f"{shape} iterator of Chunks in this call")
                call = None if request is None else request.raw
                if isinstance(call, Call):
                    # (an agent, or a `Fallback` asking another model, reads either)
                    if adapter.waits_whole(call) and not self._reads_either():
                        raise bad_return(hook, value, "a response: this call does not stream")
                    if _hooks_own(value, call):
                        return guard(hook, value, call, rest)
                return value
            if value is None:
                raise bad_return(
                    hook,
                    value,
                    "the response: `return call_next(request)`"
                    if hook.spec.form == "call_next"
                    else "`response = yield request` (or a response of its own)",
                )
            try:
                return adapter.coerce(value, None)
            except TypeError as exc:
                why = f": {exc}" if isinstance(value, Mapping) else ""  # which keys it lacks
                raise refused(
                    hook, value, f"a ModelResponse, Message, str or chat dict (or a stream){why}"
                ) from None

        def answer(hook: Hook, value: Any) -> ModelResponse:
            """A `Respond`ed value as a response, read in its `before_model` hook's stage:
            a value with no such form is that hook's error (a fail-open one is skipped)."""
            if isinstance(value, ModelResponse):
                return value
            abort_if(value)
            try:
                return adapter.coerce(value, None)
            except TypeError as exc:
                raise TypeError(
                    f"{hook.label} answered hw.Respond({value!r:.80}) ({type(value).__name__}), "
                    "which is no answer for this call; expected a ModelResponse, Message, str "
                    f"or chat dict (the target says: {exc})"
                ) from exc

        self.coerce = coerce
        self.answer = answer
        wraps = chain["wrap_model"]
        if is_async:
            self.onion: Any = build_async(wraps, self._inner_async, coerce, self._as_astream)
        else:
            self.onion = build(wraps, self._inner, coerce, self._as_stream)

    # -- innermost --------------------------------------------------------------------------

    @as_call_next
    def _inner(self, request: ModelRequest, view: bool = True) -> Any:
        """The model's answer: a response view, or (`view` false) the native answer as it
        came; a stream's chunks either way."""
        adapter = self.adapter
        try:
            if self.hands_over:  # see `_handover`
                token = _handover.set(current_var.get())
                try:
                    native = adapter.invoke(request)
                finally:
                    _handover.reset(token)
            else:
                native = adapter.invoke(request)
            call = request.raw
            if is_stream(native):
                if not hasattr(native.__class__, "__next__"):
                    raise self._other_shape(native, "a plain `def`", "an `async def`")
                chunks = adapter.chunks(native, call)
                _made(call, chunks, native)
                if not (self.raw_direct or adapter.notes_chunks) and isinstance(call, Call):
                    # (kept open by the call, not by a hook reading it: closing the call
                    # closes it, and a cleanup error is raised there, not lost in a finalizer)
                    chunks = _recorded(chunks, call)
                    _opened(call, chunks)
                return chunks
            return adapter.response(native, call) if view else native
        except BaseException as exc:
            # a hook gave call_next something else: checked only once it failed, off the hot path
            if not isinstance(request, ModelRequest):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(
                    f"call_next takes the ModelRequest (request, or request.replace(...)); got "
                    f"{type(request).__name__} ({request!r:.80})"
                ) from None
            mark_seen(exc)
            raise

    @as_call_next
    async def _inner_async(self, request: ModelRequest, view: bool = True) -> Any:
        adapter = self.adapter
        # (set in this task's context only: a task a hook started beside it takes nothing)
        token = _handover.set(current_var.get()) if self.hands_over else None
        try:
            try:
                native = adapter.invoke(request)
                if not is_stream(native) and hasattr(native, "__await__"):
                    native = await native
            finally:
                if token is not None:
                    _handover.reset(token)
            call = request.raw
            if is_stream(native):
                if not hasattr(native.__class__, "__anext__"):
                    raise self._other_shape(native, "an `async def`", "a plain `def`")
                chunks = adapter.achunks(native, call)
                _made(call, chunks, native)
                if not (self.raw_direct or adapter.notes_chunks) and isinstance(call, Call):
                    chunks = _arecorded(chunks, call)
                    _opened(call, chunks)
                return chunks
            return adapter.response(native, call) if view else native
        except BaseException as exc:
            if not isinstance(request, ModelRequest):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(
                    f"call_next takes the ModelRequest (request, or request.replace(...)); got "
                    f"{type(request).__name__} ({request!r:.80})"
                ) from None
            mark_seen(exc)
            raise

    def _close_and_end(
        self,
        chunks: Any,
        call: Call | None,
        ctx: RunContext[Any],
        error: BaseException,
        ending: bool,
    ) -> None:
        """After `error`: close what the call opened, then end its run (`ending`) with
        `error`, or with the error closing raised, which then propagates in its place."""
        try:
            if call is not None:
                _close(chunks, call)
        except BaseException as failed:
            if ending:
                self._end_sync(ctx, failed)
            raise
        if ending:
            self._end_sync(ctx, error)

    async def _aclose_and_end(
        self,
        chunks: Any,
        call: Call | None,
        ctx: RunContext[Any],
        error: BaseException,
        ending: bool,
    ) -> None:
        try:
            if call is not None:
                await _aclose(chunks, call)
        except BaseException as failed:
            if ending:
                await self._end_async(ctx, failed)
            raise
        if ending:
            await self._end_async(ctx, error)

    def _other_shape(self, stream: Any, this: str, other: str) -> TypeError:
        """A stream of the other shape than the target's: it goes back as the same kind of
        object only if the target says what it is."""
        kind = "an async" if hasattr(stream.__class__, "__anext__") else "a sync"
        return TypeError(
            f"{self.what} is {this} but returned {kind} iterator "
            f"({type(stream).__name__}); hooks run in the target's own shape, so make it "
            f"{other} (a generator function of that kind streams too)"
        )

    def _reads_either(self, ctx: RunContext[Any] | None = None) -> bool:
        """Whether this call's caller reads a stream or a whole answer alike: it is an
        agent's or a `Fallback`'s own call of a model, or a layer of such a call's target.
        (`ctx`: the call's context, else the current one.)"""
        if ctx is None:
            ctx = current_var.get()
        return self.answers_parent or (ctx is not None and reads_either(ctx))

    def _responded(self, response: ModelResponse, request: ModelRequest, call: Call) -> Any:
        """A whole answer given instead of the model's, as this call returns it."""
        return self._as_stream(response, request, call) if request.stream else response

    async def _aresponded(self, response: ModelResponse, request: ModelRequest, call: Call) -> Any:
        return self._as_astream(response, request, call) if request.stream else response

    def _as_stream(self, response: ModelResponse, request: ModelRequest, call: Call) -> Any:
        """A whole answer as a stream of chunks (it names its model, as the answer does, to
        the hooks at its end). The call streams from now on: the model's whole answer, if
        it was one, is no longer the call's (see `FunctionAdapter.waits_whole`)."""
        call.answered = response.model
        call.response = None
        return iter(self.adapter.respond_chunks(response, request))

    def _as_astream(self, response: ModelResponse, request: ModelRequest, call: Call) -> Any:
        call.answered = response.model
        call.response = None
        chunks = self.adapter.respond_chunks(response, request)

        async def stream() -> AsyncIterator[Chunk]:
            for chunk in chunks:
                yield chunk

        return stream()

    # -- sync -----------------------------------------------------------------------------

    def call(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        parent = current_var.get()
        if parent is not None and parent._run is not None and parent._run.ending:  # pyright: ignore[reportPrivateUsage]
            parent = None  # a call a terminal hook or deferred work makes: a run of its own
        if parent is None and not self.lifecycle:  # `_open`, inline on the hottest path
            ctx: RunContext[Any] = RunContext(None, "before_model")
        else:
            ctx = self._open(parent, "before_model")
        token = current_var.set(ctx)
        call = stream = None
        try:
            if self.lifecycle:
                fresh = ctx.run.join(self.chain)
                if fresh:
                    start_sync(fresh, ctx)
            call = Call(wrapped, args, kwargs)
            request = self.adapter.request(call)
            answered = None
            if self.before:
                request, answered = before_model(self.before, request, ctx, self.answer)
            if answered is None:
                ctx.phase = "model"
                if self.unseen and parent is None:
                    response = self._inner(request, False)
                    if not is_stream(response):
                        if ctx._run is None:  # pyright: ignore[reportPrivateUsage]
                            # no hook sees it, nothing to end: as the model gave it
                            return self.adapter.passthrough(response, call)
                        response = self.adapter.response(response, call)  # a run to end
                else:
                    response = self.onion(request)
                if (
                    not self.raw_direct
                    and request.stream
                    and isinstance(response, ModelResponse)
                    and response is not call.response  # not the model's own whole answer
                ):
                    # a wrap hook's whole answer
                    response = self._responded(response, request, call)
            else:
                response = self._responded(answered, request, call)
            if not isinstance(response, ModelResponse):
                if request.stream or not (
                    self._reads_either(ctx) and self.adapter.waits_whole(call)
                ):
                    stream = self._stream(ctx, request, response, call, parent)
                    next(stream)
                    return self.adapter.stream_result(stream, call)
                # a hook's stream for an agent's whole call (it reads either): read whole
                response = assemble(list(response), call.answered or request.model)
            ctx.phase = "after_model"
            usage = None
            if ctx._run is not None or self.usage:  # pyright: ignore[reportPrivateUsage]
                usage = self._usage(ctx, response, parent)  # (else nothing counts it)
                if usage is not None and self.usage:
                    call_all(self.usage, (usage,), ctx)
            if self.after:
                response = after_model(self.after, request, response, ctx)
            result = self.adapter.native(response, call)
            if call.extra:  # a stream a wrap hook opened, answered as a whole: done with
                _close(None, call)
        except BaseException as exc:
            if stream is not None:  # made but never handed over: it ends the call itself
                with contextlib.suppress(BaseException):
                    stream.throw(exc)
                raise
            # (a wrap hook opened the stream, then failed: it is closed)
            self._close_and_end(None, call, ctx, exc, parent is None)
            raise
        else:
            if parent is None and ctx._run is not None:  # pyright: ignore[reportPrivateUsage]
                self._end_sync(ctx, None, usage)
            return result
        finally:
            current_var.reset(token)
            if stream is None and call is not None:  # a stream lets go of it when it ends
                call.release()

    def _stream(
        self,
        ctx: RunContext[Any],
        request: ModelRequest,
        chunks: Iterator[Chunk],
        call: Call,
        parent: RunContext[Any] | None,
    ) -> Generator[Any, None, None]:
        # Primed inside `call`, where the run is current: every pull, hook and the end run
        # in this copy of that context (cheaper than setting the variable per chunk, and the
        # target's generator always resumes in the same context).
        run = contextvars.copy_context().run
        one_call = parent is None
        adapter = self.adapter
        hooks = self.chunk_hooks
        direct, natives, source = self._source(chunks, call, False)
        # what the caller received, for the hooks at its end and the usage a run adds up
        received: list[Any] | None = [] if self.keep_chunks or not one_call else None
        # what the model sent, for the answer's record: its chunks' `raw`s as they came,
        # those the `on_chunk` hooks then changed or dropped too (see `assemble`)
        sent: list[Any] | None = [] if received is not None and hooks else None
        # `run(next, source)` again and again, until its StopIteration ends the `map`
        step = cast("Callable[[Any, Iterator[Any]], Any]", run)
        pulled = map(step, itertools.repeat(next), itertools.repeat(source))
        try:
            yield _PRIMED  # a stream dropped before its first pull is closed from here
            ctx.phase = "model_stream"
            for index, chunk in enumerate(pulled):
                if natives is not None and chunk.__class__ is not Chunk:
                    # a native item, handed on as it came (an adapter may give a Chunk for
                    # one it cannot hand on so: that goes the way of chunks)
                    ctx.chunk_index = index
                    if received is not None:
                        received.append(chunk)
                    yield chunk
                    continue
                if not direct and chunk.__class__ is not Chunk:
                    raise self._not_a_chunk(chunk)
                ctx.chunk_index = index
                if sent is not None:
                    sent.append(chunk.raw)
                out: Any = run(on_chunk, hooks, chunk, ctx) if hooks else chunk
                if out.__class__ is not Chunk and (out is DROP or not out):
                    # `hw.DROP`, or an expansion to nothing: what the chunk leaves goes on
                    adapter.dropped(chunk, call)
                    out = left_of(chunk)
                    if out is None:
                        continue
                if out is chunk and chunk.raw is not None and (direct or chunk is call.seen):
                    # unchanged since the adapter made it: its native form as it came
                    if received is not None:
                        received.append(chunk)
                    yield chunk.raw
                elif out.__class__ is Chunk:
                    if received is not None:
                        received.append(out)
                    native = adapter.native_chunk(out, call)
                    if native is not DROP:
                        yield native
                else:
                    for item in out:
                        if received is not None:
                            received.append(item)
                        native = adapter.native_chunk(item, call)
                        if native is not DROP:
                            yield native
            # read to its end: so is every stream the model opened in this call, also one a
            # wrap hook did not pass on (a retry's first, one it answered in place of)
            _close(source, call)
            response = _response_of(received, natives, request, call.answered, sent)
            usage = run(self._stream_end, ctx, request, response, parent)
        except BaseException as exc:
            # closed early (`GeneratorExit`): aborted (no local holds `exc`: see `failed`)
            error = Aborted(CLOSED) if isinstance(exc, GeneratorExit) else None
            run(self._close_and_end, source, call, ctx, error or exc, one_call)
            raise
        else:
            if one_call:  # out of the `try`: an `on_finish` hook's error ends nothing twice
                run(self._end_sync, ctx, None, usage)
        finally:
            call.release()

    def _source(self, chunks: Any, call: Call, is_async: bool) -> tuple[bool, Natives | None, Any]:
        """What a stream reads: whether its chunks are the adapter's own as it made them
        (`direct`); and, when no hook looks at them one by one, the adapter's native items
        to hand on instead (`natives`, then read in place of `chunks`)."""
        own = _own(chunks, call)
        natives = (
            None if self.chunk_hooks or not own else self.adapter.natives(chunks, call, is_async)
        )
        if natives is None:
            return self.raw_direct or own, None, chunks
        # `chunks` never runs: nothing to close (an async generator closed before its first
        # pull would be taken for a new one, at loop shutdown too late to start)
        call.extra.remove(chunks)
        _opened(call, natives[0])
        return True, natives, natives[0]

    def _not_a_chunk(self, item: Any) -> TypeError:
        names = ", ".join(repr(h.spec.name) for h in self.chain["wrap_model"])
        return TypeError(
            f"the stream that wrap_model hooks ({names}) returned yielded "
            f"{type(item).__name__} ({item!r:.80}); expected Chunk objects (a hook that "
            "changes a stream yields Chunks, e.g. chunk.replace(text=...))"
        )

    def _usage(
        self, ctx: RunContext[Any], response: ModelResponse, parent: RunContext[Any] | None
    ) -> Usage | None:
        """The response's usage, added to the run's, when the run or an `on_usage` hook
        wants it (a one-call run with no terminal hooks counts nothing); else None, and a
        deferred view is left unread.

        A call counts once: a wrapped target inside this call (a layer of the same call, a
        `Fallback`'s alternative) counted it already, and says so on `parent`, the call
        it is the model of. A model called from inside the target (a judge) is a call of
        its own: both count."""
        run = ctx._run  # pyright: ignore[reportPrivateUsage]
        if run is None and not self.usage:
            return None
        usage = response.usage
        if usage is not None and run is not None:
            if not ctx._counted:  # pyright: ignore[reportPrivateUsage]
                _count(run, usage)
            if parent is not None and (self.answers_parent or _layer_of(ctx, parent)):
                parent._counted = True  # pyright: ignore[reportPrivateUsage]
        return usage

    def _stream_end(
        self,
        ctx: RunContext[Any],
        request: ModelRequest,
        response: ModelResponse | None,
        parent: RunContext[Any] | None,
    ) -> Usage | None:
        if response is None:
            return None
        ctx.phase = "after_model"
        usage = self._usage(ctx, response, parent)
        if usage is not None and self.usage:
            call_all(self.usage, (usage,), ctx)
        if self.after:  # they observe: the chunks are delivered, what they return is ignored
            call_all(self.after, (request, response), ctx)
        return usage

    def generator(
        self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any
    ) -> Iterator[Any]:
        """For generator functions: nothing runs until the caller pulls the first chunk."""
        return self._pulled(_handing(), wrapped, instance, args, kwargs)

    def _pulled(
        self, handing: RunContext[Any] | None, wrapped: Any, instance: Any, args: Any, kwargs: Any
    ) -> Iterator[Any]:
        # a call whose target this is handed itself over when it made the generator
        if handing is None:
            yield from self.call(wrapped, instance, args, kwargs)
            return
        token = _handover.set(handing)
        try:
            stream = self.call(wrapped, instance, args, kwargs)
        finally:
            _handover.reset(token)
        yield from stream

    # -- async ----------------------------------------------------------------------------

    async def acall(
        self,
        wrapped: Callable[..., Any],
        instance: Any,
        args: Any,
        kwargs: Any,
        cancelled: str = "cancelled",
    ) -> Any:
        parent = current_var.get()
        if parent is not None and parent._run is not None and parent._run.ending:  # pyright: ignore[reportPrivateUsage]
            parent = None  # a call a terminal hook or deferred work makes: a run of its own
        ctx = self._open(parent, "before_model")
        token = current_var.set(ctx)
        call = stream = None
        try:
            if self.lifecycle:
                fresh = ctx.run.join(self.chain)
                if fresh:
                    await start_async(fresh, ctx)
            call = Call(wrapped, args, kwargs)
            request = self.adapter.request(call)
            answered = None
            if self.before:
                request, answered = await before_model_async(self.before, request, ctx, self.answer)
            if answered is None:
                ctx.phase = "model"
                if self.unseen and parent is None:
                    response = await self._inner_async(request, False)
                    if not is_stream(response):
                        if ctx._run is None:  # pyright: ignore[reportPrivateUsage]
                            # no hook sees it, nothing to end: as the model gave it
                            return self.adapter.passthrough(response, call)
                        response = self.adapter.response(response, call)  # a run to end
                else:
                    response = await self.onion(request)
                if (
                    not self.raw_direct
                    and request.stream
                    and isinstance(response, ModelResponse)
                    and response is not call.response  # not the model's own whole answer
                ):
                    response = await self._aresponded(response, request, call)
            else:
                response = await self._aresponded(answered, request, call)
            if not isinstance(response, ModelResponse):
                if request.stream or not (
                    self._reads_either(ctx) and self.adapter.waits_whole(call)
                ):
                    stream = self._astream(ctx, request, response, call, parent)
                    await stream.asend(None)
                    return self.adapter.stream_result(stream, call)
                chunks = [chunk async for chunk in response]
                response = assemble(chunks, call.answered or request.model)
            ctx.phase = "after_model"
            usage = None
            if ctx._run is not None or self.usage:  # pyright: ignore[reportPrivateUsage]
                usage = self._usage(ctx, response, parent)  # (else nothing counts it)
                if usage is not None and self.usage:
                    await call_all_async(self.usage, (usage,), ctx)
            if self.after:
                response = await after_model_async(self.after, request, response, ctx)
            result = self.adapter.native(response, call)
            if result.__class__ is CoroutineType:  # an async SDK's parsing of the answer:
                result = await result  # part of the call, before its run ends
            if call.extra:  # as in `call`
                await _aclose(None, call)
        except BaseException as exc:
            if stream is not None:
                with contextlib.suppress(BaseException):
                    await stream.athrow(exc)
                raise
            await self._aclose_and_end(None, call, ctx, _cancel(exc, cancelled), parent is None)
            raise
        else:
            if parent is None:
                await self._end_async(ctx, None, usage)
            return result
        finally:
            current_var.reset(token)
            if stream is None and call is not None:
                call.release()

    async def _astream(
        self,
        ctx: RunContext[Any],
        request: ModelRequest,
        chunks: AsyncIterator[Chunk],
        call: Call,
        parent: RunContext[Any] | None,
    ) -> AsyncGenerator[Any, None]:
        one_call = parent is None
        adapter = self.adapter
        hooks = self.chunk_hooks
        direct, natives, source = self._source(chunks, call, True)
        # what the caller received, for the hooks at its end and the usage a run adds up
        received: list[Any] | None = [] if self.keep_chunks or not one_call else None
        sent: list[Any] | None = [] if received is not None and hooks else None  # (see `_stream`)
        index = 0
        try:
            yield _PRIMED
            while True:
                token = current_var.set(ctx)
                try:
                    ctx.phase = "model_stream"
                    try:
                        chunk = await source.__anext__()
                    except StopAsyncIteration:
                        break
                    if not direct and chunk.__class__ is not Chunk:
                        raise self._not_a_chunk(chunk)
                    ctx.chunk_index = index
                    index += 1
                    if sent is not None:
                        sent.append(chunk.raw)
                    out: Any = await on_chunk_async(hooks, chunk, ctx) if hooks else chunk
                finally:
                    current_var.reset(token)
                if natives is not None and chunk.__class__ is not Chunk:
                    if received is not None:
                        received.append(chunk)
                    yield chunk
                    continue
                if out.__class__ is not Chunk and (out is DROP or not out):
                    # `hw.DROP`, or an expansion to nothing: what the chunk leaves goes on
                    adapter.dropped(chunk, call)
                    out = left_of(chunk)
                    if out is None:
                        continue
                if out is chunk and chunk.raw is not None and (direct or chunk is call.seen):
                    if received is not None:
                        received.append(chunk)
                    yield chunk.raw  # unchanged since the adapter made it: as it came
                elif out.__class__ is Chunk:
                    if received is not None:
                        received.append(out)
                    native = adapter.native_chunk(out, call)
                    if native is not DROP:
                        yield native
                else:
                    for item in out:
                        if received is not None:
                            received.append(item)
                        native = adapter.native_chunk(item, call)
                        if native is not DROP:
                            yield native
            await _aclose(source, call)  # read to its end: as in `_stream`
            token = current_var.set(ctx)
            try:
                response = _response_of(received, natives, request, call.answered, sent)
                usage = await self._astream_end(ctx, request, response, parent)
            finally:
                current_var.reset(token)
        except BaseException as exc:
            error = Aborted(CLOSED) if isinstance(exc, GeneratorExit) else None
            token = current_var.set(ctx)
            try:
                await self._aclose_and_end(
                    source, call, ctx, error or _cancel(exc, CLOSED), one_call
                )
            finally:
                current_var.reset(token)
            raise
        else:
            if one_call:  # out of the `try`: an `on_finish` hook's error ends nothing twice
                token = current_var.set(ctx)
                try:
                    await self._end_async(ctx, None, usage)
                finally:
                    current_var.reset(token)
        finally:
            call.release()

    async def _astream_end(
        self,
        ctx: RunContext[Any],
        request: ModelRequest,
        response: ModelResponse | None,
        parent: RunContext[Any] | None,
    ) -> Usage | None:
        if response is None:
            return None
        ctx.phase = "after_model"
        usage = self._usage(ctx, response, parent)
        if usage is not None and self.usage:
            await call_all_async(self.usage, (usage,), ctx)
        if self.after:  # they observe, as in `_stream_end`
            await call_all_async(self.after, (request, response), ctx)
        return usage

    def agenerator(
        self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        """For async generator functions: nothing runs until the first chunk is pulled."""
        return self._apulled(_handing(), wrapped, instance, args, kwargs)

    async def _apulled(
        self, handing: RunContext[Any] | None, wrapped: Any, instance: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        token = None if handing is None else _handover.set(handing)
        try:
            # cancelled before its first chunk, it is still a stream its consumer stopped
            stream = await self.acall(wrapped, instance, args, kwargs, CLOSED)
        finally:
            if token is not None:
                _handover.reset(token)
        try:
            async for item in stream:
                yield item
        finally:
            await stream.aclose()


def _response_of(
    received: list[Any] | None,
    natives: Natives | None,
    request: ModelRequest,
    model: str | None = None,
    sent: list[Any] | None = None,
) -> ModelResponse | None:
    """The response a stream delivered, when someone may look at it: assembled from its
    chunks, or (a stream of native items) a view assembled on first use. It names `model`
    (a whole answer's, streamed), else the request's; `sent` are the `raw`s of what the
    model sent, when hooks took some of it out (see `assemble`)."""
    if received is None:
        return None
    model = model or request.model
    if natives is None:
        return assemble(received, model, sent)
    made: ModelResponse = deferred_response(_assembled, (received, natives[1], model))
    return made


def _assembled(
    args: tuple[list[Any], Callable[[Any], list[Chunk]], str | None],
) -> ModelResponse:
    items, chunks_of, model = args
    return assemble([chunk for item in items for chunk in chunks_of(item)], model)


# The call handing itself over to its target, while it calls it: a target wrapped itself
# (a hookwrap proxy, an SDK's request path with a client's layers or a patch) is the same
# call one layer in, and the first call it opens takes the `call_id` and `call_state` (and
# sets this back to None). A context variable, so that only what runs in this very call's
# context sees it: not a task or worker thread a hook started beside it.
_handover: contextvars.ContextVar[RunContext[Any] | None] = contextvars.ContextVar(
    "hookwrap.handover", default=None
)


def _handing() -> RunContext[Any] | None:
    """The current call if it is handing itself over to the target being called now."""
    parent = current_var.get()
    return parent if parent is not None and _handover.get() is parent else None


def _layer_of(ctx: RunContext[Any], parent: RunContext[Any]) -> bool:
    """Whether `ctx` is `parent`'s call one layer in (it took over its call state)."""
    state = ctx._call_state  # pyright: ignore[reportPrivateUsage]
    return state is not None and state is parent._call_state  # pyright: ignore[reportPrivateUsage]


def _tool_context(
    ctx: RunContext[Any], parent: RunContext[Any] | None, call: ToolCall
) -> RunContext[Any]:
    """The context of tool call `call`: a call with the id of the one it runs in (an
    agent's call of a tool with hooks of its own) is that call, one layer in."""
    ctx._call_id = call.id  # pyright: ignore[reportPrivateUsage]
    if parent is not None:
        if parent._call_id == call.id:  # pyright: ignore[reportPrivateUsage]
            ctx._call_state = parent.call_state  # pyright: ignore[reportPrivateUsage]
        # a tool called from inside another is a call of its own, but `hw.interrupt` in it
        # asks for the decision of the call the agent runs (the one it reports)
        inherit_asked(ctx, parent)
    return ctx


def _hooks_own(stream: Any, call: Call) -> bool:
    """Whether a stream a wrap layer returned is one its hook made (the hook's code runs as
    it is read), not one from inside the onion passed on as it came."""
    made = call.made
    if made is not None and made[0] is stream:  # the adapter's, unread: the usual case
        return False
    code = getattr(stream, "gi_code", None) or getattr(stream, "ag_code", None)
    return code not in _PASSED_ON and not _own(stream, call)


def _own(chunks: Any, call: Call) -> bool:
    """Whether `chunks` is the very stream the adapter made (a wrap hook passed it on as it
    was): every chunk in it is then the adapter's own, as without wrap hooks."""
    return any(chunks is made for made in call.extra or ())


def _count(run: RunState, usage: Usage) -> None:
    with run.lock:
        run.usage = run.usage + usage


def _cancel(exc: BaseException, reason: str = "cancelled") -> BaseException:
    """Cancellation ends a run as an abort, not an error."""
    import asyncio

    return Aborted(reason) if isinstance(exc, asyncio.CancelledError) else exc


def _recorded(chunks: Iterator[Chunk], call: Call) -> Iterator[Chunk]:
    """The adapter's chunks, each noted on the call as it passes: a chunk that comes out of
    the wrap hooks as that same object is unchanged, and keeps its native form."""
    try:
        for chunk in chunks:
            call.seen = chunk
            yield chunk
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


async def _arecorded(chunks: AsyncIterator[Chunk], call: Call) -> AsyncIterator[Chunk]:
    try:
        async for chunk in chunks:
            call.seen = chunk
            yield chunk
    finally:
        # (finalized by the loop once a hook's stream reading it is dropped, it may find
        # `chunks` being closed by the engine: `_aclose_one` lets that be)
        await _aclose_one(chunks)


def _opened(call: Any, stream: Any) -> None:
    """Remember a stream the model opened, to close it at once if the caller stops early.
    One opened after the call ended (in a worker thread a hook gave up on) is closed now:
    the request view, set before the model is called, is gone once `release` ran."""
    if isinstance(call, Call):
        if call.request is None:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        elif call.extra is None:
            call.extra = [stream]
        else:
            call.extra.append(stream)


def _made(call: Any, chunks: Any, native: Any) -> None:
    """A stream the adapter made of the model's: both are remembered, to be closed at once
    if the caller stops early (closing a generator never started skips its finally), and
    noted as the last one made (see `Adapter.natives`)."""
    _opened(call, chunks)
    _opened(call, native)
    if isinstance(call, Call):
        call.made = (chunks, native)


def _close(chunks: Any, call: Call) -> None:
    """Close the stream the caller saw, then the model's own (a hook may not pass it on)
    that are still open (read after: closing the first lets go of those it closed)."""
    _close_one(chunks)
    extra = call.extra
    if extra:
        for stream in tuple(extra):
            if call.extra is extra or _still_open(stream, call):  # (`let_go` makes a new list)
                _close_one(stream)


def _close_one(stream: Any) -> None:
    close = getattr(stream, "close", None)
    # a generator still running in another thread (a worker a hook gave up on) cannot
    # be closed from here; that thread closes it when its pull returns
    if close is not None and not getattr(stream, "gi_running", False):
        close()


async def _aclose(chunks: Any, call: Call) -> None:
    await _aclose_one(chunks)
    extra = call.extra
    if extra:
        for stream in tuple(extra):
            if call.extra is extra or _still_open(stream, call):
                await _aclose_one(stream)


def _still_open(stream: Any, call: Call) -> bool:
    """Whether `stream` is still the call's to close: closing another one before it (an
    adapter's stream, closed by a hook's) may have closed it and let go of it."""
    return any(stream is s for s in call.extra or ())


async def _aclose_one(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except RuntimeError as exc:  # "already running": another task reads it (a hook's),
            if "already running" not in str(exc):  # and closes it when its read returns
                raise


# -- tools ----------------------------------------------------------------------------------


class ToolEngine(_Shared):
    """Runs calls of one tool through its chain: before_tool, the onion, after_tool."""

    __slots__ = ("after", "before", "binding", "hands_over", "instance", "name", "onion", "own")

    def __init__(self, binding: Any, chain: Chain, is_async: bool, name: str) -> None:
        super().__init__(chain, is_async)
        chain = self.chain
        check_shape(chain, TOOL_KINDS, is_async, f"tool {name!r}")
        self.binding = binding
        # the tool's own function is inside (not another engine's hooks around it)
        self.own = isinstance(binding, ToolBinding)
        # a tool made of a tool: the inner tool's hooks run for this same call (an agent's
        # `_Runner` passes the call itself on, with its id)
        self.hands_over = self.own and self._opens_call(binding.fn)
        # the object a tool made of a bound method runs on: its answers may depend on it
        self.instance = instance_of(binding.fn)
        if self.hands_over:  # the tool inside gives its `ctx` the one its own hooks see
            binding.passes_ctx = False
        self.name = name
        self.before = chain["before_tool"]
        self.after = chain["after_tool"]

        def keep(hook: Hook, value: Any, request: Any = None, rest: Any = None) -> Any:
            abort_if(value)  # no result: it ends the run
            return value

        if is_async:
            self.onion: Any = build_async(chain["wrap_tool"], self._inner_async, keep)
        else:
            self.onion = build(chain["wrap_tool"], self._inner, keep)

    @staticmethod
    def _opens_call(fn: Any) -> bool:
        """Whether calling `fn` first opens a call of another tool engine: `fn` is a tool
        (or a tool method read from an instance) with hooks or a `ctx` parameter, maybe
        under tool layers with neither, which call the one inside directly."""
        while isinstance(fn, functools.partial):
            fn = fn.func
        while (runner := getattr(fn, "_self_runner", None)) is not None:
            if isinstance(getattr(runner, "__self__", None), ToolEngine):
                return True
            fn = getattr(fn, "__wrapped__", None)
        return False

    @staticmethod
    def _direct_id() -> str:
        """The id of a direct call of the tool: that of the tool call handing itself over
        to it (a tool made of this one), else a new one."""
        handing = _handing()
        return new_call_id() if handing is None else handing.call_id

    @as_call_next
    def _inner(self, call: ToolCall) -> Any:
        # (set in this context only: a task a hook started beside the call takes nothing)
        token = _handover.set(current_var.get()) if self.hands_over else None
        try:
            return self.binding.invoke(call)
        except BaseException as exc:
            # a hook gave call_next something else: checked only once it failed, off the hot path
            if not isinstance(call, ToolCall):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(
                    f"call_next takes the ToolCall (call, or call.replace(...)); got "
                    f"{type(call).__name__} ({call!r:.80})"
                ) from None
            self._seen(exc)
            raise
        finally:
            if token is not None:
                _handover.reset(token)

    @as_call_next
    async def _inner_async(self, call: ToolCall) -> Any:
        token = _handover.set(current_var.get()) if self.hands_over else None
        try:
            return await self.binding.invoke(call)
        except BaseException as exc:
            if not isinstance(call, ToolCall):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(
                    f"call_next takes the ToolCall (call, or call.replace(...)); got "
                    f"{type(call).__name__} ({call!r:.80})"
                ) from None
            self._seen(exc)
            raise
        finally:
            if token is not None:
                _handover.reset(token)

    def _seen(self, exc: BaseException) -> None:
        mark_seen(exc)
        # the tool's own error (its arguments' is marked where they are read); one from inside
        # a tool this one is made of is that tool's to mark (its hooks' is no tool's answer)
        if self.own and not self.hands_over:
            with contextlib.suppress(AttributeError):  # (exceptions without a __dict__)
                setattr(exc, FROM_TOOL, True)

    def call(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        return self.run(self.binding.tool_call(wrapped, args, kwargs, self._direct_id()))

    def run(self, call: ToolCall) -> Any:
        parent = current_var.get()
        if parent is not None and parent._run is not None and parent._run.ending:  # pyright: ignore[reportPrivateUsage]
            parent = None  # a call a terminal hook or deferred work makes: a run of its own
        ctx = _tool_context(self._open(parent, "before_tool"), parent, call)
        if self.instance is not None:
            ctx._bound = self.instance  # pyright: ignore[reportPrivateUsage]
        token = current_var.set(ctx)
        try:
            if self.lifecycle:
                fresh = ctx.run.join(self.chain)
                if fresh:
                    start_sync(fresh, ctx)
            skip = None
            if self.before:  # (after a `Skip`, `after_tool` sees the call as they left it)
                call, skip = before_tool(self.before, call, ctx)
            start = time.perf_counter()
            if skip is not None:
                outcome = ToolOutcome(True, skip.result, None, 0.0)
            else:
                ctx.phase = "tool"
                try:
                    outcome = ToolOutcome(True, self.onion(call), None, time.perf_counter() - start)
                except Exception as exc:
                    if not self.after or isinstance(exc, (Aborted, Interrupt)):
                        raise
                    outcome = ToolOutcome(False, None, exc, time.perf_counter() - start)
            if self.after:
                ctx.phase = "after_tool"
                outcome = after_tool(self.after, call, outcome, ctx)
            if not outcome.ok:
                assert outcome.error is not None
                raise outcome.error
            result = outcome.result
        except BaseException as exc:
            if parent is None:
                self._end_sync(ctx, exc)
            raise
        else:
            if parent is None:
                self._end_sync(ctx, None)
            return result
        finally:
            current_var.reset(token)

    async def acall(
        self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any
    ) -> Any:
        return await self.arun(self.binding.tool_call(wrapped, args, kwargs, self._direct_id()))

    async def arun(self, call: ToolCall) -> Any:
        parent = current_var.get()
        if parent is not None and parent._run is not None and parent._run.ending:  # pyright: ignore[reportPrivateUsage]
            parent = None  # a call a terminal hook or deferred work makes: a run of its own
        ctx = _tool_context(self._open(parent, "before_tool"), parent, call)
        if self.instance is not None:
            ctx._bound = self.instance  # pyright: ignore[reportPrivateUsage]
        token = current_var.set(ctx)
        try:
            if self.lifecycle:
                fresh = ctx.run.join(self.chain)
                if fresh:
                    await start_async(fresh, ctx)
            skip = None
            if self.before:  # (after a `Skip`, `after_tool` sees the call as they left it)
                call, skip = await before_tool_async(self.before, call, ctx)
            start = time.perf_counter()
            if skip is not None:
                outcome = ToolOutcome(True, skip.result, None, 0.0)
            else:
                ctx.phase = "tool"
                try:
                    result = await self.onion(call)
                    outcome = ToolOutcome(True, result, None, time.perf_counter() - start)
                except Exception as exc:
                    if not self.after or isinstance(exc, (Aborted, Interrupt)):
                        raise
                    outcome = ToolOutcome(False, None, exc, time.perf_counter() - start)
            if self.after:
                ctx.phase = "after_tool"
                outcome = await after_tool_async(self.after, call, outcome, ctx)
            if not outcome.ok:
                assert outcome.error is not None
                raise outcome.error
            result = outcome.result
        except BaseException as exc:
            if parent is None:
                await self._end_async(ctx, _cancel(exc))
            raise
        else:
            if parent is None:
                await self._end_async(ctx, None)
            return result
        finally:
            current_var.reset(token)


# the streams hookwrap reads a model's chunks through (see `_hooks_own`)
_PASSED_ON = frozenset(f.__code__ for f in (_recorded, _arecorded, guarded, aguarded))
