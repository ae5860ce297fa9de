"""A tool call put together from a stream keeps the native form its API sent, as the call of
a whole answer does (docs/sdks/google.md: a function call "keeps the other keys of its
part, its signature among them, in the history, an answer and a stream alike"): its `raw`
is the Gemini function call part, or the Chat Completions tool call, with the thought
signature Gemini 3 wants back on the next turn (it answers a call sent without one with
HTTP 400)."""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import sys
from importlib.util import find_spec
from typing import Any

import pytest

import hookwrap as hw

SIGNED = {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "U0lH"}
# the call as a whole chat answer holds it; a stream sends its arguments in pieces
ENTRY = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
    "extra_content": {"google": {"thought_signature": "U0lH"}},
}


@hw.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _http(client_class: Any) -> Any:
    """The HTTP library (httpx2, or httpx for older releases) an SDK's client is built on."""
    return next(
        sys.modules[root]
        for cls in client_class.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )


def _sse(events: list[Any]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


class _Gemini:
    """A Gemini API whose first answer calls `add` in a signed part, after some text."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    def answer(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        if len(self.bodies) == 1:
            objects = [
                {"candidates": [{"content": {"role": "model", "parts": [{"text": "Adding."}]}}]},
                {
                    "candidates": [
                        {"content": {"role": "model", "parts": [SIGNED]}, "finishReason": "STOP"}
                    ]
                },
            ]
        else:
            parts = [{"text": "3"}]
            objects = [{"candidates": [{"content": {"role": "model", "parts": parts}}]}]
        module = _http(type(request))
        headers = {"content-type": "text/event-stream"}
        return module.Response(200, headers=headers, content=_sse(objects))

    def client(self) -> Any:
        genai = pytest.importorskip("google.genai")
        from google.genai import types

        # what the SDK is built on: httpx2, or httpx for older releases
        module: Any = importlib.import_module("httpx2" if find_spec("httpx2") else "httpx")
        args = {"transport": module.MockTransport(self.answer)}
        options = types.HttpOptions(
            base_url="http://fake.invalid/", client_args=args, async_client_args=args
        )
        return genai.Client(api_key="k", http_options=options)

    def sent_call(self) -> Any:
        """The function call part the second request sends back."""
        model = self.bodies[1]["contents"][1]
        return next(p for p in model["parts"] if "functionCall" in p)


class _Chat:
    """A Chat Completions API (Gemini's OpenAI-compatible one) whose first answer calls `add`
    with a signature in `extra_content`, its arguments streamed in two pieces."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    def answer(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m"}

        def event(delta: Any, finish: str | None = None) -> Any:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        if len(self.bodies) == 1:
            start = {**ENTRY, "index": 0, "function": {"name": "add", "arguments": '{"a": 1,'}}
            more = {"index": 0, "function": {"arguments": ' "b": 2}'}}
            events = [
                event({"role": "assistant", "tool_calls": [start]}),
                event({"tool_calls": [more]}),
                event({}, "tool_calls"),
            ]
        else:
            events = [event({"role": "assistant", "content": "3"}), event({}, "stop")]
        module = _http(type(request))
        body = _sse(events) + b"data: [DONE]\n\n"
        return module.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    def client(self, is_async: bool) -> Any:
        openai = pytest.importorskip("openai")
        http_class = openai.DefaultAsyncHttpxClient if is_async else openai.DefaultHttpxClient
        http = http_class(transport=_http(http_class).MockTransport(self.answer))
        make = openai.AsyncOpenAI if is_async else openai.OpenAI
        return make(api_key="k", base_url="http://fake.invalid/v1", http_client=http)


def _stream(agent: hw.Agent, is_async: bool) -> Any:
    """The run's result, its events read as they come."""
    if not is_async:
        return list(agent.stream("1+2?"))[-1].result

    async def read() -> list[Any]:
        return [e async for e in agent.astream("1+2?")]

    return asyncio.run(read())[-1].result


def _recorder(seen: list[Any]) -> Any:
    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.extend(response.message.tool_calls)

    return record


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
@pytest.mark.parametrize("form", ["tuple", "method"])
def test_a_streamed_gemini_call_goes_back_with_its_signature(is_async: bool, form: str) -> None:
    api = _Gemini()
    client = api.client()
    if form == "tuple":
        model: Any = (client, "gemini-3-pro")
    else:
        models = client.aio.models if is_async else client.models
        model = functools.partial(models.generate_content_stream, model="gemini-3-pro")
    seen: list[hw.ToolCall] = []
    agent = hw.Agent(model, tools=[add], use=[_recorder(seen)])
    result = _stream(agent, is_async)
    assert (result.status, result.text) == ("finished", "3")
    assert api.sent_call() == SIGNED
    assert seen[0].raw == SIGNED  # what `after_model` saw


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_after_model_sees_the_part_of_a_call_streamed_as_it_came(is_async: bool) -> None:
    """No hook looks at the chunks: the SDK's own objects go on, and the response view
    is put together from them."""
    seen: list[hw.ToolCall] = []
    client = hw.wrap(_Gemini().client(), use=[_recorder(seen)])
    if not is_async:
        items = list(client.models.generate_content_stream(model="m", contents="1+2?"))
    else:

        async def read() -> list[Any]:
            stream = await client.aio.models.generate_content_stream(model="m", contents="1+2?")
            return [item async for item in stream]

        items = asyncio.run(read())
    assert len(items) == 2
    assert [(c.name, dict(c.arguments), c.raw) for c in seen] == [("add", {"a": 1, "b": 2}, SIGNED)]


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
def test_a_streamed_chat_call_goes_back_with_its_extra_content(is_async: bool) -> None:
    api = _Chat()
    seen: list[hw.ToolCall] = []
    agent = hw.Agent((api.client(is_async), "gemini-3-pro"), tools=[add], use=[_recorder(seen)])
    result = _stream(agent, is_async)
    assert (result.status, result.text) == ("finished", "3")
    # the whole call, as an answer holds it: no stream's `index`, the arguments joined
    assert api.bodies[1]["messages"][1]["tool_calls"] == [ENTRY]
    assert seen[0].raw == ENTRY


def test_a_call_hooks_made_in_a_stream_has_no_raw() -> None:
    """A call of chunks a hook made has no native form to keep."""

    @hw.on_chunk
    def replace(chunk: hw.Chunk) -> Any:
        if chunk.kind == "tool_call_start":
            return hw.Chunk("tool_call_start", '{"a": 2, "b": 2}', "c9", "add")
        return None

    seen: list[hw.ToolCall] = []
    client = hw.wrap(_Gemini().client(), use=[replace, _recorder(seen)])
    list(client.models.generate_content_stream(model="m", contents="1+2?"))
    assert [(c.id, c.raw) for c in seen] == [("c9", None)]


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
def test_a_call_a_hook_changed_goes_back_with_its_signature(is_async: bool) -> None:
    """The arguments are the hook's, the other keys of the part (its signature) the API's:
    docs/sdks/google.md, "A function call a hook changes keeps the other keys of its part,
    its signature among them"."""

    @hw.on_chunk
    def double(chunk: hw.Chunk) -> Any:
        if chunk.kind == "tool_call_start":
            return chunk.replace(text='{"a": 2, "b": 2}')
        return None

    api = _Gemini()
    agent = hw.Agent((api.client(), "gemini-3-pro"), tools=[add], use=[double])
    result = _stream(agent, is_async)
    assert result.status == "finished"
    assert api.sent_call() == {
        "functionCall": {"name": "add", "args": {"a": 2, "b": 2}},
        "thoughtSignature": "U0lH",
    }
