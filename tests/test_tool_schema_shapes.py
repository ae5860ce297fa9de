"""Tool schemas of fixed tuples and of recursive classes (SPEC §7): the JSON schema says what
the structuring then accepts, and every provider is sent it as it is."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Optional

import attrs
import pytest

import hookwrap as hw
from hookwrap._tool import schema_of
from hookwrap.testing import FakeProvider


@dataclasses.dataclass
class Node:
    value: int
    children: list[Node] = dataclasses.field(default_factory=lambda: list[Node]())


@attrs.define
class Folder:
    name: str
    files: list[File] = attrs.Factory(lambda: list[File]())


@attrs.define
class File:
    name: str
    parent: Optional[Folder] = None  # noqa: UP045 - resolved as a forward reference


def refs(schema: Any) -> Iterator[str]:
    """Every `$ref` in `schema`."""
    if isinstance(schema, dict):
        for key, value in schema.items():  # pyright: ignore[reportUnknownVariableType]
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(schema, list):
        for value in schema:  # pyright: ignore[reportUnknownVariableType]
            yield from refs(value)


def answer_with(call: hw.ToolCall) -> FakeProvider:
    """A provider that asks for `call`, then says the tool message back."""
    return FakeProvider(
        [
            hw.Message.assistant("", [call]),
            lambda r: hw.Message.assistant(r.messages[-1].text),
        ]
    )


# -- tuples ---------------------------------------------------------------------------------


def test_a_fixed_tuple_is_an_array_of_its_positions_types_and_length() -> None:
    @hw.tool
    def locate(pos: tuple[int, str], span: tuple[int, int], rest: tuple[int, ...]) -> str:
        """Locate a row."""
        return repr((pos, span, rest))

    props = locate.spec.parameters["properties"]
    assert props["pos"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        # for readers that ignore prefixItems (OpenAI refuses an array without items)
        "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "minItems": 2,
        "maxItems": 2,
    }
    assert props["span"]["prefixItems"] == [{"type": "integer"}, {"type": "integer"}]
    assert props["span"]["items"] == {"type": "integer"}
    assert props["rest"] == {"type": "array", "items": {"type": "integer"}}


def test_a_model_that_follows_a_fixed_tuple_s_schema_reaches_the_tool() -> None:
    @hw.tool
    def locate(pos: tuple[int, str]) -> str:
        """Locate a row."""
        return repr(pos)

    provider = answer_with(hw.ToolCall("c1", "locate", {"pos": [3, "x"]}))
    assert hw.Agent((provider.openai(), "gpt-4o"), tools=[locate]).run("go").text == "(3, 'x')"
    sent = provider.requests[0].body["tools"][0]["function"]["parameters"]
    assert sent == locate.spec.parameters


# -- recursive classes ----------------------------------------------------------------------


def test_a_recursive_dataclass_refers_to_itself_under_defs() -> None:
    @hw.tool
    def total(tree: Node) -> int:
        """Sum a tree.

        Args:
            tree: the root
        """
        return tree.value + sum(total(c) for c in tree.children)

    params = total.spec.parameters
    node = {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        },
        "required": ["value"],
    }
    assert params["$defs"] == {"Node": node}
    # the parameter itself is written out, so its description sits beside no `$ref`
    assert params["properties"]["tree"] == {**node, "description": "the root"}
    assert schema_of(Node) == {**node, "$defs": {"Node": node}}


def test_mutually_recursive_classes_have_every_ref_defined() -> None:
    @hw.tool
    def count(root: Folder, other: File) -> int:
        """Count files."""
        return len(root.files)

    params = count.spec.parameters
    assert set(params["$defs"]) == {"Folder", "File"}
    assert set(refs(params)) == {"#/$defs/Folder", "#/$defs/File"}
    folder = params["properties"]["root"]
    assert folder["properties"]["files"]["items"]["properties"]["parent"] == {
        "anyOf": [{"$ref": "#/$defs/Folder"}, {"type": "null"}]
    }


def test_a_recursive_argument_from_the_model_is_structured_as_usual() -> None:
    @hw.tool
    def total(tree: Node) -> int:
        """Sum a tree."""
        assert all(isinstance(c, Node) for c in tree.children)
        return tree.value + sum(total(c) for c in tree.children)

    tree = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}, {"value": 4}]}
    provider = answer_with(hw.ToolCall("c1", "total", {"tree": tree}))
    assert hw.Agent((provider.openai(), "gpt-4o"), tools=[total]).run("go").text == "10"


def test_gemini_is_sent_the_defs_and_prefix_items_as_json_schema() -> None:
    pytest.importorskip("google.genai")

    @hw.tool
    def total(tree: Node, pos: tuple[int, str]) -> int:
        """Sum a tree."""
        return tree.value

    provider = answer_with(hw.ToolCall("c1", "total", {"tree": {"value": 5}, "pos": [1, "a"]}))
    agent = hw.Agent((provider.genai(), "gemini-2.0-flash"), tools=[total])
    assert agent.run("go").text == "5"
    (declaration,) = provider.requests[0].body["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == total.spec.parameters


def test_a_class_whose_hints_cannot_be_read_is_a_type_error_naming_it() -> None:
    @dataclasses.dataclass
    class Local:
        value: int
        children: list[Local]  # a local class: not found by name from its module

    def walk(tree: Local) -> int:
        """Walk a tree."""
        return 0

    walk.__annotations__["tree"] = Local  # the function's own hint resolves
    with pytest.raises(TypeError, match=r"parameter 'tree'.*type hints of .*Local"):
        hw.tool(walk)
