"""What a hook changes in an OpenAI request or answer is written over the native dict it
replaces, so the keys hookwrap does not model stay: a changed tool call keeps its item id,
status and `extra_content`; a changed text part its `annotations` and `cache_control`; a
changed tool adds no `strict` the caller did not write (docs/sdks/index.md, google.md,
portable.md). Through the real SDK against the fake provider, plain and streamed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

ARGS = '{"email": "bob@x.com"}'
SIGNED = {"google": {"thought_signature": "c2ln"}}
CITED = [
    {"type": "url_citation", "url": "https://x", "title": "t", "start_index": 0, "end_index": 3}
]


@hw.before_model
def scrub_args(request: hw.ModelRequest) -> hw.ModelRequest:
    def scrub(m: hw.Message) -> hw.Message:
        calls = tuple(c.replace(arguments={**c.arguments, "email": "[x]"}) for c in m.tool_calls)
        return m.replace(tool_calls=calls)

    return request.replace(messages=tuple(map(scrub, request.messages)))


@hw.before_model
def renumber_calls(request: hw.ModelRequest) -> hw.ModelRequest:
    def renumber(m: hw.Message) -> hw.Message:
        return m.replace(tool_calls=tuple(c.replace(id=c.id + "b") for c in m.tool_calls))

    return request.replace(messages=tuple(map(renumber, request.messages)))


def redact(text: str) -> str:
    return text.replace("secret", "[x]")


@hw.before_model
def redact_parts(request: hw.ModelRequest) -> hw.ModelRequest:
    """The edit docs/sdks/index.md recommends: the `TextPart`s of a content given as parts."""

    def edit(m: hw.Message) -> hw.Message:
        if isinstance(m.content, str):
            return m
        parts = (
            p.replace(text=redact(p.text)) if isinstance(p, hw.TextPart) else p for p in m.content
        )
        return m.replace(content=tuple(parts))

    return request.replace(messages=tuple(map(edit, request.messages)))


@hw.before_model
def redact_str(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(
        messages=tuple(m.replace(content=redact(m.text)) for m in request.messages)
    )


def call(client: Any, api: str, stream: bool, **body: Any) -> None:
    """One call through `client` (the answer read to its end when streamed)."""
    create = client.responses.create if api == "responses" else client.chat.completions.create
    answer = create(model="m", stream=stream, **body) if stream else create(model="m", **body)
    if stream:
        for _ in answer:
            pass


# -- tool calls in the history ------------------------------------------------------------------

RESP_HISTORY: list[Any] = [
    {"role": "user", "content": "mail bob"},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "send",
        "arguments": ARGS,
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "c1", "output": "sent"},
]
CHAT_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "send", "arguments": ARGS},
    "extra_content": SIGNED,
}
CHAT_HISTORY: list[Any] = [
    {"role": "user", "content": "mail bob"},
    {"role": "assistant", "content": None, "tool_calls": [CHAT_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "sent"},
]


@pytest.mark.parametrize("stream", [False, True])
def test_a_changed_responses_call_keeps_its_item_id_and_status(stream: bool) -> None:
    """The API pairs the reasoning item with the item after it by that id."""
    fake = FakeProvider("ok")
    given = copy.deepcopy(RESP_HISTORY)
    call(hw.wrap(fake.openai(), use=[scrub_args]), "responses", stream, input=given)
    assert given == RESP_HISTORY
    sent = fake.requests[0].body["input"]
    assert sent[:2] == RESP_HISTORY[:2]
    assert sent[2] == {**RESP_HISTORY[2], "arguments": '{"email": "[x]"}'}
    assert sent[3] == RESP_HISTORY[3]


@pytest.mark.parametrize("stream", [False, True])
def test_a_changed_chat_call_keeps_its_other_keys(stream: bool) -> None:
    """Gemini's OpenAI-compatible API wants the thought signature in `extra_content` back."""
    fake = FakeProvider("ok")
    call(hw.wrap(fake.openai(), use=[scrub_args]), "chat", stream, messages=CHAT_HISTORY)
    (sent,) = fake.requests[0].body["messages"][1]["tool_calls"]
    function = {"name": "send", "arguments": '{"email": "[x]"}'}
    assert sent == {"id": "c1", "type": "function", "function": function, "extra_content": SIGNED}


def test_a_call_given_a_new_id_takes_nothing_of_the_old_one() -> None:
    """Its keys belong to the call of their id: a call given another id (a hook copying
    one) is written new, so no two items share an id."""
    fake = FakeProvider(["ok", "ok"])
    client = hw.wrap(fake.openai(), use=[renumber_calls])
    call(client, "responses", False, input=RESP_HISTORY)
    call(client, "chat", False, messages=CHAT_HISTORY)
    item = fake.requests[0].body["input"][2]
    assert item == {"type": "function_call", "call_id": "c1b", "name": "send", "arguments": ARGS}
    (sent,) = fake.requests[1].body["messages"][1]["tool_calls"]
    assert sent == {
        "id": "c1b",
        "type": "function",
        "function": {"name": "send", "arguments": ARGS},
    }


def test_a_responses_answer_call_changed_after_the_model_keeps_its_item_id() -> None:
    ids: list[Any] = []

    @hw.after_model
    def change_args(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        ids.extend(item["id"] for item in response.raw["output"] if item["type"] == "function_call")
        calls = tuple(c.replace(arguments={"a": 2}) for c in response.message.tool_calls)
        return response.replace(message=response.message.replace(tool_calls=calls))

    fake = FakeProvider(hw.Message.assistant("Calling.", [hw.ToolCall("c1", "f", {"a": 1})]))
    answer = hw.wrap(fake.openai(), use=[change_args]).responses.create(model="m", input="hi")
    (item,) = [o for o in answer.output if o.type == "function_call"]
    assert (item.id, item.call_id, item.arguments, item.status) == (
        ids[0],
        "c1",
        '{"a": 2}',
        "completed",
    )


# -- text parts ---------------------------------------------------------------------------------


def resp_input(*texts: str) -> list[Any]:
    parts = [
        {"type": "output_text", "text": t, "annotations": CITED, "logprobs": []} for t in texts
    ]
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": parts,
    }
    return [{"role": "user", "content": "q"}, item, {"role": "user", "content": "more"}]


def chat_messages(*texts: str) -> list[Any]:
    parts = [{"type": "text", "text": t, "cache_control": {"type": "ephemeral"}} for t in texts]
    return [{"role": "user", "content": parts}]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("hook", [redact_parts, redact_str], ids=["parts", "str"])
@pytest.mark.parametrize(
    "texts", [("secret answer",), ("secret answer", " two")], ids=["one", "two"]
)
def test_a_changed_text_part_keeps_its_own_keys(
    stream: bool, hook: Any, texts: tuple[str, ...]
) -> None:
    """As Anthropic's `cache_control` and a Responses answer's `annotations` do; `logprobs`
    are emptied, as in an answer: they described the old text."""
    fake = FakeProvider(["ok", "ok"])
    client = hw.wrap(fake.openai(), use=[hook])
    call(client, "responses", stream, input=resp_input(*texts))
    call(client, "chat", stream, messages=chat_messages(*texts))
    new = [redact(t) for t in texts]
    assert fake.requests[0].body["input"] == resp_input(*new)
    assert fake.requests[1].body["messages"] == chat_messages(*new)


# -- tools --------------------------------------------------------------------------------------

TOOL: dict[str, Any] = {
    "type": "function",
    "name": "f",
    "description": "d",
    "parameters": {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("stream", [False, True])
def test_a_changed_responses_tool_gets_no_strict_the_caller_did_not_write(stream: bool) -> None:
    """The API's default (strict) stays; a tool a hook adds is not strict, as hand-written
    schemas rarely meet strict mode's rules."""

    @hw.before_model
    def describe(request: hw.ModelRequest) -> hw.ModelRequest:
        tools = tuple(t.replace(description=t.description + " (v2)") for t in request.tools)
        return request.replace(tools=(*tools, hw.ToolSpec("clock")))

    fake = FakeProvider("ok")
    call(hw.wrap(fake.openai(), use=[describe]), "responses", stream, input="hi", tools=[TOOL])
    sent = fake.requests[0].body["tools"]
    assert sent[0] == {**TOOL, "description": "d (v2)"}
    assert sent[1] == {
        "strict": False,
        "type": "function",
        "name": "clock",
        "parameters": {"type": "object", "properties": {}},
    }


# -- image parts --------------------------------------------------------------------------------


@hw.before_model
def resign_images(request: hw.ModelRequest) -> hw.ModelRequest:
    """Points every image at another URL (a signed copy, say)."""

    def edit(m: hw.Message) -> hw.Message:
        if isinstance(m.content, str):
            return m
        parts = (
            p.replace(url=p.url + "?signed") if isinstance(p, hw.ImagePart) else p
            for p in m.content
        )
        return m.replace(content=tuple(parts))

    return request.replace(messages=tuple(map(edit, request.messages)))


@pytest.mark.parametrize("stream", [False, True])
def test_a_changed_image_part_keeps_its_detail(stream: bool) -> None:
    """`detail` decides what an image costs; a hook that only moves the image to another
    URL keeps it, in chat's nested object as beside a Responses URL."""
    fake = FakeProvider(["ok", "ok"])
    client = hw.wrap(fake.openai(), use=[resign_images])
    chat_part = {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}}
    resp_part = {"type": "input_image", "image_url": "https://x/a.png", "detail": "low"}
    call(client, "chat", stream, messages=[{"role": "user", "content": [chat_part]}])
    call(client, "responses", stream, input=[{"role": "user", "content": [resp_part]}])
    sent_chat = fake.requests[0].body["messages"][0]["content"]
    sent_resp = fake.requests[1].body["input"][0]["content"]
    signed = "https://x/a.png?signed"
    assert sent_chat == [{"type": "image_url", "image_url": {"url": signed, "detail": "low"}}]
    assert sent_resp == [{"type": "input_image", "image_url": signed, "detail": "low"}]
