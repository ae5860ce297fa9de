"""Checked by mypy and pyright (strict), never run: the public API keeps user types."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from typing_extensions import assert_type

import hookwrap as hw


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.before_model(priority=10, name="guard", fail_open=True)
def guard(request: hw.ModelRequest) -> hw.Respond | None:
    return None


kept: Callable[[hw.ModelRequest], hw.ModelRequest] = add_system  # the type is kept


def ask(messages: list[dict[str, str]], *, temperature: float = 0.0) -> str:
    return "hi"


chat = hw.model(ask, use=[add_system, guard])
reply: str = chat([{"role": "user", "content": "hi"}], temperature=0.5)


@hw.model(use=hw.Stack(add_system))
def stream(prompt: str) -> Iterator[str]:
    yield prompt


for piece in stream("x"):
    assert_type(piece, str)


@hw.tool
def get_weather(city: str, unit: str = "c") -> str:
    """Weather for a city."""
    return city


assert_type(get_weather("Paris"), str)
spec: hw.ToolSpec = get_weather.spec

ctx: hw.RunContext[dict[str, int]]
with hw.run(context={"user": 1}) as run_ctx:
    run_id: str = run_ctx.run_id


def clients() -> None:
    """Wrapped clients keep their types: the same methods and return types for checkers."""
    from anthropic import Anthropic
    from openai import AsyncOpenAI, OpenAI
    from openai.types.chat import ChatCompletion

    client = hw.wrap(OpenAI(api_key="k"), use=[add_system])
    assert_type(client, OpenAI)
    completion = client.chat.completions.create(model="m", messages=[])
    assert_type(completion, ChatCompletion)
    assert_type(hw.wrap(AsyncOpenAI(api_key="k")), AsyncOpenAI)
    assert_type(hw.wrap(Anthropic(api_key="k"), use=[add_system]), Anthropic)
    hw.patch("openai", use=[add_system])
    hw.unpatch()


def limit(call: hw.ToolCall, ctx: hw.RunContext[Any]) -> hw.ToolCall:
    """`ctx.abort` never returns: a checker sees every path of this hook return."""
    if call.name != "rm":
        return call
    ctx.abort("rm is not allowed")


class Base:
    pass


class Derived(Base):
    pass


def needs(run: hw.RunContext[Base]) -> None:
    """A run's context is read only: a run of a narrower context serves where a wider is
    asked for."""


with hw.run(context=Derived()) as derived_run:
    needs(derived_run)


def overloads() -> None:
    """`hw.model` of an overloaded SDK method keeps each overload."""
    from openai import OpenAI, Stream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    create = hw.model(OpenAI(api_key="k").chat.completions.create, use=[add_system])
    assert_type(create(model="m", messages=[]), ChatCompletion)
    assert_type(create(model="m", messages=[], stream=True), Stream[ChatCompletionChunk])


def fakes(is_async: bool) -> None:
    """A fake provider's client for a flag known only at run time is either kind."""
    from anthropic import Anthropic, AsyncAnthropic
    from openai import AsyncOpenAI, OpenAI

    from hookwrap.testing import FakeProvider

    assert_type(FakeProvider().openai(is_async), OpenAI | AsyncOpenAI)
    assert_type(FakeProvider().anthropic(is_async), Anthropic | AsyncAnthropic)


class Toolbox:
    @hw.tool
    def lookup(self, key: str) -> int:
        """Look a key up."""
        return len(key)


assert_type(Toolbox().lookup("k"), int)  # a method tool keeps its return type
toolbox_spec: hw.ToolSpec = Toolbox.lookup.spec  # and is the tool on the class
