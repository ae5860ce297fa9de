"""An int of more digits than Python writes as text, in `ctx.state` or in the decisions,
is left out of a checkpoint with a warning naming its key and why; the run still pauses
with its checkpoint, and the rest of the state survives."""

from __future__ import annotations

import logging

import pytest

import hookwrap as hw
from hookwrap.stores import MemoryStore

LONG = 10**5000  # 5001 digits, past the default limit of 4300


def _model(request: hw.ModelRequest) -> hw.Message:
    if request.messages[-1].role == "user":
        return hw.Message.assistant("", [hw.ToolCall("c1", "ask", {})])
    return hw.Message.assistant("done")


def test_long_int_in_state_is_left_out_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[object] = []

    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Ask a person."""
        seen.append(ctx.state.get("kept"))
        ctx.state.set("big", LONG)
        ctx.state.set("nested", {"n": [LONG]})
        ctx.state.set("kept", 1)
        return str(hw.interrupt("go on?"))

    agent = hw.Agent(_model, tools=[ask], store=MemoryStore())
    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        paused = agent.run("x")
    assert paused.status == "interrupted"
    warnings = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert any("ctx.state['big']" in w and "5001 digits" in w for w in warnings)
    assert any("ctx.state['nested']" in w and "its item ['n'][0]" in w for w in warnings)
    done = agent.resume(paused.run_id, {"c1": "yes"})
    assert done.status == "finished"
    assert seen == [None, 1]  # the resumed call sees what was kept


def test_long_int_decision_is_left_out_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Ask a person."""
        ctx.decisions["mine"] = LONG
        return str(hw.interrupt("go on?"))

    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        paused = hw.Agent(_model, tools=[ask], store=MemoryStore()).run("x")
    assert paused.status == "interrupted"
    assert any("decision['mine']" in r.getMessage() for r in caplog.records)
