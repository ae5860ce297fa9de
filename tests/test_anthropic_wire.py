"""The Messages API wire: bodies, responses and SSE events to neutral types and back, checked
against the installed `anthropic` SDK's own types, accumulator and stream helper."""

from __future__ import annotations

import copy
import inspect
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hookwrap as hw
from hookwrap._engine import assemble
from hookwrap._types import (
    Chunk,
    ImagePart,
    Message,
    ModelResponse,
    Part,
    TextPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from hookwrap.adapters._anthropic_wire import (  # the laws reach into the write-back
    _ABSENT,  # pyright: ignore[reportPrivateUsage]
    MessagesWire,
    _units,  # pyright: ignore[reportPrivateUsage]
    _write_messages,  # pyright: ignore[reportPrivateUsage]
)
from hookwrap.adapters._wire import NOTE, Event, parse_sse

anthropic = pytest.importorskip("anthropic")
pydantic = pytest.importorskip("pydantic")
from anthropic.lib.streaming._messages import accumulate_event  # noqa: E402
from anthropic.types import Message as SDKMessage  # noqa: E402
from anthropic.types import RawMessageStreamEvent  # noqa: E402

# anthropic < 1.0 is built on httpx, later releases on httpx2: the SDK's own client says which
HTTPX: Any = next(
    sys.modules[root]
    for cls in anthropic.DefaultHttpxClient.__mro__
    if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
)
# anthropic >= 1.5 keeps partial tool-input JSON in the caller's `json_bufs`, older releases
# on the snapshot itself
_JSON_BUFS = "json_bufs" in inspect.signature(accumulate_event).parameters


def accumulate(event: Any, snapshot: Any, buffers: dict[int, bytes]) -> Any:
    more: Any = {"json_bufs": buffers} if _JSON_BUFS else {}
    return accumulate_event(event=event, current_snapshot=snapshot, **more)


W = MessagesWire()
EVENTS: Any = pydantic.TypeAdapter(RawMessageStreamEvent)
CACHE = {"type": "ephemeral"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def body() -> dict[str, Any]:
    """A request with every shape the wire models, and keys it does not."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "metadata": {"user_id": "u1"},
        "system": [{"type": "text", "text": "Be kind.", "cache_control": CACHE}],
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "two calls", "signature": "sig"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "P"}},
                    {"type": "tool_use", "id": "t2", "name": "weather", "input": {"city": "R"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": [{"type": "text", "text": "rain"}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Thanks.", "cache_control": CACHE},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                    {"type": "document", "source": {"type": "text", "data": "doc"}},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVB"},
                    },
                ],
            },
        ],
        "tools": [
            {"name": "weather", "description": "Forecast.", "input_schema": SCHEMA},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
            {"name": "clock", "input_schema": {"type": "object"}, "cache_control": CACHE},
        ],
        "stream": True,
    }


EXPECTED = (
    Message.system([TextPart("Be kind.")]),
    Message.user("Weather in Paris and Rome?"),
    Message.assistant(
        [TextPart("Checking.")],
        [ToolCall("t1", "weather", {"city": "P"}), ToolCall("t2", "weather", {"city": "R"})],
    ),
    Message.tool("sunny", "t1", "weather"),
    Message.tool([TextPart("rain")], "t2", "weather"),
    Message.user([TextPart("Thanks.")]),
    Message.user(
        [ImagePart("https://x/a.png"), ImagePart("data:image/png;base64,iVB", "image/png")]
    ),
)


def test_module_imports_without_the_sdk() -> None:
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "import hookwrap.adapters._anthropic_wire as m; m.MessagesWire()\n"
        "assert sys.modules['anthropic'] is None"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- requests ---------------------------------------------------------------------------------


def test_request_reads_every_shape() -> None:
    request = W.request(body())
    assert request.messages == EXPECTED
    assert request.tools == (
        ToolSpec("weather", "Forecast.", SCHEMA),
        ToolSpec("clock", "", {"type": "object"}),
    )
    assert request.model == "claude-sonnet-4-5"
    assert request.stream is True
    assert request.options == {"max_tokens": 1024, "metadata": {"user_id": "u1"}}


PLAIN = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}]


@pytest.mark.parametrize(
    "changes",
    [
        {},  # role and str content only: read without units
        {"system": "Be kind."},
        {"system": anthropic.omit},
        {"system": None},
        {"messages": [*PLAIN, {"role": "system", "content": "late"}]},
        {"messages": [{"role": "user", "content": "hi", "cache_control": CACHE}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]},
        {"messages": [{"role": "user", "content": None}]},
        {"messages": ({"role": "user", "content": "a tuple"},)},
        {"messages": []},
    ],
)
def test_request_messages_read_the_short_way_equal_the_units(changes: dict[str, Any]) -> None:
    b = {"model": "m", "max_tokens": 5, "messages": PLAIN, **changes}
    assert W.request(b).messages == tuple(u.message for u in _units(b))


def test_a_message_with_an_unknown_role_is_refused_however_it_is_read() -> None:
    with pytest.raises(ValueError, match="role"):
        W.request({"model": "m", "messages": [{"role": "robot", "content": "hi"}]})


def test_unchanged_request_writes_back_the_same_objects() -> None:
    b = body()
    out = W.write_request(W.request(b), b)
    assert out == b
    assert out is not b
    for key in ("system", "messages", "tools", "metadata"):
        assert out[key] is b[key]


def test_a_changed_request_keeps_the_untouched_messages_as_they_were() -> None:
    b = body()
    request = W.request(b)
    messages = (*request.messages, Message.user("More?"))
    out = W.write_request(request.replace(messages=messages), b)
    assert out["system"] is b["system"]
    assert all(x is y for x, y in zip(out["messages"], b["messages"], strict=False))
    assert out["messages"][-1] == {"role": "user", "content": "More?"}
    assert b == body()  # the input is never mutated


@pytest.mark.parametrize(
    ("system", "written"),
    [
        ("Be kind.", "Be brief.\n\nBe kind."),
        (
            [{"type": "text", "text": "Be kind.", "cache_control": CACHE}],
            [
                {"type": "text", "text": "Be brief."},
                {"type": "text", "text": "Be kind.", "cache_control": CACHE},
            ],
        ),
        (None, "Be brief."),
    ],
)
def test_a_system_prompt_added_keeps_the_form_it_came_in(system: Any, written: Any) -> None:
    b: dict[str, Any] = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if system is not None:
        b["system"] = system
    request = W.request(b)
    out = W.write_request(
        request.replace(messages=(Message.system("Be brief."), *request.messages)), b
    )
    assert out["system"] == written
    if isinstance(system, list):
        assert out["system"][1] is system[0]
    assert out["messages"][0] is b["messages"][0]
    assert W.request(out).messages[0].text.startswith("Be brief.")


def test_a_system_prompt_changed_or_removed() -> None:
    b = body()
    request = W.request(b)
    changed = (Message.system("Be terse."), *request.messages[1:])
    out = W.write_request(request.replace(messages=changed), b)
    # the changed block keeps its cache breakpoint; a str content becomes text blocks
    assert out["system"] == [{"type": "text", "text": "Be terse.", "cache_control": CACHE}]
    out = W.write_request(request.replace(messages=request.messages[1:]), b)
    assert "system" not in out
    assert out["messages"] == b["messages"]


def test_a_later_system_message_is_a_system_role_message() -> None:
    b = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    request = W.request(b)
    out = W.write_request(request.replace(messages=(*request.messages, Message.system("Now."))), b)
    assert "system" not in out
    assert out["messages"][1] == {"role": "system", "content": "Now."}
    assert W.write_request(W.request(out), out) == out


def test_a_system_role_message_read_from_messages_stays_there() -> None:
    b = {
        "model": "m",
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}],
    }
    request = W.request(b)
    assert request.messages == (Message.system("S"), Message.user("u"))
    out = W.write_request(request.replace(messages=(*request.messages, Message.user("v"))), b)
    assert "system" not in out
    assert out["messages"][:2] == b["messages"]


def test_text_replaced_keeps_the_form_and_the_block_keys() -> None:
    b = body()
    request = W.request(b)
    messages = list(request.messages)
    messages[1] = Message.user("Weather in Oslo?")
    messages[5] = Message.user([TextPart("Cheers.")])
    out = W.write_request(request.replace(messages=messages), b)
    assert out["messages"][0] == {"role": "user", "content": "Weather in Oslo?"}
    tools = out["messages"][2]
    assert tools["content"][:2] == b["messages"][2]["content"][:2]
    assert tools["content"][0] is b["messages"][2]["content"][0]
    assert tools["content"][2] == {"type": "text", "text": "Cheers.", "cache_control": CACHE}
    assert out["messages"][1] is b["messages"][1]
    assert W.request(out).messages == tuple(messages)


def test_parts_added_around_a_cached_block_leave_its_breakpoint_in_place() -> None:
    b: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "A", "cache_control": CACHE}]}
        ],
    }
    request = W.request(b)
    message = Message.user([TextPart("before"), TextPart("A"), TextPart("after")])
    out = W.write_request(request.replace(messages=(message,)), b)
    content = out["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "before"},
        {"type": "text", "text": "A", "cache_control": CACHE},
        {"type": "text", "text": "after"},
    ]
    assert content[1] is b["messages"][0]["content"][0]


def test_an_assistant_message_changed_keeps_thinking_and_tool_use_blocks() -> None:
    b = body()
    request = W.request(b)
    messages = list(request.messages)
    old = messages[2]
    extra = ToolCall("t3", "clock", {})
    messages[2] = old.replace(content="Checking twice.", tool_calls=(*old.tool_calls, extra))
    out = W.write_request(request.replace(messages=messages), b)
    blocks = out["messages"][1]["content"]
    original = b["messages"][1]["content"]
    assert blocks[0] is original[0]  # thinking stays first, untouched
    assert blocks[1] == {"type": "text", "text": "Checking twice."}
    assert blocks[2] is original[2]
    assert blocks[3] is original[3]
    assert blocks[4] == {"type": "tool_use", "id": "t3", "name": "clock", "input": {}}
    assert W.request(out).messages[2] == messages[2].replace(content=(TextPart("Checking twice."),))


def test_tool_results_group_into_one_user_message() -> None:
    b = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    request = W.request(b)
    messages = (
        *request.messages,
        Message.assistant("", [ToolCall("a", "f", {"x": 1}), ToolCall("b", "f", {})]),
        Message.tool("1", "a"),
        Message.tool([TextPart("2"), ImagePart("data:image/gif;base64,R0", "image/gif")], "b"),
        Message.user("next"),
    )
    out = W.write_request(request.replace(messages=messages), b)
    assert out["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}},
                {"type": "tool_use", "id": "b", "name": "f", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "1"},
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [
                        {"type": "text", "text": "2"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/gif", "data": "R0"},
                        },
                    ],
                },
            ],
        },
        {"role": "user", "content": "next"},
    ]
    back = W.request(out).messages
    assert back[1:] == (
        Message.assistant((), messages[1].tool_calls),
        Message.tool("1", "a", "f"),
        messages[3].replace(name="f"),
        Message.user("next"),
    )


def test_a_changed_tool_result_keeps_is_error_and_its_message_neighbours() -> None:
    b = body()
    request = W.request(b)
    messages = list(request.messages)
    messages[4] = messages[4].replace(content=(TextPart("snow"),))
    out = W.write_request(request.replace(messages=messages), b)
    content = out["messages"][2]["content"]
    original = b["messages"][2]["content"]
    assert len(out["messages"]) == 4
    assert content[0] is original[0]
    assert content[1] == {**original[1], "content": [{"type": "text", "text": "snow"}]}
    assert content[2] is original[2]
    # a tool message removed: the rest of that user message stays one message
    del messages[3]
    out = W.write_request(request.replace(messages=messages), b)
    assert [c.get("tool_use_id") for c in out["messages"][2]["content"]] == ["t2", None]


def test_tools_added_and_changed_keep_server_tools_and_keys() -> None:
    b = body()
    request = W.request(b)
    tools = (
        request.tools[0].replace(description="Weather forecast."),
        request.tools[1],
        ToolSpec("search", "Find.", {"type": "object", "properties": {}}),
    )
    out = W.write_request(request.replace(tools=tools), b)
    assert out["tools"] == [
        {"name": "weather", "description": "Weather forecast.", "input_schema": SCHEMA},
        b["tools"][1],
        b["tools"][2],
        {
            "name": "search",
            "input_schema": {"type": "object", "properties": {}},
            "description": "Find.",
        },
    ]
    assert out["tools"][1] is b["tools"][1]
    assert out["tools"][2] is b["tools"][2]
    out = W.write_request(request.replace(tools=()), b)
    assert out["tools"] == [b["tools"][1]]
    plain: dict[str, Any] = {"model": "m", "messages": []}
    out = W.write_request(W.request(plain).replace(tools=(ToolSpec("f"),)), plain)
    assert out["tools"] == [{"name": "f", "input_schema": {"type": "object", "properties": {}}}]


def test_options_model_and_stream_write_back() -> None:
    b = body()
    request = W.request(b)
    options = {"max_tokens": 50, "temperature": 0.2, "system": "ignored"}
    out = W.write_request(
        request.replace(options=options, model="claude-haiku-4-5", stream=False), b
    )
    assert out["max_tokens"] == 50
    assert out["temperature"] == 0.2
    assert "metadata" not in out
    assert out["system"] is b["system"]
    assert out["model"] == "claude-haiku-4-5"
    assert out["stream"] is False
    assert W.write_request(request.replace(model=None), b)["model"] == b["model"]


def test_sdk_placeholders_for_unset_parameters_are_absent() -> None:
    # `messages.stream()` leaves `omit` in the body for every parameter not given
    b = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    b |= {"system": anthropic.omit, "tools": anthropic.omit, "metadata": anthropic.NOT_GIVEN}
    request = W.request(b)
    assert request.messages == (Message.user("hi"),)
    assert request.options == {"max_tokens": 5}
    added = (Message.system("Be brief."), *request.messages)
    out = W.write_request(request.replace(messages=added, tools=(ToolSpec("f"),)), b)
    assert out["system"] == "Be brief."
    assert out["tools"] == [{"name": "f", "input_schema": {"type": "object", "properties": {}}}]
    assert out["metadata"] is anthropic.NOT_GIVEN
    out = W.write_request(request.replace(options={"max_tokens": 5, "metadata": {"a": 1}}), b)
    assert out["metadata"] == {"a": 1}


def test_a_message_with_an_unknown_role_is_an_error() -> None:
    with pytest.raises(ValueError, match="'tool'"):
        W.request({"messages": [{"role": "tool", "content": "x"}]})


# -- responses --------------------------------------------------------------------------------


def response_json() -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "sig"},
            {"type": "text", "text": "It is ", "citations": None},
            {"type": "text", "text": "sunny."},
            {"type": "tool_use", "id": "t9", "name": "weather", "input": {"city": "P"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 5},
    }


def test_response_reads_text_tool_calls_usage_and_stop_reason() -> None:
    data = response_json()
    response = W.response(data)
    assert response.message == Message.assistant(
        "It is sunny.", [ToolCall("t9", "weather", {"city": "P"})]
    )
    assert response.usage == Usage(35, 12, 47)  # the 5 cached input tokens are input too
    assert response.finish_reason == "tool_use"
    assert response.model == "claude-sonnet-4-5"
    assert response.raw is data
    SDKMessage.model_validate(data)


def test_response_written_back() -> None:
    data = response_json()
    response = W.response(data)
    same = W.write_response(response, data)
    assert same == data
    assert same["content"] is data["content"]
    # tool calls changed, text not: the text keeps its blocks
    out = W.write_response(response.replace(message=response.message.replace(tool_calls=())), data)
    assert out["content"] == data["content"][:3]
    message = Message.assistant("[redacted]", response.message.tool_calls)
    out = W.write_response(
        response.replace(message=message, usage=Usage(40, 20), finish_reason="end_turn", model="x"),
        data,
    )
    # the new text is split across the two text blocks, which keep their places and keys
    assert out["content"][0] is data["content"][0]
    assert [b["type"] for b in out["content"]] == ["thinking", "text", "text", "tool_use"]
    assert "".join(b["text"] for b in out["content"][1:3]) == "[redacted]"
    assert "citations" not in out["content"][1]  # they quoted what the old text drew on
    assert out["content"][3] is data["content"][3]
    # Anthropic's input_tokens leave out the cached 5 the neutral count holds
    assert out["usage"] == {"input_tokens": 35, "output_tokens": 20, "cache_read_input_tokens": 5}
    assert W.response(out).usage == Usage(40, 20, 60)
    assert (out["stop_reason"], out["model"]) == ("end_turn", "x")
    SDKMessage.model_validate(out)
    assert data == response_json()


@pytest.mark.parametrize(
    "response",
    [
        ModelResponse(Message.assistant("hello")),
        ModelResponse(
            Message.assistant("", [ToolCall("", "f", {"a": [1]})]), Usage(3, 4), None, "m"
        ),
        ModelResponse(
            Message.assistant([TextPart("a"), TextPart("b")]), finish_reason="max_tokens"
        ),
    ],
)
def test_a_new_response_is_a_complete_message(response: ModelResponse) -> None:
    data = W.write_response(response, None)
    parsed = SDKMessage.model_validate(data)
    assert parsed.id.startswith("msg_")
    assert parsed.stop_sequence is None
    back = W.response(data)
    assert back.text == response.text
    assert [(c.name, c.arguments) for c in back.message.tool_calls] == [
        (c.name, c.arguments) for c in response.message.tool_calls
    ]
    assert all(c.id.startswith("toolu_") for c in back.message.tool_calls)
    expected = response.finish_reason or ("tool_use" if response.message.tool_calls else "end_turn")
    assert parsed.stop_reason == expected


# -- streams ----------------------------------------------------------------------------------


def ev(data: dict[str, Any]) -> Event:
    return Event(data["type"], data)


START = ev(
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 25, "output_tokens": 1},
        },
    }
)


def block(index: int, content: dict[str, Any]) -> Event:
    return ev({"type": "content_block_start", "index": index, "content_block": content})


def delta(index: int, **fields: Any) -> Event:
    return ev({"type": "content_block_delta", "index": index, "delta": fields})


def stop(index: int) -> Event:
    return ev({"type": "content_block_stop", "index": index})


FINISH = ev(
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 15},
    }
)
STREAM = [
    START,
    block(0, {"type": "thinking", "thinking": "", "signature": ""}),
    delta(0, type="thinking_delta", thinking="Let me"),
    delta(0, type="signature_delta", signature="sig"),
    stop(0),
    ev({"type": "ping"}),
    block(1, {"type": "text", "text": ""}),
    delta(1, type="text_delta", text="Hello"),
    delta(1, type="text_delta", text=" there"),
    stop(1),
    block(2, {"type": "tool_use", "id": "t1", "name": "weather", "input": {}}),
    delta(2, type="input_json_delta", partial_json=""),
    delta(2, type="input_json_delta", partial_json='{"city": '),
    delta(2, type="input_json_delta", partial_json='"Paris"}'),
    stop(2),
    FINISH,
    ev({"type": "message_stop"}),
]


def test_every_event_is_one_chunk() -> None:
    chunks = [W.chunk(e) for e in STREAM]
    assert [c.raw for c in chunks] == STREAM
    assert chunks[0] == Chunk("usage", usage=Usage(25, 1, 26))
    assert chunks[1] == Chunk("custom", name="anthropic.content_block_start", value=STREAM[1].data)
    assert chunks[2] == Chunk("reasoning", "Let me")
    assert chunks[3].name == "anthropic.content_block_delta"
    assert chunks[4] == Chunk("custom", name="anthropic.content_block_stop", value=STREAM[4].data)
    assert chunks[5] == Chunk("custom", name="anthropic.ping", value={"type": "ping"})
    assert [c.text for c in chunks[7:9]] == ["Hello", " there"]
    assert chunks[10] == Chunk("tool_call_start", tool_call_id="t1", tool_name="weather", value=2)
    assert chunks[12] == Chunk("tool_call_args", '{"city": ', value=2)
    assert chunks[15] == Chunk("finish", usage=Usage(0, 15, 15), finish_reason="tool_use")
    assert chunks[16].name == "anthropic.message_stop"
    error = Event("error", {"type": "error", "error": {"type": "overloaded_error"}})
    assert W.chunk(error).name == "anthropic.error"
    assert W.chunk(Event("error", "not json")) == Chunk(
        "custom", name="anthropic.error", value="not json"
    )


def test_assembled_stream_has_the_right_totals_and_tool_call() -> None:
    response = assemble([W.chunk(e) for e in STREAM])
    assert response.text == "Hello there"
    assert response.message.tool_calls == (ToolCall("t1", "weather", {"city": "Paris"}),)
    assert response.usage == Usage(25, 15, 40)
    assert response.finish_reason == "tool_use"
    cumulative = ev({**FINISH.data, "usage": {"input_tokens": 25, "output_tokens": 15}})
    assert assemble([W.chunk(START), W.chunk(cumulative)]).usage == Usage(25, 15, 40)


def test_sse_bytes_round_trip_through_parse_sse() -> None:
    raw = b"".join(e.encode() for e in STREAM)
    parsed = list(parse_sse(raw.splitlines(keepends=True)))
    assert parsed == STREAM
    assert [W.chunk(e) for e in parsed] == [W.chunk(e) for e in STREAM]


def test_cached_input_counts_as_input_in_stream_usage_both_ways() -> None:
    cached = {"input_tokens": 5, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 3}
    start = ev(
        {
            **START.data,
            "message": {**START.data["message"], "usage": {**cached, "output_tokens": 1}},
        }
    )
    [chunk] = [c for c in W.chunks(start) if c.kind == "usage"]
    assert chunk.usage == Usage(28, 1, 29)
    [out] = W.write_chunk(chunk.replace(usage=Usage(30, 1, 31)), start)
    assert out.data["message"]["usage"] == {**cached, "input_tokens": 7, "output_tokens": 1}
    assert [c.usage for c in W.chunks(out) if c.kind == "usage"] == [Usage(30, 1, 31)]


def test_a_changed_chunk_rewrites_its_own_event() -> None:
    chunks = [W.chunk(e) for e in STREAM]
    [text] = W.write_chunk(chunks[7].replace(text="Hi"), START)
    assert text.data == {**STREAM[7].data, "delta": {"type": "text_delta", "text": "Hi"}}
    [thinking] = W.write_chunk(chunks[2].replace(text="Hmm"), START)
    assert thinking.data["delta"] == {"type": "thinking_delta", "thinking": "Hmm"}
    [args] = W.write_chunk(chunks[12].replace(text='{"city":'), START)
    assert args.data == {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"city":'},
    }
    [start] = W.write_chunk(chunks[10].replace(tool_name="forecast"), START)
    assert start.data["content_block"] == {
        "type": "tool_use",
        "id": "t1",
        "name": "forecast",
        "input": {},
    }
    [finish] = W.write_chunk(
        chunks[15].replace(finish_reason="end_turn", usage=Usage(0, 9, 9)), START
    )
    assert finish.data == {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 9},
    }
    [usage] = W.write_chunk(chunks[0].replace(usage=Usage(7, 1, 8)), START)
    assert usage.data["message"]["usage"] == {"input_tokens": 7, "output_tokens": 1}
    assert usage.data["message"]["id"] == "msg_1"
    [ping] = W.write_chunk(chunks[5].replace(value={"type": "ping", "n": 1}), START)
    assert (ping.event, ping.data) == ("ping", {"type": "ping", "n": 1})
    for out in (text, thinking, args, start, finish, usage):
        assert out.event == out.data["type"]
        EVENTS.validate_python(out.data)
        assert W.chunk(out).kind in (
            "text",
            "reasoning",
            "tool_call_args",
            "tool_call_start",
            "finish",
            "usage",
        )
    assert STREAM[7].data["delta"]["text"] == "Hello"  # events are never mutated


def test_a_tool_use_start_with_its_input_carries_the_arguments() -> None:
    event = block(0, {"type": "tool_use", "id": "t1", "name": "f", "input": {"q": "x"}})
    chunk = W.chunk(event)
    assert chunk == Chunk("tool_call_start", '{"q": "x"}', "t1", "f", value=0)
    assert assemble([chunk]).message.tool_calls == (ToolCall("t1", "f", {"q": "x"}),)
    [out] = W.write_chunk(chunk.replace(text='{"q": "y"}'), START)
    assert out.data["content_block"]["input"] == {"q": "y"}
    EVENTS.validate_python(out.data)


def test_a_server_tool_block_is_no_tool_call() -> None:
    """As in a whole answer, where its blocks stay in `raw` only: its start is a custom
    chunk, and its input deltas belong to no call."""
    start = block(0, {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}})
    chunks = [W.chunk(start), W.chunk(delta(0, type="input_json_delta", partial_json="{}"))]
    assert (chunks[0].kind, chunks[0].name) == ("custom", "anthropic.content_block_start")
    assert assemble(chunks).message.tool_calls == ()
    assert W.write_chunk(chunks[0], START) == [start]


def test_a_text_block_start_with_text_is_a_text_chunk() -> None:
    event = block(0, {"type": "text", "text": "Hi"})
    chunk = W.chunk(event)
    assert chunk == Chunk("text", "Hi")
    [out] = W.write_chunk(chunk.replace(text="Yo"), None)
    assert out.data["content_block"] == {"type": "text", "text": "Yo"}


def test_new_chunks_take_their_block_index_from_raw_value_or_template() -> None:
    [out] = W.write_chunk(Chunk("text", "new"), START)
    assert out.data == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "new"},
    }
    [out] = W.write_chunk(Chunk("text", "new", value=3), START)
    assert out.data["index"] == 3
    [out] = W.write_chunk(Chunk("text", "new"), delta(5, type="text_delta", text="x"))
    assert out.data["index"] == 5
    # a reasoning chunk turned into text keeps its event's index
    [out] = W.write_chunk(W.chunk(STREAM[2]).replace(kind="text"), START)
    assert out.data == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Let me"},
    }
    [out] = W.write_chunk(Chunk("tool_call_args", "{}", value=4), START)
    assert out.data["delta"] == {"type": "input_json_delta", "partial_json": "{}"}
    [out] = W.write_chunk(Chunk("tool_call_start", tool_call_id="x", tool_name="f", value=4), START)
    assert out.data["content_block"] == {"type": "tool_use", "id": "x", "name": "f", "input": {}}
    [out] = W.write_chunk(Chunk("tool_call_end", value=4), START)
    assert out.data == {"type": "content_block_stop", "index": 4}
    [out] = W.write_chunk(Chunk("finish", finish_reason="end_turn"), START)
    assert out.data["delta"]["stop_reason"] == "end_turn"
    [out] = W.write_chunk(Chunk("custom", name="anthropic.ping", value={"type": "ping"}), START)
    assert out.event == "ping"
    [note] = W.write_chunk(Chunk("usage", usage=Usage(1, 1, 2)), START)  # for a framer only
    assert (note.event, note.data["usage"]) == (NOTE, {"input_tokens": 1, "output_tokens": 1})
    assert W.write_chunk(Chunk("usage"), START) == []  # no counts: nothing to say
    assert W.write_chunk(Chunk("custom", name="mine", value={"type": "ping"}), START) == []


def stream_response() -> ModelResponse:
    return ModelResponse(
        Message.assistant(
            "Hello there",
            [ToolCall("t1", "weather", {"city": "Paris"}), ToolCall("t2", "clock", {})],
        ),
        Usage(25, 15, 40),
        "tool_use",
        "claude-sonnet-4-5",
    )


def test_stream_events_validate_and_accumulate_to_the_response() -> None:
    response = stream_response()
    events = W.stream_events(response)
    assert [e.event for e in events] == [e.data["type"] for e in events]
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        parsed = EVENTS.validate_python(event.data)
        snapshot = accumulate(parsed, snapshot, buffers)
    message = SDKMessage.model_validate(snapshot.to_dict())
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[0].text == "Hello there"  # type: ignore[union-attr]
    assert [(b.id, b.name, b.input) for b in message.content[1:]] == [  # type: ignore[union-attr]
        ("t1", "weather", {"city": "Paris"}),
        ("t2", "clock", {}),
    ]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (25, 15)
    assembled = assemble([W.chunk(e) for e in events], "claude-sonnet-4-5")
    assert assembled == response


def test_stream_events_of_a_raw_response_keep_its_thinking() -> None:
    data = response_json()
    events = W.stream_events(W.response(data))
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate(EVENTS.validate_python(event.data), snapshot, buffers)
    # anthropic < 0.122 starts each block from its `model_dump()`, so the fields an event
    # left out come back as None
    content = [
        {k: v for k, v in block.items() if v is not None or k in sent}
        for block, sent in zip(snapshot.to_dict()["content"], data["content"], strict=True)
    ]
    assert content == data["content"]
    assert snapshot.id == "msg_01"


def sdk_client(payload: bytes, content_type: str, seen: list[Any]) -> Any:
    def handle(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return HTTPX.Response(200, content=payload, headers={"content-type": content_type})

    transport = HTTPX.MockTransport(handle)
    return anthropic.Anthropic(api_key="k", http_client=HTTPX.Client(transport=transport))


def test_the_sdk_stream_helper_reads_stream_events() -> None:
    response = stream_response()
    payload = b"".join(e.encode() for e in W.stream_events(response))
    seen: list[Any] = []
    client = sdk_client(payload, "text/event-stream", seen)
    kwargs: Any = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    with client.messages.stream(**kwargs) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello there"
    assert [b.input for b in final.content if b.type == "tool_use"] == [{"city": "Paris"}, {}]
    assert W.request(seen[0]).messages == (Message.user("hi"),)
    assert W.request(seen[0]).stream is True


def test_the_sdk_parses_a_written_response() -> None:
    data = W.write_response(stream_response(), None)
    client = sdk_client(json.dumps(data).encode(), "application/json", [])
    kwargs: Any = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    message = client.messages.create(**kwargs)
    assert message.content[0].text == "Hello there"
    assert message.usage.output_tokens == 15


# -- a text changed over several blocks ---------------------------------------------------------

CITED = {
    "type": "char_location",
    "cited_text": "The sky is blue.",
    "document_index": 0,
    "document_title": "Sky",
    "start_char_index": 0,
    "end_char_index": 16,
}
SEARCHED = {
    "type": "web_search_result_location",
    "cited_text": "Rain in Paris today",
    "url": "https://w.test",
    "title": "W",
    "encrypted_index": "RUk=",
}


def cited_answer() -> dict[str, Any]:
    """An answer whose text is in two cited blocks, one each side of a web search."""
    search = [
        {
            "type": "web_search_result",
            "url": "https://w.test",
            "title": "W",
            "encrypted_content": "RUM=",
            "page_age": None,
        }
    ]
    content = [
        {"type": "thinking", "thinking": "hm", "signature": "sig"},
        {"type": "text", "text": "The sky is blue", "citations": [CITED]},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
         "input": {"query": "paris"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": search},
        {"type": "text", "text": " and Paris is rainy.", "citations": [SEARCHED]},
        {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}},
    ]  # fmt: skip
    return {**response_json(), "content": content}


KINDS = ["thinking", "text", "server_tool_use", "web_search_tool_result", "text", "tool_use"]


@pytest.mark.parametrize(
    ("change", "texts"),
    [
        (str.upper, ["THE SKY IS BLUE", " AND PARIS IS RAINY."]),
        (lambda t: t.replace("Paris", "[city]"), ["The sky is blue", " and [city] is rainy."]),
        (lambda t: t.replace("blue", "grey"), ["The sky is grey", " and Paris is rainy."]),
        (lambda t: t.replace(" and Paris is rainy.", ""), ["The sky is blue"]),
    ],
)
def test_a_text_changed_after_the_model_stays_in_its_blocks_citations_where_unchanged(
    change: Any, texts: list[str]
) -> None:
    """A hook's new text is split across the text blocks it was read from, each kept in its
    place; a block whose text is unchanged keeps its citations, a changed one loses them
    (they quote what the old text drew on, which a redaction may have taken out); a block
    left empty goes (the API refuses empty text blocks in the next request)."""

    @hw.after_model
    def edit(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(content=change(response.text)))

    client = hw.wrap(
        sdk_client(json.dumps(cited_answer()).encode(), "application/json", []), use=[edit]
    )
    kwargs: Any = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    message = client.messages.create(**kwargs)
    kinds = KINDS if len(texts) == 2 else [*KINDS[:4], KINDS[5]]
    assert [b.type for b in message.content] == kinds
    written = [
        (b.text, [(c.type, c.cited_text) for c in b.citations or ()])
        for b in message.content
        if b.type == "text"
    ]
    originals = ["The sky is blue", " and Paris is rainy."]
    cited = [
        [(c["type"], c["cited_text"])] if text == was else []
        for c, text, was in zip((CITED, SEARCHED), texts, originals, strict=False)
    ]
    assert written == list(zip(texts, cited, strict=True))
    assert message.content[-1].input == {"city": "Paris"}


def test_a_text_changed_before_the_model_stays_in_its_blocks() -> None:
    """A user message of several text blocks given a new text by a hook: the cached block
    the edit did not touch is sent as it was, and only the other one changes."""
    context = {"type": "text", "text": "Long shared context.", "cache_control": CACHE}

    @hw.before_model
    def redact(request: hw.ModelRequest) -> hw.ModelRequest:
        *head, last = request.messages
        last = last.replace(content=last.text.replace("Paris", "[city]"))
        return request.replace(messages=(*head, last))

    seen: list[Any] = []
    client = hw.wrap(
        sdk_client(json.dumps(cited_answer()).encode(), "application/json", seen), use=[redact]
    )
    content = [context, {"type": "text", "text": " Weather in Paris?", "x": 1}]
    client.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": content}]
    )
    assert seen[0]["messages"][0]["content"] == [
        context,
        {"type": "text", "text": " Weather in [city]?", "x": 1},
    ]


# -- laws -------------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_cache = st.sampled_from([{}, {"cache_control": CACHE}])


@st.composite
def _blocks(draw: st.DrawFn, with_results: bool) -> list[Any]:
    kinds = ["text", "image", "url", "document"] + (["result"] * 2 if with_results else [])
    out: list[Any] = []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=4)):
        extra = draw(_cache)
        if kind == "text":
            out.append({"type": "text", "text": draw(_text), **extra})
        elif kind == "image":
            source = {"type": "base64", "media_type": "image/png", "data": draw(_text)}
            out.append({"type": "image", "source": source, **extra})
        elif kind == "url":
            out.append(
                {"type": "image", "source": {"type": "url", "url": "https://x/" + draw(_text)}}
            )
        elif kind == "document":
            out.append({"type": "document", "source": {"type": "text", "data": draw(_text)}})
        else:
            content = draw(st.one_of(st.none(), _text, _blocks(False)))
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": draw(_text), **extra}
            if content is not None:
                result["content"] = content
            if draw(st.booleans()):
                result["is_error"] = True
            out.append(result)
    return out


@st.composite
def _assistant(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return draw(_text)
    out: list[Any] = []
    if draw(st.booleans()):
        out.append({"type": "thinking", "thinking": draw(_text), "signature": "s"})
    for kind in draw(st.lists(st.sampled_from(["text", "tool"]), max_size=3)):
        if kind == "text":
            out.append({"type": "text", "text": draw(_text), **draw(_cache)})
        else:
            args = draw(st.dictionaries(_text, st.integers() | _text, max_size=2))
            out.append({"type": "tool_use", "id": draw(_text), "name": draw(_text), "input": args})
    return out


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "m", "max_tokens": draw(st.integers(1, 100))}
    system = draw(st.sampled_from(["none", "str", "blocks"]))
    if system == "str":
        out["system"] = draw(_text)
    elif system == "blocks":
        out["system"] = [
            {"type": "text", "text": draw(_text), **draw(_cache)}
            for _ in range(draw(st.integers(0, 2)))
        ]
    messages: list[Any] = []
    for role in draw(
        st.lists(st.sampled_from(["user", "user", "assistant", "system"]), max_size=6)
    ):
        if role == "assistant":
            content = draw(_assistant())
        else:
            content = draw(st.one_of(_text, _blocks(role == "user")))
        messages.append({"role": role, "content": content})
    out["messages"] = messages
    tools: list[Any] = [
        {"name": draw(_text), "input_schema": {"type": "object"}, **draw(_cache)}
        for _ in range(draw(st.integers(0, 2)))
    ]
    if draw(st.booleans()):
        tools.insert(draw(st.integers(0, len(tools))), {"type": "bash_20250124", "name": "bash"})
    if tools:
        out["tools"] = tools
    if draw(st.booleans()):
        out["temperature"] = 0.5
    return out


def _normal(message: Message) -> Message:
    """A message up to the form of its content (a str written as blocks reads back as
    parts, split across the text blocks it was written over) and the name of a tool result
    (looked up from the tool_use it answers)."""
    content = message.content
    if not isinstance(content, str) and all(isinstance(p, TextPart) for p in content):
        content = message.text
    parts: tuple[Part, ...] = (
        ((TextPart(content),) if content else ()) if isinstance(content, str) else content
    )
    return message.replace(content=parts, name=None)


@settings(max_examples=300, deadline=None)
@given(bodies())
def test_law_unchanged_requests_round_trip(b: dict[str, Any]) -> None:
    frozen = copy.deepcopy(b)
    request = W.request(b)
    out = W.write_request(request, b)
    assert out == b
    assert all(x is y for x, y in zip(out["messages"], b["messages"], strict=True))
    assert W.request(out) == request
    # the way a changed request takes, with nothing changed, reuses every message too
    system, messages = _write_messages(_units(b), request.messages, b)
    assert system is b.get("system", _ABSENT)
    assert len(messages) == len(b["messages"])
    assert all(x is y for x, y in zip(messages, b["messages"], strict=True))
    assert b == frozen


@settings(max_examples=300, deadline=None)
@given(bodies(), st.data())
def test_law_a_changed_request_reads_back_and_leaves_other_messages_alone(
    b: dict[str, Any], data: st.DataObject
) -> None:
    request = W.request(b)
    messages = list(request.messages)
    op = data.draw(st.sampled_from(["change", "delete", "insert"]))
    # texts longer than any drawn, so that the changed message equals no other
    if op == "insert" or not messages:
        messages.insert(data.draw(st.integers(0, len(messages))), Message.user("\x00new-msg!"))
    else:
        at = data.draw(st.integers(0, len(messages) - 1))
        if op == "delete":
            del messages[at]
        else:
            messages[at] = messages[at].replace(content="\x00changed!")
    out = W.write_request(request.replace(messages=messages), b)
    assert [_normal(m) for m in W.request(out).messages] == [_normal(m) for m in messages]
    kept = {id(m) for m in out["messages"]}
    assert sum(id(m) not in kept for m in b["messages"]) <= 1


def test_a_stop_sequence_stays_anthropics_own_word_when_written_back() -> None:
    wire = MessagesWire()
    event = Event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "stop_sequence", "stop_sequence": "###"},
            "usage": {"output_tokens": 7},
        },
    )
    chunk = wire.chunk(event)
    [out] = wire.write_chunk(chunk.replace(usage=hw.Usage(0, 9, 9)), None)
    assert out.data["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "###"}
    data = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    response = wire.response(data).replace(finish_reason="stop_sequence")
    assert wire.write_response(response, data)["stop_reason"] == "stop_sequence"


def test_a_streams_finish_usage_a_hook_sets_leaves_out_the_cache_its_start_counted() -> None:
    """Usage(100, ...) with 90 of the input read from the cache (as `message_start` said):
    the closing delta says 10 new input tokens, so the SDK adds up 100, not 190."""
    wire = MessagesWire()
    start = Event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "c",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 90},
            },
        },
    )
    delta = Event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 7},
        },
    )
    chunk = wire.chunk(delta).replace(usage=hw.Usage(100, 20, 120))
    [out] = wire.write_chunk(chunk, start)
    assert out.data["usage"] == {"output_tokens": 20, "input_tokens": 10}
