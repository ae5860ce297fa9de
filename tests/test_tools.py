"""Tools (SPEC §1 tool stages, §7 `@hw.tool`): the tool stays a callable function; its spec is
built from type hints and the docstring; before_tool/wrap_tool/after_tool compose as the
table of §1 says; JSON arguments from a model are structured into the parameter types."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import re
from collections.abc import Callable, Generator
from typing import Any, Literal, Optional

import attrs
import pytest

import hookwrap as hw
from hookwrap.middleware import ToolApproval
from hookwrap.stores import MemoryStore

Log = list[Any]


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Location:
    city: str
    country: str = "FR"


@attrs.define
class Window:
    start: int
    end: int = 10


class Boom(Exception):
    """An error raised on purpose by a tool."""


def json_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a (simple) schema admits, whether written as `type` or `anyOf`."""
    if "type" in schema:
        kind = schema["type"]
        return {kind} if isinstance(kind, str) else set(kind)
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()):
            found |= json_types(option)
    return found


def weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    """Get the weather for a city.

    Uses the local forecast service.

    Args:
        city: The city to look up.
        unit (str): Temperature unit, c or f.
    """
    return f"{city}: 20{unit}"


# -- the Tool object -------------------------------------------------------------------------


def test_bare_decorator_keeps_the_function_callable() -> None:
    """`@hw.tool` gives a Tool that is called like the function and returns its result."""

    @hw.tool
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    assert isinstance(add, hw.Tool)
    assert add(2, 3) == 5
    assert add(2) == 3
    assert add(a=4, b=5) == 9
    assert add.__name__ == "add"
    assert add.__doc__ == "Add two numbers."
    assert list(inspect.signature(add).parameters) == ["a", "b"]


def test_configured_decorator_and_plain_call_keep_the_function_callable() -> None:
    """`@hw.tool(use=[...])` and `hw.tool(fn)` both give callable Tools with the same result."""
    seen: Log = []

    @hw.before_tool
    def guard(call: hw.ToolCall) -> None:
        seen.append(dict(call.arguments))

    @hw.tool(use=[guard])
    def guarded(city: str, unit: Literal["c", "f"] = "c") -> str:
        return weather(city, unit)

    plain = hw.tool(weather)
    assert isinstance(guarded, hw.Tool)
    assert isinstance(plain, hw.Tool)
    assert guarded("Paris", unit="f") == "Paris: 20f"
    assert plain("Paris", "f") == "Paris: 20f"
    assert plain(city="Oslo") == "Oslo: 20c"
    assert seen == [{"city": "Paris", "unit": "f"}]


# -- the spec ---------------------------------------------------------------------------------


def test_spec_name_description_and_simple_schema() -> None:
    """`.spec` is a ToolSpec: the function's name, the docstring's text before its sections,
    an object schema with typed properties, the Args descriptions, defaults and the required
    parameters."""
    spec = hw.tool(weather).spec
    assert isinstance(spec, hw.ToolSpec)
    assert spec.name == "weather"
    assert spec.description == "Get the weather for a city.\n\nUses the local forecast service."
    params = spec.parameters
    assert params["type"] == "object"
    assert set(params["properties"]) == {"city", "unit"}
    assert set(params["required"]) == {"city"}
    city = params["properties"]["city"]
    assert json_types(city) == {"string"}
    assert city["description"] == "The city to look up."
    assert "default" not in city
    unit = params["properties"]["unit"]
    assert unit["enum"] == ["c", "f"]
    assert unit["description"] == "Temperature unit, c or f."
    assert unit["default"] == "c"


def test_spec_schema_of_every_supported_type() -> None:
    """Type hints map to JSON schema: str, int, float, bool, Literal → enum, Optional admits
    null, list[int], dict[str, int], an Enum → its values, a dataclass and an attrs class →
    objects with their required fields."""

    @hw.tool
    def everything(
        name: str,
        count: int,
        ratio: float,
        flag: bool,
        ids: list[int],
        weights: dict[str, int],
        color: Color,
        where: Location,
        window: Window,
        mode: Literal["fast", "slow"] = "fast",
        note: Optional[str] = None,  # noqa: UP045 - the spelling under test
        alias: str | None = None,
    ) -> str:
        """Use every type."""
        return "ok"

    props = everything.spec.parameters["properties"]
    assert json_types(props["name"]) == {"string"}
    assert json_types(props["count"]) == {"integer"}
    assert json_types(props["ratio"]) == {"number"}
    assert json_types(props["flag"]) == {"boolean"}
    assert props["ids"]["type"] == "array"
    assert json_types(props["ids"]["items"]) == {"integer"}
    assert props["weights"]["type"] == "object"
    assert json_types(props["weights"]["additionalProperties"]) == {"integer"}
    assert props["color"]["enum"] == ["red", "green"]
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["mode"]["default"] == "fast"
    assert json_types(props["note"]) == {"string", "null"}
    assert props["note"]["default"] is None
    assert json_types(props["alias"]) == {"string", "null"}

    where = props["where"]
    assert where["type"] == "object"
    assert set(where["properties"]) == {"city", "country"}
    assert json_types(where["properties"]["city"]) == {"string"}
    assert where["required"] == ["city"]

    window = props["window"]
    assert window["type"] == "object"
    assert set(window["properties"]) == {"start", "end"}
    assert json_types(window["properties"]["end"]) == {"integer"}
    assert window["required"] == ["start"]

    assert set(everything.spec.parameters["required"]) == {
        "name",
        "count",
        "ratio",
        "flag",
        "ids",
        "weights",
        "color",
        "where",
        "window",
    }


def test_spec_description_of_a_multi_line_argument() -> None:
    """A Google-style argument description continued on an indented line is one description;
    sections after `Args:` do not leak into it."""

    @hw.tool
    def book(city: str, nights: int) -> str:
        """Book a hotel.

        Args:
            city: The city where the hotel is,
                as its English name.
            nights: How many nights.

        Returns:
            A confirmation code.
        """
        return "ok"

    props = book.spec.parameters["properties"]
    assert props["city"]["description"] == "The city where the hotel is, as its English name."
    assert props["nights"]["description"] == "How many nights."
    assert book.spec.description == "Book a hotel."


# -- before_tool ------------------------------------------------------------------------------


def test_before_tool_rewrite_pipes_on_and_reaches_the_function() -> None:
    """A ToolCall returned by before_tool is what later before_tool hooks and the function
    receive."""
    log: Log = []

    @hw.before_tool(priority=10)
    def normalise(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={**call.arguments, "city": call.arguments["city"].title()})

    @hw.before_tool(priority=5)
    def prefer_f(call: hw.ToolCall) -> hw.ToolCall:
        log.append(("prefer_f saw", dict(call.arguments)))
        return call.replace(arguments={**call.arguments, "unit": "f"})

    @hw.before_tool
    def audit(call: hw.ToolCall) -> None:
        log.append(("audit saw", dict(call.arguments)))

    @hw.tool(use=[audit, prefer_f, normalise])
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        log.append(("function", city, unit))
        return f"{city}:{unit}"

    assert get_weather("paris") == "Paris:f"
    assert log == [
        ("prefer_f saw", {"city": "Paris"}),
        ("audit saw", {"city": "Paris", "unit": "f"}),
        ("function", "Paris", "f"),
    ]


def test_an_argument_rewrite_cannot_bypass_a_later_guard() -> None:
    """A guard after a rewriting hook judges the rewritten arguments: rewriting into a
    forbidden value is stopped, and the function never runs."""
    log: Log = []

    @hw.before_tool(priority=10)
    def alias(call: hw.ToolCall) -> hw.ToolCall:
        if call.arguments["path"] == "home":
            return call.replace(arguments={"path": "/etc/passwd"})
        return call

    @hw.before_tool
    def guard(call: hw.ToolCall) -> hw.Abort | None:
        if call.arguments["path"].startswith("/etc"):
            return hw.Abort(f"refused {call.arguments['path']}")
        return None

    @hw.tool(use=[guard, alias])
    def read(path: str) -> str:
        log.append(path)
        return "content"

    assert read("notes.txt") == "content"
    with pytest.raises(hw.Aborted) as excinfo:
        read("home")
    assert excinfo.value.reason == "refused /etc/passwd"
    with pytest.raises(hw.Aborted):
        read.invoke(hw.ToolCall(id="c9", name="read", arguments={"path": "home"}))
    assert log == ["notes.txt"]


def test_skip_ends_the_stage_and_after_tool_still_runs() -> None:
    """`Skip(result)`: later before_tool hooks, the wrap_tool onion and the function do not
    run; after_tool sees `ok=True` with the skip result, which the caller gets."""
    log: Log = []
    outcomes: list[hw.ToolOutcome] = []

    @hw.before_tool(priority=10)
    def cached(call: hw.ToolCall) -> hw.Skip:
        log.append("cached")
        return hw.Skip({"temp": 21})

    @hw.before_tool
    def later(call: hw.ToolCall) -> None:
        log.append("later before_tool")

    @hw.wrap_tool
    def around(call: hw.ToolCall, call_next: Callable[[hw.ToolCall], Any]) -> Any:
        log.append("wrap_tool")
        return call_next(call)

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        outcomes.append(outcome)

    @hw.tool(use=[cached, later, around, after])
    def forecast(city: str) -> dict[str, int]:
        log.append("function")
        return {"temp": 0}

    assert forecast("Paris") == {"temp": 21}
    assert log == ["cached"]
    assert len(outcomes) == 1
    assert outcomes[0].ok is True
    assert outcomes[0].result == {"temp": 21}
    assert outcomes[0].error is None


def test_skip_result_can_be_replaced_by_after_tool() -> None:
    """after_tool may replace a skip result like any other."""

    @hw.before_tool
    def skip(call: hw.ToolCall) -> hw.Skip:
        return hw.Skip("skipped")

    @hw.after_tool
    def shout(call: hw.ToolCall, outcome: hw.ToolOutcome) -> str:
        return str(outcome.result).upper()

    @hw.tool(use=[skip, shout])
    def task() -> str:
        raise AssertionError("the function must not run")

    assert task() == "SKIPPED"


def test_abort_from_before_tool_raises_aborted_at_once() -> None:
    """`Abort(reason)` from before_tool raises `hw.Aborted(reason)`: no later before_tool,
    no function, no after_tool."""
    log: Log = []

    @hw.before_tool(priority=1)
    def deny(call: hw.ToolCall) -> hw.Abort:
        return hw.Abort("tool calls are disabled")

    @hw.before_tool
    def later(call: hw.ToolCall) -> None:
        log.append("later")

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        log.append("after_tool")

    @hw.tool(use=[deny, later, after])
    def delete_all() -> str:
        log.append("function")
        return "deleted"

    with pytest.raises(hw.Aborted) as excinfo:
        delete_all()
    assert excinfo.value.reason == "tool calls are disabled"
    assert log == []


# -- wrap_tool --------------------------------------------------------------------------------


def test_wrap_tool_call_next_and_generator_forms_nest_first_outermost() -> None:
    """A call_next hook and a generator hook form an onion, first listed outermost; each may
    change the call going in and the result coming out."""
    log: Log = []

    @hw.wrap_tool
    def outer(call: hw.ToolCall, call_next: Callable[[hw.ToolCall], Any]) -> Any:
        log.append("outer in")
        result = call_next(call)
        log.append(("outer out", result))
        return f"[{result}]"

    @hw.wrap_tool
    def inner(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, Any]:
        log.append("inner in")
        result = yield call.replace(arguments={"word": call.arguments["word"] * 2})
        log.append(("inner out", result))
        return f"{result}!"

    @hw.tool(use=[outer, inner])
    def echo(word: str) -> str:
        log.append(("function", word))
        return word

    assert echo("ab") == "[abab!]"
    assert log == [
        "outer in",
        "inner in",
        ("function", "abab"),
        ("inner out", "abab"),
        ("outer out", "abab!"),
    ]


def test_wrap_tool_generator_returning_nothing_keeps_the_result() -> None:
    """A generator wrap_tool hook that returns nothing leaves the result as it came."""
    log: Log = []

    @hw.wrap_tool
    def observe(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, None]:
        result = yield call
        log.append(result)

    @hw.tool(use=[observe])
    def square(x: int) -> int:
        return x * x

    assert square(7) == 49
    assert log == [49]


def test_wrap_tool_generator_may_call_again_after_an_error() -> None:
    """The inner error is thrown in at the `yield`; yielding again calls the tool again."""
    attempts: Log = []

    @hw.wrap_tool
    def retry_once(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, Any]:
        try:
            return (yield call)
        except Boom:
            return (yield call)

    @hw.tool(use=[retry_once])
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) == 1:
            raise Boom("first try fails")
        return x + 1

    assert flaky(1) == 2
    assert attempts == [1, 1]


# -- after_tool -------------------------------------------------------------------------------


def test_after_tool_runs_in_reverse_order_and_pipes_replacements() -> None:
    """after_tool hooks run in reverse of priority order; a returned value replaces the
    result for the hooks after it and for the caller."""
    log: Log = []

    @hw.after_tool(priority=10)
    def outermost(call: hw.ToolCall, outcome: hw.ToolOutcome) -> str:
        log.append(("outermost", outcome.result))
        return f"{outcome.result}-outer"

    @hw.after_tool(priority=5)
    def observer(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        log.append(("observer", outcome.result))

    @hw.after_tool(priority=0)
    def innermost(call: hw.ToolCall, outcome: hw.ToolOutcome) -> str:
        log.append(("innermost", outcome.result))
        return f"{outcome.result}-inner"

    @hw.tool(use=[outermost, observer, innermost])
    def value() -> str:
        return "v"

    assert value() == "v-inner-outer"
    assert log == [
        ("innermost", "v"),
        ("observer", "v-inner"),
        ("outermost", "v-inner"),
    ]


def test_after_tool_sees_the_error_and_it_propagates_when_not_replaced() -> None:
    """When the function raises, after_tool sees `ok=False` with that error; with no
    replacement the same exception object reaches the caller."""
    boom = Boom("disk full")
    outcomes: list[hw.ToolOutcome] = []

    @hw.after_tool
    def watch(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        outcomes.append(outcome)

    @hw.tool(use=[watch])
    def save(data: str) -> str:
        raise boom

    with pytest.raises(Boom) as excinfo:
        save("x")
    assert excinfo.value is boom
    assert len(outcomes) == 1
    assert outcomes[0].ok is False
    assert outcomes[0].error is boom
    assert outcomes[0].result is None


def test_after_tool_replacement_recovers_from_an_error() -> None:
    """An after_tool hook returning a value after a failure makes the call succeed with it;
    the hooks after it see `ok=True`."""
    boom = Boom("service down")
    seen: list[tuple[bool, Any]] = []

    @hw.after_tool(priority=10)
    def later(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        seen.append((outcome.ok, outcome.result))

    @hw.after_tool(priority=0)
    def recover(call: hw.ToolCall, outcome: hw.ToolOutcome) -> str | None:
        seen.append((outcome.ok, outcome.error))
        return None if outcome.ok else "fallback"

    @hw.tool(use=[later, recover])
    def fetch() -> str:
        raise boom

    assert fetch() == "fallback"
    assert seen == [(False, boom), (True, "fallback")]


# -- async ------------------------------------------------------------------------------------


def test_async_tool_with_async_hooks() -> None:
    """An async tool runs async before_tool, async call_next wrap_tool, a generator
    wrap_tool and async after_tool, in the same order as a sync tool."""
    log: Log = []

    @hw.before_tool
    async def rewrite(call: hw.ToolCall) -> hw.ToolCall:
        await asyncio.sleep(0)
        log.append("before_tool")
        return call.replace(arguments={"n": call.arguments["n"] + 1})

    @hw.wrap_tool
    async def outer(call: hw.ToolCall, call_next: Callable[[hw.ToolCall], Any]) -> Any:
        log.append("outer in")
        result = await call_next(call)
        log.append("outer out")
        return result * 10

    @hw.wrap_tool
    def inner(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, Any]:
        log.append("inner in")
        result = yield call
        log.append("inner out")
        return result + 1

    @hw.after_tool
    async def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> Any:
        await asyncio.sleep(0)
        log.append(("after_tool", outcome.ok, outcome.result))
        return outcome.result + 0.5

    @hw.tool(use=[rewrite, outer, inner, after])
    async def double(n: int) -> int:
        await asyncio.sleep(0)
        log.append(("function", n))
        return 2 * n

    assert asyncio.run(double(1)) == 50.5
    assert log == [
        "before_tool",
        "outer in",
        "inner in",
        ("function", 2),
        "inner out",
        "outer out",
        ("after_tool", True, 50),
    ]


def test_async_tool_skip_and_error() -> None:
    """Async twins: Skip ends the stage with `ok=True`; an error reaches after_tool."""
    outcomes: list[tuple[bool, Any]] = []
    boom = Boom("async failure")

    @hw.before_tool
    async def skip_negative(call: hw.ToolCall) -> hw.Skip | None:
        return hw.Skip(0) if call.arguments["n"] < 0 else None

    @hw.after_tool
    async def record(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        outcomes.append((outcome.ok, outcome.result if outcome.ok else outcome.error))

    @hw.tool(use=[skip_negative, record])
    async def check(n: int) -> int:
        if n == 0:
            raise boom
        return n

    assert asyncio.run(check(-5)) == 0
    assert asyncio.run(check(3)) == 3
    with pytest.raises(Boom) as excinfo:
        asyncio.run(check(0))
    assert excinfo.value is boom
    assert outcomes == [(True, 0), (True, 3), (False, boom)]


# -- invoke: JSON arguments -------------------------------------------------------------------


def test_invoke_runs_a_model_call_with_json_arguments() -> None:
    """`tool.invoke(ToolCall(...))` runs the call through the hooks and returns the result."""
    calls: list[hw.ToolCall] = []

    @hw.before_tool
    def record(call: hw.ToolCall) -> None:
        calls.append(call)

    @hw.tool(use=[record])
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        return weather(city, unit)

    call = hw.ToolCall(id="c1", name="get_weather", arguments={"city": "Paris", "unit": "f"})
    assert get_weather.invoke(call) == "Paris: 20f"
    assert [c.id for c in calls] == ["c1"]
    assert dict(calls[0].arguments) == {"city": "Paris", "unit": "f"}


def test_invoke_structures_json_into_parameter_types() -> None:
    """JSON values become the annotated types: a dict → the dataclass or attrs class, an
    enum value → the member, lists and dicts of ints, Optional, Literal."""
    received: Log = []

    @hw.tool
    def plan(
        where: Location,
        color: Color,
        window: Window,
        ids: list[int],
        weights: dict[str, int],
        mode: Literal["fast", "slow"] = "fast",
        note: Optional[str] = None,  # noqa: UP045 - the spelling under test
    ) -> str:
        received.extend([where, color, window, ids, weights, mode, note])
        return "planned"

    arguments = {
        "where": {"city": "Paris"},
        "color": "green",
        "window": {"start": 3},
        "ids": [1, 2],
        "weights": {"a": 1},
        "mode": "slow",
        "note": None,
    }
    assert plan.invoke(hw.ToolCall(id="c2", name="plan", arguments=arguments)) == "planned"
    where, color, window, ids, weights, mode, note = received
    assert isinstance(where, Location)
    assert where == Location("Paris", "FR")
    assert color is Color.GREEN
    assert isinstance(window, Window)
    assert window == Window(3, 10)
    assert ids == [1, 2]
    assert weights == {"a": 1}
    assert mode == "slow"
    assert note is None


def test_invoke_async_tool() -> None:
    """`await tool.ainvoke(call)` structures arguments and awaits an async tool."""

    @hw.tool
    async def paint(color: Color) -> str:
        await asyncio.sleep(0)
        return color.name

    call = hw.ToolCall(id="c3", name="paint", arguments={"color": "red"})
    assert asyncio.run(paint.ainvoke(call)) == "RED"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"where": "Paris", "color": "red", "days": 1}, "where"),  # wrong type
        ({"where": {"city": "Paris"}, "color": "purple", "days": 1}, "color"),  # not a member
        ({"where": {"city": "Paris"}, "color": "red", "days": "many"}, "days"),  # not an int
        ({"where": {"city": "Paris"}, "color": "red", "days": 1, "unit": "k"}, "unit"),
        ({"where": {"city": "Paris"}, "color": "red"}, "days"),  # missing
        ({"where": {"city": "Paris"}, "color": "red", "days": 1, "planet": "Mars"}, "planet"),
    ],
)
def test_a_bad_argument_is_a_tool_argument_error_naming_it(
    arguments: dict[str, Any], named: str
) -> None:
    """A wrong type, a missing or an unknown argument raises hw.ToolArgumentError whose
    message names the argument; the function is not called."""
    ran: Log = []

    @hw.tool
    def trip(where: Location, color: Color, days: int, unit: Literal["c", "f"] = "c") -> str:
        ran.append(True)
        return "ok"

    with pytest.raises(hw.ToolArgumentError) as excinfo:
        trip.invoke(hw.ToolCall(id="bad", name="trip", arguments=arguments))
    assert re.search(rf"\b{named}\b", str(excinfo.value)), str(excinfo.value)
    assert ran == []


def test_a_ctx_parameter_receives_the_tool_calls_run_context_and_is_not_in_the_schema() -> None:
    @hw.tool
    def lookup(city: str, ctx: hw.RunContext[None]) -> str:
        """Look a city up."""
        return f"{city}: {ctx.phase} {ctx.call_id}"

    assert "ctx" not in lookup.spec.parameters["properties"]
    assert lookup("Paris").startswith("Paris: tool ")
    assert lookup.invoke(hw.ToolCall("call-7", "lookup", {"city": "Oslo"})) == "Oslo: tool call-7"

    @hw.tool
    async def alookup(city: str, ctx: hw.RunContext[None]) -> str:
        return f"{city}: {ctx.phase}"

    assert asyncio.run(alookup("Rome")) == "Rome: tool"


@pytest.mark.parametrize("sent", ["injected", None, {}])
def test_a_model_that_sends_ctx_gets_a_tool_error_as_for_any_argument_not_in_the_schema(
    sent: Any,
) -> None:
    """`ctx` is the tool's own, however it is annotated: the model cannot set it, and a tool
    that the model calls gets the run's RunContext."""
    ran: Log = []

    @hw.tool
    def plain(x: int, ctx: Any = None) -> str:
        ran.append(ctx)
        return "plain"

    @hw.tool
    def optional(x: int, ctx: hw.RunContext[None] | None = None) -> str:
        ran.append(ctx)
        return "optional"

    @hw.tool
    def required(x: int, ctx: hw.RunContext[None]) -> str:
        ran.append(ctx)
        return "required"

    for tool in (plain, optional, required):
        name = tool.spec.name
        with pytest.raises(hw.ToolArgumentError) as excinfo:
            tool.invoke(hw.ToolCall("c1", name, {"x": 1, "ctx": sent}))
        assert str(excinfo.value) == f"{name}() got an unexpected argument 'ctx'"
        assert ran == []
        assert tool.invoke(hw.ToolCall("c2", name, {"x": 1})) == name
        assert isinstance(ran.pop(), hw.RunContext)


def test_a_ctx_the_model_sends_reaches_it_as_a_tool_error_in_an_agent_run() -> None:
    @hw.tool
    def lookup(city: str, ctx: hw.RunContext[None] | None = None) -> str:
        """Look a city up."""
        return f"{city}: {type(ctx).__name__}"

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            return hw.Message.assistant(
                "",
                [
                    hw.ToolCall("1", "lookup", {"city": "Oslo", "ctx": "injected"}),
                    hw.ToolCall("2", "lookup", {"city": "Rome"}),
                ],
            )
        return " | ".join(m.text for m in request.messages if m.role == "tool")

    result = hw.Agent(model, tools=[lookup]).run("go")
    assert result.text == (
        "Error: ToolArgumentError: lookup() got an unexpected argument 'ctx' | Rome: RunContext"
    )


# -- arguments a model got wrong: malformed JSON, values of the wrong kind --------------------


def _one_call_model(arguments: str, name: str = "add") -> Callable[[hw.ModelRequest], Any]:
    """A model that calls tool `name` once with `arguments` (JSON text), then answers with
    the text of the tool message it got back."""

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            call = {
                "id": "c1",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            return {"role": "assistant", "content": "", "tool_calls": [call]}
        return request.messages[-1].text

    return model


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"a": 1, "b": ', "not valid JSON"),  # cut off
        ("{'a': 1, 'b': 2}", "not valid JSON"),
        ("[1, 2]", "an array, not an object"),
        ('"a=1, b=2"', "a string, not an object"),
        ("3", "a number, not an object"),
        ("null", "null, not an object"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_a_tool_error_and_the_run_goes_on(
    arguments: str, reason: str
) -> None:
    """The call reaches the tool stage (a before_tool hook sees it, with empty arguments and
    the text the model sent in `raw`); the tool does not run; the model reads a
    ToolArgumentError that quotes what it sent; the run finishes."""
    ran: Log = []
    seen: list[hw.ToolCall] = []

    @hw.before_tool
    def watch(call: hw.ToolCall) -> None:
        seen.append(call)

    @hw.tool(use=[watch])
    def add(a: int, b: int) -> int:
        """Add."""
        ran.append((a, b))
        return a + b

    result = hw.Agent(_one_call_model(arguments), tools=[add]).run("1 + 2")
    assert result.status == "finished"
    assert result.text.startswith("Error: ToolArgumentError: the arguments of add must be a JSON")
    assert repr(arguments) in result.text
    assert reason in result.text
    assert ran == []
    [call] = seen
    assert (call.id, call.name, dict(call.arguments)) == ("c1", "add", {})
    assert call.raw["function"]["arguments"] == arguments
    [asked] = [m for m in result.messages if m.tool_calls]
    assert asked.tool_calls[0].raw["function"]["arguments"] == arguments


def test_a_hook_may_repair_arguments_that_are_not_json_and_the_tool_runs() -> None:
    """The marked arguments stop the tool only while nobody replaced them."""

    @hw.before_tool
    def repair(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={"a": 1, "b": 2})

    @hw.tool(use=[repair])
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert hw.Agent(_one_call_model('{"a": 1, "b": 2'), tools=[add]).run("x").text == "3"


def test_streamed_arguments_that_are_not_json_are_a_tool_error_and_the_stream_goes_on() -> None:
    @hw.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            yield hw.Chunk("tool_call_start", tool_call_id="c1", tool_name="add")
            yield hw.Chunk("tool_call_args", text='{"a": 1, "b"', tool_call_id="c1")
            return
        yield hw.Chunk("text", text="sorry")

    events = list(hw.Agent(model, tools=[add]).stream("1 + 2"))
    [done] = [e for e in events if e.kind == "tool_result"]
    assert done.ok is False
    assert done.text.startswith("Error: ToolArgumentError: the arguments of add must be a JSON")
    assert '\'{"a": 1, "b"\'' in done.text
    assert events[-1].kind == "result"
    assert events[-1].result is not None
    assert (events[-1].result.status, events[-1].result.text) == ("finished", "sorry")


@dataclasses.dataclass
class Stop:
    name: str
    nights: int
    pets: bool = False


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def _strict_tool() -> hw.Tool[..., Any]:
    @hw.tool
    def book(
        name: str = "x",
        nights: int = 1,
        price: float = 0.0,
        pets: bool = False,
        note: Optional[str] = None,  # noqa: UP045 - the spelling under test
        count: int | None = None,
        mode: Literal[1, 2, "auto"] = "auto",
        level: Level = Level.LOW,
        tags: list[str] = [],  # noqa: B006 - never mutated
        flags: dict[str, bool] = {},  # noqa: B006 - never mutated
        pair: tuple[int, str] = (0, ""),
        stop: Optional[Stop] = None,  # noqa: UP045 - the spelling under test
        window: Optional[Window] = None,  # noqa: UP045 - the spelling under test
        stops: list[Stop] = [],  # noqa: B006 - never mutated
    ) -> dict[str, Any]:
        """Book a trip."""
        return dict(locals())

    return book


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"name": None}, "name"),  # cattrs' default: 'None'
        ({"name": {"a": 1}}, "name"),  # cattrs' default: "{'a': 1}"
        ({"name": 7}, "name"),
        ({"pets": "false"}, "pets"),  # cattrs' default: True
        ({"pets": 0}, "pets"),
        ({"nights": 2.7}, "nights"),  # cattrs' default: 2
        ({"nights": True}, "nights"),
        ({"nights": "3"}, "nights"),
        ({"price": True}, "price"),
        ({"price": "1.5"}, "price"),
        ({"note": 3}, "note"),
        ({"count": False}, "count"),
        ({"mode": True}, "mode"),  # True == 1 in Python, not in JSON
        ({"level": True}, "level"),
        ({"tags": [1]}, "tags"),
        ({"tags": "abc"}, "tags"),  # cattrs' default: ['a', 'b', 'c']
        ({"tags": {"a": 1}}, "tags"),  # cattrs' default: ['a']
        ({"flags": {"a": "yes"}}, "flags"),
        ({"pair": [1, 2]}, "pair"),
        ({"pair": [1, "a", 3]}, "pair"),
        ({"stop": {"name": None, "nights": 1}}, "stop"),
        ({"stop": {"name": "Oslo", "nights": 1.5}}, "stop"),
        ({"stop": {"name": "Oslo", "nights": 1, "pets": "no"}}, "stop"),
        ({"stop": {"name": "Oslo", "nights": 1, "nihgts": 2}}, "stop"),  # no such field
        ({"window": {"start": "3"}}, "window"),
        ({"stops": [{"name": "Oslo", "nights": 1}, {"name": 5, "nights": 1}]}, "stops"),
    ],
)
def test_a_value_of_the_wrong_json_kind_is_a_tool_argument_error(
    arguments: dict[str, Any], named: str
) -> None:
    """No silent coercion, at the top or inside lists, dicts, tuples, dataclass and attrs
    fields, Optional and Literal: a str is only a JSON string, a bool only true or false, an
    int or a float only a number (never a bool); an array is never read from a string or an
    object; a dataclass does not drop keys it has no field for."""
    book = _strict_tool()
    with pytest.raises(hw.ToolArgumentError) as excinfo:
        book.invoke(hw.ToolCall(id="bad", name="book", arguments=arguments))
    assert re.search(rf"^argument '{named}' of book: expected ", str(excinfo.value)), str(
        excinfo.value
    )


def test_the_error_gives_the_path_to_each_bad_value_inside_an_argument() -> None:
    book = _strict_tool()

    def error(**arguments: Any) -> str:
        with pytest.raises(hw.ToolArgumentError) as excinfo:
            book.invoke(hw.ToolCall(id="bad", name="book", arguments=arguments))
        return str(excinfo.value)

    assert error(name=None) == "argument 'name' of book: expected str, got null"
    assert error(note=3) == "argument 'note' of book: expected Optional[str], got 3"
    assert error(level=3) == (
        "argument 'level' of book: expected Level, got 3 (expected one of [1, 2], got 3)"
    )
    text = error(stops=[{"name": "Oslo", "nights": 1}, {"name": None, "nights": "2"}])
    assert "expected a string, got null @ stops[1].name" in text
    assert 'expected an integer, got "2" @ stops[1].nights' in text
    assert "expected true or false, got \"no\" @ flags['a']" in error(flags={"a": "no"})


def test_values_of_the_right_json_kind_are_structured() -> None:
    """The other side of strictness: an integral float is an int (JSON has one kind of
    number: `2.0` is read as 2, as JSON Schema's "integer" admits it), an int is a float,
    a Literal or an enum member is found by its JSON value, and the keys of a
    `dict[int, ...]` (strings in JSON) are read as ints."""
    book = _strict_tool()
    arguments = {
        "name": "Oslo",
        "nights": 2.0,
        "price": 3,
        "pets": False,
        "note": None,
        "count": 0,
        "mode": 1.0,
        "level": 2,
        "tags": ["a", "b"],
        "flags": {"wifi": True},
        "pair": [1, "a"],
        "stop": {"name": "Bergen", "nights": 1},
        "window": {"start": 3},
        "stops": [{"name": "Oslo", "nights": 2.0, "pets": True}],
    }
    got = book.invoke(hw.ToolCall(id="ok", name="book", arguments=arguments))
    assert got == {
        "name": "Oslo",
        "nights": 2,
        "price": 3.0,
        "pets": False,
        "note": None,
        "count": 0,
        "mode": 1,
        "level": Level.HIGH,
        "tags": ["a", "b"],
        "flags": {"wifi": True},
        "pair": (1, "a"),
        "stop": Stop("Bergen", 1),
        "window": Window(3, 10),
        "stops": [Stop("Oslo", 2, pets=True)],
    }
    assert type(got["nights"]) is int
    assert type(got["price"]) is float
    assert got["level"] is Level.HIGH

    @hw.tool
    def count(by_day: dict[int, str]) -> dict[int, str]:
        return by_day

    assert count.invoke(hw.ToolCall("k", "count", {"by_day": {"1": "mon"}})) == {1: "mon"}


def test_a_value_of_the_wrong_json_kind_reaches_the_model_as_a_tool_error() -> None:
    @hw.tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            call = {"id": "c1", "function": {"name": "shout", "arguments": '{"text": null}'}}
            return {"role": "assistant", "content": "", "tool_calls": [call]}
        return request.messages[-1].text

    result = hw.Agent(model, tools=[shout]).run("x")
    assert result.status == "finished"
    assert (
        result.text == "Error: ToolArgumentError: argument 'text' of shout: expected str, got null"
    )


def test_arguments_that_are_not_json_stay_refused_across_an_interrupt() -> None:
    """A call whose arguments are no JSON object, paused for approval before its arguments
    are read, and approved: the checkpoint keeps the model's text, so the resumed call is
    still a ToolArgumentError, and the tool (whose parameters all have defaults) does not
    run with them."""
    ran: Log = []

    @hw.tool
    def tally(a: int = 1) -> int:
        """Count."""
        ran.append(a)
        return a

    agent = hw.Agent(
        _one_call_model('{"a": ', name="tally"),
        tools=[tally],
        use=[ToolApproval()],
        store=MemoryStore(),
    )
    paused = agent.run("go")
    assert paused.status == "interrupted"
    done = agent.resume(paused.run_id, decisions={"c1": True})
    assert done.status == "finished"
    assert done.text.startswith("Error: ToolArgumentError: the arguments of tally")
    assert ran == []


# -- what a before_tool hook sets: typed values pass, JSON is structured ----------------------


def test_typed_values_a_before_tool_hook_sets_reach_the_tool_unchanged() -> None:
    """A hook's Python values (an enum member, a dataclass or attrs instance, an Optional or
    a list of them) are already of the parameter's type: the tool gets them as they are,
    where the model's JSON beside them is structured."""
    stop, window, stops = Stop("Oslo", 2), Window(1, 2), [Stop("Rome", 1)]

    @hw.before_tool
    def preset(call: hw.ToolCall) -> hw.ToolCall:
        typed = {"level": Level.HIGH, "stop": stop, "window": window, "stops": stops}
        return call.replace(arguments={**call.arguments, **typed})

    book = hw.wrap(_strict_tool(), use=[preset])
    got = book.invoke(hw.ToolCall("t", "book", {"nights": 2.0, "tags": ["a"]}))
    assert got["level"] is Level.HIGH
    assert got["stop"] is stop
    assert got["window"] is window
    assert got["stops"] is stops
    assert (got["nights"], got["tags"]) == (2, ["a"])
    assert type(got["nights"]) is int


def test_a_typed_value_from_a_hook_runs_the_tool_in_an_agent_run() -> None:
    @hw.before_tool
    def defaults(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(
            arguments={**call.arguments, "color": Color.GREEN, "where": Location("Paris")}
        )

    @hw.tool(use=[defaults])
    def forecast(where: Location, color: Color = Color.RED) -> str:
        """Forecast."""
        return f"{where.city} in {color.value}"

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            return hw.Message.assistant(
                "", [hw.ToolCall("1", "forecast", {"where": {"city": "Rome"}})]
            )
        return request.messages[-1].text

    assert hw.Agent(model, tools=[forecast]).run("go").text == "Paris in green"


@pytest.mark.parametrize(
    ("typed", "error"),
    [
        ({"level": Color.RED}, "argument 'level' of book: expected Level, got "),
        ({"stop": Location("Oslo")}, "argument 'stop' of book: expected Optional[Stop], got "),
        ({"stops": [Stop("Oslo", 1), Location("Rome")]}, "argument 'stops' of book: expected "),
    ],
)
def test_a_value_of_another_type_a_hook_sets_is_still_a_tool_argument_error(
    typed: dict[str, Any], error: str
) -> None:
    @hw.before_tool
    def preset(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={**call.arguments, **typed})

    book = hw.wrap(_strict_tool(), use=[preset])
    with pytest.raises(hw.ToolArgumentError) as excinfo:
        book.invoke(hw.ToolCall("t", "book", {}))
    assert str(excinfo.value).startswith(error), str(excinfo.value)


# -- fields that cannot be passed -------------------------------------------------------------


@dataclasses.dataclass
class Order:
    item: str
    total: float = dataclasses.field(init=False, default=0.0)


@attrs.define
class Basket:
    item: str
    count: int = attrs.field(init=False, default=0)


def test_a_field_with_init_false_is_left_out_of_the_schema() -> None:
    """A dataclass or attrs field with init=False cannot be passed: the model is not shown
    it, the object is made without it, and a model that sends it anyway is refused."""

    @hw.tool
    def order(first: Order, second: Basket) -> str:
        """Order."""
        return f"{first!r} {second!r}"

    props = order.spec.parameters["properties"]
    assert props["first"]["properties"].keys() == {"item"}
    assert props["second"]["properties"].keys() == {"item"}
    arguments: dict[str, Any] = {"first": {"item": "tea"}, "second": {"item": "jam"}}
    assert order.invoke(hw.ToolCall("o", "order", arguments)) == (
        "Order(item='tea', total=0.0) Basket(item='jam', count=0)"
    )
    with pytest.raises(hw.ToolArgumentError, match="total"):
        order.invoke(hw.ToolCall("o", "order", {**arguments, "first": {"item": "a", "total": 1}}))


def test_spec_description_is_every_paragraph_before_the_docstrings_sections() -> None:
    """What the author tells the tool's callers in later paragraphs reaches the model too;
    the sections (`Args:`, `Returns:`, a NumPy-style underlined one) do not."""

    @hw.tool
    def refund(order_id: str) -> str:
        """Refund an order.

        Only call this after the customer confirmed
        the refund in writing.

        Args:
            order_id: The order to refund.

        Returns:
            A confirmation code.
        """
        return "ok"

    @hw.tool
    def double(x: int) -> int:
        """Double a number.

        Parameters
        ----------
        x : int
            The number.
        """
        return 2 * x

    @hw.tool
    def returns_only(x: int) -> int:
        """Echo a number.

        Returns:
            The number.
        """
        return x

    assert refund.spec.description == (
        "Refund an order.\n\nOnly call this after the customer confirmed\nthe refund in writing."
    )
    assert refund.spec.parameters["properties"]["order_id"]["description"] == (
        "The order to refund."
    )
    assert double.spec.description == "Double a number."
    assert returns_only.spec.description == "Echo a number."


def test_spec_description_ends_where_other_docstring_markup_starts() -> None:
    """Sphinx and Epydoc fields, doctests, reST directives and section headings end the
    description: they are for the function's readers, not the model. A line that only
    looks like one (a lead-in ending in a colon, a mention, an underlined title) stays."""

    def made(doc: str) -> str:
        def tool(x: int) -> int:
            return x

        tool.__doc__ = doc
        return hw.tool(tool).spec.description

    for rest in (
        ":param x: the number.\n:returns: x",
        "@param x: the number.",
        ">>> tool(2)\n2",
        ".. note:: internal, do not expose.",
        "Usage:\n    tool(2)",
        "Side Effects:\n    none",
        "Warns\n-----\nUserWarning",
        "Examples\n========\nx",
    ):
        described = made(f"Echo a number.\n\nKeeps it.\n\n{rest}\n")
        assert described == "Echo a number.\n\nKeeps it.", rest
    for kept in (
        "Note: a sentence that starts so stays.",
        "Works on:\n\n- a list that follows a lead-in line",
        "@here mentions notify everyone.",
        ":warning: this pages the on-call engineer.",
    ):
        assert made(f"Echo a number.\n\n{kept}") == f"Echo a number.\n\n{kept}", kept
    assert made("Square a number\n===============\n\nGives x*x.") == (
        "Square a number\n===============\n\nGives x*x."
    )
