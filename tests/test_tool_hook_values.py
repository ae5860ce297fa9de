"""A direct call of a tool whose `before_tool` hook rewrites the arguments (docs/hooks/
before-tool.md): JSON values the hook sets are structured into the parameter types, as a
model's are; what the caller passed and no hook touched reaches the tool as it is."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Any

import pytest

import hookwrap as hw


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Pt:
    x: int
    y: int


def _setting(**changes: Any) -> Any:
    @hw.before_tool
    def rewrite(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={**call.arguments, **changes})

    return rewrite


def test_json_values_a_hook_sets_are_structured_in_a_direct_call() -> None:
    got: list[Any] = []

    @hw.tool(use=[_setting(c="red", p={"x": 1, "y": 2}, n=3)])
    def draw(c: Color, p: Pt, n: int) -> str:
        got.append((c, p, n))
        return "ok"

    assert draw(Color.RED, Pt(0, 0), 0) == "ok"
    assert got == [(Color.RED, Pt(1, 2), 3)]


def test_json_values_a_hook_sets_are_structured_in_an_async_direct_call() -> None:
    got: list[Any] = []

    @hw.tool(use=[_setting(c="red", p={"x": 1, "y": 2})])
    async def draw(c: Color, p: Pt) -> str:
        got.append((c, p))
        return "ok"

    assert asyncio.run(draw(Color.RED, p=Pt(0, 0))) == "ok"
    assert got == [(Color.RED, Pt(1, 2))]


def test_values_the_caller_passed_keep_their_identity() -> None:
    got: list[Any] = []

    @hw.tool(use=[_setting(c="red")])
    def draw(c: Color, p: Pt, ns: list[int]) -> str:
        got.append((c, p, ns))
        return "ok"

    # not the parameter's type, but the caller's own: not structured, not copied
    p: Any = {"x": 1, "y": 2}
    ns = [1, 2]
    draw(Color.RED, p, ns=ns)
    c, p_got, ns_got = got[0]
    assert c is Color.RED
    assert p_got is p
    assert ns_got is ns


def test_a_typed_value_a_hook_sets_passes_as_is() -> None:
    point = Pt(5, 6)
    got: list[Any] = []

    @hw.tool(use=[_setting(p=point)])
    def draw(p: Pt) -> None:
        got.append(p)

    draw(Pt(0, 0))
    assert got[0] is point


def test_a_value_a_hook_sets_that_does_not_fit_is_refused() -> None:
    ran: list[Any] = []

    @hw.tool(use=[_setting(c="blue")])
    def draw(c: Color) -> None:
        ran.append(c)

    with pytest.raises(hw.ToolArgumentError) as info:
        draw(Color.RED)
    assert str(info.value).startswith(
        "argument 'c' of draw (set by a before_tool hook): expected Color, got \"blue\""
    )
    assert ran == []
