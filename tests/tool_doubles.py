"""Tools and hooks that several test files share: two layers of `before_tool` hooks that
note what they see, tools of each shape made of them, and a scripted agent model."""

from __future__ import annotations

from typing import Any

import hookwrap as hw

seen: list[Any] = []


@hw.before_tool
def outer(call: hw.ToolCall, ctx: hw.RunContext) -> None:
    ctx.call_state["mark"] = "outer"
    seen.append(("outer", call.id, ctx.call_id))


@hw.before_tool
def inner(call: hw.ToolCall, ctx: hw.RunContext) -> None:
    seen.append(("inner", call.id, ctx.call_id, ctx.call_state.get("mark")))


def look(city: str) -> str:
    """Look a city up."""
    return city.upper()


async def alook(city: str) -> str:
    """Look a city up, awaited."""
    return city.upper()


class Bot:
    @hw.tool(use=[inner], name="look")
    def look(self, city: str) -> str:
        """Look a city up."""
        return city.upper()

    @hw.tool(use=[inner], name="look")
    async def alook(self, city: str) -> str:
        """Look a city up, awaited."""
        return city.upper()


class Script:
    """A model calling one tool per turn, `calls` in order, then saying the tool results;
    `offered` notes the tools each turn offered."""

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        self.calls = calls
        self.offered: list[list[str]] = []

    def __call__(self, request: hw.ModelRequest) -> hw.Message:
        self.offered.append([t.name for t in request.tools])
        done = [m for m in request.messages if m.role == "tool"]
        if len(done) < len(self.calls):
            name, arguments = self.calls[len(done)]
            return hw.Message.assistant("", [hw.ToolCall(f"c{len(done)}", name, arguments)])
        return hw.Message.assistant(" | ".join(m.text for m in done))
