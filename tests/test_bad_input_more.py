"""Bad input refused early and by name: middleware tools, AgentSetup, hw.run, Filesystem,
FakeProvider and Abort."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Filesystem
from hookwrap.testing import FakeProvider


@hw.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def plain(city: str) -> str:
    """The weather in a city."""
    return city


def answer(request: hw.ModelRequest) -> str:
    return "ok"


def test_a_middleware_whose_tools_is_one_tool_is_refused_naming_it() -> None:
    class OneTool(hw.Middleware):
        tools = get_weather  # type: ignore[assignment]

    class OneFunction(hw.Middleware):
        tools = plain  # type: ignore[assignment]

    class OneName(hw.Middleware):
        tools = "get_weather"  # type: ignore[assignment]

    for middleware, got in [
        (OneTool(), r"got the one callable get_weather"),
        (OneFunction(), r"got the one callable plain"),
        (OneName(), r"got str: 'get_weather'"),
    ]:
        name = type(middleware).__name__
        with pytest.raises(TypeError, match=rf"Middleware {name}\.tools must be a list .*{got}"):
            hw.Agent(answer, use=[middleware])


def test_a_middleware_tools_list_is_taken_and_a_bad_item_is_named() -> None:
    class Weather(hw.Middleware):
        tools = (get_weather, plain)

    class Bad(hw.Middleware):
        tools = (get_weather, 42)

    agent = hw.Agent(answer, use=[Weather()])
    assert [t.name for t in agent.tools] == ["get_weather", "plain"]
    with pytest.raises(TypeError, match=r"Middleware Bad\.tools takes tools .* got int: 42"):
        hw.Agent(answer, use=[Bad()])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"instructions": 5}, r"AgentSetup instructions must be a str \(got int: 5\)"),
        ({"tools": get_weather}, r"AgentSetup tools must be a sequence of tools .*\(got Tool"),
        ({"tools": "get_weather"}, r"AgentSetup tools must be a sequence .*\(got str"),
        ({"tools": ["get_weather"]}, r"AgentSetup tools\[0\] must be an hw.tool function"),
    ],
)
def test_agent_setup_checks_its_fields(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        hw.AgentSetup(**changes)
    with pytest.raises(TypeError, match=message):
        hw.AgentSetup("Be brief.", [get_weather]).replace(**changes)


def test_a_bad_setup_from_before_agent_fails_in_that_hook() -> None:
    @hw.before_agent
    def shout(agent: hw.AgentSetup) -> hw.AgentSetup:
        return agent.replace(instructions=5)  # type: ignore[arg-type]

    agent = hw.Agent(answer, tools=[get_weather], use=[shout])
    with pytest.raises(TypeError, match=r"AgentSetup instructions must be a str") as info:
        agent.run("hi")
    assert any(
        note.startswith("raised by before_agent hook") and "shout" in note
        for note in getattr(info.value, "__notes__", [])
    )


def test_agent_setup_takes_tools_and_plain_functions() -> None:
    setup = hw.AgentSetup("Be brief.", [get_weather, plain])
    assert setup.tools == (get_weather, plain)
    assert hw.AgentSetup(tools=None).tools == ()


def test_run_takes_its_arguments_by_keyword_only() -> None:
    ran: list[str] = []

    @hw.on_finish
    def report(info: hw.FinishInfo) -> None:
        ran.append("on_finish")

    with pytest.raises(TypeError, match=r"positional"):
        hw.run([report])  # type: ignore[call-arg]
    with hw.run(context="acme", use=[report]) as run:
        assert run.context == "acme"
    assert ran == ["on_finish"]


def test_filesystem_refuses_an_empty_root() -> None:
    with pytest.raises(ValueError, match=r"Filesystem\(root=...\) must name a directory .*'\.'"):
        Filesystem(root="")


@pytest.mark.parametrize("replies", [b"Hello", bytearray(b"Hello"), {"Hi there": 1}])
def test_fake_provider_refuses_bytes_and_mappings(replies: Any) -> None:
    with pytest.raises(
        TypeError, match=rf"expects a list of replies \(got {type(replies).__name__}: .*a reply is"
    ):
        FakeProvider(replies)


@pytest.mark.parametrize("reason", [5, None, b"why"])
def test_abort_reason_must_be_a_str(reason: Any) -> None:
    with pytest.raises(
        TypeError, match=rf"Abort reason must be a str .*got {type(reason).__name__}"
    ):
        hw.Abort(reason)
    assert hw.Abort().reason == "aborted"
    assert hw.Abort("not allowed").reason == "not allowed"
