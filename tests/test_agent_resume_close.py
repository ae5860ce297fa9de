"""A resumed run left early (SPEC §7): a stream closed or cancelled before its result ends
the run as aborted ("closed by consumer"), and an aborted resumed run deletes its
checkpoint, so a later resume cannot run its tool calls a second time. A run that paused
again keeps the new checkpoint it saved."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.stores import MemoryStore


@pytest.fixture(params=[False, True], ids=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    flag: bool = request.param
    return flag


class Cleaner:
    """An agent whose one tool deletes a file once a human said yes, recording each
    deletion, and its `on_abort` reasons."""

    def __init__(self, *use: Any) -> None:
        self.deleted: list[str] = []
        self.reasons: list[str | None] = []

        @hw.tool
        def delete_file(name: str) -> str:
            """Delete a file, once a human said yes."""
            if hw.interrupt({"question": f"delete {name}?"}) is not True:
                return f"{name} kept"
            self.deleted.append(name)
            return f"{name} deleted"

        @hw.on_abort
        def aborted(info: hw.FinishInfo) -> None:
            self.reasons.append(info.reason)

        self.store = MemoryStore()
        self.agent = hw.Agent(
            self.model, tools=[delete_file], store=self.store, use=[aborted, *use]
        )

    def model(self, request: hw.ModelRequest) -> hw.Message:
        last = request.messages[-1]
        if last.role == "user":
            return hw.Message.assistant("", [hw.ToolCall("call_9", "delete_file", {"name": "a"})])
        return hw.Message.assistant(f"Result: {last.text}")

    def checkpoint(self, run_id: str) -> Any:
        return self.store.get(f"hookwrap:agent:{run_id}")


def leave_at(
    cleaner: Cleaner, run_id: str, decisions: dict[str, Any] | None, kind: str, is_async: bool
) -> list[str]:
    """Resume as a stream and close it at the first event of `kind`; the kinds seen."""
    seen: list[str] = []
    if not is_async:
        stream = cleaner.agent.resume_stream(run_id, decisions)
        for event in stream:
            seen.append(event.kind)
            if event.kind == kind:
                break
        stream.close()
        return seen

    async def main() -> None:
        stream = cleaner.agent.aresume_stream(run_id, decisions)
        async for event in stream:
            seen.append(event.kind)
            if event.kind == kind:
                break
        await stream.aclose()

    asyncio.run(main())
    return seen


def test_a_resumed_stream_left_after_its_tool_ran_deletes_its_checkpoint(is_async: bool) -> None:
    cleaner = Cleaner()
    paused = cleaner.agent.run("Clean up.")
    assert cleaner.checkpoint(paused.run_id) is not None

    seen = leave_at(cleaner, paused.run_id, {"call_9": True}, "tool_result", is_async)

    assert seen == ["tool_call", "tool_result"]
    assert cleaner.deleted == ["a"]
    assert cleaner.reasons == ["closed by consumer"]
    assert cleaner.checkpoint(paused.run_id) is None
    with pytest.raises(LookupError, match="no checkpoint of an interrupted run"):
        cleaner.agent.resume(paused.run_id, {"call_9": True})
    assert cleaner.deleted == ["a"]  # not deleted twice


def test_a_resumed_stream_left_before_its_tool_ran_deletes_its_checkpoint(is_async: bool) -> None:
    cleaner = Cleaner()
    paused = cleaner.agent.run("Clean up.")

    seen = leave_at(cleaner, paused.run_id, {"call_9": True}, "tool_call", is_async)

    assert seen == ["tool_call"]
    assert cleaner.reasons == ["closed by consumer"]
    assert cleaner.checkpoint(paused.run_id) is None  # aborted: as at any abort


@pytest.mark.parametrize("streaming", [True, False], ids=["aresume_stream", "aresume"])
def test_a_cancelled_resumed_run_deletes_its_checkpoint(streaming: bool) -> None:
    started = asyncio.Event()

    @hw.on_iteration
    async def slow(info: hw.IterationInfo) -> None:
        if info.iteration == 2:  # the tool has run
            started.set()
            await asyncio.sleep(10)

    cleaner = Cleaner(slow)
    paused = asyncio.run(cleaner.agent.arun("Clean up."))

    async def consume() -> None:
        if not streaming:
            await cleaner.agent.aresume(paused.run_id, {"call_9": True})
            return
        async for _ in cleaner.agent.aresume_stream(paused.run_id, {"call_9": True}):
            pass

    async def main() -> None:
        task = asyncio.create_task(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleaner.deleted == ["a"]
    assert cleaner.reasons == ["closed by consumer" if streaming else "cancelled"]
    assert cleaner.checkpoint(paused.run_id) is None


def test_a_resumed_stream_left_after_it_paused_again_keeps_the_new_checkpoint(
    is_async: bool,
) -> None:
    @hw.on_iteration
    def budget(info: hw.IterationInfo) -> None:
        if info.iteration == 2:
            hw.interrupt("spend more?", key="budget")

    cleaner = Cleaner(budget)
    paused = cleaner.agent.run("Clean up.")

    seen = leave_at(cleaner, paused.run_id, {"call_9": True}, "interrupt", is_async)

    assert seen == ["tool_call", "tool_result", "interrupt"]
    assert cleaner.reasons == ["closed by consumer"]
    saved = cleaner.checkpoint(paused.run_id)
    assert saved is not None
    assert saved["payload"] == "spend more?"
    done = cleaner.agent.resume(paused.run_id, {"budget": True})
    assert (done.status, done.text) == ("finished", "Result: a deleted")
    assert cleaner.deleted == ["a"]  # the call ran once: its result was in the new checkpoint
    assert cleaner.checkpoint(paused.run_id) is None
