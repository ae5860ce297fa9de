"""A tool's schema is JSON whatever its defaults and `Literal`s hold, and a class naming
itself by a string is structured as the schema shows it."""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from typing import Literal, Optional

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


_UNSET = object()


@hw.tool
def paint(color: Literal[Color.RED, Color.BLUE] = Color.RED, coats: Literal[1, 2] = 1) -> str:
    """Paint."""
    return f"{color.value} x{coats}"


@hw.tool
def search(
    query: str,
    limit: Optional[int] = _UNSET,  # type: ignore[assignment]  # noqa: UP045
    min_score: float = float("-inf"),
    tags: tuple[str, ...] = ("a",),
) -> str:
    """Search."""
    return query


def test_enum_members_of_a_literal_are_their_values() -> None:
    color = paint.spec.parameters["properties"]["color"]
    assert color == {"enum": ["red", "blue"], "default": "red"}
    assert paint.spec.parameters["properties"]["coats"]["enum"] == [1, 2]
    assert paint.invoke(hw.ToolCall("c1", "paint", {"color": "blue", "coats": 2})) == "blue x2"


def test_a_default_with_no_json_form_is_left_out() -> None:
    properties = search.spec.parameters["properties"]
    assert "default" not in properties["limit"]  # a sentinel
    assert "default" not in properties["min_score"]  # -inf has no JSON form
    assert properties["tags"]["default"] == ["a"]  # JSON data is still shown
    json.dumps(search.spec.parameters, allow_nan=False)


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_an_agent_over_an_sdk_sends_such_schemas(sdk: str) -> None:
    provider = FakeProvider(["done"])
    client = provider.openai() if sdk == "openai" else provider.anthropic()
    result = hw.Agent((client, "m"), tools=[paint, search]).run("go")
    assert result.status == "finished"
    sent = json.dumps(provider.requests[0].body)
    assert '"enum": ["red", "blue"]' in sent
    assert "Infinity" not in sent


# Classes as a module without `from __future__ import annotations` writes them: only the
# name inside the generic is a string (`list["Node"]`), which cattrs alone does not look up.
_CLASSES = """
import dataclasses, typing
from typing import Optional
import attrs

@dataclasses.dataclass
class Node:
    name: str
    children: list["Node"] = dataclasses.field(default_factory=list)

@dataclasses.dataclass
class Person:
    name: str
    parent: Optional["Person"] = None

@attrs.define
class Tree:
    value: int
    kids: typing.List["Tree"] = attrs.Factory(list)
"""
_namespace: dict[str, typing.Any] = {"__name__": __name__}
exec(compile(_CLASSES, "<classes>", "exec", dont_inherit=True), _namespace)
Node, Person, Tree = _namespace["Node"], _namespace["Person"], _namespace["Tree"]


@hw.tool
def count(tree: Node) -> int:  # type: ignore[valid-type]
    """Count the nodes."""
    return 1 + sum(count(child) for child in tree.children)


@hw.tool
def ancestors(person: Person) -> int:  # type: ignore[valid-type]
    """Count the ancestors."""
    return 0 if person.parent is None else 1 + ancestors(person.parent)


def test_a_class_naming_itself_by_a_string_is_structured() -> None:
    assert typing.get_args(dataclasses.fields(Node)[1].type) == ("Node",)  # as stated above
    items = count.spec.parameters["properties"]["tree"]["properties"]["children"]["items"]
    assert items == {"$ref": "#/$defs/Node"}
    tree = {"name": "r", "children": [{"name": "a", "children": [{"name": "b"}]}]}
    assert count.invoke(hw.ToolCall("c1", "count", {"tree": tree})) == 3
    family = {"name": "c", "parent": {"name": "p", "parent": {"name": "g"}}}
    assert ancestors.invoke(hw.ToolCall("c2", "ancestors", {"person": family})) == 2


def test_such_a_class_is_still_structured_strictly() -> None:
    from hookwrap._strict import strict, why_not

    assert strict.structure({"value": 1, "kids": [{"value": 2}]}, Tree) == Tree(1, [Tree(2)])
    for bad, said in (
        ({"value": 1, "kids": [{"value": "x"}]}, 'expected an integer, got "x" @ t.kids[0].value'),
        ({"value": 1, "kids": [{"value": 2, "zz": 1}]}, "extra fields found (zz) @ t.kids[0]"),
    ):
        with pytest.raises(Exception) as caught:
            strict.structure(bad, Tree)
        assert why_not(caught.value, "t") == said


def test_a_bad_nested_value_goes_back_to_the_model() -> None:
    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            bad = {"tree": {"name": "r", "children": [{"name": 5}]}}
            return hw.Message.assistant("", [hw.ToolCall("c1", "count", bad)])
        return hw.Message.assistant(request.messages[-1].text)

    result = hw.Agent(model, tools=[count]).run("go")
    assert result.status == "finished"
    assert "expected a string, got 5 @ tree.children[0].name" in result.text
