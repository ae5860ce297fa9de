"""An enum whose members' values are tuples (`X = (1, 2)`): its schema lists them as JSON
arrays, and an argument the model sends as that array is the member, as a plain enum or in
a `Literal`, alone or in a union. It was refused ("expected one of [[1, 2], [3, 4]], got
[3, 4]")."""

from __future__ import annotations

import enum
import json
from typing import Literal

import pytest

import hookwrap as hw


class Size(enum.Enum):
    SMALL = (1, 2)
    LARGE = (3, 4)


@hw.tool
def pick(size: Size) -> str:
    """Pick a size."""
    return size.name


@hw.tool
def only_small(size: Literal[Size.SMALL]) -> str:
    """Only the small size."""
    return size.name


@hw.tool
def size_or_name(size: Size | str) -> str:
    """A size, or its name."""
    return size.name if isinstance(size, Size) else f"named {size}"


def _run(tool: hw.Tool[..., str], value: object) -> str:
    return tool.invoke(hw.ToolCall("c1", tool.name, {"size": value}))


def test_the_schema_lists_tuple_values_as_arrays() -> None:
    schema = json.loads(json.dumps(pick.spec.parameters))  # as it goes to the model
    assert schema["properties"]["size"] == {"enum": [[1, 2], [3, 4]]}


@pytest.mark.parametrize(
    ("tool", "value", "name"),
    [(pick, [3, 4], "LARGE"), (only_small, [1, 2], "SMALL"), (size_or_name, [1, 2], "SMALL")],
)
def test_an_array_equal_to_a_members_value_is_that_member(
    tool: hw.Tool[..., str], value: object, name: str
) -> None:
    assert _run(tool, value) == name


def test_a_union_still_reads_a_string_as_a_string() -> None:
    assert _run(size_or_name, "big") == "named big"


@pytest.mark.parametrize("value", [[1, 3], [1, 2, 3], [True, 2], "SMALL", [[1, 2]]])
def test_no_other_array_is_a_member(value: object) -> None:
    with pytest.raises(hw.ToolArgumentError, match="expected"):
        _run(pick, value)


class Shape(enum.Enum):
    POINT = ({"x": 1},)


@hw.tool
def draw(shape: Shape) -> str:
    """Draw a shape."""
    return shape.name


def test_a_bool_inside_an_object_inside_an_array_is_no_int() -> None:
    assert draw.invoke(hw.ToolCall("c1", "draw", {"shape": [{"x": 1}]})) == "POINT"
    with pytest.raises(hw.ToolArgumentError, match="expected"):
        draw.invoke(hw.ToolCall("c1", "draw", {"shape": [{"x": True}]}))
