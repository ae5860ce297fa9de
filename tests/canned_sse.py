"""SDK clients served a canned stream of server-sent events through a mock transport of
the SDK's own HTTP library (httpx2, or httpx for older releases), and the `on_chunk`
hold-back recipe of the on_chunk page, for the tests of how rewritten streams are framed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

import hookwrap as hw

# the client class each SDK names without its `Async` prefix
_CLIENTS = {"openai": "OpenAI", "anthropic": "Anthropic"}


def sse(events: Iterable[Mapping[str, Any]]) -> bytes:
    """The body of a stream of `events`, each named by its `type` as both APIs do."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def http_module(http_class: type) -> ModuleType:
    """The HTTP library an SDK's default client class is built on."""
    return next(
        sys.modules[root]
        for cls in http_class.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )


def sse_client(sdk: ModuleType, is_async: bool, body: bytes) -> Any:
    """A client of `sdk` (openai or anthropic) whose every request is answered by `body`."""
    http_class = getattr(sdk, "DefaultAsyncHttpxClient" if is_async else "DefaultHttpxClient")
    module = http_module(http_class)

    def answer(request: Any) -> Any:
        return module.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = http_class(transport=module.MockTransport(answer))
    make = getattr(sdk, ("Async" if is_async else "") + _CLIENTS[sdk.__name__])
    return make(api_key="k", base_url="http://fake.invalid", http_client=http, max_retries=0)


@hw.on_chunk
def hold_back(chunk: hw.Chunk, ctx: hw.RunContext) -> Any:
    """The on_chunk page's recipe: text held back, released at the finish."""
    if chunk.kind == "text" and chunk.finish_reason is None:
        ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
        return hw.DROP
    if chunk.finish_reason is not None:
        return [hw.Chunk("text", ctx.call_state.pop("held", "").upper()), chunk]
    return None


@hw.on_chunk
def hold_back_before_calls(chunk: hw.Chunk, ctx: hw.RunContext) -> Any:
    """The recipe releasing the held text before a tool call too, where it belongs."""
    if chunk.kind == "text" and chunk.finish_reason is None:
        ctx.call_state["held"] = ctx.call_state.get("held", "") + chunk.text
        return hw.DROP
    if chunk.kind == "tool_call_start" or chunk.finish_reason is not None:
        held = ctx.call_state.pop("held", "")
        return [hw.Chunk("text", held.upper()), chunk] if held else None
    return None


@hw.on_chunk
def footer(chunk: hw.Chunk) -> Any:
    """Text added at the finish, after a block (an item) the API filled; a dropped chunk
    before it makes the stream framed from there on."""
    if chunk.kind == "text" and chunk.text == "ada@":
        return hw.DROP
    if chunk.finish_reason is not None:
        return [hw.Chunk("text", " (sent)"), chunk]
    return None
