"""SDK overhead: an OpenAI client with and without hookwrap, on a canned HTTP transport.

The transport answers from bytes prepared once (a stream's events one by one, as they
arrive from a network), so the figures are the SDK's own cost (building the request,
httpx, parsing) against what hookwrap adds to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import hookwrap as hw

STREAM_CHUNKS = 20
MESSAGES = [{"role": "user", "content": "hi"}]


def _answers() -> tuple[bytes, list[bytes]]:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hello there"},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    events = []
    for i in range(STREAM_CHUNKS):
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}],
        }
        events.append(f"data: {json.dumps(chunk)}\n\n")
    events.append("data: [DONE]\n\n")
    return json.dumps(completion).encode(), [event.encode() for event in events]


def clients() -> dict[str, tuple[Any, bool]]:
    """name -> (a `create`-like callable, streamed?)"""
    import httpx2
    import openai

    plain_body, sse_events = _answers()

    class Events(httpx2.SyncByteStream):
        """Events arrive one by one, as from a network, not as one block."""

        def __iter__(self) -> Any:
            return iter(sse_events)

    def handle(request: Any) -> Any:
        if b'"stream":true' in request.content:
            return httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, stream=Events()
            )
        return httpx2.Response(
            200, headers={"content-type": "application/json"}, content=plain_body
        )

    client = openai.OpenAI(
        api_key="k",
        base_url="http://bench.invalid/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )
    from bench.__main__ import noop_hooks

    wrapped = hw.wrap(client, use=noop_hooks(2, 2, 1))
    create = client.chat.completions.create

    def by_hand(**kwargs: Any) -> Any:  # what a hand-written wrapper costs
        return create(**kwargs)

    out: dict[str, tuple[Any, bool]] = {}
    for streamed in (False, True):
        tag = "streamed" if streamed else "not streamed"
        out[f"openai {tag}: SDK alone"] = (create, streamed)
        out[f"openai {tag}: hand-written wrapper"] = (by_hand, streamed)
        out[f"openai {tag}: hookwrap, 5 no-op hooks"] = (
            wrapped.chat.completions.create,
            streamed,
        )
    return out


def timer(create: Callable[..., Any], streamed: bool, n: int) -> Callable[[], float]:
    import time

    def run() -> float:
        start = time.perf_counter()
        for _ in range(n):
            if streamed:
                for _ in create(model="m", messages=MESSAGES, stream=True):
                    pass
            else:
                create(model="m", messages=MESSAGES)
        return (time.perf_counter() - start) / n

    return run
