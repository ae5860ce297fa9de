"""`hw.explain` lists hooks in the order a call runs them: an agent's model's own layers
inside the agent's model hooks, a stream's `on_chunk` hooks of every layer before any
layer's end; checked against the order a run records."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

Log = list[str]
PAGE = Path(__file__).parent.parent / "docs" / "explain.md"


def recorder(log: Log, kind: str, name: str, priority: int = 0) -> Any:
    """A fresh hook of `kind` that logs its name when it runs (a `wrap_model` one, going in)."""

    def hook(*args: Any) -> Any:
        log.append(name)
        return args[1](args[0]) if kind == "wrap_model" else None

    hook.__name__ = hook.__qualname__ = name
    return getattr(hw, kind)(priority=priority, name=name)(hook)


def hooks(log: Log, prefix: str, *kinds: str) -> list[Any]:
    return [recorder(log, kind, f"{prefix}_{kind}") for kind in kinds]


def rows(text: str) -> list[tuple[str, str, str]]:
    """`(stage, hook, notes)` of each row of an explain table."""
    lines = text.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    found: list[tuple[str, str, str]] = []
    for line in lines[2:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        found.append((cells[0], cells[2], cells[5]))
    return found


def mermaid_path(text: str) -> list[str]:
    """The labels along a Mermaid flowchart's plain arrows from `start` (one path)."""
    labels = dict(re.findall(r'^\s+(n\d+)[\[(]"([^"]*)"', text, re.MULTILINE))
    after = dict(re.findall(r"^\s+(\w+) --> (\w+)$", text, re.MULTILINE))
    path: list[str] = []
    node = "start"
    while node in after:
        node = after[node]
        path.append(labels[node].split(" (priority")[0])
    return path


def answer(request: hw.ModelRequest) -> str:
    return "done"


def test_an_agents_model_layers_run_and_show_inside_the_agents_model_hooks() -> None:
    log: Log = []
    kinds = ("on_start", "before_model", "wrap_model", "after_model")
    inner = hw.model(
        answer, use=[*hooks(log, "m1", *kinds), recorder(log, "on_finish", "m1_fin", 3)]
    )
    model = hw.model(inner, use=[*hooks(log, "m0", *kinds), recorder(log, "on_finish", "m0_fin")])
    agent = hw.Agent(model, use=[*hooks(log, "a", *kinds), recorder(log, "on_finish", "a_fin", 1)])
    agent.run("hi")
    shown = rows(hw.explain(agent))
    assert [hook for _, hook, _ in shown] == log
    notes = {hook: note for _, hook, note in shown}
    assert (notes["a_before_model"], notes["m0_wrap_model"], notes["m1_fin"]) == (
        "",
        "model, layer 0",
        "model, layer 1",
    )
    diagram = hw.explain(agent, format="mermaid")
    assert mermaid_path(diagram)[:9] == [
        "a_on_start",
        "a_before_model",
        "a_wrap_model",
        "m0_on_start",
        "m0_before_model",
        "m0_wrap_model",
        "m1_on_start",
        "m1_before_model",
        "m1_wrap_model",
    ]


def test_an_agents_model_shows_once_alone_and_a_shared_hook_where_it_runs() -> None:
    log: Log = []
    shared = recorder(log, "before_model", "shared")
    model = hw.model(answer, use=[shared])
    agent = hw.Agent(model, use=[shared, recorder(log, "before_model", "a_before")])
    agent.run("hi")
    assert log == ["a_before", "shared"]
    assert rows(hw.explain(agent)) == [
        ("before_model", "a_before", ""),
        ("before_model", "shared", "model"),
    ]


def test_a_patched_and_wrapped_client_shows_its_layers_inside_an_agents_model_hooks() -> None:
    log: Log = []
    hw.patch("openai", use=[recorder(log, "before_model", "patched")])
    try:
        client = hw.wrap(FakeProvider(["done"]).openai(), use=[recorder(log, "before_model", "w")])
        agent = hw.Agent((client, "gpt-4o"), use=[recorder(log, "before_model", "a")])
        agent.run("hi")
        assert log == ["a", "w", "patched"]
        assert rows(hw.explain(agent)) == [
            ("before_model", "a", ""),
            ("before_model", "w", "model, layer 0"),
            ("before_model", "patched", "model, layer 1"),
        ]
    finally:
        hw.unpatch("openai")


def chunk_layers(log: Log, target: Callable[..., Any]) -> Any:
    inner = hw.model(target, use=hooks(log, "i", "on_chunk", "after_model"))
    return hw.model(inner, use=hooks(log, "o", "on_chunk", "after_model"))


def test_a_stream_through_layers_shows_every_on_chunk_before_any_layers_end() -> None:
    log: Log = []

    def tokens(prompt: str) -> Iterator[str]:
        yield from ("a", "b")

    streamed = chunk_layers(log, tokens)
    assert list(streamed("x")) == ["a", "b"]
    expected = ["i_on_chunk", "o_on_chunk", "i_after_model", "o_after_model"]
    assert log == expected[:2] * 2 + expected[2:]
    assert [hook for _, hook, _ in rows(hw.explain(streamed))] == expected
    path = mermaid_path(hw.explain(streamed, format="mermaid"))
    assert path == ["model", *expected]


def test_an_async_stream_through_layers_runs_as_explained() -> None:
    log: Log = []

    async def tokens(prompt: str) -> AsyncIterator[str]:
        for token in ("a", "b"):
            yield token

    streamed = chunk_layers(log, tokens)

    async def read() -> list[str]:
        return [chunk async for chunk in streamed("x")]

    assert asyncio.run(read()) == ["a", "b"]
    expected = [hook for _, hook, _ in rows(hw.explain(streamed))]
    assert log == expected[:2] * 2 + expected[2:]


def test_an_sdk_stream_through_a_wrap_and_a_patch_runs_as_explained() -> None:
    pytest.importorskip("google.genai")
    log: Log = []
    ends = ("on_chunk", "on_usage", "after_model")
    hw.patch("google-genai", use=hooks(log, "p", *ends))
    try:
        client: Any = hw.wrap(FakeProvider(["hello there"]).genai(), use=hooks(log, "w", *ends))
        for _ in client.models.generate_content_stream(model="m", contents="x"):
            pass
        expected = ["p_on_chunk", "w_on_chunk", "p_on_usage", "p_after_model"]
        expected += ["w_on_usage", "w_after_model"]
        assert [hook for _, hook, _ in rows(hw.explain(client))] == expected
        chunks = len(log) - 4
        assert log == expected[:2] * (chunks // 2) + expected[2:]
    finally:
        hw.unpatch("google-genai")


def test_the_agents_mermaid_boxes_are_only_for_stages_with_hooks_as_the_page_says() -> None:
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "draws the model's box (`model`) only when there are model hooks" in page
    assert "box for the model and one for the tools, in that order" not in page
    only_tools = hw.Agent(answer, use=[recorder([], "before_tool", "b")])
    assert mermaid_path(hw.explain(only_tools, format="mermaid"))[-1] == "tool"
    assert '("model")' not in hw.explain(only_tools, format="mermaid")
    only_model = hw.Agent(answer, use=[recorder([], "before_model", "b")])
    assert mermaid_path(hw.explain(only_model, format="mermaid"))[-1] == "model"
    assert '("tool")' not in hw.explain(only_model, format="mermaid")


def test_a_tool_the_user_made_of_a_tool_method_is_numbered_as_its_own_explanation() -> None:
    """Only the layer the agent makes of what it was given is left out: one the user made
    (`hw.tool(Bot().look)`, no hooks of its own) counts, as `hw.explain(tool)` counts it."""

    @hw.before_tool
    def checks(call: hw.ToolCall) -> None:
        return None

    class Bot:
        @hw.tool(use=[checks])
        def look(self, q: str) -> str:
            """Look."""
            return q

    def notes(text: str) -> list[str]:  # the last column of the rows of `checks`
        rows = [re.split(r"\s{2,}", row.strip()) for row in text.splitlines()]
        return [row[5] if len(row) > 5 else "" for row in rows if "checks" in row[2]]

    for made in (hw.tool(Bot().look), hw.tool(Bot().look, name="peek")):
        own = notes(hw.explain(made))
        agents = notes(hw.explain(hw.Agent(lambda messages: "ok", tools=[made])))
        assert own == ["layer 1"]
        assert agents == [f"tool {made.name}, layer 1"]
    bare = notes(hw.explain(hw.Agent(lambda messages: "ok", tools=[Bot().look])))
    assert bare == ["tool look"]  # the agent's own layer around it: not counted
