"""`invoke` of an async tool made of a tool is one call, as `ainvoke` is; a `@classmethod`
tool's `cls` is no argument, as a method's `self` is not; and a tool method read from an
instance runs a model's call without rebuilding the tool or leaving garbage."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import sys
import weakref
from typing import Any

import pytest

import hookwrap as hw
import hookwrap._wrap
from hookwrap._tool import ToolBinding

seen: list[Any] = []


@hw.before_tool
def outer(call: hw.ToolCall, ctx: hw.RunContext) -> None:
    ctx.call_state["mark"] = "outer"
    seen.append(("outer", call.id, ctx.call_id))


@hw.before_tool
def inner(call: hw.ToolCall, ctx: hw.RunContext) -> None:
    seen.append(("inner", call.id, ctx.call_id, ctx.call_state.get("mark")))


@hw.before_tool
def given(call: hw.ToolCall) -> None:
    seen.append(("given", dict(call.arguments)))


@hw.after_tool
def answered(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
    seen.append(("answered", outcome.result))


async def alook(city: str) -> str:
    """Look a city up, awaited."""
    return city.upper()


class Bot:
    prefix = ">"

    @hw.tool(use=[inner], name="look")
    def look(self, city: str) -> str:
        """Look a city up."""
        return city.upper()

    @hw.tool(use=[inner], name="look")
    async def alook(self, city: str) -> str:
        """Look a city up, awaited."""
        return city.upper()

    @classmethod
    @hw.tool(use=[given])
    def make(cls, city: str) -> str:
        """Make a city's name."""
        return cls.prefix + city


@pytest.fixture(autouse=True)
def clear() -> None:
    seen.clear()


CALL = hw.ToolCall("c1", "look", {"city": "paris"})
ONE_CALL = [("outer", "c1", "c1"), ("inner", "c1", "c1", "outer")]


def test_invoke_of_an_async_tool_made_of_a_tool_is_one_call_once_awaited() -> None:
    tool = hw.tool(hw.tool(alook, use=[inner]), use=[outer], name="look")
    pending = tool.invoke(CALL)
    assert inspect.iscoroutine(pending)
    assert seen == []  # nothing runs before it is awaited, as when calling the tool
    assert asyncio.run(pending) == "PARIS"
    assert seen == ONE_CALL


def test_invoke_of_an_async_tool_runs_its_hooks_around_the_awaited_call() -> None:
    tool = hw.tool(alook, use=[inner, answered], name="look")
    assert asyncio.run(tool.invoke(CALL)) == "PARIS"
    assert seen == [("inner", "c1", "c1", None), ("answered", "PARIS")]


def test_invoke_of_an_async_tool_method_in_a_tool_is_one_call() -> None:
    tool = hw.tool(Bot().alook, use=[outer])
    assert asyncio.run(tool.invoke(CALL)) == "PARIS"
    assert seen == ONE_CALL


@pytest.mark.parametrize("read", [lambda: Bot.make, lambda: Bot().make], ids=["class", "instance"])
def test_a_classmethod_tool_has_no_cls_parameter(read: Any) -> None:
    made = read()
    assert made.spec.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert made("paris") == ">paris"
    assert seen == [("given", {"city": "paris"})]  # its hooks see no `cls` either
    assert hw.tool(made).spec == made.spec


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="classmethod binds what it wraps < 3.13")
def test_invoke_of_a_classmethod_tool_runs_on_its_class() -> None:
    call = hw.ToolCall("c1", "make", {"city": "paris"})
    assert Bot.make.invoke(call) == ">paris"
    assert Bot().make.invoke(call) == ">paris"
    assert seen == [("given", {"city": "paris"})] * 2


def test_a_function_not_in_a_class_keeps_a_parameter_named_cls() -> None:
    @hw.tool
    def sort(cls: str, item: str) -> str:
        """Sort an item into a class."""
        return f"{item} in {cls}"

    assert sort.spec.parameters["required"] == ["cls", "item"]
    assert sort.invoke(hw.ToolCall("c1", "sort", {"cls": "a", "item": "b"})) == "b in a"


def test_a_tool_method_read_from_instances_reads_its_signature_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[Any] = []

    class Counted(ToolBinding):
        __slots__ = ()

        def __init__(self, *args: Any) -> None:
            built.append(args)
            super().__init__(*args)

    monkeypatch.setattr(hookwrap._wrap, "ToolBinding", Counted)

    class Own:
        @hw.tool(use=[inner], name="look")
        def look(self, city: str) -> str:
            """Look a city up."""
            return city.upper()

    built.clear()
    for bot in (Own(), Own(), Own()):
        for _ in range(3):
            assert bot.look.invoke(CALL) == "PARIS"
    assert len(built) <= 1
    assert seen == [("inner", "c1", "c1", None)] * 9


def test_invoke_of_a_tool_method_read_from_an_instance_leaves_no_cycles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logging.getLogger("hookwrap"), "disabled", True)
    bot = Bot()
    bot.look.invoke(CALL)  # first-call caches are not garbage
    while gc.collect():
        pass
    gc.disable()
    try:
        for _ in range(5):
            bot.look.invoke(CALL)
            Bot().look.invoke(CALL)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_invoke_of_a_tool_method_keeps_no_instance_alive() -> None:
    bot = Bot()
    gone = weakref.ref(bot)
    assert bot.look.invoke(CALL) == "PARIS"
    assert asyncio.run(bot.alook.ainvoke(CALL)) == "PARIS"
    del bot
    assert gone() is None
