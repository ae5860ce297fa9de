"""What wrapping keeps of a target beyond calls: pickling by reference and copying as a
function allows, methods of tools and of middleware as Python binds them."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import ToolCache
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]
seen: list[Any] = []


@hw.before_model
def note(request: hw.ModelRequest) -> None:
    seen.append(request.messages[-1].text)


@hw.model(use=[note])
def chat(messages: list[dict[str, str]]) -> str:
    return "ok"


@hw.tool(use=[hw.before_tool(lambda call: None)])
def lookup(city: str) -> str:
    """Look a city up."""
    return city.upper()


def test_a_module_level_wrapped_function_pickles_by_reference() -> None:
    for wrapped in (chat, lookup):
        assert pickle.loads(pickle.dumps(wrapped)) is wrapped
    assert chat(USER) == "ok"


def test_a_proxy_its_module_does_not_hold_says_why_it_cannot_be_pickled() -> None:
    elsewhere = hw.model(chat.__wrapped__, use=[note])
    with pytest.raises(TypeError, match=r"cannot be pickled: .*is not this proxy"):
        pickle.dumps(elsewhere)


def test_copying_a_wrapped_function_gives_it_back_as_for_a_function() -> None:
    assert copy.copy(chat) is chat
    assert copy.deepcopy({"model": chat})["model"] is chat


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "google.genai"])
def test_a_copy_of_a_wrapped_client_is_a_client_with_the_same_hooks(sdk: str) -> None:
    module = pytest.importorskip(sdk)
    seen.clear()
    provider = FakeProvider(["ok"])
    if sdk == "google.genai":
        wrapped = hw.wrap(provider.genai(), use=[note])
        twin = copy.copy(wrapped)
        assert isinstance(twin, module.Client)
        twin.models.generate_content(model="m", contents="hi")
    else:
        wrapped = hw.wrap(getattr(provider, sdk)(), use=[note])
        twin = copy.copy(wrapped)
        assert isinstance(twin, module.OpenAI if sdk == "openai" else module.Anthropic)
        if sdk == "openai":
            twin.chat.completions.create(model="m", messages=USER)
        else:
            twin.messages.create(model="m", max_tokens=9, messages=USER)
    assert twin is not wrapped
    assert seen == ["hi"]


class Weather:
    def __init__(self) -> None:
        self.calls = 0

    @hw.tool(use=[hw.before_tool(lambda call: call.replace(arguments={"city": "Paris"}))])
    def forecast(self, city: str) -> str:
        """The forecast for a city."""
        self.calls += 1
        return f"{city}: sunny"


def test_hooks_of_a_tool_method_see_the_arguments_its_spec_names_not_the_instance() -> None:
    seen_arguments: list[dict[str, Any]] = []

    @hw.after_tool
    def audit(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        seen_arguments.append(dict(call.arguments))
        json.dumps(call.arguments)  # an audit log can write them

    class Audited:
        @hw.tool(use=[audit])
        def forecast(self, city: str, days: int = 1) -> str:
            """The forecast."""
            return f"{city} x{days}"

    assert Audited().forecast("Rome", days=2) == "Rome x2"
    assert Audited.forecast(Audited(), "Oslo") == "Oslo x1"  # through the class, too
    assert seen_arguments == [{"city": "Rome", "days": 2}, {"city": "Oslo"}]
    assert list(Audited.forecast.spec.parameters["properties"]) == ["city", "days"]


def test_a_hook_may_rebuild_a_tool_methods_arguments_and_the_instance_is_kept() -> None:
    weather = Weather()
    assert weather.forecast("rome") == "Paris: sunny"  # the hook's arguments, no `self`
    assert weather.calls == 1


def test_tool_cache_leaves_a_tool_methods_calls_uncached() -> None:
    """Its answer may depend on the instance: one account's balance is not another's."""

    class Account:
        def __init__(self, balance: int) -> None:
            self.balance = balance
            self.calls = 0

        @hw.tool(use=[ToolCache()])
        def balance_in(self, currency: str) -> str:
            """The balance in a currency."""
            self.calls += 1
            return f"{self.balance} {currency}"

    alice, bob = Account(100), Account(5)
    assert alice.balance_in("EUR") == "100 EUR"
    assert bob.balance_in("EUR") == "5 EUR"
    assert alice.balance_in("EUR") == "100 EUR"
    assert (alice.calls, bob.calls) == (2, 1)


def test_a_hook_decorator_above_staticmethod_makes_a_hook() -> None:
    ran: list[str] = []

    class Greeter(hw.Middleware):
        @hw.before_model
        @staticmethod
        def greet(request: hw.ModelRequest) -> None:
            ran.append("greet")

    wrapped = hw.model(lambda messages: "ok", use=[Greeter()])
    assert wrapped(USER) == "ok"
    assert ran == ["greet"]


def test_an_attribute_hiding_a_hook_method_is_refused_when_wrapping() -> None:
    class Limit(hw.Middleware):
        def __init__(self, limit: int) -> None:
            self.limit = limit

        @hw.before_model
        def limit(self, request: hw.ModelRequest) -> None:
            return None

    with pytest.raises(TypeError, match=r"Limit\.limit is a hook, but .*'limit' \(3\) hides it"):
        hw.model(lambda messages: "ok", use=[Limit(3)])


def _weather(city: str, unit: str = "c", key: object = None) -> str:
    """The weather in a city.

    Args:
        city: where
    """
    return f"{city} in {unit}"


class _Lookup:
    """A lookup service."""

    def __call__(self, city: str) -> str:
        """Look a city up.

        Args:
            city: the city's name
        """
        return city.title()


def test_a_tool_of_a_partial_or_a_callable_object_reads_its_functions_hints_and_doc() -> None:
    import functools

    secret = object()  # no JSON: what a partial binds is the tool's own, never shown
    partial = hw.tool(functools.partial(_weather, unit="f", key=secret), name="weather")
    assert partial.spec == hw.ToolSpec(
        "weather",
        "The weather in a city.",
        {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "where"}},
            "required": ["city"],
        },
    )
    assert partial("Rome") == "Rome in f"
    lookup = hw.tool(_Lookup(), name="lookup")
    assert lookup.spec.description == "Look a city up."
    assert lookup.spec.parameters["properties"]["city"]["description"] == "the city's name"
    assert lookup("oslo") == "Oslo"


def test_a_model_cannot_give_what_a_partial_binds() -> None:
    import functools

    outcomes: list[hw.ToolOutcome] = []

    @hw.after_tool
    def keep(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        outcomes.append(outcome)

    tool = hw.tool(functools.partial(_weather, unit="f", key=None), name="weather", use=[keep])
    agent = hw.Agent(
        lambda request: (
            hw.Message(
                "assistant", "", (hw.ToolCall("c1", "weather", {"city": "Rome", "unit": "k"}),)
            )
            if len(request.messages) == 1
            else "done"
        ),
        tools=[tool],
    )
    assert agent.run("weather?").status == "finished"
    [outcome] = outcomes
    assert not outcome.ok
    assert "unexpected argument 'unit'" in str(outcome.error)


class Bot:
    @hw.tool(use=[hw.before_tool(lambda call: None)])
    def look(self, x: int) -> int:
        """Look."""
        return x


def test_a_tool_method_read_from_an_instance_copies_and_pickles_as_a_bound_method() -> None:
    bot = Bot()
    method = bot.look
    assert copy.copy(method) is method
    assert copy.deepcopy(method) is method
    again = pickle.loads(pickle.dumps(method))
    assert again(3) == 3
