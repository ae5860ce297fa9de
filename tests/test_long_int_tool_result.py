"""A tool result holding an int of more digits than Python's `str` writes (over
`sys.get_int_max_str_digits()`) reaches the model as its digits, without changing that
limit, and never ends the run; Telemetry records it the same way."""

from __future__ import annotations

import dataclasses
import decimal
import math
import sys
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._convert import result_text

LONG = 10**5000  # 5001 digits, past the default limit of 4300


@dataclasses.dataclass
class Holder:
    n: int


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (LONG, "1" + "0" * 5000),
        (-LONG, "-1" + "0" * 5000),
        ({"n": LONG, "m": [1, LONG]}, '{"n": 1' + "0" * 5000 + ', "m": [1, 1' + "0" * 5000 + "]}"),
        ((LONG, "a"), "[1" + "0" * 5000 + ', "a"]'),
        ({LONG}, "[1" + "0" * 5000 + "]"),
        ({LONG: 1}, '{"1' + "0" * 5000 + '": 1}'),
        (Holder(LONG), '{"n": 1' + "0" * 5000 + "}"),
    ],
    ids=["int", "negative", "nested", "tuple", "set", "dict key", "dataclass"],
)
def test_long_int_is_written_out(value: Any, text: str) -> None:
    limit = sys.get_int_max_str_digits()
    assert result_text(value) == text
    assert sys.get_int_max_str_digits() == limit  # the process-wide limit is left as it is


def test_text_like_the_marker_is_left_alone() -> None:
    assert (
        result_text({"s": "\x00x:0", "n": LONG}) == '{"s": "\\u0000x:0", "n": 1' + "0" * 5000 + "}"
    )


def test_int_too_long_to_write_out_is_named_by_its_size() -> None:
    assert result_text(10**60000) == "<an int of 60001 digits>"
    assert result_text([-(10**60000)]) == "[<a negative int of 60001 digits>]"


def test_result_whose_repr_raises_still_gives_a_text() -> None:
    text = result_text([math.nan, LONG])  # no JSON data, and its repr raises
    assert text.startswith("<list instance at 0x")


def test_agent_run_with_a_long_int_result_finishes() -> None:
    seen: list[str] = []

    @hw.tool
    def factorial(n: int) -> int:
        """n!"""
        return math.factorial(n)

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "factorial", {"n": 2000})])
        seen.append(request.messages[-1].text)
        return hw.Message.assistant("ok")

    result = hw.Agent(model, tools=[factorial]).run("2000!?")
    assert result.status == "finished"
    # Decimal writes an int's digits whatever the limit
    assert seen == [str(decimal.Decimal(math.factorial(2000)))]


def test_telemetry_records_a_long_int_result() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hookwrap.middleware import Telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @hw.tool(use=[Telemetry(tracer_provider=provider, record_content=True)])
    def big() -> int:
        """A big number."""
        return LONG

    assert big() == LONG
    attributes = exporter.get_finished_spans()[-1].attributes
    assert attributes is not None
    assert attributes["gen_ai.tool.call.result"] == "1" + "0" * 5000
