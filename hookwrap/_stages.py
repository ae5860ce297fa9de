"""Piped and "all" stages: one loop over a tuple of hooks each, sync and async twins.

This is where `before_*`, `after_*` and `on_*` hooks are called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from ._errors import Aborted, Interrupt, add_note
from ._stack import Hook
from ._types import (
    DROP,
    Abort,
    Chunk,
    ModelRequest,
    ModelResponse,
    Respond,
    Skip,
    ToolCall,
    ToolOutcome,
)

__all__ = [
    "after_model",
    "after_model_async",
    "before_model",
    "before_model_async",
    "on_chunk",
    "on_chunk_async",
]

log = logging.getLogger("hookwrap")

SEEN = "_hookwrap_seen"
FROM_TOOL = "_hookwrap_from_tool"  # raised by a tool's own function (or its arguments)


def failed(hook: Hook, exc: BaseException, first: BaseException | None) -> BaseException | None:
    """Note which hook raised; raise now unless its stack continues on errors. A fail-open
    hook's error (its own are caught where it is called: here, an answer of the wrong type)
    is logged and skipped. Cancellation, Ctrl-C and an exit are no hook's failure: they
    end the stage at once, as they came, whatever the switches."""
    try:
        if not isinstance(exc, Exception):
            raise exc
        if hook.spec.fail_open and not isinstance(exc, (Aborted, Interrupt)):
            log.error("fail-open %s failed; skipped", hook.label, exc_info=exc)
            return first
        add_note(exc, hook.note())
        mark_seen(exc)
        if isinstance(exc, (Aborted, Interrupt)):
            if exc.__context__ is None:
                exc.__context__ = first  # an earlier hook's error, when its stack continued
            raise exc  # an abort or interrupt ends the stage at once, whatever the switches
        if not hook.continue_on_error:
            raise first or exc
        return first or exc
    finally:
        # this frame is in the traceback of what it raises: holding the error, it would be
        # a reference cycle, left for the garbage collector by every call a hook failed
        del exc, first


def from_tool(exc: BaseException) -> bool:
    """Whether `exc` came out of a tool's function (or the reading of its arguments), not
    out of a hook around it."""
    return bool(getattr(exc, FROM_TOOL, False))


def mark_seen(exc: BaseException) -> None:
    try:
        setattr(exc, SEEN, True)
    except AttributeError:  # pragma: no cover - exceptions without a __dict__
        pass


def bad_return(hook: Hook, value: Any, expected: str) -> TypeError:
    shown = repr(value)
    if len(shown) > 80:  # cut, and seen to be
        shown = shown[:77] + "..."
    return TypeError(f"{hook.label} returned {type(value).__name__} ({shown}); expected {expected}")


def abort_if(value: object) -> None:
    """A hook's answer `hw.Abort(reason)` raises `hw.Aborted(reason)`, from every stage, as
    `ctx.abort(reason)` does (where the answer is otherwise ignored too)."""
    if isinstance(value, Abort):
        raise Aborted(value.reason)


def refused(hook: Hook, value: Any, expected: str) -> TypeError:
    """What a hook's answer of no expected type raises: `hw.Aborted` for an `hw.Abort`,
    else this `TypeError`."""
    abort_if(value)
    return bad_return(hook, value, expected)


# -- before_model ---------------------------------------------------------------------------

_BEFORE_MODEL = "a ModelRequest, hw.Respond(...), hw.Abort(reason) or None"

Answer = Callable[[Hook, Any], ModelResponse]


def _before_model_result(
    hook: Hook,
    request: ModelRequest,
    result: Any,
    answered: ModelResponse | None,
    answer: Answer,
) -> tuple[ModelRequest, ModelResponse | None, bool]:
    if isinstance(result, ModelRequest):
        return result, answered, False
    if isinstance(result, Respond):  # read now: a value with no answer form is this hook's
        return request, answer(hook, result.value), not hook.continue_on_response
    raise refused(hook, result, _BEFORE_MODEL)


def before_model(
    hooks: tuple[Hook, ...], request: ModelRequest, ctx: Any, answer: Answer
) -> tuple[ModelRequest, ModelResponse | None]:
    """The request after every hook, and the answer of the `Respond` that won (`answer`
    reads a `Respond`ed value as a response)."""
    answered: ModelResponse | None = None
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(request)
            if result is None:
                continue
            request, answered, stop = _before_model_result(hook, request, result, answered, answer)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if stop:
            break
    if first is not None:
        raise first
    return request, answered


async def before_model_async(
    hooks: tuple[Hook, ...], request: ModelRequest, ctx: Any, answer: Answer
) -> tuple[ModelRequest, ModelResponse | None]:
    """The request after every hook, and the answer of the `Respond` that won."""
    answered: ModelResponse | None = None
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(request)
            if hook.is_async:
                result = await result
            if result is None:
                continue
            request, answered, stop = _before_model_result(hook, request, result, answered, answer)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if stop:
            break
    if first is not None:
        raise first
    return request, answered


# -- after_model ----------------------------------------------------------------------------

_AFTER_MODEL = "a ModelResponse, hw.Abort(reason) or None"


def after_model(
    hooks: tuple[Hook, ...], request: ModelRequest, response: ModelResponse, ctx: Any
) -> ModelResponse:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(request, response)
            if result is None:
                continue
            if not isinstance(result, ModelResponse):
                raise refused(hook, result, _AFTER_MODEL)
            response = result
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first
    return response


async def after_model_async(
    hooks: tuple[Hook, ...], request: ModelRequest, response: ModelResponse, ctx: Any
) -> ModelResponse:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(request, response)
            if hook.is_async:
                result = await result
            if result is None:
                continue
            if not isinstance(result, ModelResponse):
                raise refused(hook, result, _AFTER_MODEL)
            response = result
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first
    return response


# -- "all" stages (on_usage, on_iteration, after_agent, ...) -----------------------------------


def call_all(hooks: tuple[Hook, ...], args: tuple[Any, ...], ctx: Any) -> None:
    """Every hook, for its effects: what one returns is ignored, but an `hw.Abort`."""
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(*args)
            if result is not None:
                abort_if(result)
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first


async def call_all_async(hooks: tuple[Hook, ...], args: tuple[Any, ...], ctx: Any) -> None:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(*args)
            if hook.is_async:
                result = await result
            if result is not None:
                abort_if(result)
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first


# -- on_chunk -------------------------------------------------------------------------------

_ON_CHUNK = "a Chunk, a list of Chunks, hw.DROP, hw.Abort(reason) or None"


def _chunk_list(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, Chunk) for c in cast("list[object]", value)
    )


def _chunk_result(hook: Hook, result: Any) -> Any:
    if isinstance(result, Chunk) or result is DROP:
        return result
    if _chunk_list(result):
        return result
    raise refused(hook, result, _ON_CHUNK)


def _position(hooks: tuple[Hook, ...], hook: Hook) -> int:
    return next(i for i, h in enumerate(hooks) if h is hook)


def left_of(chunk: Chunk) -> Chunk | None:
    """What a dropped chunk leaves to send: the finish reason and usage that came with its
    content (Gemini's last text, some OpenAI-compatible servers' last delta) are the API's
    end of the answer, not that content, so they go on as a chunk of their own. None when
    it carried neither, or was itself the `usage` or `finish` chunk dropped."""
    if chunk.kind in ("usage", "finish") or (chunk.usage is None and chunk.finish_reason is None):
        return None
    if chunk.finish_reason is None:
        return Chunk("usage", usage=chunk.usage)
    return Chunk("finish", usage=chunk.usage, finish_reason=chunk.finish_reason)


def on_chunk(hooks: tuple[Hook, ...], chunk: Chunk, ctx: Any) -> Any:
    """Pass one chunk through the hooks: a Chunk, a list of Chunks, or DROP.

    A hook that expands a chunk into a list hands each new chunk to the hooks after it.
    """
    first: BaseException | None = None
    for hook in hooks:  # per chunk: no enumerate; the position is looked up on expansion
        try:
            result = hook.call(chunk)
            if result is None:
                continue
            if result.__class__ is not Chunk:
                result = _chunk_result(hook, result)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if result.__class__ is Chunk:
            chunk = result
            continue
        if result is DROP:
            if first is not None:
                raise first
            return DROP
        rest = hooks[_position(hooks, hook) + 1 :]
        out: list[Chunk] = []
        for part in result:  # each new chunk passes the hooks after, even after an error
            try:
                done: Any = on_chunk(rest, part, ctx) if rest else part
            except BaseException as exc:
                if first is not None and isinstance(exc, (Aborted, Interrupt)):
                    if exc.__context__ is None:  # as in `failed`: the earlier error is its cause
                        exc.__context__ = first
                    raise
                if first is None or not isinstance(exc, Exception):
                    raise
                break  # the stage ends with the earlier error, raised below
            if done is DROP or (done.__class__ is list and not done):
                done = left_of(part)  # what it carried of the answer's end goes on
                if done is None:
                    continue
            out.extend(done) if done.__class__ is list else out.append(done)
        if first is not None:
            raise first
        return out
    if first is not None:
        raise first
    return chunk


async def on_chunk_async(hooks: tuple[Hook, ...], chunk: Chunk, ctx: Any) -> Any:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(chunk)
            if hook.is_async:
                result = await result
            if result is None:
                continue
            if result.__class__ is not Chunk:
                result = _chunk_result(hook, result)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if result.__class__ is Chunk:
            chunk = result
            continue
        if result is DROP:
            if first is not None:
                raise first
            return DROP
        rest = hooks[_position(hooks, hook) + 1 :]
        out: list[Chunk] = []
        for part in result:  # each new chunk passes the hooks after, even after an error
            try:
                done: Any = await on_chunk_async(rest, part, ctx) if rest else part
            except BaseException as exc:
                if first is not None and isinstance(exc, (Aborted, Interrupt)):
                    if exc.__context__ is None:  # as in `failed`: the earlier error is its cause
                        exc.__context__ = first
                    raise
                if first is None or not isinstance(exc, Exception):
                    raise
                break  # the stage ends with the earlier error, raised below
            if done is DROP or (done.__class__ is list and not done):
                done = left_of(part)  # what it carried of the answer's end goes on
                if done is None:
                    continue
            out.extend(done) if done.__class__ is list else out.append(done)
        if first is not None:
            raise first
        return out
    if first is not None:
        raise first
    return chunk


# -- tools ----------------------------------------------------------------------------------

_BEFORE_TOOL = "a ToolCall, hw.Skip(result), hw.Abort(reason) or None"


def _before_tool_result(hook: Hook, result: Any) -> Any:
    if isinstance(result, (ToolCall, Skip)):
        return result
    raise refused(hook, result, _BEFORE_TOOL)


def _ended(result: Skip, first: BaseException | None) -> Skip:
    """A `Skip` ends the stage unless an earlier hook raised."""
    if first is not None:
        raise first
    return result


def before_tool(hooks: tuple[Hook, ...], call: ToolCall, ctx: Any) -> tuple[ToolCall, Skip | None]:
    """The call as the hooks left it, and the `Skip` that ended the stage, if one did."""
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(call)
            if result is None:
                continue
            result = _before_tool_result(hook, result)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if not isinstance(result, ToolCall):
            return call, _ended(result, first)
        call = result
    if first is not None:
        raise first
    return call, None


async def before_tool_async(
    hooks: tuple[Hook, ...], call: ToolCall, ctx: Any
) -> tuple[ToolCall, Skip | None]:
    """The call as the hooks left it, and the `Skip` that ended the stage, if one did."""
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(call)
            if hook.is_async:
                result = await result
            if result is None:
                continue
            result = _before_tool_result(hook, result)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        if not isinstance(result, ToolCall):
            return call, _ended(result, first)
        call = result
    if first is not None:
        raise first
    return call, None


def _outcome(outcome: ToolOutcome, result: Any) -> ToolOutcome:
    return ToolOutcome(True, result, None, outcome.duration)


def after_tool(
    hooks: tuple[Hook, ...], call: ToolCall, outcome: ToolOutcome, ctx: Any
) -> ToolOutcome:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(call, outcome)
            if result is None:
                continue
            abort_if(result)  # no result: it ends the run
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        outcome = _outcome(outcome, result)
    if first is not None:
        raise first
    return outcome


async def after_tool_async(
    hooks: tuple[Hook, ...], call: ToolCall, outcome: ToolOutcome, ctx: Any
) -> ToolOutcome:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(call, outcome)
            if hook.is_async:
                result = await result
            if result is None:
                continue
            abort_if(result)
        except BaseException as exc:
            first = failed(hook, exc, first)
            continue
        outcome = _outcome(outcome, result)
    if first is not None:
        raise first
    return outcome


Runner = Callable[..., Any]
