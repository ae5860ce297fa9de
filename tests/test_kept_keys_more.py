"""What a hook changes is written over the native dict it replaces, so the keys hookwrap does
not model stay: in the chat dicts a plain model function takes (docs/types.md, "Writing the
request back"), as the OpenAI adapter writes them, and in a Chat Completions stream's
changed tool call (docs/sdks/google.md: a Gemini thought signature in `extra_content`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canned_sse import sse_client
from test_openai_request_keys import resign_images

import hookwrap as hw

SIGNED = {"google": {"thought_signature": "c2ln"}}


def redact(text: str) -> str:
    return text.replace("secret", "[x]")


def redacted(message: hw.Message) -> hw.Message:
    """The edit docs/sdks/index.md recommends: the `TextPart`s of a content given as parts."""
    if isinstance(message.content, str):
        return message.replace(content=redact(message.content))
    parts = (
        p.replace(text=redact(p.text)) if isinstance(p, hw.TextPart) else p for p in message.content
    )
    return message.replace(content=tuple(parts))


@hw.before_model
def redact_parts(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=tuple(map(redacted, request.messages)))


@hw.before_model
def prompt_and_redact(request: hw.ModelRequest) -> hw.ModelRequest:
    """A system prompt put first, the rest redacted: the changed ones still find their dicts."""
    messages = tuple(map(redacted, request.messages))
    return request.replace(messages=(hw.Message("system", "Be brief."), *messages))


@hw.before_model
def redact_str(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(
        messages=tuple(m.replace(content=redact(m.text)) for m in request.messages)
    )


@hw.before_model
def scrub_args(request: hw.ModelRequest) -> hw.ModelRequest:
    def scrub(m: hw.Message) -> hw.Message:
        calls = tuple(
            c.replace(arguments={**c.arguments, "email": "[x]"}) if "email" in c.arguments else c
            for c in m.tool_calls
        )
        return m.replace(tool_calls=calls)

    return request.replace(messages=tuple(map(scrub, request.messages)))


def received(hook: Any, messages: list[Any]) -> list[Any]:
    """The messages a plain model function is called with, through `hook`."""
    got: list[Any] = []

    def llm(messages: list[dict[str, Any]]) -> str:
        got.extend(messages)
        return "ok"

    hw.model(llm, use=[hook])(messages)
    return got


def history() -> list[Any]:
    return [
        {"role": "developer", "content": "secret rules", "metadata": {"k": 1}},
        {"role": "user", "content": "secret one", "name": "bob", "metadata": {"k": 2}},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "secret two", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "high"}},
            ],
        },
        {"role": "user", "content": "nothing to hide", "metadata": {"k": 3}},
    ]


def test_function_dicts_keep_unmodelled_keys() -> None:
    given = history()
    got = received(redact_parts, given)
    assert got == [
        {"role": "developer", "content": "[x] rules", "metadata": {"k": 1}},
        {"role": "user", "content": "[x] one", "name": "bob", "metadata": {"k": 2}},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[x] two", "cache_control": {"type": "ephemeral"}},
                given[2]["content"][1],
            ],
        },
        given[3],
    ]
    assert got[2]["content"][1] is given[2]["content"][1]  # an unchanged part: its own dict
    assert got[3] is given[3]  # an unchanged message: the caller's own dict
    assert given == history()  # the caller's dicts are not changed in place


def test_function_added_message_is_new_and_takes_no_keys() -> None:
    given = history()
    got = received(prompt_and_redact, given)
    assert got[0] == {"role": "system", "content": "Be brief."}
    assert got[1] == {"role": "developer", "content": "[x] rules", "metadata": {"k": 1}}
    assert got[2] == {"role": "user", "content": "[x] one", "name": "bob", "metadata": {"k": 2}}
    assert got[3]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert got[4] is given[3]


def test_function_str_over_parts_keeps_the_text_parts() -> None:
    """A str for a content of parts: split across its text parts, which keep their keys; no
    image is left (docs/sdks/index.md)."""
    given: list[Any] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "the secret ", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {"type": "text", "text": "is out", "extra": 1},
            ],
        }
    ]
    got = received(redact_str, given)
    assert got == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "the [x] ", "cache_control": {"type": "ephemeral"}},
                given[0]["content"][2],
            ],
        }
    ]


def test_function_changed_tool_call_keeps_its_keys() -> None:
    mail = {
        "id": "c1",
        "type": "function",
        "function": {"name": "mail", "arguments": '{"email": "bob@x.com"}'},
        "extra_content": SIGNED,
    }
    look = {
        "id": "c2",
        "type": "function",
        "function": {"name": "look", "arguments": "{}"},
        "extra_content": SIGNED,
    }
    given: list[Any] = [
        {"role": "user", "content": "mail bob"},
        {"role": "assistant", "content": None, "tool_calls": [mail, look], "refusal": None},
        {"role": "tool", "tool_call_id": "c1", "content": "sent"},
    ]
    got = received(scrub_args, given)
    assert got[0] is given[0]
    assert got[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "mail", "arguments": '{"email": "[x]"}'},
                "extra_content": SIGNED,
            },
            look,
        ],
        "refusal": None,
    }
    assert got[1]["tool_calls"][1] is look


# -- Chat Completions streams -------------------------------------------------------------------

openai = pytest.importorskip("openai")


def chat_body(deltas: list[dict[str, Any]]) -> bytes:
    """A stream of `deltas` ending in a `tool_calls` finish, as the API sends it."""
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    ends: list[str | None] = [None] * len(deltas) + ["tool_calls"]
    choices = [
        {"index": 0, "delta": d, "finish_reason": end}
        for d, end in zip([*deltas, {}], ends, strict=True)
    ]
    events = [{**head, "choices": [choice]} for choice in choices]
    lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


START: dict[str, Any] = {
    "index": 0,
    "id": "call_1",
    "type": "function",
    "function": {"name": "look", "arguments": ""},
    "extra_content": SIGNED,
}


@hw.on_chunk
def rename(chunk: hw.Chunk) -> Any:
    return chunk.replace(tool_name="search") if chunk.kind == "tool_call_start" else None


@hw.on_chunk
def start_with_args(chunk: hw.Chunk) -> Any:
    return chunk.replace(text='{"q": ') if chunk.kind == "tool_call_start" else None


@pytest.mark.parametrize("hook", [rename, start_with_args])
def test_chat_stream_changed_tool_call_start_keeps_its_keys(hook: Any) -> None:
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [START]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]},
    ]
    client = hw.wrap(sse_client(openai, False, chat_body(deltas)), use=[hook])
    chunks = list(client.chat.completions.create(model="m", messages=[], stream=True))
    call = chunks[0].choices[0].delta.tool_calls[0].to_dict()
    assert call["extra_content"] == SIGNED
    assert (call["id"], call["type"], call["index"]) == ("call_1", "function", 0)
    changed = {"name": "search"} if hook is rename else {"arguments": '{"q": '}
    assert call["function"] == {**START["function"], **changed}


@pytest.mark.parametrize(
    ("part", "moved"),
    [
        (
            {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://x/a.png?signed", "detail": "low"}},
        ),
        (
            {"type": "input_image", "image_url": "https://x/a.png", "detail": "low"},
            {"type": "input_image", "image_url": "https://x/a.png?signed", "detail": "low"},
        ),
        (
            {"type": "image", "url": "https://x/a.png", "media_type": "image/png", "k": 1},
            {"type": "image", "url": "https://x/a.png?signed", "media_type": "image/png", "k": 1},
        ),
    ],
    ids=["chat", "responses", "flat"],
)
def test_a_function_image_moved_by_a_hook_keeps_its_other_keys(
    part: dict[str, Any], moved: dict[str, Any]
) -> None:
    """`detail` decides what an image costs: a hook that only moves the image keeps it, and
    the URL goes where the caller put it."""
    given = [{"role": "user", "content": [{"type": "text", "text": "look"}, part]}]
    got = received(resign_images, given)
    assert got == [{"role": "user", "content": [{"type": "text", "text": "look"}, moved]}]
