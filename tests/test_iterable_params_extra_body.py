"""Iterable parameters (Anthropic `messages`, `system`, `tools`, blocks; Responses `input`
and `tools`) given as a tuple or a generator in a call that also passes `extra_body`: the
body sent is what the hooks saw, and, when no hook changes anything, what the SDK sends
without hooks. hookwrap merges `extra_body` into a copy of the body for the hooks to see,
so a generator read for that copy must still reach the body the SDK sends."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from iterable_requests import RESULT_BLOCKS, SHAPES, SYSTEM, Shape
from iterable_requests import anthropic_kwargs as _kwargs

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("anthropic")
pytest.importorskip("openai")

EXTRA = {"vendor_flag": "from the caller"}


def anthropic_kwargs(shape: Shape) -> dict[str, Any]:
    """A request whose every iterable parameter is given in `shape`, with `extra_body`."""
    return _kwargs(shape, extra_body=dict(EXTRA))


@hw.after_model
def leave(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
    """Looks at neither the request nor the answer."""
    return response


def hook(kind: str, seen: list[hw.ModelRequest]) -> Any:
    """A hook of `kind`: "leave" never reads the request, "read" reads its messages and
    tools, "change" reads them and adds a message and a tool."""
    if kind == "leave":
        return leave

    @hw.before_model
    def look(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(request)
        messages, tools = request.messages, request.tools  # read now, before the SDK sends
        if kind == "read":
            return request
        return request.replace(
            messages=(*messages, hw.Message.user("P.S. be brief")),
            tools=(*tools, hw.ToolSpec("extra", "", {"type": "object"})),
        )

    return look


# -- Anthropic ---------------------------------------------------------------------------------

ANTHROPIC_MODES = ["create", "async", "stream", "helper", "beta", "beta_helper", "async_stream"]


def sdk_drains(shape: str, mode: str) -> bool:
    """Whether the SDK itself reads a generator before it hands on the request: its beta
    methods read `messages` and `tools` for a header, leaving empty generators to send."""
    return shape == "generator" and mode.startswith("beta")


# the cases where the SDK hands hookwrap the caller's generators unread
READABLE = [(s, m) for s in SHAPES for m in ANTHROPIC_MODES if not sdk_drains(s, m)]


def send_anthropic(client: Any, mode: str, kwargs: dict[str, Any]) -> None:
    messages = client.beta.messages if mode.startswith("beta") else client.messages
    if mode == "async":
        asyncio.run(messages.create(**kwargs))
    elif mode == "async_stream":

        async def drain() -> None:
            async for _ in await messages.create(stream=True, **kwargs):
                pass

        asyncio.run(drain())
    elif mode.endswith("helper"):
        with messages.stream(**kwargs) as stream:
            stream.get_final_message()
    elif mode == "stream":
        for _ in messages.create(stream=True, **kwargs):
            pass
    else:
        messages.create(**kwargs)


def anthropic_body(hooks: list[Any] | None, mode: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The body sent for `kwargs`: through hookwrap with `hooks`, or the SDK alone (None)."""
    provider = FakeProvider(["4"])
    client = provider.anthropic(async_=mode.startswith("async"))
    send_anthropic(client if hooks is None else hw.wrap(client, use=hooks), mode, kwargs)
    body: dict[str, Any] = provider.requests[-1].body
    return body


@pytest.mark.parametrize("mode", ANTHROPIC_MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("kind", ["leave", "read"])
def test_anthropic_iterables_with_extra_body_go_out_as_without_hooks(
    kind: str, shape: str, mode: str
) -> None:
    expected = anthropic_body(None, mode, anthropic_kwargs(SHAPES[shape]))
    assert expected["vendor_flag"] == "from the caller"
    if not sdk_drains(shape, mode):
        assert expected == anthropic_body(None, mode, anthropic_kwargs(list))
        assert len(expected["messages"]) == 3
    seen: list[hw.ModelRequest] = []
    body = anthropic_body([hook(kind, seen)], mode, anthropic_kwargs(SHAPES[shape]))
    assert body == expected


@pytest.mark.parametrize(("shape", "mode"), READABLE)
def test_anthropic_iterables_with_extra_body_are_seen_as_lists(shape: str, mode: str) -> None:
    seen: list[hw.ModelRequest] = []
    anthropic_body([hook("read", seen)], mode, anthropic_kwargs(list))
    anthropic_body([hook("read", seen)], mode, anthropic_kwargs(SHAPES[shape]))
    as_list, given = seen
    assert given.messages == as_list.messages
    assert given.tools == as_list.tools
    assert [m.role for m in given.messages] == ["system", "user", "assistant", "tool"]


@pytest.mark.parametrize(("shape", "mode"), READABLE)
def test_anthropic_a_hooks_change_with_extra_body_keeps_the_callers_iterables(
    shape: str, mode: str
) -> None:
    expected = anthropic_body([hook("change", [])], mode, anthropic_kwargs(list))
    body = anthropic_body([hook("change", [])], mode, anthropic_kwargs(SHAPES[shape]))
    assert body == expected
    assert body["vendor_flag"] == "from the caller"
    assert body["system"] == SYSTEM
    assert body["messages"][0]["content"] == [{"type": "text", "text": "What is 2+2?"}]
    assert body["messages"][2]["content"][0]["content"] == RESULT_BLOCKS
    assert body["messages"][-1] == {"role": "user", "content": "P.S. be brief"}
    assert [t["name"] for t in body["tools"]] == ["calc", "extra"]


# -- Responses ---------------------------------------------------------------------------------

INPUT = [{"role": "user", "content": "What is 2+2?"}]
FUNCTIONS = [{"type": "function", "name": "calc", "parameters": {"type": "object"}}]
RESPONSES_MODES = ["create", "async", "stream", "async_stream", "helper"]


def responses_kwargs(shape: Shape) -> dict[str, Any]:
    return {
        "model": "m",
        "input": shape(INPUT),
        "tools": shape(FUNCTIONS),
        "extra_body": dict(EXTRA),
    }


def send_responses(client: Any, mode: str, kwargs: dict[str, Any]) -> None:
    if mode == "async":
        asyncio.run(client.responses.create(**kwargs))
    elif mode == "async_stream":

        async def drain() -> None:
            async for _ in await client.responses.create(stream=True, **kwargs):
                pass

        asyncio.run(drain())
    elif mode == "helper":
        with client.responses.stream(**kwargs) as stream:
            stream.get_final_response()
    elif mode == "stream":
        for _ in client.responses.create(stream=True, **kwargs):
            pass
    else:
        client.responses.create(**kwargs)


def responses_body(hooks: list[Any] | None, mode: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The body sent for `kwargs`: through hookwrap with `hooks`, or the SDK alone (None)."""
    provider = FakeProvider(["4"])
    client = provider.openai(async_=mode.startswith("async"))
    send_responses(client if hooks is None else hw.wrap(client, use=hooks), mode, kwargs)
    body: dict[str, Any] = provider.requests[-1].body
    return body


@pytest.mark.parametrize("mode", RESPONSES_MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("kind", ["leave", "read"])
def test_responses_iterables_with_extra_body_go_out_as_a_list_would(
    kind: str, shape: str, mode: str
) -> None:
    # the SDK alone sends a generator `input` as no JSON at all: a list is the reference
    expected = responses_body(None, mode, responses_kwargs(list))
    assert expected["vendor_flag"] == "from the caller"
    assert expected["input"] == INPUT
    seen: list[hw.ModelRequest] = []
    body = responses_body([hook(kind, seen)], mode, responses_kwargs(SHAPES[shape]))
    assert body == expected
    if kind == "read":
        assert seen[0].messages == (hw.Message.user("What is 2+2?"),)
        assert [t.name for t in seen[0].tools] == ["calc"]


@pytest.mark.parametrize("mode", RESPONSES_MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_responses_a_hooks_change_with_extra_body_keeps_the_callers_input(
    shape: str, mode: str
) -> None:
    expected = responses_body([hook("change", [])], mode, responses_kwargs(list))
    body = responses_body([hook("change", [])], mode, responses_kwargs(SHAPES[shape]))
    assert body == expected
    assert body["vendor_flag"] == "from the caller"
    assert body["input"][0] == INPUT[0]
    assert body["input"][-1]["content"] == "P.S. be brief"
    assert [t["name"] for t in body["tools"]] == ["calc", "extra"]


@pytest.mark.parametrize("kind", ["leave", "read"])
def test_a_generator_inside_extra_body_goes_out_as_read(kind: str) -> None:
    """A generator the caller put in `extra_body` itself: read once, into a copy of it (the
    caller's dict is left as it was), and sent."""
    tools = [{"name": "calc", "input_schema": {"type": "object"}}]
    extra: dict[str, Any] = {"tools": (t for t in tools)}
    given = extra["tools"]
    seen: list[hw.ModelRequest] = []
    provider = FakeProvider(["done"])
    client = hw.wrap(provider.anthropic(), use=[hook(kind, seen)])
    client.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}], extra_body=extra
    )
    assert provider.requests[-1].body["tools"] == tools
    assert extra["tools"] is given  # the caller's dict keeps its own value
    if kind == "read":
        assert [t.name for t in seen[0].tools] == ["calc"]
