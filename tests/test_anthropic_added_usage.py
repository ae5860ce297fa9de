"""A usage chunk an `on_chunk` hook adds to an Anthropic stream goes in the closing
`message_delta`: the final message `messages.stream()` builds from it (whose counts the
delta's replace) has the usage `after_model` sees, the cached input kept apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from canned_sse import sse, sse_client

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")

Hook = Callable[..., Any]
USER: Any = [{"role": "user", "content": "Hi"}]
CACHE = {"cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}


def _body(cumulative: bool) -> bytes:
    """A stream with prompt-cache counts (neutral input 115); its `message_delta` repeats
    the input counts when `cumulative`, as the API now sends them."""
    message: dict[str, Any] = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1, **CACHE},
    }  # fmt: skip
    closing: dict[str, Any] = {"output_tokens": 7}
    if cumulative:
        closing.update(input_tokens=10, **CACHE)
    block, text = {"type": "text", "text": ""}, {"type": "text_delta", "text": "Hi"}
    end = {"stop_reason": "end_turn", "stop_sequence": None}
    return sse(
        [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": text},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": end, "usage": closing},
            {"type": "message_stop"},
        ]
    )


def _adding(usage: hw.Usage) -> tuple[Hook, Hook, list[hw.Usage]]:
    """A hook adding a `usage` chunk after the text, and one keeping what `after_model` saw."""
    seen: list[hw.Usage] = []

    @hw.on_chunk
    def add(chunk: hw.Chunk) -> Any:
        return [chunk, hw.Chunk(kind="usage", usage=usage)] if chunk.kind == "text" else None

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        assert response.usage is not None
        seen.append(response.usage)

    return add, keep, seen


@pytest.mark.parametrize("cumulative", [False, True])
@pytest.mark.parametrize(("added", "expected"), [(300, 300), (50, 115), (0, 115)])
def test_added_usage_with_cache_counts_matches_after_model(
    cumulative: bool, added: int, expected: int
) -> None:
    add, keep, seen = _adding(hw.Usage(added, 9, added + 9))
    client = hw.wrap(sse_client(anthropic, False, _body(cumulative)), use=[add, keep])
    with client.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        usage = stream.get_final_message().usage
    assert seen[0].input_tokens == expected
    # the cache counts stay as the API gave them, and `input_tokens` leaves them out
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (100, 5)
    assert usage.input_tokens == expected - 105
    assert usage.output_tokens == seen[0].output_tokens == 9


def test_added_lower_input_count_keeps_the_higher_one() -> None:
    add, keep, seen = _adding(hw.Usage(0, 1, 1))
    client = hw.wrap(FakeProvider(["Hello", "Hello"]).anthropic(), use=[add, keep])
    events = list(client.messages.create(model="m", max_tokens=5, messages=USER, stream=True))
    closing = next(e for e in events if e.type == "message_delta")
    assert closing.usage.input_tokens == seen[0].input_tokens == 1
    with client.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        usage = stream.get_final_message().usage
    assert (usage.input_tokens, usage.output_tokens) == (1, seen[1].output_tokens)
