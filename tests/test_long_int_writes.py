"""Ordinary store writes pay nothing for long-int checks; a long int in a tool call's
arguments is written out in a checkpoint and in a Telemetry span, as a tool result is;
a tool result whose `repr` raises anything still reaches the model as a text."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap._convert import result_text
from hookwrap.stores import MemoryStore, _base

LONG = 10**5000  # 5001 digits, past the default limit of 4300


def test_ordinary_ints_are_not_checked_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[int] = []

    def counting(number: int) -> bool:
        checked.append(number)
        return False

    monkeypatch.setattr(_base, "int_too_long", counting)
    _base.dump("k", {"rows": [[i, i * 2] for i in range(50)]})
    assert checked == []


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_result_whose_repr_raises_reaches_the_model() -> None:
    assert result_text(_BadRepr()).startswith("<_BadRepr instance at 0x")

    @hw.tool
    def t() -> object:
        """A result with no text."""
        return _BadRepr()

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "t", {})])
        return hw.Message.assistant("got: " + request.messages[-1].text)

    result = hw.Agent(model, tools=[t]).run("x")
    assert result.status == "finished"
    assert result.text.startswith("got: <_BadRepr instance at 0x")


def test_long_int_in_paused_call_arguments_is_checkpointed() -> None:
    seen: list[object] = []

    @hw.tool
    def ask(n: list[Any]) -> str:
        """Ask a person."""
        seen.append(n)
        return str(hw.interrupt("go on?"))

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "ask", {"n": [LONG]})])
        return hw.Message.assistant("done")

    store = MemoryStore()
    agent = hw.Agent(model, tools=[ask], store=store)
    paused = agent.run("x")
    assert paused.status == "interrupted"
    done = agent.resume(paused.run_id, {"c1": "yes"})
    assert done.status == "finished"
    assert seen[-1] == ["1" + "0" * 5000]  # kept as the text of its digits


def test_telemetry_records_a_tool_span_for_long_int_arguments() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hookwrap.middleware import Telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @hw.tool(use=[Telemetry(tracer_provider=provider, record_content=True)])
    def t(n: int) -> int:
        """Take a number."""
        return n % 7

    assert t(LONG) == LONG % 7
    spans = exporter.get_finished_spans()
    assert len(spans) == 1
    attributes = spans[0].attributes or {}
    assert attributes["gen_ai.tool.call.arguments"] == '{"n": 1' + "0" * 5000 + "}"
