"""An agent with tools, hooks, streaming and a human approval: the run pauses at a
dangerous tool call, is saved in a store, and a second agent object resumes it with the
decision. Runs offline against hookwrap's fake OpenAI provider.

Run: python examples/agent.py
"""

from __future__ import annotations

import hookwrap as hw
from hookwrap.stores import MemoryStore
from hookwrap.testing import FakeProvider

FILES = {"notes.txt": "buy milk", "draft.txt": "old draft"}


@hw.tool
def list_files() -> list[str]:
    """The files in the workspace."""
    return sorted(FILES)


@hw.tool
def delete_file(name: str) -> str:
    """Delete a file; a human must approve it.

    Args:
        name: the file to delete
    """
    if hw.interrupt({"question": f"delete {name}?"}) is not True:
        return f"{name} was kept: the user said no"
    del FILES[name]
    return f"{name} deleted"


@hw.on_iteration
def turn(info: hw.IterationInfo) -> None:
    print(f"[turn {info.iteration}] {len(info.messages)} messages so far")


@hw.before_tool
def show_call(call: hw.ToolCall) -> None:
    print(f"[tool] {call.name}({dict(call.arguments)})")


@hw.after_agent
def summary(result: hw.RunResult) -> None:
    print(f"[after_agent] status={result.status} iterations={result.iterations}")


def main() -> None:
    provider = FakeProvider(
        [
            hw.Message.assistant("", [hw.ToolCall("call_1", "list_files", {})]),
            hw.Message.assistant("", [hw.ToolCall("call_2", "delete_file", {"name": "draft.txt"})]),
            "Done: draft.txt is gone, notes.txt is left.",
        ]
    )
    client = provider.openai()
    store = MemoryStore()  # a SQLiteStore or RedisStore would carry it across processes
    hooks = [turn, show_call, summary]

    agent = hw.Agent(
        (client, "gpt-4o"),
        tools=[list_files, delete_file],
        instructions="You tidy up the workspace.",
        use=hooks,
        store=store,
    )
    paused = agent.run("Remove the old draft.")
    print(f"paused: {paused.status}, asking {paused.interrupt}")

    # Later, maybe in another process: the same store, a new agent object.
    again = hw.Agent((client, "gpt-4o"), tools=[list_files, delete_file], use=hooks, store=store)
    last_call = paused.messages[-1].tool_calls[0]
    done = again.resume(paused.run_id, decisions={last_call.id: True})
    print(f"answer: {done.text}")
    print(f"files left: {sorted(FILES)}")
    print(f"tokens used: {done.usage.total_tokens}")

    provider.replies.append("Nothing else to tidy.")
    pieces = [e.text for e in agent.stream("Anything else?") if e.kind == "chunk"]
    print(f"streamed in {len(pieces)} chunks: {''.join(pieces)}")


if __name__ == "__main__":
    main()
