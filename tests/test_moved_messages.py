"""A message a hook only moves (takes out in one place and puts back, as it was, in
another) is still the caller's own item where it lands: its unmodelled keys stay (a
function's chat dict's `metadata` and "developer" spelling, a Responses item's `id`, an
Anthropic block's `cache_control`), as they do for a message left in place
(docs/types.md, docs/sdks/index.md). Through the real SDKs against the fake provider."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider


@hw.before_model
def last_first(request: hw.ModelRequest) -> hw.ModelRequest:
    """Puts the last message first, changing nothing in it."""
    *rest, last = request.messages
    return request.replace(messages=(last, *rest))


RULES = {"role": "developer", "content": "rules", "metadata": {"k": 2}}
ASK = {"role": "user", "content": "a", "metadata": {"k": 1}}


def test_a_function_message_moved_is_the_callers_own_dict() -> None:
    got: list[Any] = []

    def llm(messages: list[Any]) -> str:
        got.append(messages)
        return "ok"

    given = [ASK, RULES]
    hw.model(llm, use=[last_first])(given)
    assert got[0] == [RULES, ASK]
    assert got[0][0] is RULES
    assert got[0][1] is ASK


@pytest.mark.parametrize("stream", [False, True])
def test_an_openai_message_moved_keeps_its_keys(stream: bool) -> None:
    fake = FakeProvider(["ok", "ok"])
    client = hw.wrap(fake.openai(), use=[last_first])
    item = {
        "type": "message",
        "role": "developer",
        "id": "msg_1",
        "content": [{"type": "input_text", "text": "rules"}],
    }
    for answer in (
        client.chat.completions.create(model="m", messages=[ASK, RULES], stream=stream),
        client.responses.create(
            model="m", input=[{"role": "user", "content": "a"}, item], stream=stream
        ),
    ):
        if stream:
            list(answer)  # type: ignore[call-overload]
    assert fake.requests[0].body["messages"] == [RULES, ASK]
    assert fake.requests[1].body["input"] == [item, {"role": "user", "content": "a"}]


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_message_moved_keeps_its_blocks_keys(stream: bool) -> None:
    fake = FakeProvider(["ok"])
    client = hw.wrap(fake.anthropic(), use=[last_first])
    cached = {
        "role": "user",
        "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}],
    }
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "b"}, cached]
    answer = client.messages.create(model="m", max_tokens=5, messages=history, stream=stream)
    if stream:
        list(answer)  # type: ignore[call-overload]
    assert fake.requests[0].body["messages"] == [cached, *history[:2]]


def test_a_message_changed_as_it_moves_is_written_fresh() -> None:
    """The guard: a moved message that a hook also changed is not the old dict."""

    @hw.before_model
    def move_and_change(request: hw.ModelRequest) -> hw.ModelRequest:
        *rest, last = request.messages
        return request.replace(messages=(last.replace(content="other rules"), *rest))

    got: list[Any] = []

    def llm(messages: list[Any]) -> str:
        got.append(messages)
        return "ok"

    hw.model(llm, use=[move_and_change])([ASK, RULES])
    assert got[0][1] is ASK
    assert got[0][0]["content"] == "other rules"


def test_a_gemini_message_moved_keeps_its_parts_keys() -> None:
    """A guard: Gemini's write-back, which finds parts' signatures again by themselves,
    kept them already."""
    pytest.importorskip("google.genai")
    fake = FakeProvider(["ok"])
    client = hw.wrap(fake.genai(), use=[last_first])
    signed = {"role": "model", "parts": [{"text": "b", "thoughtSignature": "c2ln"}]}
    asked = {"role": "user", "parts": [{"text": "q"}]}
    client.models.generate_content(model="m", contents=[asked, signed])
    assert fake.requests[0].body["contents"] == [signed, asked]
