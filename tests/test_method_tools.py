"""A tool made of a method, read from an instance: still the method (its hooks run, `self`
bound), and still the tool (its `spec`, `name`, `invoke`; wrapped or given to an agent as the
tool, its name, description and hooks kept)."""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any

import pytest

import hookwrap as hw

log: list[str] = []


@hw.before_tool
def own(call: hw.ToolCall) -> None:
    log.append(f"own {dict(call.arguments)}")


@hw.before_tool
def guard(call: hw.ToolCall) -> None:
    log.append(f"guard {dict(call.arguments)}")


@hw.before_model
def outer_model(request: hw.ModelRequest) -> None:
    log.append("outer")


@hw.before_model
def inner_model(request: hw.ModelRequest) -> None:
    log.append("inner")


class Bot:
    def __init__(self, suffix: str) -> None:
        self.suffix = suffix

    @hw.tool(use=[own], name="search", description="Search the bot's index.")
    def look(self, q: str) -> str:
        """Look."""
        return q + self.suffix

    @hw.tool(use=[own], name="asearch", description="Search it, awaited.")
    async def alook(self, q: str) -> str:
        """Look, awaited."""
        return q + self.suffix

    @hw.tool(use=[guard])
    @hw.tool(use=[own])
    def twice(self, q: str) -> str:
        """Look through two layers."""
        return q + self.suffix

    @hw.model(use=[outer_model])
    @hw.model(use=[inner_model])
    def ask(self, prompt: str) -> str:
        return prompt + self.suffix


def result(value: Any) -> Any:
    """What a call gave: an async method's coroutine run to its end."""
    return asyncio.run(value) if inspect.iscoroutine(value) else value


@pytest.fixture(autouse=True)
def clear_log() -> None:
    log.clear()


METHODS = ["look", "alook"]


@pytest.mark.parametrize("method", METHODS)
def test_a_tool_method_read_from_an_instance_has_the_tools_spec_and_name(method: str) -> None:
    bound = getattr(Bot("!"), method)
    tool = getattr(Bot, method)
    assert bound.spec == tool.spec
    assert bound.name == tool.name == tool.spec.name
    assert "q" in bound.spec.parameters["properties"]
    assert "self" not in bound.spec.parameters["properties"]
    # and is called as the method it was
    assert result(bound("a")) == "a!"
    assert log == ["own {'q': 'a'}"]


@pytest.mark.parametrize("method", METHODS)
def test_wrap_of_a_tool_method_read_from_an_instance_wraps_the_tool(method: str) -> None:
    bound = getattr(Bot("!"), method)
    wrapped = hw.wrap(bound, use=[guard])
    assert isinstance(wrapped, hw.Tool)
    assert wrapped.spec == getattr(Bot, method).spec  # its name and description kept
    assert result(wrapped("a")) == "a!"
    assert log == ["guard {'q': 'a'}", "own {'q': 'a'}"]
    assert hw.explain(wrapped) == hw.explain(hw.wrap(getattr(Bot, method), use=[guard]))


@pytest.mark.parametrize("method", METHODS)
def test_a_tool_of_a_tool_method_read_from_an_instance_keeps_its_name_and_hooks(
    method: str,
) -> None:
    bound = getattr(Bot("!"), method)
    made = hw.tool(bound, use=[own, guard])  # `own` is the tool's already: it runs once
    assert made.spec == getattr(Bot, method).spec
    assert result(made("a")) == "a!"
    assert log == ["guard {'q': 'a'}", "own {'q': 'a'}"]


@pytest.mark.parametrize("method", METHODS)
def test_invoke_of_a_tool_method_read_from_an_instance_runs_on_that_instance(
    method: str,
) -> None:
    bound = getattr(Bot("?"), method)
    call = hw.ToolCall("c1", bound.name, {"q": "a"})
    assert result(bound.invoke(call)) == "a?"
    assert asyncio.run(bound.ainvoke(call)) == "a?"
    assert log == ["own {'q': 'a'}"] * 2


def test_an_agent_calls_a_tool_method_read_from_an_instance_by_the_tools_name() -> None:
    told: list[list[str]] = []

    def model(request: hw.ModelRequest) -> hw.ModelResponse:
        told.append([t.name for t in request.tools])
        if len(told) == 1:
            call = hw.ToolCall("c1", "search", {"q": "a"})
            return hw.ModelResponse(message=hw.Message.assistant("", tool_calls=(call,)))
        return hw.ModelResponse(message=hw.Message.assistant("done"))

    run = hw.Agent(model, tools=[Bot("!").look]).run("go")
    assert run.status == "finished"
    assert told[0] == ["search"]
    assert [m.text for m in run.messages if m.role == "tool"] == ["a!"]
    assert log == ["own {'q': 'a'}"]


def test_a_method_wrapped_twice_runs_both_layers_when_read_from_an_instance() -> None:
    bot = Bot("!")
    assert bot.twice("a") == "a!"
    assert log == ["guard {'q': 'a'}", "own {'q': 'a'}"]
    assert bot.twice.spec == Bot.twice.spec
    log.clear()
    assert bot.ask("a") == "a!"
    assert log == ["outer", "inner"]


def test_a_tool_of_a_partial_kept_on_a_class_is_the_tool_on_an_instance() -> None:
    """A partial or a callable object is no method: read from an instance, the tool is
    itself, as Python gives such class attributes."""

    def lookup(city: str, unit: str) -> str:
        return f"{city} in {unit}"

    class Weather:
        celsius = hw.tool(functools.partial(lookup, unit="C"), name="celsius")

    assert Weather().celsius("Oslo") == "Oslo in C"
    assert Weather().celsius is Weather.celsius


def test_a_model_of_a_partial_kept_on_a_class_is_the_model_on_an_instance() -> None:
    def llm(prompt: str, temperature: float) -> str:
        return f"{prompt}@{temperature}"

    class Bot:
        ask = hw.model(functools.partial(llm, temperature=0))

    assert Bot().ask("hi") == "hi@0"


def test_a_bound_method_of_another_object_kept_on_a_class_stays_bound_to_it() -> None:
    class Docs:
        name = "docs"

        def lookup(self, q: str) -> str:
            """Looks it up."""
            return f"{self.name}:{q}"

    docs = Docs()

    class Bot:
        name = "bot"
        look = hw.tool(docs.lookup)

    assert Bot().look("q") == "docs:q"  # as Python gives a bound method kept on a class
