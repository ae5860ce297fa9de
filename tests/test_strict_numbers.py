"""Numbers in a model's tool arguments are read as JSON numbers: an integral float is an
`int` only where a float is exact (below 2**53), and NaN, Infinity and a number beyond a
float's range (which Python's JSON reader takes, though JSON has none of them) are refused
wherever a number is structured."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import attrs
import pytest

import hookwrap as hw


@dataclasses.dataclass
class Point:
    x: float
    n: int = 0


@attrs.define
class Box:
    width: float


def _tool(hint: Any) -> hw.Tool[..., str]:
    def take(a: Any) -> str:
        """Take a."""
        return repr(a)

    take.__annotations__ = {"a": hint, "return": str}
    return hw.tool(take)


def _call(hint: Any, arguments: str) -> str:
    """The tool's answer to `{"a": <arguments>}` as a model writes it (JSON text)."""
    call = hw.ToolCall(id="c1", name="take", arguments=json.loads(f'{{"a": {arguments}}}'))
    return str(_tool(hint).invoke(call))


def _refused(hint: Any, arguments: str) -> str:
    with pytest.raises(hw.ToolArgumentError) as excinfo:
        _call(hint, arguments)
    message = str(excinfo.value)
    assert message.startswith("argument 'a' of take: expected "), message
    return message


@pytest.mark.parametrize("written", ["2.0", "-2.0", "1e3", "9007199254740991.0"])
def test_an_integral_number_with_a_fraction_or_exponent_is_an_int(written: str) -> None:
    assert _call(int, written) == repr(int(float(written)))


@pytest.mark.parametrize(
    ("hint", "written"),
    [
        (int, "1e100"),
        (int, "9007199254740992.0"),
        (int, "-1e20"),
        (int | str, "1e100"),
        (int | None, "1e100"),
        (list[int], "[1, 1e100]"),
        (tuple[int, int], "[1, 1e100]"),
        (Point, '{"x": 1, "n": 1e100}'),
    ],
)
def test_an_integral_float_beyond_2_53_is_no_rounded_int(hint: Any, written: str) -> None:
    assert "an exact integer only below 2**53" in _refused(hint, written)


def test_an_int_written_in_digits_stays_exact() -> None:
    assert _call(int, "100000000000000000000001") == "100000000000000000000001"


@pytest.mark.parametrize("written", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize(
    ("hint", "template"),
    [
        (float, "{}"),
        (float | str, "{}"),
        (float | None, "{}"),
        (list[float], "[1, {}]"),
        (tuple[float, int], "[{}, 1]"),
        (dict[str, float], '{{"k": {}}}'),
        (dict[float, str], '{{"{}": "v"}}'),
        (Point, '{{"x": {}}}'),
        (Box, '{{"width": {}}}'),
        (float | Point, '{{"x": {}}}'),
    ],
)
def test_a_number_json_has_no_form_for_is_refused(hint: Any, template: str, written: str) -> None:
    assert "JSON has no NaN or Infinity" in _refused(hint, template.format(written))


@pytest.mark.parametrize("written", ["NaN", "Infinity", "1e400"])
def test_a_non_finite_number_is_no_int(written: str) -> None:
    _refused(int, written)


def test_finite_floats_are_still_read() -> None:
    assert _call(float, "1e100") == "1e+100"
    assert _call(float, "2") == "2.0"
    assert _call(dict[float, str], '{"1.5": "v"}') == "{1.5: 'v'}"


def test_the_model_is_told_through_the_agent() -> None:
    take = _tool(float)

    def model(messages: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] == "user":
            call = {"name": "take", "arguments": '{"a": NaN}'}
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": call}],
            }
        return messages[-1]["content"]

    text = hw.Agent(model, tools=[take]).run("x").text
    assert text.startswith(
        "Error: ToolArgumentError: argument 'a' of take: expected float, got NaN"
    )
