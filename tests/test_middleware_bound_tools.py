"""`ToolApproval(allowed_tools=...)`, `ToolCache(tools=...)` and `ToolSearch(dynamic_tools=...)`
take whatever `hw.Agent(tools=...)` takes as a tool: a tool method read from an instance
(`Bot().peek`) and a plain function too, named as the agent names them (SPEC §8)."""

from __future__ import annotations

import asyncio
import enum
import functools
import json
from typing import Any

import pytest
from tool_doubles import Script

import hookwrap as hw
from hookwrap.middleware import ToolApproval, ToolCache, ToolSearch
from hookwrap.stores import MemoryStore


class Bot:
    """Tools made of methods; `peek` is renamed, so only its tool knows the name."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.ran: list[str] = []

    @hw.tool(name="peek")
    def look(self, q: str) -> str:
        """Look something up."""
        self.ran.append(f"peek {q}")
        return f"{q}{self.tag}"

    @hw.tool
    def delete(self, q: str) -> str:
        """Delete something."""
        self.ran.append(f"delete {q}")
        return f"deleted {q}"


counted: list[str] = []


def count(q: str) -> str:
    """Count something."""
    counted.append(q)
    return f"counted {q}"


@pytest.fixture(autouse=True)
def clean() -> None:
    counted.clear()


# -- taken when made, named as the agent names them --------------------------------------------


def test_a_bound_tool_or_a_plain_function_is_named_by_its_tool() -> None:
    bot = Bot("!")
    assert ToolApproval(allowed_tools=[bot.look, count]).allowed_tools == frozenset(
        {"peek", "count"}
    )
    assert ToolCache(tools=[bot.look, count]).cached_tools == frozenset({"peek", "count"})
    search = ToolSearch(dynamic_tools=[bot.look, count])
    assert [t.name for t in search.tools] == ["tool_search", "peek", "count"]
    assert all(isinstance(t, hw.Tool) for t in search.dynamic_tools)


class Named(str, enum.Enum):
    """Tool names kept in an Enum: the class is a collection of names."""

    PEEK = "peek"
    COUNT = "count"


def test_an_enum_class_of_tool_names_is_a_collection_not_a_single_tool() -> None:
    assert ToolApproval(allowed_tools=Named).allowed_tools == frozenset({"peek", "count"})
    assert ToolCache(tools=Named).cached_tools == frozenset({"peek", "count"})
    model = Script(("count", {"q": "a"}), ("count", {"q": "a"}))
    agent = hw.Agent(model, tools=[Bot("!").look, count], use=[ToolCache(tools=Named)])
    assert agent.run("go").text == "counted a | counted a"
    assert counted == ["a"]


# -- inside an agent's run ---------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_approval_lets_an_allowed_bound_tool_run_and_asks_for_the_others(
    is_async: bool,
) -> None:
    bot, store = Bot("!"), MemoryStore()
    model = Script(("peek", {"q": "a"}), ("delete", {"q": "a"}))
    agent = hw.Agent(
        model,
        tools=[bot.look, bot.delete],
        use=[ToolApproval(allowed_tools=[bot.look])],
        store=store,
    )
    first = asyncio.run(agent.arun("go")) if is_async else agent.run("go")
    assert first.status == "interrupted"
    assert first.interrupt["tool"] == "delete"
    assert bot.ran == ["peek a"]  # peek ran without asking; delete waits
    done = agent.resume(first.run_id, {"c1": True})
    assert done.status == "finished"
    assert done.text == "a! | deleted a"
    assert bot.ran == ["peek a", "delete a"]


def test_tool_cache_names_a_bound_tool_the_agent_runs() -> None:
    """The name check at the start passes (`peek`, not the method's name `look`), and the
    tools not named go through uncached."""
    bot = Bot("!")
    model = Script(("peek", {"q": "a"}), ("count", {"q": "a"}), ("count", {"q": "a"}))
    agent = hw.Agent(model, tools=[bot.look, count], use=[ToolCache(tools=[bot.look])])
    run = agent.run("go")
    assert run.status == "finished"
    assert run.text == "a! | counted a | counted a"
    assert counted == ["a", "a"]


def test_tool_cache_caches_a_plain_function_named_as_the_agent_names_it() -> None:
    model = Script(("count", {"q": "a"}), ("count", {"q": "a"}))
    agent = hw.Agent(model, tools=[count], use=[ToolCache(tools=[count])])
    assert agent.run("go").text == "counted a | counted a"
    assert counted == ["a"]  # the second call answered from the cache


def test_tool_search_hides_a_bound_tool_until_searched_then_runs_it_on_its_instance() -> None:
    bot = Bot("?")
    model = Script(("tool_search", {"regex_pattern": "look"}), ("peek", {"q": "a"}))
    run = hw.Agent(model, use=[ToolSearch(dynamic_tools=[bot.look])]).run("go")
    assert run.status == "finished"
    assert model.offered == [["tool_search"], ["tool_search", "peek"], ["tool_search", "peek"]]
    found, peeked = (m.text for m in run.messages if m.role == "tool")
    assert json.loads(found) == {"selectedTools": ["peek"]}
    assert peeked == "a?"  # run on the instance it was read from
    assert bot.ran == ["peek a"]


# -- wrong values still say what was expected --------------------------------------------------


def test_a_name_the_agent_lacks_is_refused_with_the_tools_name() -> None:
    bot = Bot("!")
    for middleware in (ToolApproval(allowed_tools=[bot.look]), ToolCache(tools=[bot.look])):
        agent = hw.Agent(Script(), tools=[count], use=[middleware])
        with pytest.raises(ValueError, match=r"does not have: 'peek'; expected names of its"):
            agent.run("go")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            lambda v: ToolApproval(allowed_tools=v),
            "ToolApproval(allowed_tools=...) expects tool names or tools (got int: 3)",
        ),
        (
            lambda v: ToolCache(tools=v),
            "ToolCache(tools=...) expects None or a collection of tool names (str) or tools "
            "(got the item int: 3)",
        ),
        (
            lambda v: ToolSearch(dynamic_tools=v),
            "ToolSearch(dynamic_tools=...) expects a non-empty list of hw.Tool or hw.ToolSpec "
            "(got int: 3 at index 1)",
        ),
    ],
    ids=["ToolApproval", "ToolCache", "ToolSearch"],
)
def test_a_wrong_item_next_to_a_bound_tool_names_what_was_expected(make: Any, says: str) -> None:
    with pytest.raises(TypeError) as info:
        make([Bot("!").look, 3])
    assert says in str(info.value)


@pytest.mark.parametrize(
    ("make", "hint"),
    [
        (lambda v: ToolApproval(allowed_tools=v), "allowed_tools=[tool]"),
        (lambda v: ToolCache(tools=v), "tools=[tool]"),
        (lambda v: ToolSearch(dynamic_tools=v), "dynamic_tools=[tool]"),
    ],
    ids=["ToolApproval", "ToolCache", "ToolSearch"],
)
def test_a_single_bound_tool_not_in_a_list_gets_the_hint(make: Any, hint: str) -> None:
    with pytest.raises(TypeError, match=r"expects .*; put a single tool in a list") as info:
        make(Bot("!").look)
    assert hint in str(info.value)


def test_a_hook_given_as_a_tool_is_refused_as_the_agent_refuses_it() -> None:
    @hw.before_tool
    def guard(call: hw.ToolCall) -> None:
        return None

    for make in (
        lambda: ToolApproval(allowed_tools=[guard]),
        lambda: ToolCache(tools=[guard]),
        lambda: ToolSearch(dynamic_tools=[guard]),
    ):
        with pytest.raises(
            TypeError, match=r"\.\.\.\) got the before_tool hook .*: hooks go in use="
        ):
            make()


def spread(*args: int) -> int:
    """Add any number of integers."""
    return sum(args)


@pytest.mark.parametrize(
    "item", [functools.partial(count, "x"), lambda q: q, spread], ids=["partial", "lambda", "*args"]
)
@pytest.mark.parametrize(
    ("make", "says", "at"),
    [
        (lambda v: ToolApproval(allowed_tools=v), "ToolApproval(allowed_tools=...) expects", ""),
        (lambda v: ToolCache(tools=v), "ToolCache(tools=...) expects", ""),
        (
            lambda v: ToolSearch(dynamic_tools=v),
            "ToolSearch(dynamic_tools=...) expects",
            " at index 1",
        ),
    ],
    ids=["ToolApproval", "ToolCache", "ToolSearch"],
)
def test_a_function_the_agent_cannot_make_a_tool_is_refused_naming_the_argument_and_item(
    make: Any, says: str, at: str, item: Any
) -> None:
    with pytest.raises((TypeError, ValueError)) as refused:
        hw.tool(item)
    with pytest.raises(TypeError) as info:  # as the page says, whatever hw.tool raised
        make([count, item])
    message = str(info.value)
    assert message.startswith(says)
    why = f"{item!r:.80}{at}, which hw.Agent(tools=...) cannot make a tool: {refused.value})"
    assert why in message


class Plain(enum.Enum):
    """Tool names kept in a plain Enum: its values are the names."""

    PEEK = "peek"
    COUNT = "count"


@pytest.mark.parametrize("kept", [Named, Plain], ids=["str enum", "plain enum"])
def test_the_names_of_an_enum_class_are_its_values(kept: Any) -> None:
    assert ToolApproval(allowed_tools=kept).allowed_tools == frozenset({"peek", "count"})
    assert ToolCache(tools=kept).cached_tools == frozenset({"peek", "count"})
    for name in ToolApproval(allowed_tools=kept).allowed_tools:
        assert type(name) is str  # as the agent names its tools: an error shows 'peek'


def test_an_enum_member_that_is_no_name_is_refused_by_its_own_repr() -> None:
    class Numbered(enum.Enum):
        PEEK = enum.auto()

    with pytest.raises(TypeError, match=r"got Numbered: <Numbered.PEEK: 1>"):
        ToolApproval(allowed_tools=Numbered)
    with pytest.raises(TypeError, match=r"got the item Numbered: <Numbered.PEEK: 1>"):
        ToolCache(tools=Numbered)
