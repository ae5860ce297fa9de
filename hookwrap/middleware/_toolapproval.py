"""`ToolApproval`: tool calls wait for a person's decision, except the tools allowed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from .._errors import Interrupt
from .._hooks import Middleware, before_agent, before_tool
from .._run import RunContext, asked
from .._types import AgentSetup, Skip, ToolCall
from ._shared import AFTER_OTHERS, agent_tool, check_tool_names, given_name

__all__ = ["ToolApproval"]


_ARGUMENT = "ToolApproval(allowed_tools=...)"


def _names(value: object) -> frozenset[str]:
    # A tool proxies its function's attributes, so it passes for an Iterable: refuse it here.
    # A class (an Enum of tool names) is a collection, not a tool.
    single = isinstance(value, str) or (callable(value) and not isinstance(value, type))
    if single or isinstance(value, bytes) or not isinstance(value, Iterable):
        hint = "; put a single tool in a list: allowed_tools=[tool]" if single else ""
        raise TypeError(
            f"{_ARGUMENT} expects a list of tool names or tools "
            f"(got {type(value).__name__}: {value!r:.80}){hint}"
        )
    names: set[str] = set()
    for given in cast("Iterable[object]", value):
        item = given_name(given)
        if callable(item):  # what the agent takes as a tool, named as the agent names it
            names.add(agent_tool(item, _ARGUMENT, f"{_ARGUMENT} expects tool names or tools").name)
        elif isinstance(item, str) and item:
            names.add(item)
        elif isinstance(item, str):
            raise ValueError(f"{_ARGUMENT} got an empty tool name")
        else:
            raise TypeError(
                f"{_ARGUMENT} expects tool names or tools "
                f"(got {type(given).__name__}: {given!r:.80})"
            )
    return frozenset(names)


class ToolApproval(Middleware):
    """Every tool call but those of `allowed_tools` interrupts the run for a decision.

    The interrupt's payload is ``{"type": "tool_approval", "call_id", "tool",
    "arguments"}``. Resume with ``decisions={call_id: ...}``: `True` runs the call,
    `False` answers the model that the call was rejected (the tool does not run), and
    anything else interrupts the run again, asking the same. Outside an `Agent`, the
    `hw.Interrupt` reaches the caller of the tool. In an `Agent`, a name in
    `allowed_tools` that is none of the agent's tools is a `ValueError` when it starts.
    """

    name = "ToolApproval"
    priority = 100  # before other tool hooks: nothing runs for a call not yet approved

    def __init__(self, *, allowed_tools: Iterable[str | Callable[..., Any]] = ()) -> None:
        self.allowed_tools = _names(allowed_tools)

    def __repr__(self) -> str:
        return f"ToolApproval(allowed_tools={sorted(self.allowed_tools)!r})"

    @before_tool
    def approve(self, call: ToolCall, ctx: RunContext[Any]) -> Skip | None:
        """Let an allowed tool run; otherwise ask, or act on the decision given."""
        if call.name in self.allowed_tools:
            return None
        # the id the decision is given under: the call's own, or for a tool called from
        # inside another tool, the agent's call (which the interrupt event names)
        call_id = asked(ctx) or call.id
        payload = {
            "type": "tool_approval",
            "call_id": call_id,
            "tool": call.name,
            "arguments": dict(call.arguments),
        }
        decision = ctx.decisions.get(call_id, _UNDECIDED)
        if decision is True:
            return None
        if decision is False:
            return Skip(f"The user rejected this call of {call.name}; it did not run.")
        raise Interrupt(payload)

    @before_agent(priority=AFTER_OTHERS)
    def check_allowed(self, setup: AgentSetup) -> None:
        """Refuse, as the agent starts, an `allowed_tools` name that is none of its tools (a
        typo): the tool meant would ask for approval at every call."""
        check_tool_names(_ARGUMENT, self.allowed_tools, setup)


_UNDECIDED: Any = object()
