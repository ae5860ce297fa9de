"""Which original a changed message is written over (`function._pairs`, shared by plain
functions, Chat Completions, Responses and Anthropic): a tool result over its own call's
result, a message a hook kept over its very self where two look alike to hooks, and a
long history a hook trims and redacts over each message's own."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

CACHE = {"type": "ephemeral"}


@hw.before_model
def drop_t2_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    kept = [
        m.replace(content=m.text.replace("secret", "[x]")) if m.role == "tool" else m
        for m in request.messages
        if m.tool_call_id != "t2"
    ]
    return request.replace(messages=kept)


def test_anthropic_a_changed_tool_result_keeps_its_own_keys() -> None:
    """`r1 [x]` looks more like `r2` than like `r1 secret`: it is still t1's result."""
    pytest.importorskip("anthropic")
    calls = [{"type": "tool_use", "id": t, "name": "f", "input": {}} for t in ("t1", "t2")]
    results = [
        {"type": "tool_result", "tool_use_id": "t1", "content": "r1 secret"}
        | {"cache_control": CACHE},
        {"type": "tool_result", "tool_use_id": "t2", "content": "r2", "is_error": True},
    ]
    conversation = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]
    provider = FakeProvider(["fine"])
    client = hw.wrap(provider.anthropic(), use=[drop_t2_and_redact])
    client.messages.create(model="m", max_tokens=10, messages=conversation)
    sent = provider.requests[0].body["messages"][-1]["content"]
    assert sent == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "r1 [x]", "cache_control": CACHE}
    ]


def test_openai_chat_a_changed_tool_result_keeps_its_own_keys() -> None:
    pytest.importorskip("openai")
    calls = [
        {"id": t, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for t in ("t1", "t2")
    ]
    conversation = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "t1", "content": "r1 secret", "metadata": "one"},
        {"role": "tool", "tool_call_id": "t2", "content": "r2", "metadata": "two"},
    ]
    provider = FakeProvider(["fine"])
    client = hw.wrap(provider.openai(), use=[drop_t2_and_redact])
    client.chat.completions.create(model="m", messages=conversation)  # type: ignore[arg-type]
    sent = provider.requests[0].body["messages"][-1]
    assert sent == {"role": "tool", "tool_call_id": "t1", "content": "r1 [x]", "metadata": "one"}


def test_the_message_a_hook_kept_is_itself_where_two_look_alike() -> None:
    """The audio parts hooks do not see make two messages look the same to them: the one
    a hook keeps goes to the function with its own audio."""
    audio = [{"type": "input_audio", "input_audio": {"data": d, "format": "wav"}} for d in "AB"]
    first = {"role": "user", "content": [{"type": "text", "text": "transcribe"}, audio[0]]}
    last = {"role": "user", "content": [{"type": "text", "text": "transcribe"}, audio[1]]}
    got: list[Any] = []

    @hw.before_model
    def keep_last(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=request.messages[-1:])

    def model(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(model, use=[keep_last])([first, {"role": "assistant", "content": "done"}, last])
    assert got == [last]
    assert got[0] is last


def test_a_trimmed_and_redacted_long_history_keeps_each_messages_own_keys() -> None:
    """Two hundred messages, the first turn dropped and every text redacted: each message
    is written over its own original (its `metadata`), not a neighbour's. (It held before
    the ranking looked only near each message's place, too: it guards that ranking, whose
    gain is speed, 13 s to 0.05 s for such a call, which no test times.)"""
    conversation: list[dict[str, Any]] = []
    for k in range(100):
        words = " ".join(f"word{k}-{n}" for n in range(30))
        for role in ("user", "assistant"):
            conversation.append({"role": role, "content": f"{words} secret", "metadata": k})
    got: list[Any] = []

    @hw.before_model
    def trim_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
        kept = request.messages[2:]
        return request.replace(messages=[m.replace(content=m.text[:-6]) for m in kept])

    def model(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(model, use=[trim_and_redact])(conversation)
    assert [m["metadata"] for m in got] == [k for k in range(1, 100) for _ in range(2)]
    assert all(not m["content"].endswith("secret") for m in got)


def test_a_sync_function_annotated_async_iterable_must_return_an_async_stream() -> None:
    """A list is no async iterator: it stays the clear error it was, where an `Iterable`
    annotation takes one."""

    def words(messages: list[Any]) -> AsyncIterable[str]:
        return ["a"]  # type: ignore[return-value]

    def sync_words(messages: list[Any]) -> Iterable[str]:
        return ["a"]

    asked = [{"role": "user", "content": "x"}]
    with pytest.raises(TypeError, match="returned list"):
        hw.model(words, use=[drop_t2_and_redact])(asked)
    assert list(hw.model(sync_words, use=[drop_t2_and_redact])(asked)) == ["a"]


def test_trimmed_redacted_and_appended_each_message_is_its_own() -> None:
    """Ten taken out, every text redacted, eight appended: each kept message is written over
    its own original, wherever it moved; an appended one takes nothing of those taken out."""
    conversation: list[dict[str, Any]] = []
    for k in range(50):
        words = " ".join(f"word{k}-{n}" for n in range(30))
        for role in ("user", "assistant"):
            conversation.append({"role": role, "content": f"{words} secret", "metadata": k})
    got: list[Any] = []

    @hw.before_model
    def trim_redact_append(request: hw.ModelRequest) -> hw.ModelRequest:
        kept = [m.replace(content=m.text[:-6]) for m in request.messages[10:]]
        notes = [hw.Message(r, f"note {i}") for i in range(4) for r in ("user", "assistant")]
        return request.replace(messages=kept + notes)

    def model(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(model, use=[trim_redact_append])(conversation)
    assert [m.get("metadata") for m in got[:90]] == [k for k in range(5, 50) for _ in range(2)]
    assert [m.get("metadata") for m in got[90:]] == [None] * 8


@hw.before_model
def rename_ids(request: hw.ModelRequest) -> hw.ModelRequest:
    """Sanitise ids, in the calls and in their results alike."""
    messages = []
    for m in request.messages:
        if m.tool_calls:
            m = m.replace(tool_calls=[c.replace(id=c.id.replace(".", "_")) for c in m.tool_calls])
        if m.tool_call_id:
            m = m.replace(tool_call_id=m.tool_call_id.replace(".", "_"))
        messages.append(m)
    return request.replace(messages=messages)


def test_a_tool_result_whose_id_a_hook_renamed_keeps_its_own_keys() -> None:
    pytest.importorskip("anthropic")
    calls = [{"type": "tool_use", "id": "t.1", "name": "f", "input": {}}]
    result = {"type": "tool_result", "tool_use_id": "t.1", "content": "r1", "is_error": True}
    conversation = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": [result | {"cache_control": CACHE}]},
    ]
    provider = FakeProvider(["fine"])
    client = hw.wrap(provider.anthropic(), use=[rename_ids])
    client.messages.create(model="m", max_tokens=10, messages=conversation)
    sent = provider.requests[0].body["messages"][-1]["content"]
    assert sent == [result | {"tool_use_id": "t_1", "cache_control": CACHE}]


@pytest.mark.parametrize("n", [40, 1200], ids=["short", "long"])
def test_a_sliding_window_over_texts_a_redaction_made_alike(n: int) -> None:
    """The oldest half dropped, every digit masked: the texts left tell the messages apart
    no more, so their places do (the kept ones are the last ones); a long history weighs
    only pairs near those places."""
    conversation = [
        {"role": ("user", "assistant")[k % 2], "content": f"turn {k}: order 55{k}", "metadata": k}
        for k in range(n)
    ]
    got: list[Any] = []

    @hw.before_model
    def window_and_mask(request: hw.ModelRequest) -> hw.ModelRequest:
        kept = request.messages[len(request.messages) // 2 :]
        masked = [
            m.replace(content="".join("#" if c.isdigit() else c for c in m.text)) for m in kept
        ]
        return request.replace(messages=masked)

    def model(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(model, use=[window_and_mask])(conversation)
    assert [m["metadata"] for m in got] == list(range(n // 2, n))


def test_a_short_message_a_hook_appends_takes_nothing_of_one_it_took_out() -> None:
    """Short texts share few words: none of a message's absent parts (no tool call id)
    count as a word they share."""
    conversation = [
        {"role": "user", "content": "hi 1", "metadata": 1},
        {"role": "assistant", "content": "sure 2", "metadata": 2},
        {"role": "user", "content": "call 3", "metadata": 3},
    ]
    got: list[Any] = []

    @hw.before_model
    def keep_two_and_append(request: hw.ModelRequest) -> hw.ModelRequest:
        kept = [m.replace(content=m.text[:-1] + "#") for m in request.messages[-2:]]
        return request.replace(messages=[*kept, hw.Message.user("Be brief.")])

    def model(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(model, use=[keep_two_and_append])(conversation)
    assert [m.get("metadata") for m in got] == [2, 3, None]
