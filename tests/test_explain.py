"""`hw.explain` (SPEC §9): a table of every stage and its hooks in execution order, with
priorities and origins, or the same as a Mermaid diagram; it agrees with what really runs."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Generator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hookwrap as hw

Log = list[str]
MODEL_STAGES = ("before_model", "wrap_model", "after_model")


class AuthGuard(hw.Middleware):
    """A named middleware: `explain` shows its name as the origin of its hooks."""

    name = "auth-guard"
    priority = 50

    def __init__(self, log: Log | None = None) -> None:
        self.log = log if log is not None else []

    @hw.before_model(name="auth_check")
    def check(self, request: hw.ModelRequest) -> None:
        self.log.append("auth_check")

    @hw.after_model(name="auth_audit")
    def audit(self, request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        self.log.append("auth_audit")


def llm(prompt: str) -> str:
    return f"echo: {prompt}"


def hook_lines(text: str, names: list[str]) -> list[tuple[str, list[str]]]:
    """`(hook name, tokens of its line)` for each table line naming one of `names`, in the
    order the lines appear."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        tokens = line.split()
        named = [n for n in names if n in tokens]
        assert len(named) <= 1, line
        if named:
            found.append((named[0], tokens))
    return found


def recorder(log: Log, kind: str, name: str, priority: int = 0) -> Callable[..., Any]:
    """A fresh hook of `kind` that logs its name when it runs."""
    if kind == "before_model":

        def before(request: hw.ModelRequest) -> None:
            log.append(name)

        return hw.before_model(priority=priority, name=name)(before)
    if kind == "after_model":

        def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            log.append(name)

        return hw.after_model(priority=priority, name=name)(after)
    assert kind == "wrap_model"

    def around(request: hw.ModelRequest) -> Generator[hw.ModelRequest, Any, None]:
        log.append(name)
        yield request

    return hw.wrap_model(priority=priority, name=name)(around)


# -- the table --------------------------------------------------------------------------------


def test_table_lists_each_stage_with_its_hooks_in_order_priority_and_origin() -> None:
    """Each hook has one line naming its stage, its priority and its origin (a Middleware's
    name); within a stage the lines follow execution order, after_* reversed."""
    log: Log = []
    first = recorder(log, "before_model", "add_system", priority=10)
    second = recorder(log, "before_model", "redact", priority=10)
    around = recorder(log, "wrap_model", "timer", priority=3)
    late = recorder(log, "after_model", "late_after", priority=-5)
    early = recorder(log, "after_model", "early_after", priority=20)

    @hw.on_finish(name="report")
    def report(info: hw.FinishInfo) -> None:
        log.append("report")

    auth = AuthGuard(log)
    wrapped = hw.model(llm, use=[first, second, around, auth, late, early, report])
    text = hw.explain(wrapped)
    assert isinstance(text, str)

    expected = [
        # (stage, hook, priority, origin); None: any origin naming where it was defined
        ("before_model", "auth_check", 50, "auth-guard"),
        ("before_model", "add_system", 10, None),
        ("before_model", "redact", 10, None),
        ("wrap_model", "timer", 3, None),
        ("after_model", "late_after", -5, None),
        ("after_model", "early_after", 20, None),
        ("after_model", "auth_audit", 50, "auth-guard"),
        ("on_finish", "report", 0, None),
    ]
    lines = hook_lines(text, [name for _, name, _, _ in expected])
    assert [name for name, _ in lines] == [name for _, name, _, _ in expected]
    for (name, tokens), (stage, _, priority, origin) in zip(lines, expected, strict=True):
        assert stage in tokens, (name, tokens)
        assert str(priority) in tokens, (name, tokens)
        if origin is not None:
            assert origin in tokens, (name, tokens)
        else:
            assert "auth-guard" not in tokens, (name, tokens)

    wrapped("hi")
    assert log == [name for _, name, _, _ in expected]  # the table is the order of a call


def test_after_hooks_are_listed_in_reverse_of_before_hooks() -> None:
    """With a before/after pair per priority, the after_* order is the mirror image."""
    log: Log = []
    use = []
    for priority in (1, 7, 3):
        use.append(recorder(log, "before_model", f"before_p{priority}", priority))
        use.append(recorder(log, "after_model", f"after_p{priority}", priority))
    text = hw.explain(hw.model(llm, use=use))
    names = [f"{kind}_p{p}" for kind in ("before", "after") for p in (1, 3, 7)]
    order = [name for name, _ in hook_lines(text, names)]
    assert order == [
        "before_p7",
        "before_p3",
        "before_p1",
        "after_p1",
        "after_p3",
        "after_p7",
    ]


def test_table_of_a_tool_lists_its_stages() -> None:
    """A Tool's table lists before_tool, wrap_tool and after_tool (reversed) hooks."""

    @hw.before_tool(name="tool_guard", priority=2)
    def guard(call: hw.ToolCall) -> None:
        return None

    @hw.before_tool(name="tool_rewrite", priority=1)
    def rewrite(call: hw.ToolCall) -> None:
        return None

    @hw.wrap_tool(name="tool_timer")
    def timer(call: hw.ToolCall) -> Generator[hw.ToolCall, Any, None]:
        yield call

    @hw.after_tool(name="tool_after_hi", priority=9)
    def after_hi(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        return None

    @hw.after_tool(name="tool_after_lo", priority=1)
    def after_lo(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        return None

    @hw.tool(use=[rewrite, after_hi, guard, timer, after_lo])
    def lookup(key: str) -> str:
        return key

    text = hw.explain(lookup)
    names = ["tool_guard", "tool_rewrite", "tool_timer", "tool_after_lo", "tool_after_hi"]
    lines = hook_lines(text, names)
    assert [name for name, _ in lines] == names
    stages = ["before_tool", "before_tool", "wrap_tool", "after_tool", "after_tool"]
    for (name, tokens), stage in zip(lines, stages, strict=True):
        assert stage in tokens, (name, tokens)


def test_explain_of_a_function_that_is_not_wrapped_is_a_type_error() -> None:
    """`hw.explain` of anything hookwrap did not wrap is a TypeError."""
    with pytest.raises(TypeError):
        hw.explain(llm)
    with pytest.raises(TypeError):
        hw.explain(object())


# -- mermaid ----------------------------------------------------------------------------------


def test_mermaid_is_a_flowchart_naming_every_hook() -> None:
    """`format="mermaid"` gives a Mermaid flowchart that names every hook."""
    log: Log = []
    names = ["m_before", "m_wrap", "m_after"]
    use: list[Any] = [
        recorder(log, "before_model", "m_before"),
        recorder(log, "wrap_model", "m_wrap"),
        recorder(log, "after_model", "m_after"),
        AuthGuard(),
    ]

    @hw.on_error(name="m_on_error")
    def on_error(info: hw.FinishInfo) -> None:
        return None

    use.append(on_error)
    text = hw.explain(hw.model(llm, use=use), format="mermaid")
    assert text.startswith("flowchart")
    for name in [*names, "auth_check", "auth_audit", "m_on_error"]:
        assert name in text, name


# -- layers -----------------------------------------------------------------------------------


def test_doubly_wrapped_target_shows_both_layers_in_the_order_they_run() -> None:
    """`hw.wrap` of a wrapped target adds the new stack outside the old one: the whole inner
    layer runs where the outer layer calls its target. The table, read top to bottom, lists
    the hooks of both layers in that order."""
    log: Log = []
    inner = hw.model(
        llm,
        use=[
            recorder(log, "before_model", "inner_before"),
            recorder(log, "wrap_model", "inner_wrap"),
            recorder(log, "after_model", "inner_after"),
        ],
    )
    outer = hw.wrap(
        inner,
        use=[
            recorder(log, "before_model", "outer_before"),
            recorder(log, "wrap_model", "outer_wrap"),
            recorder(log, "after_model", "outer_after"),
        ],
    )
    assert outer("hi") == "echo: hi"
    assert log == [
        "outer_before",
        "outer_wrap",
        "inner_before",
        "inner_wrap",
        "inner_after",
        "outer_after",
    ]
    shown = [name for name, _ in hook_lines(hw.explain(outer), list(log))]
    assert shown == log
    mermaid = hw.explain(outer, format="mermaid")
    assert mermaid.startswith("flowchart")
    path = mermaid_path(mermaid)
    assert [name for name in path if name in log] == log  # the diagram's order is the run's
    assert path.index("model") < path.index("inner_wrap returns") < path.index("inner_after")
    assert path.index("inner_after") < path.index("outer_wrap returns") < path.index("outer_after")


def mermaid_path(text: str) -> list[str]:
    """The labels of a Mermaid flowchart's nodes along its plain arrows, from `start` (a
    hook's label cut at its priority)."""
    labels = dict(re.findall(r'^\s+(n\d+)[\[(]"([^"]*)"', text, re.MULTILINE))
    after = dict(re.findall(r"^\s+(\w+) --> (\w+)$", text, re.MULTILINE))
    path: list[str] = []
    node = after.get("start")
    while node is not None:
        path.append(labels[node].split(" (priority")[0])
        node = after.get(node)
    return path


def test_mermaid_terminal_stages_branch_off_the_end() -> None:
    """One of `on_finish`, `on_error`, `on_abort` ends each run: each branches off the last
    step, rather than following another."""

    @hw.on_finish(name="t_finish")
    def finished(info: hw.FinishInfo) -> None:
        return None

    @hw.on_error(name="t_error")
    def failed(info: hw.FinishInfo) -> None:
        return None

    log: Log = []
    text = hw.explain(
        hw.model(llm, use=[recorder(log, "after_model", "t_after"), finished, failed]),
        format="mermaid",
    )
    assert mermaid_path(text)[-2:] == ["model", "t_after"]
    labels = dict(re.findall(r'^\s+(n\d+)\["([^"]*)"', text, re.MULTILINE))
    ids = {label.split(" (")[0]: node for node, label in labels.items()}
    assert f'{ids["t_after"]} -->|"finished"| {ids["t_finish"]}' in text
    assert f'{ids["t_after"]} -.->|"error"| {ids["t_error"]}' in text


def test_doubly_wrapped_target_shows_each_stage_of_both_layers() -> None:
    """Both layers' hooks appear, each once, on a line naming its stage."""
    log: Log = []
    inner = hw.model(llm, use=[recorder(log, "before_model", "in_b", priority=5)])
    outer = hw.wrap(inner, use=[recorder(log, "after_model", "out_a", priority=-2)])
    lines = dict(hook_lines(hw.explain(outer), ["in_b", "out_a"]))
    assert set(lines) == {"in_b", "out_a"}
    assert "before_model" in lines["in_b"]
    assert "5" in lines["in_b"]
    assert "after_model" in lines["out_a"]
    assert "-2" in lines["out_a"]


# -- the law: explain shows execution order ---------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(MODEL_STAGES), st.integers(min_value=-3, max_value=3)),
        min_size=1,
        max_size=8,
    )
)
def test_explained_order_is_the_execution_order(hooks: list[tuple[str, int]]) -> None:
    """For any hooks and priorities, the table lists the model stages' hooks in exactly the
    order a call runs them."""
    log: Log = []
    names = [f"h{i}_{kind}" for i, (kind, _) in enumerate(hooks)]
    use = [
        recorder(log, kind, name, priority)
        for name, (kind, priority) in zip(names, hooks, strict=True)
    ]
    wrapped = hw.model(llm, use=use)
    shown = [name for name, _ in hook_lines(hw.explain(wrapped), names)]
    wrapped("hi")
    assert shown == log


def test_explain_leaves_out_stages_the_target_never_has() -> None:
    class Both(hw.Middleware):
        @hw.before_model
        def model_side(self, request: hw.ModelRequest) -> None:
            return None

        @hw.before_tool
        def tool_side(self, call: hw.ToolCall) -> None:
            return None

        @hw.on_finish
        def done(self, info: hw.FinishInfo) -> None:
            return None

    def llm(prompt: str) -> str:
        return prompt

    def lookup(word: str) -> str:
        """Look a word up."""
        return word

    both = Both()
    for_model = hw.explain(hw.model(llm, use=[both]))
    for_tool = hw.explain(hw.tool(lookup, use=[both]))
    assert "Both.model_side" in for_model
    assert "Both.tool_side" not in for_model
    assert "Both.tool_side" in for_tool
    assert "Both.model_side" not in for_tool
    assert "Both.done" in for_model
    assert "Both.done" in for_tool
    assert "tool_side" not in hw.explain(hw.model(llm, use=[both]), format="mermaid")


@pytest.mark.parametrize("sdk", ["openai", "genai"])
def test_a_member_of_a_wrapped_client_shows_the_clients_layers_too(sdk: str) -> None:
    pytest.importorskip("openai" if sdk == "openai" else "google.genai")
    from hookwrap.testing import FakeProvider

    @hw.before_model(name="clients")
    def clients(request: hw.ModelRequest) -> None:
        return None

    @hw.after_model(name="members")
    def members(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        return None

    provider = FakeProvider()
    if sdk == "openai":
        member: Any = hw.wrap(provider.openai(), use=[clients]).chat.completions
    else:
        member = hw.wrap(provider.genai(), use=[clients]).models
    table = hw.explain(hw.wrap(member, use=[members]))
    rows = [line.split()[:3] for line in table.splitlines()[2:]]
    assert rows == [["before_model", "1", "clients"], ["after_model", "1", "members"]]


def test_a_client_of_a_patched_sdk_shows_the_patch_as_its_innermost_layer() -> None:
    """`hw.patch`'s hooks run inside those of `hw.wrap`, at the SDK's own request: the table
    lists them there, their origin naming the patch; an unwrapped client of the patched
    SDK explains as that one layer."""
    pytest.importorskip("openai")
    from hookwrap.testing import FakeProvider

    log: Log = []
    hw.patch(
        "openai",
        use=[
            recorder(log, "before_model", "patch_before"),
            recorder(log, "wrap_model", "patch_wrap"),
            recorder(log, "after_model", "patch_after"),
        ],
    )
    try:
        client = FakeProvider().openai()
        wrapped = hw.wrap(
            client,
            use=[
                recorder(log, "before_model", "wrap_before"),
                recorder(log, "after_model", "wrap_after"),
            ],
        )
        wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert log == ["wrap_before", "patch_before", "patch_wrap", "patch_after", "wrap_after"]
        lines = hook_lines(hw.explain(wrapped), log)
        assert [name for name, _ in lines] == log
        for name, tokens in lines:
            assert ("hw.patch('openai')" in tokens) == name.startswith("patch_"), tokens
        alone = [name for name, _ in hook_lines(hw.explain(client), log)]
        assert alone == ["patch_before", "patch_wrap", "patch_after"]
    finally:
        hw.unpatch("openai")
    with pytest.raises(TypeError, match="wrapped by hookwrap"):
        hw.explain(client)


def test_a_tool_method_read_from_an_instance_explains_as_read_from_its_class() -> None:
    @hw.before_tool(name="check_city")
    def check_city(call: hw.ToolCall) -> None:
        return None

    class Bot:
        @hw.tool(use=[check_city])
        def look(self, city: str) -> str:
            """Look a city up."""
            return city

    table = hw.explain(Bot().look)
    assert "check_city" in table
    assert table == hw.explain(Bot.look)
    assert hw.explain(Bot().look, format="mermaid") == hw.explain(Bot.look, format="mermaid")


def test_an_inner_layers_on_start_is_listed_where_it_runs() -> None:
    """The inner layer's run starts inside the outer layer's `wrap_model` onion: its
    `on_start` hooks come after the outer `before_model` and `wrap_model` hooks."""
    log: Log = []

    def starter(name: str) -> Any:
        def start() -> None:
            log.append(name)

        return hw.on_start(name=name)(start)

    inner = hw.model(
        llm,
        use=[
            starter("inner_start"),
            recorder(log, "before_model", "inner_before"),
            recorder(log, "wrap_model", "inner_wrap"),
            recorder(log, "after_model", "inner_after"),
        ],
    )
    outer = hw.model(
        inner,
        use=[
            starter("outer_start"),
            recorder(log, "before_model", "outer_before"),
            recorder(log, "wrap_model", "outer_wrap"),
            recorder(log, "after_model", "outer_after"),
        ],
    )
    outer("hi")
    assert log.index("outer_wrap") < log.index("inner_start")
    assert [name for name, _ in hook_lines(hw.explain(outer), log)] == log
    path = mermaid_path(hw.explain(outer, format="mermaid"))
    assert [name for name in path if name in log] == log


def mermaid_shown(label: str) -> str:
    """What Mermaid shows for a quoted node label: `#name;` and `#123;` are its entity
    codes, and the label is then read as HTML."""
    assert not set(label) & set('"<>`'), label  # markup, or the end of the label
    assert re.fullmatch(r"([^#&]|#\w+;|&\w+;)*", label), label  # `#` only in entity codes
    codes = re.sub(r"#(\w+);", lambda m: f"&#{m[1]};" if m[1].isdigit() else f"&{m[1]};", label)
    return html.unescape(codes)


@pytest.mark.parametrize(
    "written",
    [
        'q"uote',
        "lt<gt>",
        "<lambda>",
        "make.<locals>.inner_hook",
        "`tick`",
        "hash#quot;x",
        "amp&#59;semi",
        "a&lt;b",
        "br[ack]et|(p){b}",
        "<b>bold</b>",
    ],
)
def test_mermaid_labels_show_every_name_as_written(written: str) -> None:
    """A hook's name and a middleware's (its hooks' origin) show in the diagram as written,
    whatever Mermaid or HTML would read in them."""

    class Named(hw.Middleware):
        name = written

        @hw.after_model
        def seen(self, request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            return None

    hook = hw.before_model(name=written)(lambda request: None)
    text = hw.explain(hw.model(llm, use=[hook, Named()]), format="mermaid")
    labels = re.findall(r'^\s+n\d+[\[(]"(.*)"[\])]$', text, re.MULTILINE)
    shown = [mermaid_shown(label) for label in labels]
    assert len(shown) == 3, text
    assert shown[0].startswith(f"{written} (priority 0, ")
    assert shown[1] == "model"
    # the hook's default name, `...<locals>.Named.seen`, shows as written too
    assert shown[2] == f"{Named.seen.__qualname__} (priority 0, {written})"


def test_an_agent_shows_its_hooks_around_its_model_calls_then_its_tool_calls() -> None:
    @hw.before_model
    def prepare(request: hw.ModelRequest) -> None:
        return None

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        return None

    @hw.before_tool
    def guard(call: hw.ToolCall) -> None:
        return None

    @hw.after_tool
    def audit(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        return None

    @hw.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    agent = hw.Agent(lambda request: "hi", tools=[add], use=[audit, guard, look, prepare])
    stages = [line.split()[0] for line in hw.explain(agent).splitlines()[2:]]
    assert stages == ["before_model", "after_model", "before_tool", "after_tool"]
    path = mermaid_path(hw.explain(agent, format="mermaid"))
    assert [p for p in path if p in ("model", "tool")] == ["model", "tool"]
    at = {p.rpartition(".")[2]: i for i, p in enumerate(path)}
    assert at["prepare"] < at["model"] < at["look"] < at["guard"] < at["tool"] < at["audit"]


def test_an_agents_opening_stages_are_listed_in_the_order_they_run() -> None:
    """`before_agent` hooks run before `on_start` ones (docs/agent.md); the table and the
    diagram list them so."""
    ran: list[str] = []

    @hw.on_start
    def started() -> None:
        ran.append("on_start")

    @hw.before_agent
    def setup(agent: hw.AgentSetup) -> None:
        ran.append("before_agent")

    @hw.on_iteration
    def turn(info: hw.IterationInfo) -> None:
        ran.append("on_iteration")

    agent = hw.Agent(lambda request: "hi", use=[turn, started, setup])
    agent.run("x")
    stages = [line.split()[0] for line in hw.explain(agent).splitlines()[2:]]
    assert stages == ran == ["before_agent", "on_start", "on_iteration"]
    path = mermaid_path(hw.explain(agent, format="mermaid"))
    at = {p.rpartition(".")[2]: i for i, p in enumerate(path)}
    assert at["setup"] < at["started"] < at["turn"]
