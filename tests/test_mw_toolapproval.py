"""`ToolApproval` (SPEC §8): tools other than the allowed ones interrupt the agent's run;
on resume `True` runs the call, `False` tells the model it was rejected, anything else
asks again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import ToolApproval
from hookwrap.stores import MemoryStore

deleted: list[str] = []


@hw.tool
def delete_file(name: str) -> str:
    """Delete a file."""
    deleted.append(name)
    return f"deleted {name}"


@hw.tool
def list_files() -> list[str]:
    """List the files."""
    return ["a.txt", "b.txt"]


class Model:
    """Lists the files, deletes a.txt, then says what the last tool result was."""

    def __call__(self, request: hw.ModelRequest) -> hw.Message:
        tools = [m for m in request.messages if m.role == "tool"]
        if not tools:
            return hw.Message.assistant("", [hw.ToolCall("c1", "list_files", {})])
        if len(tools) == 1:
            return hw.Message.assistant("", [hw.ToolCall("c2", "delete_file", {"name": "a.txt"})])
        return hw.Message.assistant(f"last tool said: {tools[-1].text}")


def agent(store: MemoryStore, allowed: Any = ("list_files",)) -> hw.Agent:
    return hw.Agent(
        Model(),
        tools=[list_files, delete_file],
        use=[ToolApproval(allowed_tools=allowed)],
        store=store,
    )


@pytest.fixture(autouse=True)
def clean() -> None:
    deleted.clear()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_tool_not_allowed_waits_for_approval_then_runs(is_async: bool) -> None:
    store = MemoryStore()
    first = asyncio.run(agent(store).arun("tidy")) if is_async else agent(store).run("tidy")
    assert first.status == "interrupted"
    assert first.interrupt == {
        "type": "tool_approval",
        "call_id": "c2",
        "tool": "delete_file",
        "arguments": {"name": "a.txt"},
    }
    assert deleted == []  # list_files ran without asking; delete_file did not run
    fresh = agent(store)  # another object, as another process would have
    if is_async:
        done = asyncio.run(fresh.aresume(first.run_id, {"c2": True}))
    else:
        done = fresh.resume(first.run_id, {"c2": True})
    assert done.status == "finished"
    assert deleted == ["a.txt"]
    assert done.text == "last tool said: deleted a.txt"


def test_a_rejection_is_told_to_the_model_and_the_tool_does_not_run() -> None:
    store = MemoryStore()
    first = agent(store).run("tidy")
    done = agent(store).resume(first.run_id, {"c2": False})
    assert done.status == "finished"
    assert deleted == []
    assert (
        done.text == "last tool said: The user rejected this call of delete_file; it did not run."
    )


def test_any_other_decision_asks_again() -> None:
    store = MemoryStore()
    first = agent(store).run("tidy")
    again = agent(store).resume(first.run_id, {"c2": "maybe"})
    assert again.status == "interrupted"
    assert again.interrupt["call_id"] == "c2"
    assert deleted == []
    done = agent(store).resume(again.run_id, {"c2": True})
    assert done.status == "finished"
    assert deleted == ["a.txt"]


def test_allowed_tools_may_be_given_as_tools_and_every_tool_allowed_never_asks() -> None:
    done = agent(MemoryStore(), allowed=[list_files, delete_file]).run("tidy")
    assert done.status == "finished"
    assert deleted == ["a.txt"]


def test_outside_an_agent_the_interrupt_reaches_the_caller() -> None:
    guarded = hw.tool(delete_file, use=[ToolApproval()])
    with pytest.raises(hw.Interrupt) as excinfo:
        guarded("a.txt")
    assert excinfo.value.payload["tool"] == "delete_file"
    assert deleted == []


@pytest.mark.parametrize("allowed", ["list_files", [3], None], ids=["a str", "an int", "None"])
def test_bad_allowed_tools_are_refused_when_made(allowed: Any) -> None:
    with pytest.raises(TypeError, match=r"ToolApproval\(allowed_tools=...\) expects"):
        ToolApproval(allowed_tools=allowed)


def test_an_empty_tool_name_is_a_value_error() -> None:
    """A name of the right type but no tool's: a wrong value, as other middleware say."""
    with pytest.raises(ValueError, match=r"ToolApproval\(allowed_tools=...\) got an empty"):
        ToolApproval(allowed_tools=[""])
