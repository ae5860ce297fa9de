"""ContentGuard on a whole SDK answer of several text blocks (docs/middleware/content-guard.md:
"An answer made of parts has each text part filtered on its own"): each block is filtered
on its own, as the same answer's blocks are in a stream, so a match cannot run from one
block into the next and take text of both. Through the real SDKs, on a canned answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canned_sse import http_module

import hookwrap as hw
from hookwrap.middleware import ContentGuard

KEY = (r"sk-[A-Za-z0-9]{8,40}", "[key]")
FIRST, SECOND = "Checking with key sk-live4f9a2b7c", "Done."


def client(sdk: Any, cls: str, body: dict[str, Any]) -> Any:
    """A client of `sdk` whose every request is answered with the JSON `body`."""
    http_class = sdk.DefaultHttpxClient
    module = http_module(http_class)

    def answer(request: Any) -> Any:
        return module.Response(200, json=body)

    http = http_class(transport=module.MockTransport(answer))
    return getattr(sdk, cls)(api_key="k", base_url="http://fake.invalid", http_client=http)


def anthropic_answer(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": list(blocks),
    }


TOOL_USE = {"type": "tool_use", "id": "tu_1", "name": "f", "input": {"a": 1}}


@pytest.mark.parametrize("between", [[], [TOOL_USE]], ids=["adjacent", "around-a-tool-call"])
def test_an_anthropic_answers_blocks_are_filtered_one_by_one(between: list[Any]) -> None:
    anthropic = pytest.importorskip("anthropic")
    text = lambda t: {"type": "text", "text": t}  # noqa: E731
    body = anthropic_answer(text(FIRST), *between, text(SECOND))
    guarded = hw.wrap(client(anthropic, "Anthropic", body), use=[ContentGuard(rules=[KEY])])
    answer = guarded.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
    )
    texts = [b.text for b in answer.content if b.type == "text"]
    assert texts == ["Checking with key [key]", "Done."]
    assert [b.type for b in answer.content] == ["text", *(b["type"] for b in between), "text"]


def test_a_responses_answers_output_texts_are_filtered_one_by_one() -> None:
    openai = pytest.importorskip("openai")

    def message(i: int, t: str) -> dict[str, Any]:
        part = {"type": "output_text", "text": t, "annotations": []}
        return {
            "type": "message",
            "id": f"msg_{i}",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }

    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "m",
        "output": [message(1, FIRST), message(2, SECOND)],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    guarded = hw.wrap(client(openai, "OpenAI", body), use=[ContentGuard(rules=[KEY])])
    answer = guarded.responses.create(model="m", input="x")
    assert [c.text for o in answer.output for c in o.content] == [
        "Checking with key [key]",
        "Done.",
    ]


def test_a_match_inside_one_block_is_still_caught() -> None:
    """The guard: a key wholly inside the second block is redacted there."""
    anthropic = pytest.importorskip("anthropic")
    body = anthropic_answer(
        {"type": "text", "text": "Hi. "}, {"type": "text", "text": "sk-abcdefgh12 end"}
    )
    guarded = hw.wrap(client(anthropic, "Anthropic", body), use=[ContentGuard(rules=[KEY])])
    answer = guarded.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
    )
    assert [b.text for b in answer.content] == ["Hi. ", "[key] end"]
    assert json.dumps(answer.model_dump()).count("sk-") == 0


def test_a_gemini_answers_parts_are_filtered_one_by_one() -> None:
    pytest.importorskip("google.genai")
    from hookwrap.testing import FakeProvider

    parts = [hw.TextPart("key sk-live4f9a2b7c"), hw.TextPart("b2 is the second block")]
    reply = hw.ModelResponse(hw.Message.assistant(parts))
    guarded = hw.wrap(FakeProvider([reply]).genai(), use=[ContentGuard(rules=[KEY])])
    answer = guarded.models.generate_content(model="m", contents="x")
    assert answer.candidates is not None
    assert answer.candidates[0].content is not None
    texts = [p.text for p in answer.candidates[0].content.parts or ()]
    assert texts == ["key [key]", "b2 is the second block"]


@pytest.mark.parametrize(
    "rule",
    [(r"\A", "[bot] "), lambda text: text + " [checked]"],
    ids=["prefix", "suffix-function"],
)
def test_what_a_rule_adds_at_a_blocks_edge_stays_in_that_block(rule: Any) -> None:
    """Each block's own result goes back into it, whole as streamed: text a rule adds at
    the start or end of a block is not moved into the block beside it."""
    anthropic = pytest.importorskip("anthropic")
    body = anthropic_answer(
        {"type": "text", "text": "Let me check."}, TOOL_USE, {"type": "text", "text": "Done."}
    )
    guarded = hw.wrap(client(anthropic, "Anthropic", body), use=[ContentGuard(rules=[rule])])
    answer = guarded.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
    )
    texts = [b.text for b in answer.content if b.type == "text"]
    if callable(rule):
        assert texts == ["Let me check. [checked]", "Done. [checked]"]
    else:
        assert texts == ["[bot] Let me check.", "[bot] Done."]


def test_the_answers_raw_json_holds_the_filtered_blocks() -> None:
    """A hook after the guard that reads `response.raw` sees no secret either."""
    anthropic = pytest.importorskip("anthropic")
    seen: list[Any] = []

    @hw.after_model(priority=1)  # outside the guard: after hooks run inside out
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.raw)

    body = anthropic_answer({"type": "text", "text": FIRST}, {"type": "text", "text": SECOND})
    guard = ContentGuard(rules=[KEY])
    guarded = hw.wrap(client(anthropic, "Anthropic", body), use=[look, guard])
    guarded.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert [b["text"] for b in seen[0]["content"]] == ["Checking with key [key]", "Done."]
