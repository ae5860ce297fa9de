"""In an agent, a tool made of a tool (a tool method read from an instance, `hw.tool(tool)`)
tells its errors as a plain tool does: the tool's own error and its arguments' go to the
model as text, an error of a hook around the tool (the inner tool's own hooks too) ends
the run."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw


@hw.before_tool
def broken(call: hw.ToolCall) -> None:
    if call.arguments.get("q") == "hook":
        raise RuntimeError("hook bug")


class Bot:
    @hw.tool(use=[broken])
    def look(self, q: int | str) -> str:
        """Look."""
        if q == "tool":
            raise ValueError("tool bug")
        return str(q)


@hw.tool(use=[broken])
def look(q: int | str) -> str:
    """Look."""
    if q == "tool":
        raise ValueError("tool bug")
    return str(q)


FORMS: dict[str, Callable[[], Any]] = {
    "function tool": lambda: look,
    "tool method": lambda: Bot().look,
    "hw.tool(tool method)": lambda: hw.tool(Bot().look),
    "hw.tool(tool)": lambda: hw.tool(look, name="look"),
}


def asking(arguments: dict[str, Any]) -> Callable[[hw.ModelRequest], hw.Message]:
    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "look", arguments)])
        return hw.Message.assistant(f"got {request.messages[-1].text}")

    return model


def run(agent: hw.Agent, is_async: bool) -> hw.RunResult:
    return asyncio.run(agent.arun("hi")) if is_async else agent.run("hi")


shapes = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
forms = pytest.mark.parametrize("form", list(FORMS))


@shapes
@forms
def test_an_error_of_the_inner_tools_own_hook_ends_the_run(form: str, is_async: bool) -> None:
    agent = hw.Agent(asking({"q": "hook"}), tools=[FORMS[form]()])
    with pytest.raises(RuntimeError, match="hook bug"):
        run(agent, is_async)


@shapes
@forms
@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ({"q": "tool"}, "got Error: ValueError: tool bug"),
        ({}, "got Error: ToolArgumentError: "),
        ({"q": None}, "got Error: ToolArgumentError: "),
    ],
    ids=["the tool's", "missing argument", "argument of no member's type"],
)
def test_the_tools_own_errors_and_its_arguments_go_to_the_model(
    form: str, is_async: bool, arguments: dict[str, Any], told: str
) -> None:
    result = run(hw.Agent(asking(arguments), tools=[FORMS[form]()]), is_async)
    assert result.text.startswith(told), result.text


@hw.before_tool
def validates(call: hw.ToolCall) -> None:
    if call.arguments.get("q") == "refused":
        raise hw.ToolArgumentError("refused by a hook")


class Checked:
    @hw.tool(use=[validates])
    def look(self, q: str) -> str:
        """Look."""
        return q


@shapes
@pytest.mark.parametrize(
    "make",
    [
        lambda: Checked().look,
        lambda: hw.tool(Checked().look),
        lambda: hw.tool(functools.partial(Checked().look), name="look"),
    ],
    ids=["tool method", "hw.tool(tool method)", "partial of a tool method"],
)
def test_a_hooks_own_tool_argument_error_ends_the_run_as_any_hook_error(
    make: Callable[[], Any], is_async: bool
) -> None:
    """Raised by a hook inside the tool, a `ToolArgumentError` is no argument the tool
    refused: it ends the run, as it does around a plain tool."""
    with pytest.raises(hw.ToolArgumentError, match="refused by a hook"):
        run(hw.Agent(asking({"q": "refused"}), tools=[make()]), is_async)


@shapes
def test_an_error_of_the_hook_of_a_tool_inside_a_partial_ends_the_run(is_async: bool) -> None:
    made = hw.tool(functools.partial(Bot().look), name="look")
    with pytest.raises(RuntimeError, match="hook bug"):
        run(hw.Agent(asking({"q": "hook"}), tools=[made]), is_async)
