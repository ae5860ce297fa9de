"""CallLimit in a resumed agent run: a call that was interrupted and runs again on resume
counts once (resume re-runs only the pending calls), while a new call over the limit is
still refused."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import CallLimit, ToolApproval
from hookwrap.stores import MemoryStore

WAYS = ("sync", "async", "stream")


def start(agent: hw.Agent, way: str, prompt: str) -> hw.RunResult:
    if way == "sync":
        return agent.run(prompt)
    if way == "async":
        return asyncio.run(agent.arun(prompt))
    result = list(agent.stream(prompt))[-1].result
    assert result is not None
    return result


def resume(agent: hw.Agent, way: str, run_id: str, decisions: dict[str, Any]) -> hw.RunResult:
    if way == "sync":
        return agent.resume(run_id, decisions)
    if way == "async":
        return asyncio.run(agent.aresume(run_id, decisions))
    result = list(agent.resume_stream(run_id, decisions))[-1].result
    assert result is not None
    return result


@hw.tool
def delete_file(name: str) -> str:
    """Delete a file, once a human said yes."""
    if hw.interrupt({"question": f"delete {name}?"}) is not True:
        return f"{name} kept"
    return f"{name} deleted"


def cleaner(request: hw.ModelRequest) -> hw.Message:
    """Deletes one file, then answers with the tool's result."""
    last = request.messages[-1]
    if last.role == "user":
        return hw.Message.assistant("", [hw.ToolCall("call_9", "delete_file", {"name": "a"})])
    return hw.Message.assistant(f"Result: {last.text}")


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("limit", [{"per_tool": {"delete_file": 1}}, {"tool_calls": 1}])
def test_an_interrupted_tool_call_counts_once_on_resume(way: str, limit: dict[str, Any]) -> None:
    agent = hw.Agent(cleaner, tools=[delete_file], use=[CallLimit(**limit)], store=MemoryStore())
    paused = start(agent, way, "Clean up.")
    assert paused.status == "interrupted"
    done = resume(agent, way, paused.run_id, {"call_9": True})
    assert (done.status, done.text) == ("finished", "Result: a deleted")


def test_a_tool_call_interrupted_twice_still_counts_once() -> None:
    agent = hw.Agent(
        cleaner, tools=[delete_file], use=[CallLimit(tool_calls=1)], store=MemoryStore()
    )
    paused = agent.run("Clean up.")
    again = agent.resume(paused.run_id)  # no decision: the call interrupts again
    assert again.status == "interrupted"
    done = agent.resume(again.run_id, {"call_9": True})
    assert (done.status, done.text) == ("finished", "Result: a deleted")


def test_a_tool_call_counts_once_after_approval_and_its_own_question() -> None:
    @hw.tool
    def transfer(amount: int, ctx: hw.RunContext[Any]) -> str:
        """Transfer money from an account a human picks."""
        account = hw.interrupt({"question": "which account?"}, key=f"acct:{ctx.call_id}")
        return f"sent {amount} from {account}"

    def payer(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "transfer", {"amount": 5})])
        return hw.Message.assistant(f"Done: {request.messages[-1].text}")

    limit = CallLimit(per_tool={"transfer": 1})
    agent = hw.Agent(payer, tools=[transfer], use=[ToolApproval(), limit], store=MemoryStore())
    approval = agent.run("pay")
    question = agent.resume(approval.run_id, {"c1": True})
    assert question.status == "interrupted"
    done = agent.resume(question.run_id, {"acct:c1": "savings"})
    assert (done.status, done.text) == ("finished", "Done: sent 5 from savings")


def test_a_new_tool_call_after_the_resume_is_still_refused() -> None:
    def greedy(request: hw.ModelRequest) -> hw.Message:
        """Asks for one more deletion every turn, each with a new id."""
        turn = len(request.messages)
        return hw.Message.assistant("", [hw.ToolCall(f"d{turn}", "delete_file", {"name": "f"})])

    agent = hw.Agent(
        greedy,
        tools=[delete_file],
        use=[CallLimit(per_tool={"delete_file": 1})],
        store=MemoryStore(),
    )
    paused = agent.run("Clean up.")
    done = agent.resume(paused.run_id, {"d1": True})
    assert done.status == "aborted"
    assert [m.text for m in done.messages if m.role == "tool"] == [
        "f deleted",
        "Error: the run was aborted before this call returned "
        "(CallLimit: per_tool['delete_file']=1 reached)",
    ]


def test_a_tool_call_id_used_again_in_a_later_turn_is_a_new_call() -> None:
    @hw.tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        return f"page {url}"

    def same_id(request: hw.ModelRequest) -> hw.Message:
        return hw.Message.assistant("", [hw.ToolCall("c1", "fetch", {"url": "x"})])

    result = hw.Agent(same_id, tools=[fetch], use=[CallLimit(tool_calls=2)]).run("go")
    assert (result.status, result.iterations) == ("aborted", 3)


@hw.before_model
def budget(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
    """Asks before every model call; the decision is keyed by the iteration."""
    hw.interrupt({"question": "spend?"}, key=f"budget{ctx.iteration}")


def answer(request: hw.ModelRequest) -> hw.Message:
    return hw.Message.assistant("answer")


@pytest.mark.parametrize("way", WAYS)
def test_a_model_call_interrupted_in_a_later_hook_counts_once_on_resume(way: str) -> None:
    agent = hw.Agent(answer, use=[CallLimit(model_calls=1), budget], store=MemoryStore())
    paused = start(agent, way, "go")
    assert paused.status == "interrupted"
    done = resume(agent, way, paused.run_id, {"budget1": True})
    assert (done.status, done.text, done.iterations) == ("finished", "answer", 1)


def test_a_model_call_interrupted_twice_still_counts_once() -> None:
    agent = hw.Agent(answer, use=[CallLimit(model_calls=1), budget], store=MemoryStore())
    paused = agent.run("go")
    again = agent.resume(paused.run_id)  # no decision: the hook interrupts again
    assert again.status == "interrupted"
    done = agent.resume(again.run_id, {"budget1": True})
    assert (done.status, done.text, done.iterations) == ("finished", "answer", 1)


def test_a_new_model_call_after_the_resume_is_still_refused() -> None:
    @hw.tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    def looping(request: hw.ModelRequest) -> hw.Message:
        turn = len(request.messages)
        return hw.Message.assistant("", [hw.ToolCall(f"n{turn}", "noop", {})])

    limit = CallLimit(model_calls=2)
    agent = hw.Agent(looping, tools=[noop], use=[limit, budget], store=MemoryStore())
    paused = agent.run("go")
    second = agent.resume(paused.run_id, {"budget1": True})
    assert second.status == "interrupted"  # the model call of iteration 2 asks too
    done = agent.resume(second.run_id, {"budget2": True})
    assert (done.status, done.iterations) == ("aborted", 2)  # the third call is refused


def test_model_calls_made_in_a_tool_still_count_each() -> None:
    limit = CallLimit(model_calls=2)

    @hw.model(use=[limit])
    def helper(prompt: str) -> str:
        return "help"

    @hw.tool
    def ask_twice() -> str:
        """Ask the helper model twice."""
        return helper("a") + helper("b")

    def asker(request: hw.ModelRequest) -> hw.Message:
        return hw.Message.assistant("", [hw.ToolCall("t1", "ask_twice", {})])

    result = hw.Agent(asker, tools=[ask_twice], use=[limit]).run("go")
    assert result.status == "aborted"
    assert result.messages[-1].text.endswith("(CallLimit: model_calls=2 reached)")


@pytest.mark.parametrize("call_id", ["call_1", ""], ids=["one id", "no id"])
def test_calls_of_one_turn_that_share_an_id_each_count(call_id: str) -> None:
    """Only a call counted before the run paused is let through uncounted on resume; calls
    a model gives one id (or none) in one turn are calls each."""
    ran: list[str] = []

    @hw.tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        ran.append(url)
        return "page " + url

    def model(request: hw.ModelRequest) -> hw.Message:
        if len(request.messages) > 2:
            return hw.Message.assistant("done")
        calls = tuple(hw.ToolCall(call_id, "fetch", {"url": u}) for u in "abc")
        return hw.Message.assistant("", calls)

    result = hw.Agent(model, tools=[fetch], use=[CallLimit(tool_calls=1)]).run("go")
    assert result.status == "aborted"
    assert ran == ["a"]
