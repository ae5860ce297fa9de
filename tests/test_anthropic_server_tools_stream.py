"""A server tool's blocks in a streamed Anthropic answer are no tool calls, as in a whole one.

`server_tool_use` (a web search the API runs itself) and its `web_search_tool_result` stay
out of the message's tool calls: `after_model` sees only the client's calls, an `Agent`
that streams runs only those and sends the server blocks back once, in the answer's native
record. The stream the caller gets keeps them, framed as the API framed them, when a hook
changes, drops or frames its chunks. The SDK runs for real, on a mock HTTP transport.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import hookwrap as hw
from hookwrap import Agent

anthropic = pytest.importorskip("anthropic")

from test_stream_answer_raw import HTTPX, Anthropic, add  # noqa: E402

SERVER: dict[str, Any] = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "q"},
}
RESULT: dict[str, Any] = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://u.test",
            "title": "t",
            "encrypted_content": "EC",
        }
    ],
}
CALL: dict[str, Any] = {
    "type": "tool_use",
    "id": "toolu_1",
    "name": "add",
    "input": {"a": 1, "b": 2},
}
BLOCKS = [SERVER, RESULT, {"type": "text", "text": "found it"}, CALL]


class Searching(Anthropic):
    """Its first answer searches the web, says so and calls `add`; its next ends the run."""

    def __init__(self, calls: bool = True) -> None:
        super().__init__()
        self.calls = calls

    def first(self) -> list[Any]:
        blocks: list[tuple[dict[str, Any], list[Any]]] = [
            ({**SERVER, "input": {}}, [json_delta('{"query": '), json_delta('"q"}')]),
            (RESULT, []),
            ({"type": "text", "text": ""}, [text_delta("found "), text_delta("it")]),
        ]
        if self.calls:
            blocks.append(({**CALL, "input": {}}, [json_delta('{"a": 1, "b": 2}')]))
        events = self.events(blocks, "tool_use" if self.calls else "end_turn")
        events.insert(2, {"type": "ping"})
        return events

    def handle(self, request: Any) -> Any:
        """Each event named as the API names it: the SDK's own stream reads the names."""
        self.bodies.append(json.loads(request.content))
        events = self.first() if len(self.bodies) == 1 else self.last()
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        headers = {"content-type": "text/event-stream"}
        return HTTPX.Response(200, headers=headers, content=body.encode())

    def client(self) -> Any:
        http = anthropic.DefaultHttpxClient(transport=HTTPX.MockTransport(self.handle))
        return anthropic.Anthropic(api_key="k", base_url="http://x", http_client=http)


def json_delta(text: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": text}


def text_delta(text: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": text}


KWARGS: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "search"}],
}


@hw.on_chunk
def upper(chunk: hw.Chunk) -> hw.Chunk:
    return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else chunk


@hw.on_chunk
def no_pings(chunk: hw.Chunk) -> hw.Chunk | None:
    """Drops a chunk, so that hookwrap frames the stream from there on."""
    return hw.DROP if chunk.name == "anthropic.ping" else None


@pytest.mark.parametrize("chunk_hooks", [[], [upper], [no_pings]], ids=["as-is", "upper", "drop"])
def test_after_model_sees_only_the_clients_call(chunk_hooks: list[Any]) -> None:
    seen: list[hw.ModelResponse] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    client = hw.wrap(Searching().client(), use=[record, *chunk_hooks])
    with client.messages.create(**KWARGS, stream=True) as stream:
        list(stream)
    [response] = seen
    assert response.message.tool_calls == (hw.ToolCall("toolu_1", "add", {"a": 1, "b": 2}),)
    assert response.message.raw[1][:2] == [SERVER, RESULT]


@pytest.mark.parametrize(
    "chunk_hooks",
    [[], [upper], [no_pings], [upper, no_pings]],
    ids=["as-is", "upper", "drop", "both"],
)
def test_the_sdks_final_message_keeps_the_server_blocks(chunk_hooks: list[Any]) -> None:
    """`messages.stream()` builds its message from the stream the caller gets: the server
    blocks are there as the API sent them, whether its events went on as they came, were
    rewritten (the text upper-cased) or framed again (a chunk dropped)."""
    client = hw.wrap(Searching().client(), use=chunk_hooks)
    with client.messages.stream(**KWARGS) as stream:
        message = stream.get_final_message()
    text = "FOUND IT" if upper in chunk_hooks else "found it"
    blocks = [b.model_dump(exclude_none=True) for b in message.content]
    assert blocks == [SERVER, RESULT, {"type": "text", "text": text}, CALL]
    assert message.stop_reason == "tool_use"


def test_a_framed_answer_with_only_a_server_tool_ends_its_turn() -> None:
    """A server tool calls nothing of the caller's: a stream framed again whose closing
    delta a hook rewrote still says `end_turn`."""

    @hw.on_chunk
    def count(chunk: hw.Chunk) -> hw.Chunk | None:
        return chunk.replace(usage=hw.Usage(5, 9, 14)) if chunk.kind == "finish" else None

    client = hw.wrap(Searching(calls=False).client(), use=[no_pings, count])
    with client.messages.stream(**KWARGS) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert (message.stop_reason, message.usage.output_tokens) == ("end_turn", 9)


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
def test_a_streaming_agent_runs_only_the_clients_tool(is_async: bool) -> None:
    provider = Searching()
    agent = Agent(provider.target(is_async), tools=[add])
    if is_async:

        async def read() -> list[Any]:
            return [e async for e in agent.astream("search")]

        events = asyncio.run(read())
    else:
        events = list(agent.stream("search"))
    result = events[-1].result
    assert result is not None
    assert result.status == "finished"
    assert len(provider.bodies) == 2
    _, turn, results = provider.bodies[1]["messages"]
    assert turn == {"role": "assistant", "content": BLOCKS}
    assert results["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}]
