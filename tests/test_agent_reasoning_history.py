"""An agent sends a model's answer back as it came: its thinking, reasoning and signatures.

An `Agent` keeps its history as neutral messages, which do not model an answer's thinking
blocks (Anthropic), reasoning items (OpenAI Responses) or thought parts and signatures
(Gemini); reasoning models refuse a tool call sent back without them. The answer's message
keeps them in `raw`, which the SDK's wire writes the message over in the next request (a
hook's change to the text still written), and a checkpoint keeps them for a resumed run.
The SDKs run for real, on a mock HTTP transport.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
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
from hookwrap.middleware import ToolApproval
from hookwrap.stores import SQLiteStore

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")


@hw.before_model
def redact(request: hw.ModelRequest) -> hw.ModelRequest:
    """Takes the number out of every assistant message sent."""
    messages = [
        m.replace(content=m.text.replace("42", "[x]")) if m.role == "assistant" else m
        for m in request.messages
    ]
    return request.replace(messages=messages)


class Provider:
    """One SDK on a mock transport: its first answer calls `add` after thinking, its next
    ones end the run; `bodies` are the JSON requests it got."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        data = self.first() if len(self.bodies) == 1 else self.last()
        return HTTPX.Response(200, json=data)

    def target(self, is_async: bool = False) -> Any:
        raise NotImplementedError

    def first(self) -> dict[str, Any]:
        raise NotImplementedError

    def last(self) -> dict[str, Any]:
        raise NotImplementedError

    def turn(self, body: dict[str, Any]) -> Any:
        """The assistant turn of the first answer, as a request sends it back."""
        raise NotImplementedError

    def expected(self, text: str) -> Any:
        """That turn as it came, its text `text`."""
        raise NotImplementedError

    #: a record of this API's answer, as a message of another provider's run carries it
    foreign: tuple[str, Any] = ("", None)


class Anthropic(Provider):
    def target(self, is_async: bool = False) -> Any:
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

    def answer(self, content: list[Any], stop: str) -> dict[str, Any]:
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }

    def first(self) -> dict[str, Any]:
        return self.answer([THINK, {"type": "text", "text": TEXT}, TOOL_USE], "tool_use")

    def last(self) -> dict[str, Any]:
        return self.answer([{"type": "text", "text": "It is 3."}], "end_turn")

    def turn(self, body: dict[str, Any]) -> Any:
        return body["messages"][1]

    def expected(self, text: str) -> Any:
        return {"role": "assistant", "content": [THINK, {"type": "text", "text": text}, TOOL_USE]}

    foreign = ("anthropic.messages", [{**THINK, "signature": "FOREIGN"}, TOOL_USE])


class Responses(Provider):
    def target(self, is_async: bool = False) -> Any:
        http = openai.DefaultHttpxClient(transport=HTTPX.MockTransport(self.handle))
        client = openai.OpenAI(api_key="k", base_url="http://x/v1", http_client=http)
        create = client.responses.create
        return functools.partial(create, model="o3", store=False)

    def answer(self, output: list[Any]) -> dict[str, Any]:
        usage = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}
        details = {"input_tokens_details": {"cached_tokens": 0}}
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "o3",
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {**usage, **details, "output_tokens_details": {"reasoning_tokens": 3}},
        }

    def first(self) -> dict[str, Any]:
        return self.answer([REASONING, output_message(TEXT), FUNCTION_CALL])

    def last(self) -> dict[str, Any]:
        return self.answer([output_message("It is 3.")])

    def turn(self, body: dict[str, Any]) -> Any:
        return body["input"][1:4]

    def expected(self, text: str) -> Any:
        return [REASONING, output_message(text), FUNCTION_CALL]

    foreign = ("openai.responses", [{**REASONING, "encrypted_content": "FOREIGN"}])


class Gemini(Provider):
    def target(self, is_async: bool = False) -> Any:
        from google.genai import types

        args = {"transport": HTTPX.MockTransport(self.handle)}
        options = types.HttpOptions(base_url="http://x/", client_args=args)
        return (genai.Client(api_key="k", http_options=options), "gemini-3-pro")

    def answer(self, parts: list[Any]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]
        }

    def first(self) -> dict[str, Any]:
        return self.answer([THOUGHT, {"text": TEXT}, CALL_PART])

    def last(self) -> dict[str, Any]:
        return self.answer([{"text": "It is 3."}])

    def turn(self, body: dict[str, Any]) -> Any:
        return body["contents"][1]

    def expected(self, text: str) -> Any:
        return {"role": "model", "parts": [THOUGHT, {"text": text}, CALL_PART]}

    foreign = ("google.models", {"role": "model", "parts": [{**THOUGHT, "text": "FOREIGN"}]})


PROVIDERS: list[Callable[[], Provider]] = [Anthropic, Responses, Gemini]
IDS = ["anthropic", "responses", "gemini"]


@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_the_next_request_sends_the_answer_back_with_its_reasoning(
    make: Callable[[], Provider],
) -> None:
    provider = make()
    result = Agent(provider.target(), tools=[add]).run("1+2?")
    assert (result.status, result.text) == ("finished", "It is 3.")
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)


def test_an_async_run_sends_the_thinking_back() -> None:
    provider = Anthropic()
    result = asyncio.run(Agent(provider.target(is_async=True), tools=[add]).arun("1+2?"))
    assert result.status == "finished"
    assert provider.turn(provider.bodies[1]) == provider.expected(TEXT)


@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_hook_changes_the_text_sent_back_and_the_reasoning_stays(
    make: Callable[[], Provider],
) -> None:
    provider = make()
    Agent(provider.target(), tools=[add], use=[redact]).run("1+2?")
    assert provider.turn(provider.bodies[1]) == provider.expected(REDACTED)


@pytest.mark.parametrize("make", PROVIDERS, ids=IDS)
def test_a_resumed_run_sends_the_reasoning_back(
    make: Callable[[], Provider], tmp_path: Path
) -> None:
    """The record is kept in the checkpoint: the fresh agent has only what it saved."""
    provider = make()
    target = provider.target()
    store = str(tmp_path / "checkpoints.db")

    def agent() -> Agent:
        return Agent(target, tools=[add], use=[ToolApproval()], store=SQLiteStore(store))

    paused = agent().run("1+2?")
    assert paused.status == "interrupted"
    call_id = paused.interrupt["call_id"]
    done = agent().resume(paused.run_id, decisions={call_id: True})
    assert (done.status, done.text) == ("finished", "It is 3.")
    assert provider.turn(provider.bodies[-1]) == provider.expected(TEXT)


@pytest.mark.parametrize(
    ("make", "other"),
    [(a, b) for a in PROVIDERS for b in PROVIDERS if a is not b],
    ids=[f"{a}-given-{b}" for a in IDS for b in IDS if a != b],
)
def test_another_apis_record_is_not_sent(
    make: Callable[[], Provider], other: Callable[[], Provider]
) -> None:
    """A message read from another provider's answer (a `Fallback`'s) is written from its
    neutral fields alone: that provider's blocks mean nothing to this one."""
    provider, foreign = make(), other()
    call = hw.ToolCall("toolu_1", "add", {"a": 1, "b": 2})
    history = [
        hw.Message.user("1+2?"),
        hw.Message("assistant", TEXT, [call], raw=foreign.foreign),
        hw.Message.tool("3", "toolu_1", "add"),
    ]
    result = Agent(provider.target(), tools=[add]).run(history)
    assert result.status == "finished"
    sent = json.dumps(provider.bodies[0])
    assert TEXT in sent
    assert "FOREIGN" not in sent


def test_a_record_that_is_no_json_data_is_left_out_of_the_checkpoint(tmp_path: Path) -> None:
    """Whatever else a message's `raw` holds, the run pauses and resumes as before."""
    provider = Anthropic()
    target = provider.target()
    store = str(tmp_path / "checkpoints.db")

    @hw.after_model
    def unsaved(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(raw=object()))

    def agent() -> Agent:
        use = [ToolApproval(), unsaved]
        return Agent(target, tools=[add], use=use, store=SQLiteStore(store))

    paused = agent().run("1+2?")
    done = agent().resume(paused.run_id, decisions={paused.interrupt["call_id"]: True})
    assert done.status == "finished"
    assert provider.turn(provider.bodies[-1]) == {
        "role": "assistant",
        "content": [{"type": "text", "text": TEXT}, TOOL_USE],
    }


def reasoning_item(n: int) -> dict[str, Any]:
    return {"id": f"rs_{n}", "type": "reasoning", "summary": [], "encrypted_content": f"E{n}"}


def call_item(n: int) -> dict[str, Any]:
    return {**FUNCTION_CALL, "id": f"fc_{n}", "call_id": f"call_{n}"}


TWO_CALLS = [reasoning_item(0), call_item(0), reasoning_item(1), call_item(1)]


def sent_back(made: list[dict[str, Any]], use: Sequence[Any] = ()) -> list[Any]:
    """The items after the user's of the second request, when the first answer was `made`."""
    api = Responses()
    api.first = lambda: api.answer(made)  # type: ignore[method-assign]
    hw.Agent(api.target(), tools=[add], use=list(use)).run("1+2?")
    return [item.get("id") or item["type"] for item in api.bodies[1]["input"][1:]]


@pytest.mark.parametrize(
    "order",
    [["rs", "fc", "rs", "fc"], ["rs", "msg", "rs", "fc"], ["fc", "rs", "fc"]],
    ids="-".join,
)
def test_each_reasoning_item_goes_back_before_the_item_it_led_to(order: list[str]) -> None:
    """A reasoning item the API answered with must be followed by the item it led to (the
    API refuses one left at the end); the items go back in the order they came."""
    made: list[dict[str, Any]] = []
    for kind in order:
        n = sum(1 for m in made if m["type"].startswith(kind[0]))
        make = {"rs": reasoning_item, "fc": call_item}.get(kind)
        made.append(make(n) if make is not None else output_message(TEXT))
    assert sent_back(made)[: len(made)] == [item["id"] for item in made]


def test_the_reasoning_before_a_call_a_hook_took_out_goes_with_it() -> None:
    """[rs0, fc0, rs1, fc1], a hook takes the first call out of the history: each call
    keeps its own place (by its call id), and rs0, which led only to that call, goes
    with it; rs1 stays before fc1."""

    @hw.before_model
    def forget_first_call(request: hw.ModelRequest) -> hw.ModelRequest:
        kept = []
        for m in request.messages:
            if m.role == "assistant" and len(m.tool_calls) == 2:
                m = m.replace(tool_calls=m.tool_calls[1:])
            if m.tool_call_id != "call_0":
                kept.append(m)
        return request.replace(messages=kept)

    assert sent_back(TWO_CALLS, [forget_first_call]) == ["rs_1", "fc_1", "function_call_output"]


def test_calls_a_hook_reordered_go_back_each_with_its_own_reasoning() -> None:
    """The hook's order, each call right after the reasoning item that led to it."""

    @hw.before_model
    def reverse_calls(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(
            messages=[
                m.replace(tool_calls=m.tool_calls[::-1]) if len(m.tool_calls) == 2 else m
                for m in request.messages
            ]
        )

    assert sent_back(TWO_CALLS, [reverse_calls])[:4] == ["rs_1", "fc_1", "rs_0", "fc_0"]
