"""A Chat Completions stream framed again (after a hook dropped a chunk, or made of another
API's chunks) carries its usage once, as the API sends it; and a changed message of a
request written back keeps its own dict when a hook puts a new one beside it, with the
real SDK."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from canned_sse import sse_client

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

USER: Any = [{"role": "user", "content": "the code?"}]
HEAD = {"id": "1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
COUNTS = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
# a compatible server's stream: the usage on the finish chunk, no usage chunk after it
ON_FINISH = [
    {**HEAD, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The code "}}]},
    {**HEAD, "choices": [{"index": 0, "delta": {"content": "is "}}]},
    {
        **HEAD,
        "choices": [{"index": 0, "delta": {"content": "SECRET"}, "finish_reason": "stop"}],
        "usage": COUNTS,
    },
]


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in [*events, "[DONE]"]).encode()


def dropping(word: str) -> Any:
    @hw.on_chunk
    def drop(chunk: hw.Chunk) -> Any:
        return hw.DROP if word in chunk.text else None

    return drop


@hw.on_chunk
def drop_done(chunk: hw.Chunk) -> Any:
    """Leaves out the stream's `[DONE]`: the stream is framed (and closed) again after its
    usage chunk went out."""
    return hw.DROP if chunk.name == "openai.chat.done" else None


def usages(chunks: list[Any]) -> list[tuple[int, int, int]]:
    return [
        (c.usage.prompt_tokens, c.usage.completion_tokens, c.usage.total_tokens)
        for c in chunks
        if c.usage is not None
    ]


@pytest.mark.parametrize("word", ["SECRET", "is"])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_usage_the_api_sent_on_its_finish_is_not_sent_again(word: str, is_async: bool) -> None:
    """Whether the dropped text came with the finish or before it."""
    client = hw.wrap(sse_client(openai, is_async, sse(ON_FINISH)), use=[dropping(word)])
    ask: Any = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}

    async def pull() -> list[Any]:
        return [c async for c in await client.chat.completions.create(stream=True, **ask)]

    chunks = (
        asyncio.run(pull())
        if is_async
        else list(client.chat.completions.create(stream=True, **ask))
    )
    assert usages(chunks) == [(10, 5, 15)]
    assert chunks[-1].usage is not None  # the last chunk's: the one the SDK's helper keeps


def test_a_usage_chunk_sent_before_a_drop_is_not_sent_again() -> None:
    client = hw.wrap(FakeProvider(["hello there friend"]).openai(), use=[drop_done])
    ask: Any = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
    chunks = list(client.chat.completions.create(stream=True, **ask))
    assert len(usages(chunks)) == 1
    with client.chat.completions.stream(**ask) as stream:
        assert stream.get_final_completion().usage is not None


def test_a_usage_a_hook_adds_after_a_drop_goes_in_the_apis_usage_chunk() -> None:
    """The doc's rule still holds: added counts in the last usage chunk, none added."""

    @hw.on_chunk
    def recount(chunk: hw.Chunk) -> Any:
        if "frie" in chunk.text:
            return hw.DROP
        if chunk.kind == "finish":
            return [chunk, hw.Chunk("usage", usage=hw.Usage(100, 1))]
        return None

    client = hw.wrap(FakeProvider(["hello there friend"]).openai(), use=[recount])
    ask: Any = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
    chunks = list(client.chat.completions.create(stream=True, **ask))
    found = usages(chunks)
    assert len(found) == 1
    assert found[0][0] == 100
    assert not chunks[-1].choices


def _gemini() -> tuple[Any, str]:
    pytest.importorskip("google.genai")
    return FakeProvider(["from someone"]).genai(), "gemini-x"


def _claude() -> tuple[Any, str]:
    pytest.importorskip("anthropic")
    return FakeProvider(["from someone"]).anthropic(max_retries=0), "claude-x"


@pytest.mark.parametrize("alternative", [_gemini, _claude])
def test_another_apis_stream_carries_its_usage_in_one_usage_chunk(alternative: Any) -> None:
    """Its usage (on its finish, or counted apart as Anthropic's) goes in the usage chunk
    last, as the Chat Completions API sends it, not on the finish chunk too."""
    down = FakeProvider(["never"])
    down.fail(500)
    client = hw.wrap(down.openai(max_retries=0), use=[Fallback(models=[alternative()])])
    ask: Any = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
    logging.disable(logging.WARNING)  # the first model's failure is logged: not the point
    try:
        chunks = list(client.chat.completions.create(stream=True, **ask))
    finally:
        logging.disable(logging.NOTSET)
    assert len(usages(chunks)) == 1
    assert chunks[-1].usage is not None
    assert not chunks[-1].choices


@hw.before_model
def prompt_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    """A system prompt put first, the rest redacted."""
    messages = (m.replace(content=m.text.replace("secret", "[x]")) for m in request.messages)
    return request.replace(messages=(hw.Message("system", "Be brief."), *messages))


def test_a_chat_system_prompt_put_before_a_changed_developer_message_is_new() -> None:
    provider = FakeProvider(["ok"])
    client = hw.wrap(provider.openai(), use=[prompt_and_redact])
    given: Any = [
        {"role": "developer", "content": "secret rules", "name": "ops", "metadata": {"k": 1}},
        {"role": "user", "content": "hi"},
    ]
    client.chat.completions.create(model="m", messages=given)
    assert provider.requests[-1].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "[x] rules", "name": "ops", "metadata": {"k": 1}},
        given[1],
    ]


@hw.before_model
def prompt_before_developer(request: hw.ModelRequest) -> hw.ModelRequest:
    """A system prompt put right before the developer message (not first: the Responses API
    takes a leading one as `instructions`), the rest redacted."""
    first, *rest = (m.replace(content=m.text.replace("secret", "[x]")) for m in request.messages)
    return request.replace(messages=(first, hw.Message("system", "Be brief."), *rest))


def test_a_responses_system_prompt_put_before_a_changed_developer_item_is_new() -> None:
    provider = FakeProvider(["ok"])
    client = hw.wrap(provider.openai(), use=[prompt_before_developer])
    given: Any = [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "developer", "content": "secret rules"},
    ]
    client.responses.create(model="m", input=given)
    sent = provider.requests[-1].body["input"]
    assert sent[0] == given[0]
    assert (sent[1]["role"], sent[1]["content"]) == ("system", "Be brief.")
    assert sent[2] == {"type": "message", "role": "developer", "content": "[x] rules"}
    assert len(sent) == 3
