"""Tool calls in streams: every tool-call chunk names its call, though the APIs send a
call's id in its first event only, and the calls `after_model` sees (and an agent runs)
are the calls the caller's stream added up to, however their events interleave."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "weather?"}]
CALLS = (
    hw.ToolCall("call_A", "weather", {"city": "Paris"}),
    hw.ToolCall("call_B", "clock", {"tz": "UTC"}),
)


def _delta(call: dict[str, Any]) -> bytes:
    choice = {"index": 0, "finish_reason": None, "delta": {"tool_calls": [call]}}
    event = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return f"data: {json.dumps({**event, 'choices': [choice]})}\n\n".encode()


def _interleaved(ids: tuple[str, str]) -> bytes:
    """Two calls whose argument deltas take turns, as an OpenAI-compatible server may send
    them; `ids` as the server gives them (empty: it gives none)."""
    a, b = ids
    events = [
        {"index": 0, "id": a, "type": "function", "function": {"name": "weather", "arguments": ""}},
        {"index": 1, "id": b, "type": "function", "function": {"name": "clock", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"city": '}},
        {"index": 1, "function": {"arguments": '{"tz": '}},
        {"index": 0, "function": {"arguments": '"Paris"}'}},
        {"index": 1, "function": {"arguments": '"UTC"}'}},
    ]  # fmt: skip
    return b"".join(map(_delta, events)) + b"data: [DONE]\n\n"


def _openai(body: bytes) -> Any:
    openai = pytest.importorskip("openai")
    module = next(
        __import__(root)
        for cls in openai.DefaultHttpxClient.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )

    def handle(request: Any) -> Any:
        return module.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = openai.DefaultHttpxClient(transport=module.MockTransport(handle))
    return openai.OpenAI(api_key="k", base_url="http://fake.invalid/v1", http_client=http)


@pytest.mark.parametrize("looks_at_chunks", [True, False], ids=["on_chunk", "after_model only"])
def test_interleaved_argument_deltas_add_up_to_their_own_calls(looks_at_chunks: bool) -> None:
    chunks: list[hw.Chunk] = []
    responses: list[hw.ModelResponse] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        chunks.append(chunk)

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        responses.append(response)

    hooks = [look, keep] if looks_at_chunks else [keep]
    client = hw.wrap(_openai(_interleaved(("call_A", "call_B"))), use=hooks)
    with client.chat.completions.stream(model="m", messages=USER) as stream:
        final = stream.get_final_completion().choices[0].message.tool_calls or []
    assert [(c.id, json.loads(c.function.arguments)) for c in final] == [  # as it came
        ("call_A", {"city": "Paris"}),
        ("call_B", {"tz": "UTC"}),
    ]
    assert responses[0].message.tool_calls == CALLS
    if looks_at_chunks:
        calls = [(c.kind, c.tool_call_id) for c in chunks if c.kind.startswith("tool_call")]
        assert calls == [
            ("tool_call_start", "call_A"),
            ("tool_call_start", "call_B"),
            ("tool_call_args", "call_A"),
            ("tool_call_args", "call_B"),
            ("tool_call_args", "call_A"),
            ("tool_call_args", "call_B"),
        ]


def test_calls_streamed_without_ids_stay_apart() -> None:
    responses: list[hw.ModelResponse] = []

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        responses.append(response)

    client = hw.wrap(_openai(_interleaved(("", ""))), use=[keep])
    for _ in client.chat.completions.create(model="m", messages=USER, stream=True):
        pass
    [response] = responses
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("", "weather", {"city": "Paris"}),
        ("", "clock", {"tz": "UTC"}),
    ]


def test_a_hook_may_change_one_calls_arguments_by_its_id() -> None:
    @hw.on_chunk
    def to_lyon(chunk: hw.Chunk) -> hw.Chunk | None:
        if chunk.kind == "tool_call_args" and chunk.tool_call_id == "call_A":
            return chunk.replace(text=chunk.text.replace("Paris", "Lyon"))
        return None

    client = hw.wrap(_openai(_interleaved(("call_A", "call_B"))), use=[to_lyon])
    with client.chat.completions.stream(model="m", messages=USER) as stream:
        final = stream.get_final_completion().choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in final] == [{"city": "Lyon"}, {"tz": "UTC"}]


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_every_argument_chunk_names_its_call(api: str) -> None:
    provider = FakeProvider([hw.Message("assistant", "", tool_calls=CALLS)], chunk_size=4)
    named: list[tuple[str, str | None]] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        if chunk.kind == "tool_call_args":
            named.append((chunk.text, chunk.tool_call_id))

    if api == "anthropic":
        pytest.importorskip("anthropic")
        client = hw.wrap(provider.anthropic(), use=[look])
        stream: Any = client.messages.create(model="m", max_tokens=9, messages=USER, stream=True)
    else:
        pytest.importorskip("openai")
        oclient = hw.wrap(provider.openai(), use=[look])
        if api == "chat":
            stream = oclient.chat.completions.create(model="m", messages=USER, stream=True)
        else:
            stream = oclient.responses.create(model="m", input="weather?", stream=True)
    for _ in stream:
        pass
    assert named  # the fake streams the arguments in deltas
    by_call: dict[str | None, str] = {}
    for text, call_id in named:
        by_call[call_id] = by_call.get(call_id, "") + text
    assert {k: json.loads(v) for k, v in by_call.items()} == {
        "call_A": {"city": "Paris"},
        "call_B": {"tz": "UTC"},
    }


def test_alike_gemini_calls_without_ids_stay_two_calls_in_a_stream() -> None:
    """Gemini names a call that comes without an id by its name and arguments: two alike
    calls share that name, and are still two calls, as without a stream."""
    pytest.importorskip("google.genai")
    from google.genai import types

    try:  # what the SDK is built on: httpx2, or httpx for older releases
        import httpx2 as module
    except ImportError:  # pragma: no cover - older releases
        import httpx as module
    part = {"functionCall": {"name": "get_time", "args": {}}}
    objects = [
        {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ]
        },
    ]
    body = "".join(f"data: {json.dumps(o)}\n\n" for o in objects).encode()

    def handle(request: Any) -> Any:
        return module.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    from google import genai

    args = {"transport": module.MockTransport(handle)}
    options = types.HttpOptions(base_url="http://fake.invalid/", client_args=args)
    responses: list[hw.ModelResponse] = []

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        responses.append(response)

    client = hw.wrap(genai.Client(api_key="k", http_options=options), use=[keep])
    for _ in client.models.generate_content_stream(model="g", contents="time?"):
        pass
    [response] = responses
    assert [(c.name, c.arguments) for c in response.message.tool_calls] == [
        ("get_time", {}),
        ("get_time", {}),
    ]
