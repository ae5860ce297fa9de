"""An answer a `Fallback` alternative of another provider gives reaches the caller as its own
API's answer: the usage counts its hooks see, and the finish reason its agent loop reads."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

USER: Any = [{"role": "user", "content": "hi there friend"}]
CALL = hw.Message.assistant("", [hw.ToolCall("call_1", "get_weather", {"city": "Paris"})])
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "input_schema": SCHEMA}]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    """The first model's failure is logged as the fallback happens: not the point here."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def claude_answering(answer: str | hw.Message = "from someone") -> tuple[Any, str]:
    """An Anthropic alternative: its stream counts the input in `message_start` and the
    output in `message_delta`, apart."""
    return FakeProvider([answer]).anthropic(max_retries=0), "claude-x"


def down() -> FakeProvider:
    provider = FakeProvider(["never"])
    provider.fail(500)
    return provider


def seen_usage() -> tuple[list[hw.Usage], Any]:
    seen: list[hw.Usage] = []

    @hw.on_usage
    def record(usage: hw.Usage) -> None:
        seen.append(usage)

    return seen, record


def test_a_chat_stream_ends_with_the_usage_of_both_of_an_anthropic_alternatives_counts() -> None:
    seen, record = seen_usage()
    client = hw.wrap(
        down().openai(max_retries=0), use=[record, Fallback(models=[claude_answering()])]
    )
    ask: Any = {"model": "gpt-4o", "messages": USER, "stream_options": {"include_usage": True}}
    with client.chat.completions.stream(**ask) as stream:
        usage = stream.get_final_completion().usage
    assert usage is not None
    counts = (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
    assert counts == (4, 3, 7)
    assert seen == [hw.Usage(4, 3, 7)]


def test_an_async_chat_stream_ends_with_the_usage_of_both_counts() -> None:
    async def main() -> tuple[int, int, int]:
        client = hw.wrap(
            down().openai(True, max_retries=0), use=[Fallback(models=[claude_answering()])]
        )
        ask: Any = {"model": "gpt-4o", "messages": USER, "stream_options": {"include_usage": True}}
        async with client.chat.completions.stream(**ask) as stream:
            usage = (await stream.get_final_completion()).usage
        assert usage is not None
        return usage.prompt_tokens, usage.completion_tokens, usage.total_tokens

    assert asyncio.run(main()) == (4, 3, 7)


def test_a_responses_stream_totals_both_of_an_anthropic_alternatives_counts() -> None:
    client = hw.wrap(down().openai(max_retries=0), use=[Fallback(models=[claude_answering()])])
    with client.responses.stream(model="gpt-4o", input="hi there friend") as stream:
        usage = stream.get_final_response().usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (4, 3, 7)


ALTERNATIVES: dict[str, Callable[[FakeProvider], Any]] = {
    "gemini": lambda p: (p.genai(), "gemini-x"),
    "responses": lambda p: functools.partial(p.openai().responses.create, model="gpt-4.1"),
}


@pytest.mark.parametrize("alternative", list(ALTERNATIVES))
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_chat_caller_is_told_tool_calls_when_the_alternative_calls_a_tool(
    alternative: str, streamed: bool
) -> None:
    """Gemini ends a turn that calls functions with `STOP`, a Response with `completed`:
    OpenAI says `tool_calls`, which an agent loop waits for."""
    backup = ALTERNATIVES[alternative](FakeProvider([CALL]))
    client = hw.wrap(down().openai(max_retries=0), use=[Fallback(models=[backup])])
    ask: Any = {"model": "gpt-4o", "messages": USER, "tools": CHAT_TOOLS}
    if streamed:
        with client.chat.completions.stream(**ask) as stream:
            choice = stream.get_final_completion().choices[0]
    else:
        choice = client.chat.completions.create(**ask).choices[0]
    assert [c.id for c in choice.message.tool_calls or []] == ["call_1"]
    assert choice.finish_reason == "tool_calls"


@pytest.mark.parametrize("alternative", list(ALTERNATIVES))
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_anthropic_caller_is_told_tool_use_when_the_alternative_calls_a_tool(
    alternative: str, streamed: bool
) -> None:
    backup = ALTERNATIVES[alternative](FakeProvider([CALL]))
    client = hw.wrap(down().anthropic(max_retries=0), use=[Fallback(models=[backup])])
    ask: Any = {"model": "claude-x", "max_tokens": 100, "messages": USER, "tools": ANTHROPIC_TOOLS}
    if streamed:
        with client.messages.stream(**ask) as stream:
            message = stream.get_final_message()
    else:
        message = client.messages.create(**ask)
    assert [block.type for block in message.content] == ["tool_use"]
    assert message.stop_reason == "tool_use"


def test_an_async_anthropic_stream_is_told_tool_use_by_a_gemini_alternative() -> None:
    async def main() -> str | None:
        backup = (FakeProvider([CALL]).genai(), "gemini-x")
        client = hw.wrap(down().anthropic(True, max_retries=0), use=[Fallback(models=[backup])])
        ask: Any = {"model": "c", "max_tokens": 100, "messages": USER, "tools": ANTHROPIC_TOOLS}
        async with client.messages.stream(**ask) as stream:
            return (await stream.get_final_message()).stop_reason

    assert asyncio.run(main()) == "tool_use"


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_without_tool_calls_still_ends_its_turn(streamed: bool) -> None:
    backup = (FakeProvider(["sunny"]).genai(), "gemini-x")
    chat = hw.wrap(down().openai(max_retries=0), use=[Fallback(models=[backup])])
    claude = hw.wrap(down().anthropic(max_retries=0), use=[Fallback(models=[backup])])
    if streamed:
        with chat.chat.completions.stream(model="g", messages=USER) as stream:
            finish = stream.get_final_completion().choices[0].finish_reason
        with claude.messages.stream(model="c", max_tokens=9, messages=USER) as messages:
            stop = messages.get_final_message().stop_reason
    else:
        finish = chat.chat.completions.create(model="g", messages=USER).choices[0].finish_reason
        stop = claude.messages.create(model="c", max_tokens=9, messages=USER).stop_reason
    assert (finish, stop) == ("stop", "end_turn")


def test_a_gemini_stream_ends_with_the_usage_of_both_of_an_anthropic_alternatives_counts() -> None:
    """The SDK's last `usage_metadata` is the answer's: Gemini counts running totals."""
    client = hw.wrap(down().genai(max_retries=0), use=[Fallback(models=[claude_answering()])])
    items = list(client.models.generate_content_stream(model="g", contents="hi there friend"))
    usage = [item.usage_metadata for item in items if item.usage_metadata][-1]
    counts = (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count)
    assert counts == (4, 3, 7)
