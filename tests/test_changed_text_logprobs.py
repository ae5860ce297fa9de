"""Logprobs describe the text they came with, token by token: where a hook (or a
`ContentGuard` rule) changes a text, they would spell out the old one, so they go from it,
in the caller's answer and in the `response.raw` a later hook reads. A chat answer loses
its `logprobs`, a Responses output text its own (emptied), a Gemini candidate its
`logprobsResult` and `avgLogprobs`; a text left as it was keeps them."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import ContentGuard

SECRET = "sk-abcdefgh12"
KEY = (r"sk-[A-Za-z0-9]{8,40}", "[key]")


def noted(seen: list[Any]) -> Any:
    """An `after_model` hook noting `response.raw`: listed before the guard, it runs after it."""

    @hw.after_model
    def audit(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.raw)

    return audit


def openai_client(body: dict[str, Any]) -> Any:
    openai = pytest.importorskip("openai")
    from canned_sse import http_module

    module = http_module(openai.DefaultHttpxClient)
    http = openai.DefaultHttpxClient(
        transport=module.MockTransport(lambda request: module.Response(200, json=body))
    )
    return openai.OpenAI(api_key="k", base_url="http://fake.invalid", http_client=http)


def output_text(text: str) -> dict[str, Any]:
    """An output text whose logprobs are of one token: the whole text."""
    token = {"token": text, "logprob": -0.1, "bytes": None, "top_logprobs": []}
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": [token]}


def message_item(n: int, *parts: dict[str, Any]) -> dict[str, Any]:
    head = {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed"}
    return {**head, "content": list(parts)}


RESPONSES = {
    "one part": [message_item(1, output_text(f"key {SECRET}"))],
    "two parts": [message_item(1, output_text(f"key {SECRET}"), output_text(" bye"))],
    "two items": [
        message_item(1, output_text(f"key {SECRET}")),
        message_item(2, output_text(" bye")),
    ],
}


@pytest.mark.parametrize("output", RESPONSES.values(), ids=RESPONSES)
def test_a_filtered_responses_output_text_loses_its_logprobs(output: list[Any]) -> None:
    body = {
        "id": "r1",
        "object": "response",
        "created_at": 1,
        "model": "m",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    seen: list[Any] = []
    client = hw.wrap(openai_client(body), use=[noted(seen), ContentGuard(rules=[KEY])])
    answer = client.responses.create(model="m", input="x")
    assert answer.output_text.startswith("key [key]")
    assert SECRET not in answer.model_dump_json()
    assert SECRET not in json.dumps(seen[0])
    parts = [part for item in answer.output for part in item.content]
    assert parts[0].logprobs == []
    # an output text the guard left as it was keeps its logprobs
    assert [[t.token for t in part.logprobs or []] for part in parts[1:]] == [[" bye"]] * (
        len(parts) - 1
    )


@pytest.mark.parametrize("change", ["to", "same"])
def test_a_chat_answer_loses_its_logprobs_only_when_its_text_changes(change: str) -> None:
    tokens = [{"token": SECRET, "logprob": -0.1, "bytes": None, "top_logprobs": []}]
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "logprobs": {"content": tokens, "refusal": None},
                "message": {"role": "assistant", "content": SECRET, "refusal": None},
            }
        ],
    }

    @hw.after_model
    def rewrite(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        text = "[key]" if change == "to" else response.text
        return response.replace(message=response.message.replace(content=text), model="m2")

    answer = hw.wrap(openai_client(body), use=[rewrite]).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    assert answer.model == "m2"
    if change == "to":
        assert answer.choices[0].logprobs is None
    else:
        assert [t.token for t in answer.choices[0].logprobs.content] == [SECRET]


def gemini_client(body: dict[str, Any] | bytes) -> Any:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    try:  # what the SDK is built on: httpx2, or httpx for older releases
        import httpx2 as module
    except ImportError:  # pragma: no cover - older releases
        import httpx as module

    def answer(request: Any) -> Any:
        if isinstance(body, bytes):
            headers = {"content-type": "text/event-stream"}
            return module.Response(200, headers=headers, content=body)
        return module.Response(200, json=body)

    args = {"transport": module.MockTransport(answer)}
    options = types.HttpOptions(base_url="http://fake.invalid/", client_args=args)
    return genai.Client(api_key="k", http_options=options)


def candidate(index: int, *texts: str) -> dict[str, Any]:
    tokens = [{"token": t, "logProbability": -0.1} for t in texts]
    return {
        "content": {"role": "model", "parts": [{"text": t} for t in texts]},
        "finishReason": "STOP",
        "index": index,
        "avgLogprobs": -0.1,
        "logprobsResult": {"chosenCandidates": tokens, "topCandidates": []},
    }


def chosen(answer_candidate: Any) -> list[str] | None:
    found = answer_candidate.logprobs_result
    return None if found is None else [t.token for t in found.chosen_candidates]


@pytest.mark.parametrize("by", ["guard", "hook"])
@pytest.mark.parametrize("texts", [[f"key {SECRET}"], [f"key {SECRET}", " bye"]], ids=len)
def test_a_changed_gemini_text_loses_its_candidates_logprobs(texts: list[str], by: str) -> None:
    body = {"candidates": [candidate(0, *texts), candidate(1, "other")], "modelVersion": "g"}

    @hw.after_model
    def redact(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(content="redacted"))

    seen: list[Any] = []
    hooks = [noted(seen), ContentGuard(rules=[KEY]) if by == "guard" else redact]
    client = hw.wrap(gemini_client(body), use=hooks)  # kept: letting go of it closes it
    answer = client.models.generate_content(model="g", contents="x")
    first, other = answer.candidates
    assert SECRET not in str(first.content)
    assert (first.logprobs_result, first.avg_logprobs) == (None, None)
    assert (chosen(other), other.avg_logprobs) == (["other"], -0.1)  # not changed
    if by == "guard":  # `raw` holds what the caller got
        assert SECRET not in json.dumps(seen[0])
        assert type(answer).model_validate(seen[0]).candidates == answer.candidates


def test_a_gemini_answer_whose_text_stays_keeps_its_logprobs() -> None:
    body = {"candidates": [candidate(0, "fine")], "modelVersion": "g"}

    @hw.after_model
    def longer(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(finish_reason="length")

    client = hw.wrap(gemini_client(body), use=[longer])
    answer = client.models.generate_content(model="g", contents="x")
    (only,) = answer.candidates
    assert only.finish_reason == "MAX_TOKENS"
    assert (chosen(only), only.avg_logprobs) == (["fine"], -0.1)


def test_a_changed_gemini_stream_chunk_loses_its_logprobs() -> None:
    events = [
        {"candidates": [{k: v for k, v in candidate(0, t).items() if k != "finishReason"}]}
        for t in ("key ", SECRET, " bye")
    ]
    body = b"".join(f"data: {json.dumps(e)}\r\n\r\n".encode() for e in events)

    @hw.on_chunk
    def redact(chunk: hw.Chunk) -> hw.Chunk | None:
        return chunk.replace(text="[key]") if chunk.text == SECRET else None

    client = hw.wrap(gemini_client(body), use=[redact])
    responses = list(client.models.generate_content_stream(model="g", contents="x"))
    assert [r.text for r in responses] == ["key ", "[key]", " bye"]
    assert [chosen(r.candidates[0]) for r in responses] == [["key "], None, [" bye"]]
