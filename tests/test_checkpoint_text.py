"""A checkpoint keeps whatever text a run holds: a `str` with a lone surrogate (a file name
decoded with `surrogateescape`) and a `str` subclass (a `str` enum) in the history, which
the stores, keeping exactly the JSON types, would refuse as they are."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.stores import MemoryStore, SQLiteStore, Store

NAME = b"caf\xe9.txt".decode("utf-8", "surrogateescape")  # 'caf\udce9.txt'


class Mode(str, enum.Enum):
    FAST = "fast"


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "memory":
        return MemoryStore()
    return SQLiteStore(tmp_path / "checkpoints.sqlite3")


def asks_then_answers(seen: list[hw.Message], answer: Any, arguments: dict[str, Any]) -> Any:
    """A model function: `answer` with a call of `ask`, then "done" once tools answered,
    keeping the messages it was then sent in `seen`."""

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant(answer, [hw.ToolCall("c1", "ask", arguments)])
        seen.extend(request.messages)
        return hw.Message.assistant("done")

    return model


def test_a_lone_surrogate_in_state_and_tool_results_interrupts_and_resumes_as_it_was(
    store: Store,
) -> None:
    seen: list[Any] = []

    @hw.tool
    def listing() -> list[str]:
        """Files."""
        return ["a.txt", NAME]

    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Ask."""
        if not ctx.decisions:
            ctx.state.set("name", NAME)
        hw.interrupt("ok?")
        seen.append(ctx.state.get("name"))
        return "ok"

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            calls = [hw.ToolCall("c0", "listing", {}), hw.ToolCall("c1", "ask", {})]
            return hw.Message.assistant(NAME, calls)
        seen.append([m.content for m in request.messages])
        return hw.Message.assistant("done")

    paused = hw.Agent(model, tools=[listing, ask], store=store).run(NAME)
    assert paused.status == "interrupted"
    done = hw.Agent(model, tools=[listing, ask], store=store).resume(paused.run_id, {"c1": True})
    assert done.status == "finished"
    assert seen[0] == NAME
    assert seen[1][:2] == [NAME, NAME]  # the input and the model's text
    assert NAME in seen[1][2]  # the listing's result


@pytest.mark.parametrize(
    ("input", "answer", "arguments"),
    [
        (Mode.FAST, "", {}),  # the input
        ("go", Mode.FAST, {}),  # the model's text
        ("go", "", {"m": Mode.FAST}),  # a call's argument
    ],
)
def test_a_str_enum_in_the_history_is_kept_as_its_text(
    store: Store, input: Any, answer: Any, arguments: dict[str, Any]
) -> None:
    @hw.tool
    def ask(m: str = "") -> str:
        """Ask."""
        hw.interrupt("ok?")
        return "ok"

    seen: list[hw.Message] = []
    model = asks_then_answers(seen, answer, arguments)
    paused = hw.Agent(model, tools=[ask], store=store).run(input)
    assert paused.status == "interrupted"
    done = hw.Agent(model, tools=[ask], store=store).resume(paused.run_id, {"c1": True})
    assert done.status == "finished"
    user, assistant, _ = seen
    assert (user.content, assistant.content) == (str.__str__(input), str.__str__(answer))
    assert type(user.content) is str
    assert type(assistant.content) is str
    assert assistant.tool_calls[0].arguments == dict.fromkeys(arguments, "fast")
