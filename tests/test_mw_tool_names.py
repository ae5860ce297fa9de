"""The built-in middleware that take tool names (SPEC §8: `CallLimit(per_tool=...)`,
`ToolCache(tools=...)`, `ToolApproval(allowed_tools=...)`) refuse, when an `hw.Agent`
starts, a name that is none of its tools: a typo would otherwise make the limit, the cache
or the approval silently never apply."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import CallLimit, ToolApproval, ToolCache, ToolSearch
from hookwrap.stores import MemoryStore
from hookwrap.testing import FakeProvider

ran: list[str] = []


@hw.tool
def search(query: str) -> str:
    """Search the web."""
    ran.append(f"search {query}")
    return f"results for {query}"


@hw.tool
def calc(expression: str) -> str:
    """Evaluate arithmetic."""
    ran.append(f"calc {expression}")
    return "4"


@hw.tool
def fetch(url: str) -> str:
    """Fetch a page."""
    ran.append(f"fetch {url}")
    return f"page {url}"


@pytest.fixture(autouse=True)
def clean() -> None:
    ran.clear()


def searches_twice() -> list[Any]:
    """The fake model's script: two identical searches, one calculation, an answer."""
    call = hw.ToolCall
    return [
        hw.Message.assistant("", [call("c1", "search", {"query": "x"})]),
        hw.Message.assistant("", [call("c2", "search", {"query": "x"})]),
        hw.Message.assistant("", [call("c3", "calc", {"expression": "2+2"})]),
        "done",
    ]


def run(agent: hw.Agent, is_async: bool) -> hw.RunResult:
    return asyncio.run(agent.arun("go")) if is_async else agent.run("go")


def agent_of(
    provider: FakeProvider, use: list[Any], is_async: bool, tools: tuple[Any, ...] = (search, calc)
) -> hw.Agent:
    client = provider.openai(is_async)
    return hw.Agent((client, "m"), tools=list(tools), use=use, store=MemoryStore())


TYPOS: dict[str, Callable[[], hw.Middleware]] = {
    "CallLimit(per_tool=...)": lambda: CallLimit(per_tool={"serch": 1}),
    "ToolCache(tools=...)": lambda: ToolCache(tools=["serch"]),
    "ToolApproval(allowed_tools=...)": lambda: ToolApproval(allowed_tools=["serch"]),
}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("argument", list(TYPOS))
def test_a_name_that_is_none_of_the_agents_tools_is_refused_as_it_starts(
    argument: str, is_async: bool
) -> None:
    provider = FakeProvider(searches_twice())
    agent = agent_of(provider, [TYPOS[argument]()], is_async)
    with pytest.raises(ValueError) as caught:
        run(agent, is_async)
    assert str(caught.value).startswith(
        f"{argument} names a tool this agent does not have: 'serch' (did you mean 'search'?); "
        "expected names of its tools: calc, search"
    )
    assert "before_agent hook" in getattr(caught.value, "__notes__", [""])[0]
    assert (provider.requests, ran) == ([], [])  # before any model or tool call


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_stream_is_refused_at_its_first_event_and_every_unknown_name_is_named(
    is_async: bool,
) -> None:
    agent = agent_of(FakeProvider(), [ToolCache(tools=["calc", "serch", "zzz"])], is_async)

    async def first() -> Any:
        return await agent.astream("go").__anext__()

    with pytest.raises(ValueError, match=r"^ToolCache\(tools=...\) names tools this agent") as e:
        asyncio.run(first()) if is_async else next(agent.stream("go"))
    assert "'serch' (did you mean 'search'?), 'zzz'; expected names of its tools: calc, search" in (
        str(e.value)
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_name_meant_works_where_the_typo_was_refused(is_async: bool) -> None:
    for typo in TYPOS.values():
        with pytest.raises(ValueError, match=r"'serch' \(did you mean 'search'\?\)"):
            run(agent_of(FakeProvider(), [typo()], is_async), is_async)

    provider = FakeProvider(searches_twice())
    limit = CallLimit(per_tool={"search": 1})
    result = run(agent_of(provider, [limit], is_async), is_async)
    assert result.status == "aborted"
    assert result.messages[-1].text.endswith("(CallLimit: per_tool['search']=1 reached)")

    ran.clear()
    provider = FakeProvider(searches_twice())
    result = run(agent_of(provider, [ToolCache(tools=[search])], is_async), is_async)
    assert (result.text, ran) == ("done", ["search x", "calc 2+2"])  # the second from the cache

    ran.clear()
    provider = FakeProvider(searches_twice())
    agent = agent_of(provider, [ToolApproval(allowed_tools=["search"])], is_async)
    result = run(agent, is_async)
    assert (result.status, result.interrupt["tool"]) == ("interrupted", "calc")
    assert ran == ["search x", "search x"]  # allowed: ran without asking


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_one_middleware_shared_by_two_agents_is_checked_against_each(is_async: bool) -> None:
    """Each agent's own tools, whichever runs first: nothing of one agent's check stays in
    the middleware for the other."""
    shared = CallLimit(per_tool={"search": 5})
    fetcher = agent_of(FakeProvider(), [shared], is_async, tools=(fetch, calc))
    for _ in range(2):
        with pytest.raises(ValueError, match=r"'search'; expected names of its tools: calc, fetch"):
            run(fetcher, is_async)
        searcher = agent_of(FakeProvider(searches_twice()), [shared], is_async)
        assert run(searcher, is_async).text == "done"
    good = agent_of(FakeProvider(), [ToolApproval(allowed_tools=["calc"])], is_async)
    assert run(good, is_async).text == "You said: go"
    # used on a tool, with no agent, nothing is checked: the cache just passes other tools by
    cache = ToolCache(tools=["serch"])
    assert hw.tool(calc, use=[cache])("1+1") == hw.tool(calc, use=[cache])("1+1") == "4"
    assert ran == ["search x", "search x", "calc 2+2"] * 2 + ["calc 1+1"] * 2
    with pytest.raises(ValueError, match=r"'serch' \(did you mean 'search'\?\)"):
        run(agent_of(FakeProvider(), [cache], is_async), is_async)


def answer(request: hw.ModelRequest) -> str:
    return "ok"


def test_every_tool_the_agent_can_run_counts_and_only_those() -> None:
    """Tools a middleware provides (`ToolSearch`'s hidden ones, named before any search) and
    those a `before_agent` hook adds, even one placed after the middleware, are known; a
    `ToolSearch` spec with no function behind it is not: the agent cannot run it."""
    search_tool = ToolSearch(dynamic_tools=[fetch, hw.ToolSpec("mail", "Send mail.")])

    @hw.before_agent(priority=-1000)
    def add_calc(setup: hw.AgentSetup) -> hw.AgentSetup:
        return setup.replace(tools=[*setup.tools, calc])

    limit = CallLimit(per_tool={"fetch": 1, "tool_search": 1, "calc": 1, "mail": 1})
    agent = hw.Agent(answer, tools=[search], use=[limit, search_tool, add_calc])
    with pytest.raises(ValueError) as caught:
        agent.run("go")
    assert str(caught.value).startswith(
        "CallLimit(per_tool=...) names a tool this agent does not have: 'mail'; expected names "
        "of its tools: calc, fetch, search, tool_search"
    )
    limit = CallLimit(per_tool={"fetch": 1, "tool_search": 1, "calc": 1})
    agent = hw.Agent(answer, tools=[search], use=[limit, search_tool, add_calc])
    assert agent.run("go").text == "ok"


def test_a_resumed_run_is_checked_again() -> None:
    store = MemoryStore()
    approval = ToolApproval(allowed_tools=["search"])
    provider = FakeProvider(searches_twice()[2:])
    paused = hw.Agent((provider.openai(), "m"), tools=[search, calc], use=[approval], store=store)
    run_id = paused.run("go").run_id
    other = hw.Agent((provider.openai(), "m"), tools=[calc], use=[approval], store=store)
    with pytest.raises(ValueError, match=r"'search'; expected names of its tools: calc \("):
        other.resume(run_id, decisions={"c3": True})
    assert paused.resume(run_id, decisions={"c3": True}).text == "done"
