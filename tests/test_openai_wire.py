"""OpenAI wires (SPEC §4, §6): Chat Completions, Responses and Completions bodies read into
neutral types and written back (unchanged bodies round-trip to equal dicts, hook changes land
where the API expects them, unmodelled keys survive), one chunk per stream event, and built
answers and streams the real SDK accepts."""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from openai.types import Completion
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

import hookwrap as hw
from hookwrap._engine import assemble
from hookwrap._types import (
    Chunk,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    TextPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from hookwrap.adapters._openai_wire import ChatCompletionsWire, CompletionsWire, ResponsesWire
from hookwrap.adapters._wire import NOTE, Event, parse_sse

CHAT = ChatCompletionsWire()
RESP = ResponsesWire()
LEGACY = CompletionsWire()
STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)

PARAMS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
ANSWER = ModelResponse(
    Message.assistant(
        "Paris is sunny today.",
        [ToolCall("call_1", "weather", {"city": "Paris"}), ToolCall("call_2", "time", {})],
    ),
    Usage(11, 7, 18),
    "tool_calls",
    "gpt-test",
)
TEXT_ONLY = ModelResponse(Message.assistant("Just text."), Usage(3, 2, 5), "stop", "gpt-test")


def sdk(
    events: list[Event] | None = None, data: Any = None, seen: list[Any] | None = None
) -> openai.OpenAI:
    """A real OpenAI client whose HTTP answers are `events` (as SSE) or the JSON `data`; the
    bodies it sends go in `seen`."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(json.loads(request.content))
        if events is None:
            return httpx2.Response(200, json=data)
        body = b"".join(e.encode() for e in events)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    transport = httpx2.MockTransport(answer)
    return openai.OpenAI(api_key="test", http_client=httpx2.Client(transport=transport))


def reparse(events: list[Event]) -> list[Event]:
    """The events as the SDK's bytes would bring them back."""
    return list(parse_sse(b"".join(e.encode() for e in events).splitlines(keepends=True)))


def norm(request: ModelRequest) -> ModelRequest:
    """`request` with each content as parts, neighbouring texts joined: a changed str written
    over a list of parts stays a list (some items need one, and it keeps parts hookwrap does
    not model), split across its text parts, so it reads back as parts with the same text."""

    def parts(message: Message) -> Message:
        content = message.content
        items = (TextPart(content),) if isinstance(content, str) else content
        joined: list[Part] = []
        for p in items:
            if isinstance(p, TextPart) and joined and isinstance(joined[-1], TextPart):
                joined[-1] = TextPart(joined[-1].text + p.text)
            else:
                joined.append(p)
        kept = tuple(p for p in joined if not isinstance(p, TextPart) or p.text)
        return message.replace(content=kept)

    return request.replace(messages=tuple(map(parts, request.messages)))


def unchanged(wire: Any, body: Mapping[str, Any]) -> None:
    """Writing back what was read gives an equal body, and never touches the input."""
    before = copy.deepcopy(body)
    out = wire.write_request(wire.request(body), body)
    assert out == body
    assert out is not body
    assert body == before


# -- Chat Completions: requests --------------------------------------------------------------


def chat_body() -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://x/cat.png", "detail": "high"},
                    },
                    {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                ],
                "x_trace": "t-1",
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "cat"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
            {"role": "user", "content": "thanks", "name": "ann"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look up",
                    "parameters": PARAMS,
                    "strict": True,
                },
            },
            {"type": "custom", "custom": {"name": "grammar"}},
        ],
        "temperature": 0.2,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_chat_request_reads_every_message_kind() -> None:
    request = CHAT.request(chat_body())
    assert [m.role for m in request.messages] == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[0].content == "Be brief."
    assert request.messages[1].content == (
        TextPart("What is this?"),
        ImagePart("https://x/cat.png"),
    )
    assert request.messages[2].tool_calls == (ToolCall("call_1", "lookup", {"q": "cat"}),)
    assert request.messages[2].content == ""
    assert request.messages[3] == Message.tool("a cat", "call_1")
    assert request.messages[4] == Message("user", "thanks", name="ann")
    assert request.tools == (ToolSpec("lookup", "Look up", PARAMS),)
    assert request.options == {"temperature": 0.2, "stream_options": {"include_usage": True}}
    assert (request.model, request.stream) == ("gpt-4o", True)


def test_chat_unchanged_request_round_trips_to_the_same_dicts() -> None:
    body = chat_body()
    unchanged(CHAT, body)
    request = CHAT.request(body)
    # a change elsewhere still leaves every message the hooks did not touch as the same dict
    out = CHAT.write_request(request.replace(model="gpt-5"), body)
    assert out["model"] == "gpt-5"
    assert all(a is b for a, b in zip(out["messages"], body["messages"], strict=True))


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_tool_call_arguments_that_are_no_json_object_are_read_as_refused_and_kept(
    api: str,
) -> None:
    """A history whose tool call has malformed arguments (a model's slip): the call reads as
    empty arguments that a tool refuses to run with, and a request rebuilt around it sends
    the text as it was."""
    wire, body = (CHAT, chat_body()) if api == "chat" else (RESP, responses_body())
    text = '{"q": "ca'
    for call in _calls_in(body):
        call["arguments"] = text
    request = wire.request(body)
    [call] = [c for m in request.messages for c in m.tool_calls]
    assert dict(call.arguments) == {}
    with pytest.raises(hw.ToolArgumentError, match="must be a JSON object"):
        hw.tool(lambda q="": q, name=call.name).invoke(call)
    # the message of the call changed by a hook: it is written anew, the arguments as sent
    messages = [m.replace(content="Let me look.") if m.tool_calls else m for m in request.messages]
    out = wire.write_request(request.replace(messages=tuple(messages)), body)
    assert [c["arguments"] for c in _calls_in(out)] == [text]


def _calls_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function-call dicts of a Chat Completions or Responses body, to read or set."""
    found: list[dict[str, Any]] = []
    for item in body.get("messages") or body.get("input") or []:
        if not isinstance(item, dict):
            continue
        for call in item.get("tool_calls") or []:
            found.append(call["function"])
        if item.get("type") == "function_call":
            found.append(item)
    return found


def test_chat_system_prompt_added_in_front() -> None:
    body = chat_body()
    request = CHAT.request(body)
    added = request.replace(messages=(Message.system("Policy."), *request.messages))
    out = CHAT.write_request(added, body)
    assert out["messages"][0] == {"role": "system", "content": "Policy."}
    assert all(a is b for a, b in zip(out["messages"][1:], body["messages"], strict=True))
    assert CHAT.request(out) == added


def test_chat_replaced_text_keeps_what_is_not_modelled() -> None:
    body = chat_body()
    request = CHAT.request(body)
    dev, user, *rest = request.messages
    new_user = user.replace(content=(TextPart("What is THAT?"), user.content[1]))
    changed = request.replace(messages=(dev.replace(content="Be terse."), new_user, *rest))
    out = CHAT.write_request(changed, body)
    assert out["messages"][0] == {"role": "developer", "content": "Be terse."}
    assert out["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is THAT?"},
            body["messages"][1]["content"][1],  # detail "high" kept: the part is unchanged
            body["messages"][1]["content"][2],  # audio is not modelled, it stays
        ],
        "x_trace": "t-1",
    }
    assert out["messages"][2:] == body["messages"][2:]
    assert CHAT.request(out) == changed


def test_chat_text_as_str_over_parts_stays_a_list() -> None:
    body = chat_body()
    request = CHAT.request(body)
    messages = list(request.messages)
    messages[1] = messages[1].replace(content="Only words.")
    out = CHAT.write_request(request.replace(messages=tuple(messages)), body)
    assert out["messages"][1]["content"] == [
        {"type": "text", "text": "Only words."},
        body["messages"][1]["content"][2],
    ]


def test_chat_an_edit_pairs_a_changed_message_with_one_of_its_role() -> None:
    body = chat_body()
    request = CHAT.request(body)
    _, user, *rest = request.messages
    out = CHAT.write_request(
        request.replace(messages=(user.replace(content="Hello?"), *rest)), body
    )
    # the developer message is gone; the user message it was replaced with keeps its keys
    assert out["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "Hello?"}, body["messages"][1]["content"][2]],
        "x_trace": "t-1",
    }
    assert out["messages"][1:] == body["messages"][2:]


def test_chat_messages_removed_and_appended() -> None:
    body = chat_body()
    request = CHAT.request(body)
    kept = (request.messages[0], request.messages[4], Message.user("more"))
    out = CHAT.write_request(request.replace(messages=kept), body)
    assert out["messages"][0] is body["messages"][0]
    assert out["messages"][1] is body["messages"][4]
    assert out["messages"][2] == {"role": "user", "content": "more"}


def test_chat_an_edit_leaves_an_identical_message_its_own_dict() -> None:
    # which of two equal messages a hook left alone is settled by their places
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Paris"},
            {"role": "developer", "content": "Paris"},
        ],
    }
    request = CHAT.request(body)
    first, second = request.messages
    out = CHAT.write_request(
        request.replace(messages=(first.replace(content="Rome"), second)), body
    )
    assert out["messages"] == [{"role": "system", "content": "Rome"}, body["messages"][1]]
    assert out["messages"][1] is body["messages"][1]

    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "yes", "x_id": 1},
            {"role": "user", "content": "yes", "x_id": 2},
        ],
    }
    request = CHAT.request(body)
    first, second = request.messages
    out = CHAT.write_request(request.replace(messages=(first.replace(content="no"), second)), body)
    assert out["messages"] == [{"role": "user", "content": "no", "x_id": 1}, body["messages"][1]]


def test_chat_tool_messages_and_calls_written_fresh() -> None:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    call = ToolCall("c9", "lookup", {"q": "x"})
    messages = (
        Message.user("hi"),
        Message.assistant("", [call]),
        Message.tool("found", "c9", name="lookup"),
    )
    out = CHAT.write_request(CHAT.request(body).replace(messages=messages), body)
    assert out["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                }
            ],
        },
        {"role": "tool", "content": "found", "tool_call_id": "c9"},  # no `name` on tool messages
    ]


def test_chat_calls_with_bad_json_or_custom_input_survive_an_edit() -> None:
    bad = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
    custom = {"id": "c2", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}
    body = {
        "model": "m",
        "messages": [{"role": "assistant", "content": "hm", "tool_calls": [bad, custom]}],
    }
    request = CHAT.request(body)
    assert request.messages[0].tool_calls == (
        ToolCall("c1", "f", {}),
        ToolCall("c2", "sql", {"input": "SELECT 1"}),
    )
    edited = request.replace(messages=(request.messages[0].replace(content="hmm"),))
    out = CHAT.write_request(edited, body)
    assert out["messages"][0]["content"] == "hmm"
    assert out["messages"][0]["tool_calls"][0] is bad
    assert out["messages"][0]["tool_calls"][1] is custom
    call = request.messages[0].tool_calls[1].replace(arguments={"input": "SELECT 2"})
    edited = request.replace(messages=(request.messages[0].replace(tool_calls=(call,)),))
    out = CHAT.write_request(edited, body)
    assert out["messages"][0]["tool_calls"] == [
        {"id": "c2", "type": "custom", "custom": {"name": "sql", "input": "SELECT 2"}}
    ]


def test_chat_tools_added_changed_and_removed() -> None:
    body = chat_body()
    request = CHAT.request(body)
    extra = ToolSpec("clock", "The time")
    out = CHAT.write_request(request.replace(tools=(*request.tools, extra)), body)
    assert out["tools"][:2] == body["tools"]
    assert out["tools"][0] is body["tools"][0]
    assert out["tools"][2] == {
        "type": "function",
        "function": {
            "name": "clock",
            "parameters": {"type": "object", "properties": {}},
            "description": "The time",
        },
    }
    # a changed description keeps `strict`
    out = CHAT.write_request(
        request.replace(tools=(request.tools[0].replace(description="X"),)), body
    )
    assert out["tools"][0]["function"] == {**body["tools"][0]["function"], "description": "X"}
    # the custom tool is not modelled: removing every function tool keeps it
    out = CHAT.write_request(request.replace(tools=()), body)
    assert out["tools"] == [body["tools"][1]]
    only_functions = {**body, "tools": body["tools"][:1]}
    out = CHAT.write_request(CHAT.request(only_functions).replace(tools=()), only_functions)
    assert "tools" not in out  # the API refuses an empty list


def test_chat_options_and_model_written_stream_is_not() -> None:
    body = chat_body()
    request = CHAT.request(body)
    changed = request.replace(
        model="o3", options={"stream_options": {"include_usage": True}, "seed": 7}, stream=False
    )
    out = CHAT.write_request(changed, body)
    assert "temperature" not in out
    assert (out["seed"], out["model"], out["stream"]) == (7, "o3", True)
    assert out["messages"] is body["messages"]


# -- Chat Completions: responses --------------------------------------------------------------


def chat_completion() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-2024",
        "system_fingerprint": "fp_1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi there", "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 2,
            "total_tokens": 11,
            "prompt_tokens_details": {"cached_tokens": 4},
        },
    }


def test_chat_response_read_and_written_back() -> None:
    data = chat_completion()
    response = CHAT.response(data)
    assert response == ModelResponse(
        Message.assistant("Hi there"), Usage(9, 2, 11), "stop", "gpt-4o-2024"
    )
    assert response.raw is data
    assert CHAT.write_response(response, data) == data
    changed = response.replace(
        message=Message.assistant("Bye", [ToolCall("c1", "f", {"a": 1})]), usage=Usage(9, 3, 12)
    )
    out = CHAT.write_response(changed, data)
    ChatCompletion.model_validate(out)
    assert out["choices"][0]["message"]["content"] == "Bye"
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    assert out["usage"] == {**data["usage"], "completion_tokens": 3, "total_tokens": 12}
    assert out["system_fingerprint"] == "fp_1"
    assert CHAT.response(out) == changed
    assert data == chat_completion()


@pytest.mark.parametrize(
    ("response", "finish"),
    [
        (ANSWER, "tool_calls"),
        (TEXT_ONLY, "stop"),
        (ModelResponse(Message.assistant("x"), finish_reason="end_turn"), "stop"),
        (ModelResponse(Message.assistant("x"), finish_reason="max_tokens"), "length"),
        (ModelResponse(Message.assistant("", [ToolCall("c", "f", {})])), "tool_calls"),
    ],
)
def test_chat_fresh_completion_is_valid(response: ModelResponse, finish: str) -> None:
    data = CHAT.write_response(response, None)
    parsed = ChatCompletion.model_validate(data)
    assert data["id"].startswith("chatcmpl-")
    assert parsed.choices[0].finish_reason == finish
    assert CHAT.response(data).message == response.message
    native = sdk(data=data).chat.completions.create(model="m", messages=[])
    assert native.choices[0].message.content == (response.text or None)


def logprobs(text: str) -> list[dict[str, Any]]:
    return [{"token": text, "logprob": -0.5, "bytes": list(text.encode()), "top_logprobs": []}]


@pytest.mark.parametrize(
    ("edit", "kept"),
    [
        (lambda r: r.replace(message=r.message.replace(content=r.text.upper())), False),
        (lambda r: r.replace(finish_reason="length"), True),
    ],
)
def test_chat_logprobs_go_with_a_text_changed_after_the_model(edit: Any, kept: bool) -> None:
    """The logprobs described the old text: a new one drops them, as a changed stream
    chunk does; a change that leaves the text keeps them."""
    data = chat_completion()
    data["choices"][0]["logprobs"] = {"content": logprobs("Hi there"), "refusal": None}

    @hw.after_model
    def change(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        changed: ModelResponse = edit(response)
        return changed

    client = hw.wrap(sdk(data=data), use=[change])
    choice = client.chat.completions.create(model="m", messages=[]).choices[0]
    assert (choice.logprobs is not None) is kept
    assert choice.message.content == ("Hi there" if kept else "HI THERE")


def test_chat_a_text_changed_before_the_model_stays_in_its_parts() -> None:
    """A message of several text parts given a new text by a hook: the part the edit did
    not touch is sent as it was (with its `cache_control`, which some compatible servers
    read), and only the other one changes."""
    context = {"type": "text", "text": "Long shared context.", "cache_control": {"type": "x"}}

    @hw.before_model
    def redact(request: hw.ModelRequest) -> hw.ModelRequest:
        *head, last = request.messages
        last = last.replace(content=last.text.replace("Paris", "[city]"))
        return request.replace(messages=(*head, last))

    seen: list[Any] = []
    client = hw.wrap(sdk(data=chat_completion(), seen=seen), use=[redact])
    content: Any = [context, {"type": "text", "text": " Weather in Paris?"}]
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
    assert seen[0]["messages"][0]["content"] == [
        context,
        {"type": "text", "text": " Weather in [city]?"},
    ]


# -- Chat Completions: streams ------------------------------------------------------------------


def chat_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Event:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    data = {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1700000001,
        "model": "gpt-4o",
        "system_fingerprint": "fp_9",
        "choices": [choice],
        **extra,
    }
    return Event(None, data)


def usage_chunk() -> Event:
    data = chat_chunk({}).data | {"choices": []}
    return Event(
        None, data | {"usage": {"prompt_tokens": 4, "completion_tokens": 5, "total_tokens": 9}}
    )


def test_chat_chunk_kinds() -> None:
    role = chat_chunk({"role": "assistant", "content": "", "refusal": None})
    start = chat_chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"a"'},
                }
            ]
        }
    )
    args = chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": ": 1}"}}]})
    cases: list[tuple[Event, Chunk]] = [
        (role, Chunk("custom", name="openai.chat.role", value=role.data)),
        (chat_chunk({"content": "Hel"}), Chunk("text", "Hel")),
        (chat_chunk({"reasoning_content": "hmm"}), Chunk("reasoning", "hmm")),
        (start, Chunk("tool_call_start", '{"a"', "call_7", "f", value=1)),
        (args, Chunk("tool_call_args", ": 1}", value=1)),
        (chat_chunk({}, "stop"), Chunk("finish", finish_reason="stop")),
        (chat_chunk({"content": "!"}, "stop"), Chunk("text", "!", finish_reason="stop")),
        (usage_chunk(), Chunk("usage", usage=Usage(4, 5, 9))),
        (Event(None, "[DONE]"), Chunk("custom", name="openai.chat.done", value="[DONE]")),
    ]
    for event, expected in cases:
        chunk = CHAT.chunk(event)
        assert chunk == expected
        assert chunk.raw is event
    other = chat_chunk({"content": "x"})
    other.data["choices"][0]["index"] = 1
    assert CHAT.chunk(other).name == "openai.chat.choice"
    assert CHAT.chunk(Event(None, {"error": {"message": "x"}})).name == "openai.chat.error"


@pytest.mark.parametrize("response", [ANSWER, TEXT_ONLY, ModelResponse(Message.assistant(""))])
def test_chat_stream_events_are_valid_and_assemble_back(response: ModelResponse) -> None:
    events = CHAT.stream_events(response)
    assert events[-1].data == "[DONE]"
    for event in events[:-1]:
        ChatCompletionChunk.model_validate(event.data)
    assert len({e.data["id"] for e in events[:-1]}) == 1
    chunks = [CHAT.chunk(e) for e in reparse(events)]
    assert len(chunks) == len(events)
    expected = response.replace(finish_reason=response.finish_reason or "stop")
    assert assemble(chunks, response.model) == expected


def test_chat_stream_events_parse_in_the_sdk() -> None:
    request: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    pieces = list(sdk(CHAT.stream_events(ANSWER)).chat.completions.create(stream=True, **request))
    assert "".join(p.choices[0].delta.content or "" for p in pieces if p.choices) == ANSWER.text
    assert pieces[-1].usage is not None
    assert pieces[-1].usage.total_tokens == 18
    with sdk(CHAT.stream_events(ANSWER)).chat.completions.stream(**request) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == ANSWER.text
    calls = [c.model_dump() for c in message.tool_calls or []]
    assert [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls
    ] == [
        ("call_1", "weather", {"city": "Paris"}),
        ("call_2", "time", {}),
    ]


def test_chat_write_chunk_changes_a_chunk_in_place() -> None:
    event = chat_chunk({"content": "secret"}, None, usage=None)
    event.data["choices"][0]["logprobs"] = {"content": []}
    chunk = CHAT.chunk(event).replace(text="[redacted]")
    [out] = CHAT.write_chunk(chunk, None)
    ChatCompletionChunk.model_validate(out.data)
    assert out.data["choices"][0]["delta"] == {"content": "[redacted]"}
    assert out.data["choices"][0]["logprobs"] is None
    assert {k: v for k, v in out.data.items() if k != "choices"} == {
        k: v for k, v in event.data.items() if k != "choices"
    }
    assert CHAT.chunk(out) == chunk
    assert event.data["choices"][0]["delta"] == {"content": "secret"}  # input untouched
    # a kind changed by a hook drops the old kind's fields
    [out] = CHAT.write_chunk(CHAT.chunk(event).replace(kind="reasoning"), None)
    assert out.data["choices"][0]["delta"] == {"reasoning_content": "secret"}


NEW_CHUNKS = [
    Chunk("text", "added"),
    Chunk("reasoning", "thinking"),
    Chunk("tool_call_start", "", "call_5", "lookup", value=2),
    Chunk("tool_call_args", '{"q": 1}', value=2),
    Chunk("finish", finish_reason="length"),
]


@pytest.mark.parametrize("chunk", NEW_CHUNKS, ids=lambda c: c.kind)
def test_chat_write_chunk_builds_new_chunks_from_the_template(chunk: Chunk) -> None:
    template = chat_chunk({"role": "assistant", "content": ""})
    [out] = CHAT.write_chunk(chunk, template)
    parsed = ChatCompletionChunk.model_validate(out.data)
    assert (parsed.id, parsed.model, parsed.created) == ("chatcmpl-9", "gpt-4o", 1700000001)
    assert CHAT.chunk(out) == chunk
    [bare] = CHAT.write_chunk(chunk, None)
    ChatCompletionChunk.model_validate(bare.data)
    assert CHAT.chunk(bare) == chunk


def test_chat_write_chunk_a_new_usage_is_a_note_for_the_last_usage_chunk() -> None:
    """The SDK keeps the last usage chunk's counts, so a new usage goes to the framer,
    which puts the highest counts in the stream's last usage chunk (or adds one)."""
    template = chat_chunk({"role": "assistant", "content": ""})
    [note] = CHAT.write_chunk(Chunk("usage", usage=Usage(1, 20, 21)), template)
    assert note.event == NOTE
    counts = {"prompt_tokens": 1, "completion_tokens": 20, "total_tokens": 21}
    assert note.data["usage"] == counts
    framer = CHAT.framer({"model": "gpt-4o"})
    api_usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8, "x": 1}
    usage_event = Event(None, {**template.data, "choices": [], "usage": api_usage})
    sent = framer.events([template, note, usage_event, Event(None, "[DONE]")])
    usages = [e.data["usage"] for e in sent if isinstance(e.data, dict) and e.data.get("usage")]
    # the highest of each count, the total at least their sum
    assert usages == [{"prompt_tokens": 5, "completion_tokens": 20, "total_tokens": 25, "x": 1}]
    assert sent[-1].data == "[DONE]"
    asked = {"model": "gpt-4o", "stream_options": {"include_usage": True}}
    framer = CHAT.framer(asked)  # no usage from the API: one is added, as asked
    sent = framer.events([template, note, Event(None, "[DONE]")])
    [last] = [e for e in sent if isinstance(e.data, dict) and e.data.get("usage")]
    assert ChatCompletionChunk.model_validate(last.data).usage is not None
    assert last.data["usage"] == counts


def test_chat_write_chunk_custom_and_unwritable() -> None:
    done = CHAT.chunk(Event(None, "[DONE]"))
    assert CHAT.write_chunk(done, None) == [Event(None, "[DONE]")]
    assert CHAT.write_chunk(Chunk("custom", name="mine", value={"a": 1}), None) == []
    assert CHAT.write_chunk(Chunk("tool_call_end", tool_call_id="c"), None) == []


# -- Responses: requests -----------------------------------------------------------------------


def responses_body() -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Weather in Paris?"},
                    {"type": "input_image", "image_url": "https://x/map.png", "detail": "low"},
                    {"type": "input_file", "file_id": "file_1"},
                ],
            },
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "zzz"},
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "weather",
                "arguments": '{"city": "Paris"}',
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {"type": "item_reference", "id": "ref_1"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "description": "Weather",
                "parameters": PARAMS,
                "strict": True,
            },
            {"type": "web_search"},
        ],
        "reasoning": {"effort": "low"},
        "stream": False,
    }


def test_responses_request_reads_instructions_items_and_tools() -> None:
    request = RESP.request(responses_body())
    assert request.messages == (
        Message.system("Be brief."),
        Message.user((TextPart("Weather in Paris?"), ImagePart("https://x/map.png"))),
        Message.assistant(
            (TextPart("Checking."),), [ToolCall("call_1", "weather", {"city": "Paris"})]
        ),
        Message.tool("sunny", "call_1"),
    )
    assert request.tools == (ToolSpec("weather", "Weather", PARAMS),)
    assert request.options == {"reasoning": {"effort": "low"}}
    assert (request.model, request.stream) == ("gpt-5", False)


def test_responses_unchanged_request_round_trips() -> None:
    unchanged(RESP, responses_body())
    unchanged(RESP, {"model": "m", "input": "hello"})
    unchanged(RESP, {"model": "m", "input": [{"role": "developer", "content": "x"}]})


def test_responses_system_prompt_goes_to_instructions() -> None:
    body = responses_body()
    request = RESP.request(body)
    replaced = request.replace(messages=(Message.system("Be kind."), *request.messages[1:]))
    out = RESP.write_request(replaced, body)
    assert out["instructions"] == "Be kind."
    assert all(a is b for a, b in zip(out["input"], body["input"], strict=True))
    dropped = RESP.write_request(request.replace(messages=request.messages[1:]), body)
    assert "instructions" not in dropped
    # no instructions before: a new leading system message becomes them
    plain = {"model": "m", "input": "hello"}
    added = RESP.request(plain)
    added = added.replace(messages=(Message.system("Rules."), *added.messages))
    assert RESP.write_request(added, plain) == {**plain, "instructions": "Rules."}
    # a system message that was an input item stays one
    dev = {"model": "m", "input": [{"role": "developer", "content": "x"}]}
    request = RESP.request(dev)
    out = RESP.write_request(request.replace(messages=(Message.system("y"),)), dev)
    assert out == {"model": "m", "input": [{"role": "developer", "content": "y"}]}


def test_responses_str_input_stays_a_str_while_it_can() -> None:
    body = {"model": "m", "input": "hello"}
    request = RESP.request(body)
    assert request.messages == (Message.user("hello"),)
    out = RESP.write_request(request.replace(messages=(Message.user("HELLO"),)), body)
    assert out == {"model": "m", "input": "HELLO"}
    more = (*request.messages, Message.assistant("hi"), Message.user("again"))
    out = RESP.write_request(request.replace(messages=more), body)
    assert out["input"] == [
        {"role": "user", "content": "hello"},
        {"type": "message", "role": "assistant", "content": "hi"},
        {"type": "message", "role": "user", "content": "again"},
    ]
    assert RESP.request(out).messages == more


def test_responses_edits_keep_unmodelled_items_and_parts() -> None:
    body = responses_body()
    request = RESP.request(body)
    _, user, assistant, tool = request.messages
    new_user = user.replace(content=(TextPart("Weather in Rome?"), user.content[1]))
    edited = request.replace(
        messages=(request.messages[0], new_user, assistant.replace(content="Looking."), tool)
    )
    out = RESP.write_request(edited, body)
    items = out["input"]
    assert items[0]["content"] == [
        {"type": "input_text", "text": "Weather in Rome?"},
        body["input"][0]["content"][1],
        body["input"][0]["content"][2],
    ]
    assert items[1] is body["input"][1]  # the reasoning item travels with its answer
    assert items[2] == {
        **body["input"][2],
        "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
    }
    assert items[3:] == body["input"][3:]
    assert norm(RESP.request(out)) == norm(edited)
    # removing the assistant turn removes its reasoning item with it (and the trailing
    # reference, which travels with the last message)
    out = RESP.write_request(request.replace(messages=request.messages[:2]), body)
    assert out["input"] == [body["input"][0]]


def test_responses_items_before_any_message_are_kept() -> None:
    body = {"model": "m", "input": [{"type": "item_reference", "id": "msg_0"}]}
    request = RESP.request(body)
    assert request.messages == ()
    out = RESP.write_request(request.replace(messages=(Message.user("next"),)), body)
    assert out["input"] == [
        body["input"][0],
        {"type": "message", "role": "user", "content": "next"},
    ]


def _answer(n: int, text: str) -> list[Any]:
    """A Responses answer as the API gives it back: a reasoning item, then the message."""
    reasoning = {"id": f"rs_{n}", "type": "reasoning", "summary": [], "encrypted_content": f"E{n}"}
    part = {"type": "output_text", "text": text, "annotations": []}
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed"}
    return [reasoning, {**message, "content": [part]}]


@pytest.mark.parametrize("asked_twice", [True, False])
def test_responses_an_edit_leaves_an_identical_answer_its_own_items(asked_twice: bool) -> None:
    # the first of two equal answers is redacted: it keeps its id and reasoning item, and
    # the second (untouched) is sent as it came, not as the first
    again = [{"role": "user", "content": "hi"}] if asked_twice else []
    hi: list[Any] = [{"role": "user", "content": "hi"}]
    body: dict[str, Any] = {
        "model": "m",
        "input": [*hi, *_answer(1, "ok"), *again, *_answer(2, "ok")],
    }
    request = RESP.request(body)
    messages = list(request.messages)
    messages[1] = messages[1].replace(content="[redacted]")
    edited = request.replace(messages=tuple(messages))
    out = RESP.write_request(edited, body)
    redacted = [{"type": "output_text", "text": "[redacted]", "annotations": []}]
    assert out["input"] == [
        *hi,
        body["input"][1],
        {**body["input"][2], "content": redacted},
        *again,
        *_answer(2, "ok"),
    ]
    assert all(a is b for a, b in zip(out["input"][3:], body["input"][3:], strict=True))
    assert norm(RESP.request(out)) == norm(edited)


def test_responses_fresh_calls_and_outputs() -> None:
    body: dict[str, Any] = {"model": "m", "input": []}
    messages = (
        Message.user("go"),
        Message.assistant("", [ToolCall("c1", "f", {"x": 1}), ToolCall("c2", "g", {})]),
        Message.tool("r1", "c1"),
        Message.tool((TextPart("r2"), ImagePart("data:image/png;base64,AA")), "c2"),
    )
    out = RESP.write_request(RESP.request(body).replace(messages=messages), body)
    assert out["input"][1:] == [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"x": 1}'},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r1"},
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": [
                {"type": "input_text", "text": "r2"},
                {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "auto"},
            ],
        },
    ]
    assert RESP.request(out).messages == messages


def test_responses_tools_added_not_strict_and_others_kept() -> None:
    body = responses_body()
    request = RESP.request(body)
    out = RESP.write_request(request.replace(tools=(*request.tools, ToolSpec("clock"))), body)
    assert out["tools"][:2] == body["tools"]
    assert out["tools"][2] == {
        "strict": False,
        "type": "function",
        "name": "clock",
        "parameters": {"type": "object", "properties": {}},
    }
    out = RESP.write_request(request.replace(tools=()), body)
    assert out["tools"] == [{"type": "web_search"}]


# -- Responses: answers and streams -------------------------------------------------------------


def response_json() -> dict[str, Any]:
    data = RESP.write_response(ANSWER, None)
    data["output"].insert(0, {"type": "reasoning", "id": "rs_9", "summary": []})
    return data


def test_responses_response_read_and_written_back() -> None:
    data = response_json()
    Response.model_validate(data)
    response = RESP.response(data)
    assert response.message == ANSWER.message
    assert (response.usage, response.finish_reason, response.model) == (
        Usage(11, 7, 18),
        "completed",
        "gpt-test",
    )
    assert RESP.write_response(response, data) == data
    changed = response.replace(message=Message.assistant("Rain.", [response.message.tool_calls[1]]))
    out = RESP.write_response(changed.replace(finish_reason="length"), data)
    Response.model_validate(out)
    assert out["output"][0] == data["output"][0]  # reasoning kept in place
    assert out["output"][1]["id"] == data["output"][1]["id"]
    assert out["output"][2] is data["output"][3]  # the unchanged call is the same item
    assert len(out["output"]) == 3
    assert out["status"] == "incomplete"
    assert RESP.response(out).message == changed.message
    assert sdk(data=out).responses.create(model="m", input="x").output_text == "Rain."


@pytest.mark.parametrize(
    ("reason", "status", "why"),
    [
        ("content_filter", "incomplete", "content_filter"),
        ("length", "incomplete", "max_output_tokens"),
        ("stop", "completed", None),
    ],
)
def test_a_responses_answer_says_why_it_is_incomplete(
    reason: str, status: str, why: str | None
) -> None:
    """A finish reason written back as a Responses answer, whole or made anew: its status,
    and `incomplete_details` saying why (a filter is no `max_output_tokens`)."""
    data = response_json()
    for out in (
        RESP.write_response(RESP.response(data).replace(finish_reason=reason), data),
        RESP.write_response(ModelResponse(Message.assistant("x"), finish_reason=reason), None),
    ):
        Response.model_validate(out)
        assert out["status"] == status
        assert out["incomplete_details"] == (None if why is None else {"reason": why})


def test_responses_chunk_kinds() -> None:
    added = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    events: dict[str, tuple[dict[str, Any], Chunk]] = {
        "response.output_text.delta": (
            {"delta": "Hi", "item_id": "m", "output_index": 0, "content_index": 0},
            Chunk("text", "Hi"),
        ),
        "response.reasoning_summary_text.delta": ({"delta": "hm"}, Chunk("reasoning", "hm")),
        "response.output_item.added": (
            {"output_index": 1, "item": {**added, "arguments": ""}},
            Chunk("tool_call_start", "", "call_1", "f", value=1),
        ),
        "response.function_call_arguments.delta": (
            {"delta": "{}", "item_id": "fc_1", "output_index": 1},
            Chunk("tool_call_args", "{}", value=1),
        ),
        "response.output_item.done": (
            {"output_index": 1, "item": {**added, "arguments": "{}"}},
            Chunk("tool_call_end", "", "call_1", "f", value=1),
        ),
    }
    for kind, (fields, expected) in events.items():
        event = Event(kind, {"type": kind, "sequence_number": 3, **fields})
        assert RESP.chunk(event) == expected
    final = RESP.stream_events(ANSWER)[-1]
    assert RESP.chunk(final) == Chunk("finish", usage=Usage(11, 7, 18), finish_reason="completed")
    bare = Event("response.completed", {**final.data, "response": {"status": "completed"}})
    assert RESP.chunk(bare) == Chunk("finish", finish_reason="completed")
    created = RESP.stream_events(ANSWER)[0]
    assert RESP.chunk(created) == Chunk(
        "custom", name="openai.responses.response.created", value=created.data
    )


@pytest.mark.parametrize(
    "response",
    [ANSWER, TEXT_ONLY, ModelResponse(Message.assistant("cut"), finish_reason="max_tokens")],
)
def test_responses_stream_events_are_valid_and_assemble_back(response: ModelResponse) -> None:
    events = RESP.stream_events(response)
    for n, event in enumerate(events):
        parsed = STREAM_EVENT.validate_python(event.data)
        assert (parsed.type, parsed.sequence_number, event.event) == (
            event.data["type"],
            n,
            parsed.type,
        )
    assert events[0].data["type"] == "response.created"
    # as the API does; openai < 3.9 requires it, later releases accept it
    done = [e.data for e in events if e.event == "response.function_call_arguments.done"]
    assert [d["name"] for d in done] == [c.name for c in response.message.tool_calls]
    chunks = [RESP.chunk(e) for e in reparse(events)]
    status = "incomplete" if response.finish_reason == "max_tokens" else "completed"
    assert assemble(chunks, response.model) == response.replace(finish_reason=status)


def test_responses_stream_events_parse_in_the_sdk() -> None:
    with sdk(RESP.stream_events(ANSWER)).responses.stream(model="m", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert (kinds[0], kinds[-1]) == ("response.created", "response.completed")
    assert final.output_text == ANSWER.text
    calls = [(o.call_id, o.name, o.arguments) for o in final.output if o.type == "function_call"]
    assert calls == [("call_1", "weather", '{"city": "Paris"}'), ("call_2", "time", "{}")]
    assert final.usage is not None
    assert final.usage.total_tokens == 18
    raw = list(
        sdk(RESP.stream_events(TEXT_ONLY)).responses.create(model="m", input="hi", stream=True)
    )
    assert "".join(e.delta for e in raw if e.type == "response.output_text.delta") == TEXT_ONLY.text


def test_responses_write_chunk_changes_events_in_place() -> None:
    events = RESP.stream_events(ANSWER)
    for event in events:
        chunk = RESP.chunk(event)
        if chunk.kind == "custom":
            assert RESP.write_chunk(chunk, events[0]) == [event]
            continue
        changed = chunk.replace(text=chunk.text + "!") if chunk.text else chunk
        if chunk.kind == "usage":
            changed = chunk.replace(usage=Usage(1, 1, 2))
        [out] = RESP.write_chunk(changed, events[0])
        assert out.event == out.data["type"] == event.data["type"]
        assert out.data["sequence_number"] == event.data["sequence_number"]
        STREAM_EVENT.validate_python(out.data)
        assert RESP.chunk(out) == changed


@pytest.mark.parametrize(
    "chunk",
    [*NEW_CHUNKS, Chunk("tool_call_end", "", "call_5", "lookup", value=2)],
    ids=lambda c: c.kind,
)
def test_responses_write_chunk_builds_new_events(chunk: Chunk) -> None:
    template = RESP.stream_events(TEXT_ONLY)[0]
    [out] = RESP.write_chunk(chunk, template)
    if chunk.kind == "usage":  # only the closing event carries usage: a note for the framer
        assert out.event == NOTE
        counts = out.data["usage"]
        assert (counts["input_tokens"], counts["output_tokens"], counts["total_tokens"]) == (
            1,
            2,
            3,
        )
        return
    STREAM_EVENT.validate_python(out.data)
    read = RESP.chunk(out)
    if chunk.kind == "finish":  # a finish of "length" is an incomplete response
        assert read == Chunk("finish", finish_reason="incomplete")
        return
    assert read == chunk


CITATION = {"type": "url_citation", "start_index": 0, "end_index": 3, "url": "https://s.test",
            "title": "S"}  # fmt: skip


def two_messages() -> dict[str, Any]:
    """An answer whose text is in three output texts of two message items, the second
    after a function call."""

    def text(value: str, *annotations: Any) -> dict[str, Any]:
        return {"type": "output_text", "text": value, "annotations": list(annotations),
                "logprobs": logprobs(value)}  # fmt: skip

    def message(id_: str, *parts: Any) -> dict[str, Any]:
        return {"id": id_, "type": "message", "role": "assistant", "status": "completed",
                "content": list(parts)}  # fmt: skip

    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
            "arguments": '{"city": "Paris"}', "status": "completed"}  # fmt: skip
    output = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        message("msg_1", text("The sky is blue.", CITATION), text(" Paris is rainy.")),
        call,
        message("msg_2", text(" Rome is dry.")),
    ]
    return {**RESP.write_response(TEXT_ONLY, None), "output": output}


@pytest.mark.parametrize(
    ("change", "texts"),
    [
        (str.upper, ["THE SKY IS BLUE.", " PARIS IS RAINY.", " ROME IS DRY."]),
        (
            lambda t: t.replace("Paris", "[city]"),
            ["The sky is blue.", " [city] is rainy.", " Rome is dry."],
        ),
    ],
)
def test_responses_a_text_changed_after_the_model_stays_in_its_parts(
    change: Any, texts: list[str]
) -> None:
    """A hook's new text is split across the output texts it was read from, each kept in
    its item and place with its annotations, as in a stream; a changed one drops its
    logprobs (they described the old text), an unchanged one keeps them."""

    @hw.after_model
    def edit(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(content=change(response.text)))

    data = two_messages()
    client = hw.wrap(sdk(data=data), use=[edit])
    answer = client.responses.create(model="m", input="x")
    assert [(o.type, o.id) for o in answer.output] == [(o["type"], o["id"]) for o in data["output"]]
    parts = [p for o in answer.output if o.type == "message" for p in o.content]
    originals = [p for o in data["output"] if o["type"] == "message" for p in o["content"]]
    assert [p.text for p in parts] == texts
    assert [len(p.annotations) for p in parts] == [1, 0, 0]
    assert parts[0].annotations[0].url == CITATION["url"]
    assert [len(p.logprobs or ()) for p in parts] == [
        len(was["logprobs"]) if was["text"] == now else 0
        for was, now in zip(originals, texts, strict=True)
    ]
    assert answer.output_text == "".join(texts)


# -- legacy Completions -------------------------------------------------------------------------


def test_completions_request_round_trip_and_changes() -> None:
    body = {"model": "davinci-002", "prompt": "Say hi", "max_tokens": 5}
    unchanged(LEGACY, body)
    unchanged(LEGACY, {"model": "m", "prompt": [1, 2, 3]})
    request = LEGACY.request(body)
    assert request.messages == (Message.user("Say hi"),)
    assert request.options == {"max_tokens": 5}
    out = LEGACY.write_request(
        request.replace(messages=(Message.system("Be loud."), Message.user("SAY HI"))), body
    )
    assert out == {**body, "prompt": "Be loud.\n\nSAY HI"}


def valid_completion(data: dict[str, Any]) -> None:
    """Validate a Completion; streamed ones carry a null `finish_reason` until the last, as
    the API sends them, though the SDK's type says otherwise (it does not validate streams)."""
    choices = [{**c, "finish_reason": c["finish_reason"] or "stop"} for c in data["choices"]]
    Completion.model_validate({**data, "choices": choices})


def test_completions_response_and_stream() -> None:
    data = LEGACY.write_response(TEXT_ONLY, None)
    Completion.model_validate(data)
    assert LEGACY.response(data) == TEXT_ONLY
    out = LEGACY.write_response(TEXT_ONLY.replace(message=Message.assistant("Other.")), data)
    assert out["choices"][0]["text"] == "Other."
    assert out["id"] == data["id"]
    events = LEGACY.stream_events(ANSWER)
    for event in events[:-1]:
        valid_completion(event.data)
    chunks = [LEGACY.chunk(e) for e in reparse(events)]
    assert [c.kind for c in chunks] == ["text", "finish", "usage", "custom"]
    assert chunks[0].text == ANSWER.text  # in one piece: hooks on chunks see it whole
    assert chunks[1].finish_reason == "stop"
    native = list(sdk(events).completions.create(model="m", prompt="x", stream=True))
    assert "".join(c.choices[0].text for c in native if c.choices) == ANSWER.text
    [new] = LEGACY.write_chunk(Chunk("text", "more"), events[0])
    valid_completion(new.data)
    assert new.data["id"] == events[0].data["id"]
    assert LEGACY.chunk(new) == Chunk("text", "more")
    assert LEGACY.write_chunk(Chunk("tool_call_args", "{}"), events[0]) == []


def test_the_module_imports_without_openai() -> None:
    code = "import sys; sys.modules['openai'] = None; import hookwrap.adapters._openai_wire"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    blocked = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['openai'] = None; import openai"],
        capture_output=True,
    )
    assert blocked.returncode != 0  # the check above can fail


# -- laws ---------------------------------------------------------------------------------------

texts = st.text(max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(st.text(min_size=1, max_size=5), json_values, max_size=3)
calls = st.builds(
    ToolCall, st.text(min_size=1, max_size=6), st.text(min_size=1, max_size=6), arguments
)
parts = st.lists(
    st.builds(TextPart, texts) | st.builds(ImagePart, st.just("https://x/y.png")), max_size=3
).map(tuple)
contents = texts | parts


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    if role == "tool":
        return Message.tool(draw(contents), draw(st.text(min_size=1, max_size=6)))
    if role == "assistant":
        tool_calls = draw(st.lists(calls, max_size=2))
        return Message.assistant(draw(texts) if tool_calls else draw(contents), tool_calls)
    return (Message.system if role == "system" else Message.user)(draw(contents))


def unknown_keys() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.sampled_from(["x_a", "x_b", "cache_control"]), json_values, max_size=2
    )


@st.composite
def native_chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """Chat bodies as a caller writes them, with keys and parts hookwrap does not model."""
    items: list[Any] = []
    for message in draw(st.lists(messages(), max_size=5)):
        item = CHAT.write_request(ModelRequest((message,)), {"messages": []})["messages"][0]
        if isinstance(item["content"], list) and draw(st.booleans()):
            item["content"].append({"type": "file", "file": {"file_id": "f"}})
        if draw(st.booleans()) and message.role == "system":
            item["role"] = "developer"
        items.append({**item, **draw(unknown_keys())})
    tools = [
        {"type": "function", "function": {"name": n, "parameters": PARAMS, "strict": True}}
        for n in draw(st.lists(st.sampled_from("abc"), unique=True, max_size=3))
    ]
    body: dict[str, Any] = {"model": "m", "messages": items, **draw(unknown_keys())}
    return body | ({"tools": tools} if tools else {})


def normal(request: tuple[Message, ...]) -> bool:
    """No assistant message with only tool calls right after another assistant message (the
    Responses API has no boundary there: its calls join the one before)."""
    return not any(
        a.role == b.role == "assistant" and b.tool_calls and not b.content
        for a, b in itertools.pairwise(request)
    )


@settings(max_examples=150, deadline=None)
@given(native_chat_bodies(), st.lists(messages(), max_size=5), st.data())
def test_law_chat_bodies_round_trip_and_edits_read_back(
    body: dict[str, Any], new: list[Message], data: st.DataObject
) -> None:
    unchanged(CHAT, body)
    request = CHAT.request(body)
    # an arbitrary edit: keep some messages, insert new ones anywhere
    kept = [m for m in request.messages if data.draw(st.booleans())]
    for message in new:
        kept.insert(data.draw(st.integers(0, len(kept))), message)
    edited = request.replace(messages=tuple(kept), tools=(*request.tools[1:], ToolSpec("new")))
    before = copy.deepcopy(body)
    out = CHAT.write_request(edited, body)
    assert body == before
    assert norm(CHAT.request(out)) == norm(edited)
    assert CHAT.write_request(CHAT.request(out), out) == out


@settings(max_examples=150, deadline=None)
@given(st.lists(messages(), max_size=6), st.lists(messages(), max_size=6), st.booleans())
def test_law_responses_requests_read_back(
    first: list[Message], second: list[Message], instructions: bool
) -> None:
    assume(normal(tuple(first)) and normal(tuple(second)))
    base: dict[str, Any] = {"model": "m", "input": []}
    if instructions:
        base["instructions"] = "Rules."
    original = RESP.request(base).replace(messages=tuple(first))
    body = RESP.write_request(original, base)
    assert RESP.request(body) == joined(original, body)
    unchanged(RESP, body)
    edited = original.replace(messages=tuple(second))
    out = RESP.write_request(edited, body)
    assert norm(RESP.request(out)) == norm(joined(edited, out))


def joined(request: ModelRequest, body: Mapping[str, Any]) -> ModelRequest:
    """`request` as `body` reads back: the leading system messages written to
    `instructions` are one there, their texts joined by a blank line."""
    n = len(request.messages) - len(RESP.request(body).messages) + 1
    if "instructions" not in body or n < 2:
        return request
    top = request.messages[:n]
    assert all(m.role == "system" and isinstance(m.content, str) for m in top)
    text = "\n\n".join(m.text for m in top)
    return request.replace(messages=(Message.system(text), *request.messages[n:]))


@settings(max_examples=60, deadline=None)
@given(texts, st.lists(calls, max_size=3, unique_by=lambda c: c.id), st.sampled_from([CHAT, RESP]))
def test_law_built_streams_assemble_to_the_response(
    text: str, tool_calls: list[ToolCall], wire: Any
) -> None:
    response = ModelResponse(Message.assistant(text, tool_calls), Usage(1, 2, 3), None, "m")
    chunks = [wire.chunk(e) for e in reparse(wire.stream_events(response))]
    assembled = assemble(chunks, "m")
    assert assembled.message == response.message
    assert assembled.usage == response.usage
    assert sum(c.kind == "tool_call_start" for c in chunks) == len(tool_calls)


def test_chat_split_gives_one_event_per_thing_of_a_delta() -> None:
    """Reasoning, text, then each tool call; the role on the first, the finish reason and
    the usage on the last; the usual event (one text delta, or one call) is not split."""
    delta = {
        "role": "assistant",
        "reasoning_content": "hm",
        "content": "Hi",
        "tool_calls": [
            {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}},
            {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    choice = {"index": 0, "delta": delta, "finish_reason": "tool_calls", "logprobs": None}
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    event = chat_chunk({}, choices=[choice], usage=usage)
    parts = CHAT.split(event)
    assert parts is not None
    chunks = [CHAT.chunk(p) for p in parts]
    assert [(c.kind, c.tool_name or c.text) for c in chunks] == [
        ("reasoning", "hm"),
        ("text", "Hi"),
        ("tool_call_start", "f"),
        ("tool_call_start", "g"),
    ]
    assert [p.data["choices"][0]["finish_reason"] for p in parts] == [None] * 3 + ["tool_calls"]
    assert [p.data.get("usage") for p in parts] == [None] * 3 + [usage]
    assert parts[0].data["choices"][0]["delta"]["role"] == "assistant"
    assert all("role" not in p.data["choices"][0]["delta"] for p in parts[1:])
    for part in parts:
        ChatCompletionChunk.model_validate(part.data)
    assert CHAT.split(chat_chunk({"content": "x"})) is None
    assert CHAT.split(chat_chunk({"tool_calls": delta["tool_calls"][:1]})) is None
    assert CHAT.chunks(event) == chunks
