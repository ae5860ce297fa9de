"""A streamed answer keeps its native record too: its thinking, reasoning and signatures.

The message a stream is assembled into gets the `raw` record its non-streamed twin has
(docs/types.md), of the same tag and shape, read from the native events its chunks were
read from: Anthropic's content blocks put together from their deltas, the Responses
output items of the closing event, Gemini's candidate content with its pieces of text
joined. So an `Agent` that streams sends its thinking blocks, reasoning items and thought
parts back on the next turn, as one that does not. The SDKs run for real, on a mock HTTP
transport.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

import pytest
from native_turns import (
    CALL_PART,
    FUNCTION_CALL,
    HTTPX,
    REASONING,
    REDACTED,
    TEXT,
    THINK,
    THOUGHT,
    TOOL_USE,
    add,
    output_message,
)

import hookwrap as hw
from hookwrap import Agent

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")


@hw.on_chunk
def redact(chunk: hw.Chunk) -> hw.Chunk:
    """Takes the number out of the text the caller gets."""
    return chunk.replace(text=chunk.text.replace("42", "[x]")) if chunk.kind == "text" else chunk


class Pieces(HTTPX.SyncByteStream, HTTPX.AsyncByteStream):  # type: ignore[misc]
    """A response body that comes one event at a time, as a network's does."""

    def __init__(self, events: list[Any]) -> None:
        self.pieces = [f"data: {json.dumps(e)}\n\n".encode() for e in events]

    def __iter__(self) -> Any:
        return iter(self.pieces)

    async def __aiter__(self) -> Any:
        for piece in self.pieces:
            yield piece


class Provider:
    """One SDK on a mock transport that streams: its first answer calls `add` after
    thinking, its next ones end the run; `bodies` are the JSON requests it got."""

    tag = ""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        events = self.first() if len(self.bodies) == 1 else self.last()
        headers = {"content-type": "text/event-stream"}
        return HTTPX.Response(200, headers=headers, stream=Pieces(events))

    def target(self, is_async: bool) -> Any:
        raise NotImplementedError

    def first(self) -> list[Any]:
        raise NotImplementedError

    def last(self) -> list[Any]:
        raise NotImplementedError

    def turn(self, body: dict[str, Any]) -> Any:
        """The assistant turn of the first answer, as a request sends it back."""
        raise NotImplementedError

    def expected(self, text: str) -> Any:
        """That turn as the first answer streamed it, its text `text`."""
        raise NotImplementedError

    def record(self) -> Any:
        """The first answer's native message, as its `raw` record holds it."""
        raise NotImplementedError


REDACTED_THINKING: dict[str, Any] = {"type": "redacted_thinking", "data": "SECRET"}


class Anthropic(Provider):
    tag = "anthropic.messages"

    def target(self, is_async: bool) -> Any:
        transport = HTTPX.MockTransport(self.handle)
        if is_async:
            http: Any = anthropic.DefaultAsyncHttpxClient(transport=transport)
            client: Any = anthropic.AsyncAnthropic(
                api_key="k", base_url="http://x", http_client=http
            )
        else:
            http = anthropic.DefaultHttpxClient(transport=transport)
            client = anthropic.Anthropic(api_key="k", base_url="http://x", http_client=http)
        thinking = {"type": "enabled", "budget_tokens": 1024}
        create = client.messages.create
        return functools.partial(create, model="claude-x", max_tokens=2000, thinking=thinking)

    def events(self, blocks: list[tuple[dict[str, Any], list[Any]]], stop: str) -> list[Any]:
        """A stream of `blocks`, each as it starts and the deltas that fill it."""
        message: dict[str, Any] = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        }
        events: list[Any] = [{"type": "message_start", "message": message}]
        for i, (start, deltas) in enumerate(blocks):
            events.append({"type": "content_block_start", "index": i, "content_block": start})
            events += ({"type": "content_block_delta", "index": i, "delta": d} for d in deltas)
            events.append({"type": "content_block_stop", "index": i})
        delta = {"stop_reason": stop, "stop_sequence": None}
        events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 7}})
        events.append({"type": "message_stop"})
        return events

    def first(self) -> list[Any]:
        thinking = {"type": "thinking", "thinking": "", "signature": ""}
        thoughts = [
            {"type": "thinking_delta", "thinking": "I should "},
            {"type": "thinking_delta", "thinking": "add."},
            {"type": "signature_delta", "signature": "SIG123"},
        ]
        texts = [
            {"type": "text_delta", "text": "Let me add "},
            {"type": "text_delta", "text": "42."},
        ]
        args = [
            {"type": "input_json_delta", "partial_json": '{"a": 1,'},
            {"type": "input_json_delta", "partial_json": ' "b": 2}'},
        ]
        blocks: list[tuple[dict[str, Any], list[Any]]] = [
            (thinking, thoughts),
            (REDACTED_THINKING, []),
            ({"type": "text", "text": ""}, texts),
            ({**TOOL_USE, "input": {}}, args),
        ]
        return self.events(blocks, "tool_use")

    def last(self) -> list[Any]:
        text = [{"type": "text_delta", "text": "It is 3."}]
        return self.events([({"type": "text", "text": ""}, text)], "end_turn")

    def turn(self, body: dict[str, Any]) -> Any:
        return body["messages"][1]

    def expected(self, text: str) -> Any:
        return {"role": "assistant", "content": self.blocks(text)}

    def blocks(self, text: str) -> list[Any]:
        return [THINK, REDACTED_THINKING, {"type": "text", "text": text}, TOOL_USE]

    def record(self) -> Any:
        return self.blocks(TEXT)


class Responses(Provider):
    tag = "openai.responses"

    def target(self, is_async: bool) -> Any:
        transport = HTTPX.MockTransport(self.handle)
        if is_async:
            http: Any = openai.DefaultAsyncHttpxClient(transport=transport)
            client: Any = openai.AsyncOpenAI(api_key="k", base_url="http://x/v1", http_client=http)
        else:
            http = openai.DefaultHttpxClient(transport=transport)
            client = openai.OpenAI(api_key="k", base_url="http://x/v1", http_client=http)
        return functools.partial(client.responses.create, model="o3", store=False)

    def answer(self, output: list[Any], status: str = "completed") -> dict[str, Any]:
        usage = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}
        details = {"input_tokens_details": {"cached_tokens": 0}}
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "o3",
            "status": status,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {**usage, **details, "output_tokens_details": {"reasoning_tokens": 3}},
        }

    def events(self, output: list[Any]) -> list[Any]:
        """The stream of an answer of `output`, its texts and arguments in deltas."""
        events: list[dict[str, Any]] = []

        def add(kind: str, **fields: Any) -> None:
            events.append({"type": kind, "sequence_number": len(events), **fields})

        add("response.created", response=self.answer([], "queued"))
        for i, item in enumerate(output):
            at: dict[str, Any] = {"output_index": i, "item_id": item["id"]}
            if item["type"] == "message":
                opened: dict[str, Any] = {**item, "status": "in_progress", "content": []}
                add("response.output_item.added", output_index=i, item=opened)
                text = item["content"][0]["text"]
                cut = len(text) // 2
                for piece in (text[:cut], text[cut:]):
                    add("response.output_text.delta", **at, content_index=0, delta=piece)
                add("response.output_text.done", **at, content_index=0, text=text)
            elif item["type"] == "function_call":
                opened = {**item, "arguments": "", "status": "in_progress"}
                add("response.output_item.added", output_index=i, item=opened)
                add("response.function_call_arguments.delta", **at, delta=item["arguments"])
            else:
                add("response.output_item.added", output_index=i, item=item)
            add("response.output_item.done", output_index=i, item=item)
        add("response.completed", response=self.answer(output))
        return events

    def first(self) -> list[Any]:
        return self.events(self.record())

    def last(self) -> list[Any]:
        return self.events([output_message("It is 3.")])

    def turn(self, body: dict[str, Any]) -> Any:
        return body["input"][1:4]

    def expected(self, text: str) -> Any:
        return [REASONING, output_message(text), FUNCTION_CALL]

    def record(self) -> Any:
        return self.expected(TEXT)


class Gemini(Provider):
    tag = "google.models"

    def target(self, is_async: bool) -> Any:
        from google.genai import types

        args = {"transport": HTTPX.MockTransport(self.handle)}
        options = types.HttpOptions(base_url="http://x/", client_args=args, async_client_args=args)
        return (genai.Client(api_key="k", http_options=options), "gemini-3-pro")

    def events(self, parts: list[Any]) -> list[Any]:
        """One object per part, the last with the finish reason."""
        events: list[Any] = [
            {"candidates": [{"content": {"role": "model", "parts": [part]}}]} for part in parts
        ]
        events[-1]["candidates"][0]["finishReason"] = "STOP"
        return events

    def first(self) -> list[Any]:
        # each text in pieces, the text's signature on an empty part after it
        return self.events(
            [
                {"text": "I should ", "thought": True},
                {"text": "add.", "thought": True},
                {"text": "Let me add "},
                {"text": "42."},
                {"text": "", "thoughtSignature": "VFhU"},
                CALL_PART,
            ]
        )

    def last(self) -> list[Any]:
        return self.events([{"text": "It is 3."}])

    def turn(self, body: dict[str, Any]) -> Any:
        return body["contents"][1]

    def expected(self, text: str) -> Any:
        return {
            "role": "model",
            "parts": [THOUGHT, {"text": text, "thoughtSignature": "VFhU"}, CALL_PART],
        }

    def record(self) -> Any:
        return self.expected(TEXT)


PROVIDERS: list[Callable[[], Provider]] = [Anthropic, Responses, Gemini]
IDS = ["anthropic", "responses", "gemini"]
MODES = pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])


def _stream(agent: Agent, is_async: bool) -> hw.RunResult:
    """The run's result, its events read as they come."""
    if not is_async:
        result = list(agent.stream("1+2?"))[-1].result
    else:

        async def read() -> list[Any]:
            return [e async for e in agent.astream("1+2?")]

        result = asyncio.run(read())[-1].result
    assert result is not None
    return result


def _recorder(seen: list[hw.Message]) -> Any:
    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.message)

    return record


@MODES
@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_streamed_answer_goes_back_with_its_reasoning(
    make: Callable[[], Provider], is_async: bool
) -> None:
    provider = make()
    seen: list[hw.Message] = []
    agent = Agent(provider.target(is_async), tools=[add], use=[_recorder(seen)])
    result = _stream(agent, is_async)
    assert (result.status, result.text) == ("finished", "It is 3.")
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)
    # what `after_model` saw: the record a whole answer has, of the same tag and shape
    assert seen[0].raw == (provider.tag, provider.record())


@MODES
@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_hooks_change_to_the_streamed_text_is_sent_back(
    make: Callable[[], Provider], is_async: bool
) -> None:
    """The record holds what the API sent; the message's text is written over it."""
    provider = make()
    result = _stream(Agent(provider.target(is_async), tools=[add], use=[redact]), is_async)
    assert result.status == "finished"
    assert provider.turn(provider.bodies[1]) == provider.expected(REDACTED)


@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_chunk_a_hook_added_is_not_in_the_record_but_is_sent(
    make: Callable[[], Provider],
) -> None:
    """A chunk a hook made has no native event: the record leaves it out, and the text it
    adds to the message is written over the record."""

    @hw.on_chunk
    def more(chunk: hw.Chunk) -> Any:
        if chunk.kind == "text" and chunk.text.endswith("42."):
            return [chunk, hw.Chunk("text", " Done.")]
        return chunk

    provider = make()
    seen: list[hw.Message] = []
    agent = Agent(provider.target(False), tools=[add], use=[more, _recorder(seen)])
    assert _stream(agent, False).status == "finished"
    assert seen[0].text == TEXT + " Done."
    assert seen[0].raw == (provider.tag, provider.record())
    assert TEXT + " Done." in json.dumps(provider.turn(provider.bodies[1]))


def test_a_stream_whose_closing_event_a_hook_dropped_records_its_items() -> None:
    """The Responses record is then read from the `response.output_item.done` events."""

    @hw.on_chunk
    def unfinished(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.kind == "finish" else chunk

    provider = Responses()
    seen: list[hw.Message] = []
    agent = Agent(provider.target(False), tools=[add], use=[unfinished, _recorder(seen)])
    assert _stream(agent, False).status == "finished"
    assert seen[0].raw == (provider.tag, provider.record())
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)


@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_stream_whose_chunks_hooks_all_replaced_keeps_what_the_api_sent(
    make: Callable[[], Provider],
) -> None:
    """Every chunk replaced by a new one: the record is still of what the API sent (as a
    whole answer's is, whatever `after_model` made of it); the message's own fields are
    written over it."""

    @hw.on_chunk
    def anew(chunk: hw.Chunk) -> hw.Chunk:
        return hw.Chunk(chunk.kind, chunk.text, chunk.tool_call_id, chunk.tool_name)

    provider = make()
    seen: list[hw.Message] = []
    agent = Agent(provider.target(False), tools=[add], use=[anew, _recorder(seen)])
    _stream(agent, False)
    assert seen[0].raw == (provider.tag, provider.record())


@MODES
@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_stream_closed_early_records_nothing(
    make: Callable[[], Provider], is_async: bool
) -> None:
    """The caller leaves after the first chunk: the run ends there, and no hook sees a
    record of part of the answer (an SDK that read the whole body first, as Anthropic's
    does from this transport, has the whole answer); the next run records its own."""
    provider = make()
    seen: list[hw.Message] = []
    agent = Agent(provider.target(is_async), tools=[add], use=[_recorder(seen)])
    if not is_async:
        events = agent.stream("1+2?")
        assert next(e for e in events if e.kind == "chunk")
        events.close()
    else:

        async def leave() -> None:
            events = agent.astream("1+2?")
            async for event in events:
                if event.kind == "chunk":
                    break
            await events.aclose()

        asyncio.run(leave())
    assert len(provider.bodies) == 1
    assert all(m.raw == (provider.tag, provider.record()) for m in seen)
    seen.clear()
    provider.bodies.clear()  # the next run is answered from the start
    result = _stream(agent, is_async)
    assert result.status == "finished"
    assert seen[0].raw == (provider.tag, provider.record())
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)


@hw.on_chunk
def hide_reasoning(chunk: hw.Chunk) -> Any:
    """As docs/hooks/on-chunk.md shows it: the caller never sees the reasoning."""
    return hw.DROP if chunk.kind == "reasoning" else None


@MODES
@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_reasoning_a_hook_hid_from_the_caller_goes_back_whole(
    make: Callable[[], Provider], is_async: bool
) -> None:
    """The record holds what the API sent, the thinking text a hook dropped included: a
    thinking block's signature is of its whole text, which the API checks."""
    provider = make()
    agent = Agent(provider.target(is_async), tools=[add], use=[hide_reasoning])
    assert _stream(agent, is_async).status == "finished"
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)


def test_a_gemini_stream_whose_first_object_holds_only_usage_is_recorded() -> None:
    from hookwrap.adapters._google_wire import _streamed_answer  # pyright: ignore[reportPrivateUsage]
    from hookwrap.adapters._wire import Event

    part = {"text": "Let me add.", "thoughtSignature": "U0E="}
    objects = [
        {"usageMetadata": {"promptTokenCount": 3}},
        {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]},
    ]
    record = _streamed_answer([Event("", data) for data in objects])
    assert record == ("google.models", {"role": "model", "parts": [part]})
