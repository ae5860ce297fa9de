"""A hook that drops a content chunk drops its content only: the finish reason and usage
that came with it (Gemini's last response carries text, finish reason and usage together;
some OpenAI-compatible servers send content, finish_reason and usage in one chunk) still
reach the caller's stream, `on_usage`, `after_model` and `on_finish`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from canned_sse import sse_client

import hookwrap as hw

USAGE = hw.Usage(10, 5, 15)
GEMINI = [
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "The code is "}]}}]},
    {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "SECRET"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "g",
    },
]
CHAT = [
    {
        "id": "1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The code is "}}],
    },
    {
        "id": "1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "SECRET"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    },
]
USER = [{"role": "user", "content": "the code?"}]


def _body(events: list[dict[str, Any]], done: bool) -> bytes:
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


@hw.on_chunk
def redact(chunk: hw.Chunk) -> Any:
    return hw.DROP if "SECRET" in chunk.text else None


def _observers(seen: dict[str, Any]) -> list[Any]:
    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        seen.setdefault("on_usage", []).append(usage)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen["after_model"] = (response.text, response.finish_reason, response.usage)

    @hw.on_finish
    def finish(info: hw.FinishInfo) -> None:
        seen["on_finish"] = info.usage

    return [redact, usage, after, finish]


def _check_hooks(seen: dict[str, Any], finish: str) -> None:
    assert seen == {
        "on_usage": [USAGE],
        "after_model": ("The code is ", finish, USAGE),
        "on_finish": USAGE,
    }


def _gemini(is_async: bool, hooks: list[Any], events: list[dict[str, Any]] = GEMINI) -> Any:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    try:  # what the SDK is built on: httpx2, or httpx for older releases
        import httpx2 as module
    except ImportError:  # pragma: no cover - older releases
        import httpx as module
    body = _body(events, done=False)

    def answer(request: Any) -> Any:
        return module.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    args = {"transport": module.MockTransport(answer)}
    options = types.HttpOptions(base_url="http://fake.invalid/")
    if is_async:
        options.async_client_args = args
    else:
        options.client_args = args
    return hw.wrap(genai.Client(api_key="k", http_options=options), use=hooks)


def _streamed(client: Any, is_async: bool) -> list[Any]:
    """The responses of one Gemini stream, read to its end."""

    async def pull() -> list[Any]:
        stream = await client.aio.models.generate_content_stream(model="g", contents="x")
        return [r async for r in stream]

    if is_async:
        return asyncio.run(pull())
    return list(client.models.generate_content_stream(model="g", contents="x"))


@pytest.mark.parametrize("is_async", [False, True])
def test_gemini_text_dropped_with_the_finish_keeps_finish_and_usage(is_async: bool) -> None:
    seen: dict[str, Any] = {}
    client = _gemini(is_async, _observers(seen))
    responses = _streamed(client, is_async)
    assert "".join(r.text or "" for r in responses) == "The code is "
    last = responses[-1]
    assert last.candidates[0].finish_reason == "STOP"
    assert last.usage_metadata.total_token_count == 15
    _check_hooks(seen, "STOP")


@pytest.mark.parametrize("is_async", [False, True])
def test_chat_content_dropped_with_the_finish_keeps_finish_and_usage(is_async: bool) -> None:
    openai = pytest.importorskip("openai")
    seen: dict[str, Any] = {}
    client = hw.wrap(sse_client(openai, is_async, _body(CHAT, done=True)), use=_observers(seen))
    options = {"include_usage": True}

    async def final() -> Any:
        async with client.chat.completions.stream(
            model="m", messages=USER, stream_options=options
        ) as stream:
            return await stream.get_final_completion()

    if is_async:
        completion = asyncio.run(final())
    else:
        with client.chat.completions.stream(
            model="m", messages=USER, stream_options=options
        ) as stream:
            completion = stream.get_final_completion()
    assert completion.choices[0].message.content == "The code is "
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == 15
    _check_hooks(seen, "stop")


def test_a_function_streams_the_finish_of_a_dropped_text_on_its_own() -> None:
    @hw.on_chunk
    def text_out(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.kind == "text" else None

    @hw.model(use=[text_out])
    def combined(messages: Any) -> Any:
        yield {"kind": "text", "text": "Hi", "finish_reason": "stop"}

    assert list(combined(USER)) == [{"kind": "finish", "finish_reason": "stop"}]


def test_a_dropped_usage_or_finish_chunk_stays_out() -> None:
    @hw.on_chunk
    def ends_out(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.kind in ("usage", "finish") else None

    @hw.model(use=[ends_out])
    def ends(messages: Any) -> Any:
        yield {"kind": "text", "text": "Hi"}
        yield {"kind": "usage", "usage": {"input_tokens": 1, "output_tokens": 1}}
        yield {"kind": "finish", "finish_reason": "stop"}

    assert list(ends(USER)) == [{"kind": "text", "text": "Hi"}]


@hw.on_chunk
def split_words(chunk: hw.Chunk) -> Any:
    """Expands a text into one chunk per word; the last keeps the finish and usage."""
    if chunk.kind != "text":
        return None
    *words, last = [word for word in chunk.text.split(" ") if word]
    parts = [chunk.replace(text=word, finish_reason=None, usage=None) for word in words]
    return [*parts, chunk.replace(text=last)]


@hw.on_chunk
def drop_secret_words(chunk: hw.Chunk) -> Any:
    return hw.DROP if "SECRET" in chunk.text else None


@hw.on_chunk
def empty_secret_words(chunk: hw.Chunk) -> Any:
    return [] if "SECRET" in chunk.text else None


@pytest.mark.parametrize("remove", [drop_secret_words, empty_secret_words])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_part_of_an_expansion_dropped_with_the_finish_keeps_finish_and_usage(
    is_async: bool, remove: Any
) -> None:
    seen: dict[str, Any] = {}
    # the last text, which comes with the finish and usage, ends with the secret
    last = {**GEMINI[1], "candidates": [{**GEMINI[1]["candidates"][0]}]}
    last["candidates"][0]["content"] = {"role": "model", "parts": [{"text": "Done SECRET"}]}
    client = _gemini(is_async, [split_words, remove, *_observers(seen)[1:]], [GEMINI[0], last])
    responses = _streamed(client, is_async)
    assert "".join(r.text or "" for r in responses) == "ThecodeisDone"
    assert responses[-1].candidates[0].finish_reason == "STOP"
    assert responses[-1].usage_metadata.total_token_count == 15
    assert seen == {
        "on_usage": [USAGE],
        "after_model": ("ThecodeisDone", "STOP", USAGE),
        "on_finish": USAGE,
    }


def test_a_function_streams_the_finish_of_a_dropped_part_of_an_expansion() -> None:
    @hw.model(use=[split_words, drop_secret_words])
    def combined(messages: Any) -> Any:
        yield {"kind": "text", "text": "Hi SECRET", "finish_reason": "stop"}

    assert list(combined(USER)) == [
        {"kind": "text", "text": "Hi"},
        {"kind": "finish", "finish_reason": "stop"},
    ]
