"""CallLimit: refuse the model or tool call that would go over a per-run limit."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeGuard, cast

from .._hooks import Middleware, before_agent, before_model, before_tool
from .._run import RunContext
from .._types import Abort, AgentSetup, ModelRequest, ToolCall
from ._shared import AFTER_OTHERS, check_tool_names

__all__ = ["CallLimit"]

_instances = itertools.count(1)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _refuse(expected: str, got: str, value: object) -> Exception:
    """A negative int is the right type with a wrong value; anything else is a wrong type."""
    wrong_value = isinstance(value, int) and not isinstance(value, bool)
    return (ValueError if wrong_value else TypeError)(f"{expected} (got {got})")


def _limit(argument: str, value: object) -> int | None:
    if value is None or _is_count(value):
        return value
    expected = f"CallLimit({argument}=...) expects an int >= 0 or None"
    raise _refuse(expected, f"{type(value).__name__}: {value!r}", value)


def _per_tool(value: object) -> Mapping[str, int]:
    expected = "CallLimit(per_tool=...) expects a dict of tool name (str) -> limit (int >= 0)"
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise TypeError(f"{expected} (got {type(value).__name__}: {value!r})")
    limits: dict[str, int] = {}
    for name, limit in cast("Mapping[object, object]", value).items():
        if not isinstance(name, str):
            raise TypeError(f"{expected} (got the key {type(name).__name__}: {name!r})")
        if not _is_count(limit):
            raise _refuse(expected, f"{name!r}: {limit!r}", limit)
        limits[name] = limit
    return MappingProxyType(limits)


class CallLimit(Middleware):
    """Limit how many model calls, tool calls and calls of each tool one run may make.

    A run is one `with hw.run()` (every wrapped call inside shares the counts) or, outside
    a run, the one-call run of each call. The call that would go over a limit is refused
    with `hw.Aborted`, whose reason names the limit, e.g. ``"CallLimit: model_calls=3
    reached"``; a refused call is not counted. `None` means no limit. In an `hw.Agent`
    run, a call that was interrupted and runs again on resume counts once, and a `per_tool`
    name that is none of the agent's tools is a `ValueError` when the agent starts.

    Args:
        model_calls: model calls allowed per run.
        tool_calls: tool calls allowed per run, all tools together.
        per_tool: tool name -> calls of that tool allowed per run.
    """

    def __init__(
        self,
        *,
        model_calls: int | None = None,
        tool_calls: int | None = None,
        per_tool: Mapping[str, int] | None = None,
    ) -> None:
        self.model_calls = _limit("model_calls", model_calls)
        self.tool_calls = _limit("tool_calls", tool_calls)
        self.per_tool = _per_tool(per_tool)
        # Counts live in the run's state under keys of this object, so two CallLimits in
        # one run count separately. The lock makes read-compare-increment one step for
        # threads of one run (asyncio tasks never switch inside a sync hook).
        self._key = f"hookwrap.CallLimit#{next(_instances)}"
        self._model_key = self._key + ":model"
        self._tools_key = self._key + ":tools"
        # What was counted in the agent's current iteration, the calls a resume may run
        # again: {"iteration": i, "model": bool, "tools": [tool call ids]}.
        self._turn_key = self._key + ":turn"
        self._again_key = self._key + ":again"  # the iteration whose model call comes again
        self._again_tools_key = self._key + ":again_tools"  # the tool calls that come again
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        limits = [
            f"{name}={value!r}"
            for name, value in (
                ("model_calls", self.model_calls),
                ("tool_calls", self.tool_calls),
                ("per_tool", dict(self.per_tool) or None),
            )
            if value is not None
        ]
        return f"CallLimit({', '.join(limits)})"

    @before_model
    def limit_model_calls(self, request: ModelRequest, ctx: RunContext[Any]) -> None:
        """Count this model call, or abort the run if `model_calls` are used up."""
        limit = self.model_calls
        if limit is None:
            return
        key = self._model_key
        state = ctx.state
        with self._lock:
            if ctx.iteration and state.get(self._again_key) == ctx.iteration:
                state.delete(self._again_key)  # counted before the run was interrupted
                return
            used: int = state.get(key, 0)
            if used < limit:
                state.set(key, used + 1)
                turn = self._turn(ctx)
                if turn is not None and not turn["model"]:  # the first: one a resume redoes
                    state.set(self._turn_key, {**turn, "model": True})
                return
        ctx.abort(f"CallLimit: model_calls={limit} reached")

    @before_tool
    def limit_tool_calls(self, call: ToolCall, ctx: RunContext[Any]) -> Abort | None:
        """Count this tool call, or refuse it if `tool_calls` or its `per_tool` limit are
        used up (the total is checked first)."""
        total = self.tool_calls
        own = self.per_tool.get(call.name)
        if total is None and own is None:
            return None
        total_key = self._tools_key
        own_key = f"{self._key}:tool:{call.name}"
        state = ctx.state
        with self._lock:
            turn = self._turn(ctx)
            again: dict[str, Any] | None = state.get(self._again_tools_key)
            if (
                again is not None
                and again["iteration"] == ctx.iteration
                and call.id in again["ids"]
            ):
                # counted before the run was interrupted: it runs again, and counts once
                ids = list(again["ids"])
                ids.remove(call.id)
                state.set(self._again_tools_key, {**again, "ids": ids})
                return None
            used_total: int = state.get(total_key, 0)
            used_own: int = state.get(own_key, 0)
            if total is not None and used_total >= total:
                return Abort(f"CallLimit: tool_calls={total} reached")
            if own is not None and used_own >= own:
                return Abort(f"CallLimit: per_tool[{call.name!r}]={own} reached")
            if total is not None:
                state.set(total_key, used_total + 1)
            if own is not None:
                state.set(own_key, used_own + 1)
            if turn is not None:
                state.set(self._turn_key, {**turn, "tools": [*turn["tools"], call.id]})
        return None

    @before_agent
    def note_resume(self, setup: AgentSetup, ctx: RunContext[Any]) -> None:
        """`before_agent` runs again on resume: a run paused in its iteration `i` before the
        model answered was saved at iteration `i - 1`, and redoes `i`, so the model call
        counted in `i` comes again (and counts once)."""
        turn = ctx.state.get(self._turn_key)
        if turn is None:
            return
        if turn["model"] and turn["iteration"] == ctx.iteration + 1:
            ctx.state.set(self._again_key, turn["iteration"])
        # the tool calls counted in the saved turn: those still pending run again, each once
        # (a model may give two calls one id: only calls counted before the pause are skipped)
        ctx.state.set(self._again_tools_key, {"iteration": turn["iteration"], "ids": turn["tools"]})

    @before_agent(priority=AFTER_OTHERS)
    def check_per_tool(self, setup: AgentSetup) -> None:
        """Refuse, as the agent starts, a `per_tool` name that is none of its tools (a typo):
        its limit would never apply."""
        check_tool_names("CallLimit(per_tool=...)", self.per_tool.keys(), setup)

    def _turn(self, ctx: RunContext[Any]) -> dict[str, Any] | None:
        """The record of what was counted in the agent's current iteration (a new one for
        a new iteration); None outside an agent, where no call runs again."""
        if ctx.iteration == 0:
            return None
        turn: dict[str, Any] | None = ctx.state.get(self._turn_key)
        if turn is None or turn["iteration"] != ctx.iteration:
            turn = {"iteration": ctx.iteration, "model": False, "tools": []}
        return turn
