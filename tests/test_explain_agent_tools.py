"""`hw.explain(agent)` shows the hooks a tool carries itself where they run: inside that
tool's calls, within the agent's tool hooks; checked against the order a run records."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import hookwrap as hw

Log = list[str]
PAGE = Path(__file__).parent.parent / "docs" / "explain.md"


def recorder(log: Log, kind: str, name: str, priority: int = 0) -> Callable[..., Any]:
    """A fresh hook of `kind` that logs its name when it runs (a `wrap_tool` one, going in)."""
    if kind == "before_tool":

        def before(call: hw.ToolCall) -> None:
            log.append(name)

        return hw.before_tool(priority=priority, name=name)(before)
    if kind == "after_tool":

        def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
            log.append(name)

        return hw.after_tool(priority=priority, name=name)(after)
    if kind == "wrap_tool":

        def around(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, None]:
            log.append(name)
            yield call

        return hw.wrap_tool(priority=priority, name=name)(around)
    if kind == "on_start":

        def started() -> None:
            log.append(name)

        return hw.on_start(priority=priority, name=name)(started)
    assert kind == "on_finish"

    def finished(info: hw.FinishInfo) -> None:
        log.append(name)

    return hw.on_finish(priority=priority, name=name)(finished)


def calling(*calls: tuple[str, dict[str, Any]]) -> Callable[[hw.ModelRequest], hw.Message]:
    """A model that makes these tool calls, then answers."""

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            made = [hw.ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(calls)]
            return hw.Message.assistant("", made)
        return hw.Message.assistant("done")

    return model


def table(text: str) -> list[tuple[str, str, str, str]]:
    """`(stage, step, hook, notes)` of each row of an explain table."""
    lines = text.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    rows: list[tuple[str, str, str, str]] = []
    for line in lines[2:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows.append((cells[0], cells[1], cells[2], cells[5]))
    return rows


def mermaid_paths(text: str) -> list[list[str]]:
    """Every path of a Mermaid flowchart's plain arrows from `start`: its nodes' labels (a
    hook's label cut at its priority)."""
    labels = dict(re.findall(r'^\s+(n\d+)[\[(]"([^"]*)"', text, re.MULTILINE))
    after: dict[str, list[str]] = {}
    for a, b in re.findall(r"^\s+(\w+) --> (\w+)$", text, re.MULTILINE):
        after.setdefault(a, []).append(b)

    def walk(node: str) -> list[list[str]]:
        here = [labels[node].split(" (priority")[0]] if node in labels else []
        return [here + rest for nxt in after.get(node, []) for rest in walk(nxt)] or [here]

    return walk("start")


def test_a_tools_own_hooks_run_and_show_inside_the_agents_tool_hooks() -> None:
    log: Log = []
    own = [
        recorder(log, kind, f"t_{kind}")
        for kind in ("on_start", "before_tool", "wrap_tool", "after_tool", "on_finish")
    ]

    def add(a: int, b: int) -> int:
        """Add two integers."""
        log.append("add")
        return a + b

    tool = hw.tool(add, use=own)
    agent = hw.Agent(
        calling(("add", {"a": 1, "b": 2})),
        tools=[tool],
        use=[
            recorder(log, "on_start", "a_start"),
            recorder(log, "before_tool", "a_before"),
            recorder(log, "wrap_tool", "a_wrap"),
            recorder(log, "after_tool", "a_after"),
            recorder(log, "on_finish", "a_finish", priority=5),
        ],
    )
    agent.run("1 + 2?")
    assert log == [
        "a_start",
        "a_before",
        "a_wrap",
        "t_on_start",
        "t_before_tool",
        "t_wrap_tool",
        "add",
        "t_after_tool",
        "a_after",
        "a_finish",
        "t_on_finish",
    ]
    rows = table(hw.explain(agent))
    assert [hook for _, _, hook, _ in rows] == [name for name in log if name != "add"]
    assert rows == [
        ("on_start", "1", "a_start", ""),
        ("before_tool", "1", "a_before", "calling add"),
        ("wrap_tool", "1", "a_wrap", "generator, calling add"),
        ("on_start", "2", "t_on_start", "tool add"),
        ("before_tool", "2", "t_before_tool", "tool add"),
        ("wrap_tool", "2", "t_wrap_tool", "generator, tool add"),
        ("after_tool", "1", "t_after_tool", "tool add"),
        ("after_tool", "2", "a_after", "calling add"),
        ("on_finish", "1", "a_finish", ""),
        ("on_finish", "2", "t_on_finish", "tool add"),
    ]
    [path] = mermaid_paths(hw.explain(agent, format="mermaid"))
    assert [p for p in path if p in log] == log[:-2]  # the terminal hooks branch off the end
    assert path.index("add") < path.index("t_wrap_tool returns") < path.index("t_after_tool")
    assert path.index("t_after_tool") < path.index("a_wrap returns") < path.index("a_after")


def test_each_tool_with_hooks_of_its_own_has_a_section_the_others_share_one() -> None:
    log: Log = []

    @hw.tool(use=[recorder(log, "before_tool", "add_before")])
    def add(a: int, b: int) -> int:
        """Add two integers."""
        log.append("add")
        return a + b

    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        log.append("mul")
        return a * b

    def echo(text: str) -> str:
        """Echo a text."""
        log.append("echo")
        return text

    @hw.after_agent(name="report")
    def report(result: hw.RunResult) -> None:
        log.append("report")

    class Files:
        """A tool method with a hook of its own."""

        @hw.tool(use=[recorder(log, "before_tool", "look_before")])
        def look(self, path: str) -> str:
            """Look at a file."""
            log.append("look")
            return path

    tools = [add, hw.tool(mul, use=[recorder(log, "after_tool", "mul_after")]), Files().look, echo]
    agent = hw.Agent(
        calling(
            ("add", {"a": 1, "b": 2}),
            ("mul", {"a": 2, "b": 3}),
            ("look", {"path": "a"}),
            ("echo", {"text": "x"}),
        ),
        tools=tools,
        use=[recorder(log, "before_tool", "guard"), recorder(log, "after_tool", "audit"), report],
    )
    agent.run("go")
    assert log == [
        *("guard", "add_before", "add", "audit"),
        *("guard", "mul", "mul_after", "audit"),
        *("guard", "look_before", "look", "audit"),
        *("guard", "echo", "audit"),
        "report",
    ]
    rows = table(hw.explain(agent))
    assert [(hook, notes) for _, _, hook, notes in rows] == [
        ("guard", "calling add"),
        ("add_before", "tool add"),
        ("audit", "calling add"),
        ("guard", "calling mul"),
        ("mul_after", "tool mul"),
        ("audit", "calling mul"),
        ("guard", "calling look"),
        ("look_before", "tool look"),
        ("audit", "calling look"),
        ("guard", "calling other tools"),
        ("audit", "calling other tools"),
        ("report", ""),
    ]
    assert [step for _, step, _, _ in rows[:3]] == ["1", "2", "1"]  # one call of add
    # the diagram branches to each tool's calls, and joins again for after_agent
    paths = mermaid_paths(hw.explain(agent, format="mermaid"))
    assert paths == [
        ["guard", "add_before", "add", "audit", "report"],
        ["guard", "mul", "mul_after", "audit", "report"],
        ["guard", "look_before", "look", "audit", "report"],
        ["guard", "other tools", "audit", "report"],
    ]


def test_a_hook_both_the_agent_and_its_tool_have_runs_and_shows_once_inside_the_tool() -> None:
    log: Log = []
    shared = recorder(log, "before_tool", "shared")
    finished = recorder(log, "on_finish", "finished")

    @hw.tool(use=[shared, finished, recorder(log, "after_tool", "own")])
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    agent = hw.Agent(
        calling(("add", {"a": 1, "b": 2})),
        tools=[add],
        use=[recorder(log, "before_tool", "guard"), shared, finished],
    )
    agent.run("1 + 2?")
    assert log == ["guard", "shared", "own", "finished"]
    rows = table(hw.explain(agent))
    assert [(hook, notes) for _, _, hook, notes in rows] == [
        ("guard", "calling add"),
        ("shared", "tool add"),
        ("own", "tool add"),
        ("finished", ""),
    ]


def test_a_tool_wrapped_twice_shows_its_layers_inside_the_agents_tool_hooks() -> None:
    log: Log = []

    def add(a: int, b: int) -> int:
        """Add two integers."""
        log.append("add")
        return a + b

    inner = hw.tool(add, use=[recorder(log, "before_tool", "inner")])
    outer = hw.tool(inner, use=[recorder(log, "before_tool", "outer")])
    agent = hw.Agent(
        calling(("add", {"a": 1, "b": 2})),
        tools=[outer],
        use=[recorder(log, "before_tool", "guard")],
    )
    agent.run("1 + 2?")
    assert log == ["guard", "outer", "inner", "add"]
    rows = table(hw.explain(agent))
    assert rows == [
        ("before_tool", "1", "guard", "calling add"),
        ("before_tool", "2", "outer", "tool add, layer 0"),
        ("before_tool", "3", "inner", "tool add, layer 1"),
    ]
    # the layers as the tool's own explanation numbers them
    assert "layer 0" in hw.explain(outer).splitlines()[2]


def test_an_agent_whose_tools_have_no_hooks_of_their_own_shows_its_tool_hooks_once() -> None:
    def same(a: int) -> int:
        """The same integer."""
        return a

    agent = hw.Agent(
        calling(),
        tools=[same],
        use=[recorder([], "before_tool", "guard")],
    )
    assert table(hw.explain(agent)) == [("before_tool", "1", "guard", "")]
    assert mermaid_paths(hw.explain(agent, format="mermaid")) == [["guard", "tool"]]


def test_the_pages_example_of_a_tools_own_hooks_prints_what_it_shows() -> None:
    page = PAGE.read_text(encoding="utf-8")
    section = page[page.index("### A tool's own hooks") :]
    program = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert program is not None
    assert shown is not None

    def my_llm(request: hw.ModelRequest) -> hw.Message:
        return hw.Message.assistant("done")

    out = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "app", "my_llm": my_llm}
    with contextlib.redirect_stdout(out):
        exec(compile(program[1], "app.py", "exec"), namespace)
    assert out.getvalue() == shown[1]


def test_a_tools_layers_are_numbered_as_its_own_explanation_numbers_them() -> None:
    def numbers(text: str) -> list[tuple[str, str]]:
        """`(hook, layer N)` of each row noting a layer."""
        rows = table(text)
        return [(hook, m[0]) for _, _, hook, notes in rows if (m := re.search(r"layer \d+", notes))]

    guard = recorder([], "before_tool", "guard")
    check = recorder([], "before_tool", "check")

    @hw.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    class Bot:
        @hw.tool(use=[recorder([], "before_tool", "look_own")])
        def look(self, q: str) -> str:
            """Look something up."""
            return q

    def echo(text: str) -> str:
        """Echo a text."""
        return text

    checked = hw.tool(add, use=[check])  # around a layer without hooks
    three = hw.tool(hw.tool(hw.tool(echo, use=[check])), use=[guard])
    looked = hw.tool(Bot().look, use=[guard], name="looked")  # a tool method, wrapped again
    for tool, expected in [
        (checked, [("check", "layer 0")]),
        (three, [("guard", "layer 0"), ("check", "layer 2")]),
        (looked, [("guard", "layer 0"), ("look_own", "layer 1")]),
        (Bot().look, []),
    ]:
        assert numbers(hw.explain(tool)) == expected
        agent = hw.Agent(calling(), tools=[tool])
        assert numbers(hw.explain(agent)) == expected
