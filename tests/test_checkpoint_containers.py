"""Lists, tuples, sets and dicts of typed values in `ctx.state` and decisions survive a
checkpoint with each item of its own class, at any depth; what cannot come back is left
out with a warning naming the item."""

from __future__ import annotations

import dataclasses
import enum
import logging
from typing import Any, cast

import pytest

import hookwrap as hw
from hookwrap._convert import from_typed_form, typed_form
from hookwrap.stores import MemoryStore


@dataclasses.dataclass(frozen=True)
class Pt:
    x: int


class Col(enum.Enum):
    R = "r"


class Mode(str, enum.Enum):
    FAST = "fast"


class Level(enum.IntEnum):
    LOW = 1


VALUES: dict[str, Any] = {
    "list": [Pt(1), Pt(2)],
    "dict": {"a": Pt(3)},
    "mixed tuple": (Pt(4), Col.R, "plain", 5, None),
    "enums": [Col.R, Mode.FAST, Level.LOW],  # a str or int enum is no plain str or int
    "set": {Pt(5), Pt(6)},
    "frozenset": frozenset({Col.R, Mode.FAST}),
    "nested": {"a": [Pt(7), {"b": (Col.R, [Mode.FAST])}], "c": 1, "typed": [()]},
    "empty tuple": (),
    "tuples": [(1, 2), (3, "x")],
}


def shape(value: Any) -> Any:
    """`value` with the class of every item spelled out, to compare what `==` would not
    tell apart (`Mode.FAST == "fast"`)."""
    kind = type(cast(object, value))
    if kind in (set, frozenset):
        return (kind, frozenset(shape(v) for v in cast("set[Any]", value)))
    if kind in (list, tuple):
        return (kind, tuple(shape(v) for v in cast("list[Any]", value)))
    if kind is dict:
        return (kind, tuple((k, shape(v)) for k, v in cast("dict[str, Any]", value).items()))
    return (kind, value)


def model(request: hw.ModelRequest) -> hw.Message:
    if request.messages[-1].role == "user":
        return hw.Message.assistant("", [hw.ToolCall("c1", "ask", {})])
    return hw.Message.assistant("done")


def test_containers_of_typed_values_in_state_come_back_of_their_classes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    got: dict[str, Any] = {}

    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Set the state, ask, then read it back."""
        if not ctx.decisions:
            for key, value in VALUES.items():
                ctx.state.set(key, value)
        hw.interrupt("ok?")
        got.update((key, ctx.state.get(key, "<missing>")) for key in VALUES)
        return "ok"

    store = MemoryStore()
    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        paused = hw.Agent(model, tools=[ask], store=store).run("go")
        assert paused.status == "interrupted"
        done = hw.Agent(model, tools=[ask], store=store).resume(paused.run_id, {"c1": True})
    assert done.text == "done"
    assert caplog.records == []
    assert {k: shape(v) for k, v in got.items()} == {k: shape(v) for k, v in VALUES.items()}


def test_containers_of_typed_values_in_decisions_come_back_of_their_classes() -> None:
    got: list[Any] = []

    @hw.tool
    def ask() -> str:
        """Ask twice."""
        first = hw.interrupt("first?", key="first")
        got.append(first)
        hw.interrupt("second?", key="second")
        return "ok"

    store = MemoryStore()
    decision = {"points": [Pt(1), Pt(2)], "pair": (Pt(3), Col.R)}
    paused = hw.Agent(model, tools=[ask], store=store).run("go")
    again = hw.Agent(model, tools=[ask], store=store).resume(paused.run_id, {"first": decision})
    assert again.status == "interrupted"  # the decision for "first" is in this checkpoint
    got.clear()
    hw.Agent(model, tools=[ask], store=store).resume(again.run_id, {"second": True})
    assert [shape(v) for v in got] == [shape(decision)]


def test_items_that_cannot_come_back_are_left_out_naming_the_item(
    caplog: pytest.LogCaptureFixture,
) -> None:
    local = type("Local", (), {})
    itself: list[Any] = [Pt(1)]
    itself.append(itself)
    lost: dict[str, Any] = {
        "local item": [Pt(1), local()],
        "int keys inside": {"a": (1, {1: "x"})},
        "nan inside": (float("nan"),),
        "itself": itself,
    }

    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Set the state, ask, then read it back."""
        if not ctx.decisions:
            for key, value in lost.items():
                ctx.state.set(key, value)
        hw.interrupt("ok?")
        return repr([key for key in lost if key in ctx.state])

    store = MemoryStore()
    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        paused = hw.Agent(model, tools=[ask], store=store).run("go")
    warnings = {r.getMessage().split("'")[1]: r.getMessage() for r in caplog.records}
    assert sorted(warnings) == sorted(lost)
    assert "its item [1]: its type Local cannot be found by its name" in warnings["local item"]
    assert "its item ['a'][1]: it does not come back equal" in warnings["int keys inside"]
    assert "its item [0]: cattrs cannot make JSON data of it" in warnings["nan inside"]
    assert "its item [1]: it holds itself" in warnings["itself"]
    done = hw.Agent(model, tools=[ask], store=store).resume(paused.run_id, {"c1": True})
    assert done.messages[2].text == "[]"


def test_the_kind_names_the_item_class_once_when_the_items_share_it() -> None:
    where = f"{Pt.__module__}:Pt"
    assert typed_form([Pt(1), Pt(2)]) == ({"of": "list", "each": where}, [{"x": 1}, {"x": 2}])
    assert typed_form((Pt(1), 2)) == ({"of": "tuple", "items": [where, None]}, [{"x": 1}, 2])
    assert typed_form({"typed": True}) == (None, {"typed": True})  # JSON data, as it is


def test_a_value_kept_by_the_path_of_its_type_alone_still_comes_back() -> None:
    assert from_typed_form("builtins:tuple", [1, 2]) == (1, 2)
    assert from_typed_form(f"{Pt.__module__}:Pt", {"x": 1}) == Pt(1)
