"""Stream events that carry several things at once (text and tool calls in one delta, as
OpenAI-compatible servers and Gemini send them): each thing is a chunk of its own for the
hooks, and nothing of the event is lost, with or without hooks looking at chunks."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "weather?"}]
CHAT_EVENT = {
    "id": "c",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "delta": {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {"index": 0, "id": "a", "type": "function",
                     "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
                    {"index": 1, "id": "b", "type": "function",
                     "function": {"name": "weather", "arguments": '{"city": "Rome"}'}},
                ],
            },
        }
    ],
}  # fmt: skip
GEMINI_OBJECT = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
                ],
            },
            "finishReason": "STOP",
        }
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8},
    "modelVersion": "g",
}
CALLS = [("weather", {"city": "Paris"}), ("weather", {"city": "Rome"})]


def _transport(module: Any, body: bytes) -> Any:
    def handle(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return module.Response(200, headers=headers, content=body)

    return module.MockTransport(handle)


def _http_module(client_class: Any) -> Any:
    import sys

    return next(
        sys.modules[root]
        for cls in client_class.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )


def _openai() -> Any:
    openai = pytest.importorskip("openai")
    module = _http_module(openai.DefaultHttpxClient)
    body = f"data: {json.dumps(CHAT_EVENT)}\n\ndata: [DONE]\n\n".encode()
    http = openai.DefaultHttpxClient(transport=_transport(module, body))
    return openai.OpenAI(api_key="k", base_url="http://fake.invalid/v1", http_client=http)


def _gemini() -> Any:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    try:  # what the SDK is built on: httpx2, or httpx for older releases
        import httpx2 as module
    except ImportError:  # pragma: no cover - older releases
        import httpx as module
    body = f"data: {json.dumps(GEMINI_OBJECT)}\n\n".encode()
    args = {"transport": _transport(module, body)}
    options = types.HttpOptions(base_url="http://fake.invalid/", client_args=args)
    return genai.Client(api_key="k", http_options=options)


def _final(api: str, hooks: list[Any]) -> tuple[str, list[tuple[str, Any]]]:
    """The text and tool calls the caller's stream adds up to."""
    if api == "chat":
        client = hw.wrap(_openai(), use=hooks)
        with client.chat.completions.stream(model="m", messages=USER) as stream:
            message = stream.get_final_completion().choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        return message.content or "", calls
    client = hw.wrap(_gemini(), use=hooks)
    text, calls = "", []
    for item in client.models.generate_content_stream(model="g", contents="weather?"):
        for part in item.candidates[0].content.parts:
            if part.text:
                text += part.text
            if part.function_call:
                calls.append((part.function_call.name, dict(part.function_call.args)))
    return text, calls


@pytest.mark.parametrize("api", ["chat", "gemini"])
def test_after_model_sees_everything_one_event_carried(api: str) -> None:
    """No hook looks at chunks: the caller gets the event as it came, and `after_model`'s
    response has its text and every tool call."""
    seen: list[hw.ModelResponse] = []

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    assert _final(api, [keep]) == _final(api, []) == ("Checking.", CALLS)
    [response] = seen
    assert response.text == "Checking."
    assert [(c.name, dict(c.arguments)) for c in response.message.tool_calls] == CALLS


@pytest.mark.parametrize("api", ["chat", "gemini"])
def test_each_thing_an_event_carries_is_a_chunk_a_hook_may_change_alone(api: str) -> None:
    """The hooks see one chunk per thing (the text, each call); a hook renaming one call
    leaves the text and the other call as they were, in the caller's answer and in the
    response `after_model` sees."""
    kinds: list[str] = []
    seen: list[hw.ModelResponse] = []

    @hw.on_chunk
    def rename(chunk: hw.Chunk) -> Any:
        kinds.append(chunk.kind)
        if chunk.kind == "tool_call_start" and '"Rome"' in chunk.text:
            return chunk.replace(tool_name="forecast")
        return None

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    text, calls = _final(api, [rename, keep])
    assert (text, calls) == ("Checking.", [CALLS[0], ("forecast", {"city": "Rome"})])
    assert kinds[:3] == ["text", "tool_call_start", "tool_call_start"]
    [response] = seen
    assert response.text == "Checking."
    assert [c.name for c in response.message.tool_calls] == ["weather", "forecast"]
