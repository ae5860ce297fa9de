"""Tool values across the JSON boundary (SPEC §7): arguments a model writes for a union of
plain types are read strictly into one of its members, and a tool's result goes to the
model as JSON, a set as an array."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from typing import Any, Literal, Optional, Union

import attrs
import pytest

import hookwrap as hw


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Location:
    city: str
    country: str = "FR"


@attrs.frozen
class Window:
    start: int
    end: int = 10


def taking(annotation: Any, received: list[Any]) -> hw.Tool[..., Any]:
    """A tool `echo(x)` with `x` annotated `annotation`, keeping each `x` it is given."""

    def echo(x: Any) -> str:
        """Echo x."""
        received.append(x)
        return "ok"

    echo.__annotations__ = {"x": annotation, "return": str}
    return hw.tool(echo)


def tool_texts(tool: hw.Tool[..., Any], *arguments: dict[str, Any]) -> list[str]:
    """What the model is sent for one call of `tool` per `arguments`, in an agent run."""

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            asked = [hw.ToolCall(f"c{i}", tool.spec.name, a) for i, a in enumerate(arguments)]
            return hw.Message.assistant("", asked)
        return hw.Message.assistant("done")

    result = hw.Agent(model, tools=[tool]).run("go")
    return [m.text for m in result.messages if m.role == "tool"]


# -- unions of plain types --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (int | str, 1, 1),
        (int | str, "s", "s"),
        (str | list[str], "a", "a"),
        (str | list[str], ["a", "b"], ["a", "b"]),
        (Union[int, float], 1, 1),
        (Union[int, float], 1.5, 1.5),
        (Union[int, float], 2.0, 2.0),  # a float's own member first
        (float | int, 3, 3),  # an int's own member first, whatever the order
        (Optional[Union[int, str]], None, None),  # noqa: UP045 - the spelling under test
        (Optional[Union[int, str]], "s", "s"),  # noqa: UP045 - the spelling under test
        (int | bool, True, True),  # a bool is no int
        (int | bool, 1, 1),
        (Color | str, "red", Color.RED),  # an enum before a plain str
        (str | Color, "red", Color.RED),
        (str | Color, "blue", "blue"),
        (Level | str, 2, Level.HIGH),
        (Literal["a", "b"] | int, "a", "a"),
        (Literal["a", "b"] | int, 7, 7),
        (Location | str, {"city": "Oslo"}, Location("Oslo")),
        (Location | str, "Oslo", "Oslo"),
        (Location | Window | str, {"start": 3}, Window(3)),
        (Location | int | None, None, None),
        (dict[str, int] | list[int], {"a": 1}, {"a": 1}),
        (tuple[int, str] | str, [1, "a"], (1, "a")),
        (list[int | str], [1, "a"], [1, "a"]),
        # what cattrs read before: X | None and unions of dataclasses and attrs classes
        (Optional[Location], None, None),  # noqa: UP045 - the spelling under test
        (Optional[Location], {"city": "Oslo"}, Location("Oslo")),  # noqa: UP045 - as above
        (Location | Window, {"start": 3}, Window(3)),
    ],
)
def test_a_union_takes_a_value_one_of_its_members_takes(
    annotation: Any, value: Any, expected: Any
) -> None:
    """Each member reads the value by its own strict rules; a Literal or an enum is tried
    first, then the member whose own JSON kind the value is (`1` is an int for
    `int | float`, `2.0` a float), then the others in the union's order."""
    received: list[Any] = []
    assert tool_texts(taking(annotation, received), {"x": value}) == ["ok"]
    assert received == [expected]
    assert type(received[0]) is type(expected)


@pytest.mark.parametrize(
    ("annotation", "value", "error"),
    [
        (int | str, 1.5, "expected int | str, got 1.5"),
        (int | str, True, "expected int | str, got true"),
        (int | str, None, "expected int | str, got null"),
        (int | str, [1], "expected int | str, got [1]"),
        (Literal["a", "b"] | int, "c", "expected Union[Literal['a', 'b'], int], got \"c\""),
        (Level | str, 3, "expected Level | str, got 3 (expected one of [1, 2], got 3)"),
        (
            str | list[str],
            ["a", 1],
            'expected str | list[str], got ["a", 1] (expected a string, got 1 @ x[1])',
        ),
        (
            Location | str,
            {"city": 5},
            'expected Location | str, got {"city": 5} (expected a string, got 5 @ x.city)',
        ),
        (
            list[int | str],
            [1, 2.5],
            "expected list[int | str], got [1, 2.5] (expected int | str, got 2.5 @ x[1])",
        ),
    ],
)
def test_a_value_no_member_takes_is_an_error_naming_them(
    annotation: Any, value: Any, error: str
) -> None:
    """The model is told which types would do or, when one member alone reads the value's
    JSON kind, what inside it is wrong; the tool does not run."""
    received: list[Any] = []
    texts = tool_texts(taking(annotation, received), {"x": value})
    assert texts == [f"Error: ToolArgumentError: argument 'x' of echo: {error}"]
    assert received == []


# -- results ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Tagged:
    name: str
    tags: set[str]


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"b", "a"}, '["a", "b"]'),
        (frozenset({3, 1, 2}), "[1, 2, 3]"),
        (set[int](), "[]"),
        ({Color.RED, Color.GREEN}, '["green", "red"]'),
        ({"a": {2, 1}}, '{"a": [1, 2]}'),
        ([{"x"}], '[["x"]]'),
        (Tagged("t", {"y", "x"}), '{"name": "t", "tags": ["x", "y"]}'),
        (frozenset({Location("Oslo")}), '[{"city": "Oslo", "country": "FR"}]'),
        ({"k": 1}.keys(), '["k"]'),
    ],
)
def test_a_set_result_goes_to_the_model_as_a_json_array(result: Any, text: str) -> None:
    """Sorted when its items sort, so that the same set is the same text each time."""

    def tool() -> Any:
        """Give the result."""
        return result

    assert tool_texts(hw.tool(tool), {}) == [text]


def test_a_set_whose_items_do_not_sort_is_an_array_in_its_own_order() -> None:
    def tool() -> set[Any]:
        """Mixed."""
        return {1, "a"}

    (text,) = tool_texts(hw.tool(tool), {})
    assert sorted(json.loads(text), key=str) == [1, "a"]


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ("as it is", "as it is"),
        (7, "7"),
        (None, "null"),
        ((1, "a"), '[1, "a"]'),
        (Location("Oslo"), '{"city": "Oslo", "country": "FR"}'),
        (Window(1, 2), '{"start": 1, "end": 2}'),
        (Color.RED, '"red"'),
        (Level.HIGH, "2"),
        ({"when": datetime.date(2024, 5, 1)}, '{"when": "2024-05-01"}'),
        (datetime.datetime(2024, 5, 1, 9, 30), '"2024-05-01 09:30:00"'),
    ],
)
def test_other_results_go_as_json(result: Any, text: str) -> None:
    """A str as it is; a dataclass or attrs instance as an object, an enum as its value, a
    tuple as an array, a date (no JSON value) as its str."""

    def tool() -> Any:
        """Give the result."""
        return result

    assert tool_texts(hw.tool(tool), {}) == [text]
