"""One SDK method or resource wrapped on its own (`hw.wrap(client.chat.completions.create)`):
its calls go through the hooks, the caller gets the SDK's own objects, and the client it
came from is left as it was."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

USER = [{"role": "user", "content": "hi"}]


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.on_chunk
def shout(chunk: hw.Chunk) -> hw.Chunk:
    return chunk.replace(text=chunk.text.upper())


def test_an_openai_method_goes_through_the_hooks_and_keeps_its_face() -> None:
    provider = FakeProvider(["hello there"])
    client = provider.openai()
    original = client.chat.completions.create
    create = hw.wrap(original, use=[add_system])
    assert create.__name__ == "create"
    assert inspect.signature(create) == inspect.signature(original)
    reply = create(model="m", messages=USER)
    assert isinstance(reply, openai.types.chat.ChatCompletion)
    assert reply.choices[0].message.content == "hello there"
    assert provider.requests[-1].body["messages"][0] == {"role": "system", "content": "Be brief."}
    client.chat.completions.create(model="m", messages=USER)
    assert provider.requests[-1].body["messages"] == USER  # the client itself has no hooks


def test_an_openai_method_streams_native_chunks_through_on_chunk() -> None:
    provider = FakeProvider(["hello there"])
    create = hw.model(provider.openai().chat.completions.create, use=[shout])
    stream = create(model="m", messages=USER, stream=True)
    assert isinstance(stream, openai.Stream)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "HELLO THERE"


def test_an_async_openai_method_goes_through_the_hooks() -> None:
    provider = FakeProvider(["hello"])
    create = hw.wrap(provider.openai(async_=True).chat.completions.create, use=[add_system])
    reply = asyncio.run(create(model="m", messages=USER))
    assert reply.choices[0].message.content == "hello"
    assert provider.requests[-1].body["messages"][0]["role"] == "system"


def test_an_openai_resource_keeps_its_type_and_every_method_is_hooked() -> None:
    provider = FakeProvider(["a", "b"])
    client = provider.openai()
    completions = hw.wrap(client.chat.completions, use=[add_system])
    assert isinstance(completions, type(client.chat.completions))
    completions.create(model="m", messages=USER)
    assert provider.requests[-1].body["messages"][0]["role"] == "system"
    with completions.stream(model="m", messages=USER) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "b"
    assert provider.requests[-1].body["messages"][0]["role"] == "system"


def test_an_anthropic_method_and_the_stream_helper_of_a_resource() -> None:
    provider = FakeProvider(["hello", "streamed"])
    client = provider.anthropic()
    create = hw.wrap(client.messages.create, use=[add_system])
    reply = create(model="claude", max_tokens=10, messages=USER)
    assert isinstance(reply, anthropic.types.Message)
    assert reply.content[0].text == "hello"  # type: ignore[union-attr]
    assert provider.requests[-1].body["system"] == "Be brief."
    messages = hw.wrap(client.messages, use=[shout])
    with messages.stream(model="claude", max_tokens=10, messages=USER) as stream:
        assert stream.get_final_text() == "STREAMED"


def test_a_google_method_and_an_async_resource() -> None:
    provider = FakeProvider(["hello", "again"])
    client = provider.genai()
    generate = hw.wrap(client.models.generate_content, use=[add_system])
    assert generate(model="gemini", contents="hi").text == "hello"
    assert "Be brief." in str(provider.requests[-1].body)
    models = hw.wrap(client.aio.models, use=[add_system])

    async def main() -> Any:
        return await models.generate_content(model="gemini", contents="hi")

    assert asyncio.run(main()).text == "again"
    assert "Be brief." in str(provider.requests[-1].body)


def test_explain_shows_the_hooks_of_a_wrapped_method() -> None:
    create = hw.wrap(FakeProvider().openai().chat.completions.create, use=[add_system])
    assert "add_system" in hw.explain(create)


MEMBERS: dict[str, Any] = {
    "openai method": lambda p: (p.openai(), lambda c: c.chat.completions.create),
    "openai resource": lambda p: (p.openai(), lambda c: c.chat.completions),
    "anthropic method": lambda p: (p.anthropic(), lambda c: c.messages.create),
    "google method": lambda p: (p.genai(), lambda c: c.models.generate_content),
    "google async resource": lambda p: (p.genai(), lambda c: c.aio.models),
}


@pytest.mark.parametrize("member", list(MEMBERS))
def test_wrapping_a_wrapped_member_adds_the_new_hooks_outside_the_old(member: str) -> None:
    provider = FakeProvider(["hello"])
    client, pick = MEMBERS[member](provider)
    order: list[str] = []

    def note(name: str) -> Any:
        @hw.before_model(name=name)
        def hook(request: hw.ModelRequest) -> None:
            order.append(name)

        return hook

    twice = hw.wrap(hw.wrap(pick(client), use=[note("inner")]), use=[note("outer")])
    if member.startswith("google"):
        call: Any = twice if member.endswith("method") else twice.generate_content
        run_it = call(model="m", contents="hi")
    elif member.startswith("anthropic"):
        run_it = twice(model="m", max_tokens=5, messages=USER)
    else:
        call = twice if member.endswith("method") else twice.create
        run_it = call(model="m", messages=USER)
    if inspect.isawaitable(run_it):
        asyncio.run(run_it)
    assert order == ["outer", "inner"]
    pick(client)  # the client itself keeps no hooks
    assert len(provider.requests) == 1
