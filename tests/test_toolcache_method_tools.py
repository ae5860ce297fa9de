"""`ToolCache` in an agent: a tool made of a method read from an instance goes through
uncached, as it does when called directly (its answer may depend on the instance, which
the model's call does not carry); and the name checks name such a tool as the agent does."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from typing import Any

import pytest
from tool_doubles import Script

import hookwrap as hw
from hookwrap.middleware import CallLimit, ToolCache
from hookwrap.stores import MemoryStore


class Account:
    def __init__(self, balance: int) -> None:
        self.balance = balance
        self.calls = 0

    @hw.tool
    def balance_in(self, currency: str) -> str:
        """The balance in a currency."""
        self.calls += 1
        return f"{self.balance} {currency}"

    def plain_balance(self, currency: str) -> str:
        """The balance in a currency, from a method that is no tool."""
        self.calls += 1
        return f"{self.balance} {currency}"

    @hw.tool(name="peek")
    def look(self, q: str) -> str:
        """Look something up."""
        self.calls += 1
        return f"{q} {self.balance}"


counted: list[str] = []


def count(q: str) -> str:
    """Count something."""
    counted.append(q)
    return f"counted {q}"


def ask() -> str:
    """Ask a person."""
    return str(hw.interrupt("go on?"))


@pytest.fixture(autouse=True)
def clean() -> None:
    counted.clear()


def run(agent: hw.Agent, is_async: bool) -> hw.RunResult:
    return asyncio.run(agent.arun("go")) if is_async else agent.run("go")


both = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


@both
@pytest.mark.parametrize(
    ("method", "name"),
    [
        (lambda a: a.balance_in, "balance_in"),
        (lambda a: hw.tool(a.balance_in), "balance_in"),
        (lambda a: a.plain_balance, "plain_balance"),
        (lambda a: hw.tool(a.plain_balance, name="balance"), "balance"),
    ],
    ids=["tool method", "hw.tool(tool method)", "plain method", "hw.tool(plain method)"],
)
def test_one_cache_serving_two_agents_runs_each_instances_method(
    method: Any, name: str, is_async: bool
) -> None:
    """One account's balance is not another's: the second agent's tool runs."""
    cache = ToolCache()
    alice, bob = Account(100), Account(5)
    for account in (alice, bob, alice):
        model = Script((name, {"currency": "EUR"}), (name, {"currency": "EUR"}))
        result = run(hw.Agent(model, tools=[method(account)], use=[cache]), is_async)
        assert result.text == f"{account.balance} EUR | {account.balance} EUR"
    assert (alice.calls, bob.calls) == (4, 2)


@both
def test_a_plain_function_beside_a_method_is_still_cached(is_async: bool) -> None:
    cache = ToolCache()
    alice = Account(100)
    model = Script(
        ("balance_in", {"currency": "EUR"}),
        ("count", {"q": "a"}),
        ("balance_in", {"currency": "EUR"}),
        ("count", {"q": "a"}),
    )
    result = run(hw.Agent(model, tools=[alice.balance_in, count], use=[cache]), is_async)
    assert result.text == "100 EUR | counted a | 100 EUR | counted a"
    assert alice.calls == 2
    assert counted == ["a"]


@both
def test_a_method_added_by_a_before_agent_hook_goes_uncached(is_async: bool) -> None:
    alice = Account(100)

    class AddsTool(hw.Middleware):
        @hw.before_agent
        def add(self, setup: hw.AgentSetup) -> hw.AgentSetup:
            return setup.replace(tools=(*setup.tools, alice.look))

    model = Script(("peek", {"q": "a"}), ("peek", {"q": "a"}))
    agent = hw.Agent(model, use=[AddsTool(), ToolCache()])
    assert run(agent, is_async).text == "a 100 | a 100"
    assert alice.calls == 2


@both
def test_a_resumed_run_leaves_a_method_uncached(is_async: bool) -> None:
    cache, alice, store = ToolCache(), Account(100), MemoryStore()
    model = Script(
        ("balance_in", {"currency": "EUR"}), ("ask", {}), ("balance_in", {"currency": "EUR"})
    )
    agent = hw.Agent(model, tools=[alice.balance_in, ask], use=[cache], store=store)
    first = run(agent, is_async)
    assert first.status == "interrupted"
    if is_async:
        done = asyncio.run(agent.aresume(first.run_id, {"c1": "yes"}))
    else:
        done = agent.resume(first.run_id, {"c1": "yes"})
    assert done.text == "100 EUR | yes | 100 EUR"
    assert alice.calls == 2


def test_a_method_tool_in_a_failed_run_leaves_the_state_alone() -> None:
    states: list[dict[str, Any]] = []

    class Watch(hw.Middleware):
        @hw.after_tool
        def seen(self, call: hw.ToolCall, result: Any, ctx: hw.RunContext[Any]) -> None:
            states.append(ctx.state.snapshot())

    def model(request: hw.ModelRequest) -> hw.Message:
        if any(m.role == "tool" for m in request.messages):
            raise RuntimeError("model down")
        return hw.Message.assistant("", [hw.ToolCall("c0", "balance_in", {"currency": "EUR"})])

    cache = ToolCache()
    agent = hw.Agent(model, tools=[Account(1).balance_in], use=[Watch(), cache])
    with pytest.raises(RuntimeError, match="model down"):
        agent.run("go")
    assert states == [{}]


# -- the name checks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "middleware",
    [lambda: ToolCache(tools=["peek"]), lambda: CallLimit(per_tool={"peek": 2})],
    ids=["ToolCache", "CallLimit"],
)
def test_a_renamed_tool_method_a_hook_adds_is_checked_by_its_tool_name(middleware: Any) -> None:
    alice = Account(100)

    class AddsTool(hw.Middleware):
        @hw.before_agent
        def add(self, setup: hw.AgentSetup) -> hw.AgentSetup:
            return setup.replace(tools=(*setup.tools, alice.look))

    agent = hw.Agent(Script(("peek", {"q": "a"})), use=[AddsTool(), middleware()])
    assert agent.run("go").text == "a 100"


def test_an_unknown_name_lists_a_renamed_tool_method_by_its_tool_name() -> None:
    alice = Account(100)

    class AddsTool(hw.Middleware):
        @hw.before_agent
        def add(self, setup: hw.AgentSetup) -> hw.AgentSetup:
            return setup.replace(tools=(*setup.tools, alice.look))

    agent = hw.Agent(Script(), use=[AddsTool(), ToolCache(tools=["peeek"])])
    with pytest.raises(ValueError, match=r"'peeek' \(did you mean 'peek'\?\); expected names of "):
        agent.run("go")


class Clerk:
    def __init__(self, who: str) -> None:
        self.who = who

    def plain(self, q: str) -> str:
        return q + self.who

    @hw.tool
    def look(self, q: str) -> str:
        return q + self.who


def test_a_tool_made_of_a_bound_method_goes_uncached_when_called_directly() -> None:
    """`hw.tool(instance.method, use=[cache])` called directly: each instance answers for
    itself, whichever of the method's forms the tool is made of."""
    cache = ToolCache()
    for method in ("plain", "look"):
        first = hw.tool(getattr(Clerk("A"), method), use=[cache])
        second = hw.tool(getattr(Clerk("B"), method), use=[cache])
        assert (first("x"), second("x")) == ("xA", "xB"), method


@both
@pytest.mark.parametrize(
    "make",
    [
        lambda a, cache: hw.tool(a.plain, name="look", use=[cache]),
        lambda a, cache: hw.tool(a.look, use=[cache]),
        lambda a, cache: hw.wrap(a.look, use=[cache]),
        lambda a, cache: hw.tool(functools.partial(a.plain), name="look", use=[cache]),
    ],
    ids=["bound method", "tool method", "wrapped tool method", "partial of a bound method"],
)
def test_a_tools_own_cache_in_an_agent_runs_each_instances_method(
    make: Any, is_async: bool
) -> None:
    cache = ToolCache()
    answers = [
        run(hw.Agent(Script(("look", {"q": "x"})), tools=[make(Clerk(who), cache)]), is_async)
        for who in "AB"
    ]
    assert [a.text for a in answers] == ["xA", "xB"]


@both
def test_the_agents_cache_leaves_a_partial_of_a_bound_method_uncached(is_async: bool) -> None:
    cache = ToolCache()
    answers = [
        run(
            hw.Agent(
                Script(("look", {"q": "x"})),
                tools=[hw.tool(functools.partial(Clerk(who).plain), name="look")],
                use=[cache],
            ),
            is_async,
        )
        for who in "AB"
    ]
    assert [a.text for a in answers] == ["xA", "xB"]


def test_a_direct_call_of_a_bound_method_tool_stays_uncached_off_its_context() -> None:
    """A hook that runs the rest of the call in a worker thread (no copy of the context):
    the direct call itself still says which instance it runs on."""
    pool = concurrent.futures.ThreadPoolExecutor(1)

    @hw.wrap_tool
    def in_pool(call: hw.ToolCall, call_next: Any) -> Any:
        return pool.submit(call_next, call).result()

    cache = ToolCache()
    try:
        made = [hw.tool(Clerk(who).plain, use=[in_pool, cache]) for who in "AB"]
        assert [tool("x") for tool in made] == ["xA", "xB"]
    finally:
        pool.shutdown()
