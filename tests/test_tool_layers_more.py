"""`invoke` of an async tool made of a tool is one call, as `ainvoke` is; a `@classmethod`
tool's `cls` is no argument, as a method's `self` is not; and a tool method read from an
instance runs a model's call without rebuilding the tool or leaving garbage."""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import sys
import weakref
from typing import Any

import pytest
import tool_doubles
from tool_doubles import alook, inner, outer, seen

import hookwrap as hw
import hookwrap._wrap
from hookwrap._tool import ToolBinding


@hw.before_tool
def given(call: hw.ToolCall) -> None:
    seen.append(("given", dict(call.arguments)))


@hw.after_tool
def answered(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
    seen.append(("answered", outcome.result))


class Bot(tool_doubles.Bot):
    prefix = ">"

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


class Clf:
    @hw.tool(use=[given])
    def tag(self, cls: str, text: str) -> str:
        """Tag a text with a class."""
        return f"{text}:{cls}"

    def plain(self, cls: str, text: str) -> str:
        """Tag a text with a class."""
        return f"{text}:{cls}"

    @hw.tool(use=[given])
    @staticmethod
    def label(cls: str, text: str) -> str:
        """Label a text with a class."""
        return f"{text}:{cls}"


CLS_AND_TEXT = {
    "type": "object",
    "properties": {"cls": {"type": "string"}, "text": {"type": "string"}},
    "required": ["cls", "text"],
}


@pytest.mark.parametrize(
    "read",
    [
        lambda: Clf().tag,
        lambda: hw.tool(Clf().tag),
        lambda: hw.tool(Clf().plain),
        lambda: Clf.label,
    ],
    ids=["tool-method", "tool-of-bound-tool", "bound-method", "above-staticmethod"],
)
def test_a_parameter_named_cls_of_no_classmethod_is_an_argument(read: Any) -> None:
    made = read()
    assert made.spec.parameters == CLS_AND_TEXT
    call = hw.ToolCall("c1", made.name, {"cls": "a", "text": "t"})
    assert made.invoke(call) == "t:a"
    assert made("a", "t") == "t:a"
    with pytest.raises(hw.ToolArgumentError, match=r"missing argument.*: cls"):
        made.invoke(hw.ToolCall("c1", made.name, {"text": "t"}))


@hw.before_tool
def held(call: hw.ToolCall, ctx: hw.RunContext) -> None:
    seen.append(("held", ctx))


class Seer:
    @hw.tool(use=[given, held])
    def look(self, city: str, ctx: hw.RunContext) -> str:
        """Look a city up."""
        seen.append(("tool", ctx))
        return city.upper()


@hw.tool(use=[given, held], name="look")
def look(city: str, ctx: hw.RunContext | None = None) -> str:
    """Look a city up."""
    seen.append(("tool", ctx))
    return city.upper()


@pytest.mark.parametrize(
    "run",
    [
        lambda: Seer().look.invoke(CALL),
        lambda: asyncio.run(Seer().look.ainvoke(CALL)),
        lambda: hw.tool(Seer().look).invoke(CALL),
        lambda: hw.tool(look).invoke(CALL),
        lambda: hw.tool(look)("paris"),
        lambda: hw.tool(look, use=[answered]).invoke(CALL),
    ],
    ids=["instance", "instance-async", "tool-of-instance", "tool-of-tool", "direct", "hooked"],
)
def test_the_tool_inside_layers_gets_the_ctx_its_hooks_see_and_they_see_no_ctx(run: Any) -> None:
    assert run() == "PARIS"
    assert seen[0] == ("given", {"city": "paris"})
    (_, hooks_ctx), (_, tool_ctx) = seen[1:3]
    assert tool_ctx is hooks_ctx


def test_an_agent_runs_a_method_tool_taking_ctx_with_json_arguments_for_its_hooks() -> None:
    @hw.before_tool
    def dump(call: hw.ToolCall) -> None:
        seen.append(json.dumps(call.arguments))

    class Own:
        @hw.tool(use=[dump])
        def look(self, city: str, ctx: hw.RunContext) -> str:
            """Look a city up."""
            return f"{city} in {ctx.call_id}"

    def model(request: hw.ModelRequest) -> hw.Message:
        last = request.messages[-1]
        if last.role == "user":
            return hw.Message.assistant("", [hw.ToolCall("call_1", "look", {"city": "x"})])
        return hw.Message.assistant(f"got {last.text}")

    assert hw.Agent(model, tools=[Own().look]).run("?").text == "got x in call_1"
    assert seen == ['{"city": "x"}']


@pytest.mark.skipif(sys.version_info < (3, 13), reason="classmethod binds what it wraps < 3.13")
def test_invoke_of_a_classmethod_tool_on_3_13_is_refused_before_its_hooks() -> None:
    call = hw.ToolCall("c1", "make", {"city": "paris"})
    for read in (Bot, Bot()):
        with pytest.raises(TypeError, match=r"call hw\.tool\(Bot\.make\)\.invoke\(call\)"):
            read.make.invoke(call)
        with pytest.raises(TypeError, match=r"call hw\.tool\(Bot\.make\)\.ainvoke\(call\)"):
            asyncio.run(read.make.ainvoke(call))
    assert seen == []


def test_a_classmethod_tool_made_a_tool_again_runs_on_its_class() -> None:
    call = hw.ToolCall("c1", "make", {"city": "paris"})
    assert hw.tool(Bot.make).invoke(call) == ">paris"
    assert asyncio.run(hw.tool(Bot().make).ainvoke(call)) == ">paris"
    assert seen == [("given", {"city": "paris"})] * 2


def test_invoke_of_a_method_tool_read_from_its_class_is_refused_before_its_hooks() -> None:
    with pytest.raises(
        TypeError, match=r"no instance .* read the tool from one \(Bot\(\)\.look\.invoke\(call\)\)"
    ):
        Bot.look.invoke(CALL)
    assert seen == []
