"""A tool result that is a `str` enum, or another `str` subclass, reads as the plain str
it holds, as the SDKs send it; other enums still read as the JSON of their value."""

from __future__ import annotations

import enum
import sys
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._convert import result_text


class Status(str, enum.Enum):
    OPEN = "open"


class Level(enum.IntEnum):
    HIGH = 2


class Color(enum.Enum):
    RED = "red"


class Tag(str):
    def __str__(self) -> str:
        return f"Tag({super().__str__()})"


STR_RESULTS: list[Any] = [Status.OPEN, Tag("open")]
if sys.version_info >= (3, 11):

    class Phase(enum.StrEnum):
        OPEN = "open"

    STR_RESULTS.append(Phase.OPEN)


@pytest.mark.parametrize("value", STR_RESULTS, ids=lambda v: type(v).__name__)
def test_a_str_subclass_result_reads_as_its_plain_str(value: Any) -> None:
    @hw.tool
    def status() -> Any:
        """Ticket status."""
        return value

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "status", {})])
        return hw.Message.assistant(f"status is {request.messages[-1].text}")

    result = hw.Agent(model, tools=[status]).run("x")
    content = result.messages[2].content
    assert type(content) is str
    assert content == "open"
    assert result.text == "status is open"
    events = [e for e in hw.Agent(model, tools=[status]).stream("x") if e.kind == "tool_result"]
    assert [(type(e.text), e.text, e.value) for e in events] == [(str, "open", value)]


def test_other_enums_read_as_the_json_of_their_value() -> None:
    assert result_text(Level.HIGH) == "2"
    assert result_text(Color.RED) == '"red"'
    assert result_text([Status.OPEN]) == '["open"]'
