"""The Gemini wire (pure dicts): request and response views, changes written back with the
rest kept, one chunk per streamed object, and bodies the google-genai SDK accepts."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hookwrap as hw
from hookwrap.adapters._google_wire import SYNTHETIC_ID, GeminiWire, call_id, model_of
from hookwrap.adapters._wire import Event

types = pytest.importorskip("google.genai.types")

W = GeminiWire()
PATH = "models/gemini-2.0-flash:generateContent"
STREAM = "models/gemini-2.0-flash:streamGenerateContent?alt=sse"


def body() -> dict[str, Any]:
    """A request body as google-genai 3.x passes it to `BaseApiClient.request`."""
    return {
        "_url": {"model": "models/gemini-2.0-flash"},
        "contents": [
            {
                "parts": [
                    {"text": "weather in Paris?"},
                    {"inlineData": {"data": "iVBORw==", "mime_type": "image/png"}},
                ],
                "role": "user",
            },
            {
                "parts": [
                    {"text": "thinking", "thought": True},
                    {
                        "functionCall": {"args": {"city": "Paris"}, "name": "weather"},
                        "thoughtSignature": "c2ln",
                    },
                ],
                "role": "model",
            },
            {
                "parts": [
                    {"functionResponse": {"name": "weather", "response": {"result": "sunny"}}}
                ],
                "role": "user",
            },
        ],
        "systemInstruction": {"parts": [{"text": "be brief"}], "role": "user"},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "description": "d",
                        "name": "f",
                        "parameters": {"properties": {"a": {"type": "STRING"}}, "type": "OBJECT"},
                    },
                    {
                        "name": "weather",
                        "parameters_json_schema": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    },
                ]
            },
            {"googleSearch": {}},
        ],
        "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 10},
    }


def sdk(data: dict[str, Any]) -> Any:
    """What the SDK makes of a response body (it must not raise)."""
    return types.GenerateContentResponse._from_response(response=data, kwargs={})


# -- request --------------------------------------------------------------------------------


def test_the_request_view_reads_every_neutral_field() -> None:
    request = W.request(body(), PATH)
    system, user, assistant, tool = request.messages
    assert system == hw.Message.system("be brief")
    assert user.role == "user"
    assert user.content == (
        hw.TextPart("weather in Paris?"),
        hw.ImagePart("data:image/png;base64,iVBORw==", "image/png"),
    )
    assert assistant.role == "assistant"
    assert assistant.content == ""  # the thought is not part of the neutral view
    (call,) = assistant.tool_calls
    assert (call.name, dict(call.arguments)) == ("weather", {"city": "Paris"})
    assert call.id == call_id("weather", {"city": "Paris"})
    assert call.id.startswith(SYNTHETIC_ID)
    assert tool == hw.Message.tool("sunny", call.id, "weather")
    assert [t.name for t in request.tools] == ["f", "weather"]
    assert request.tools[0].parameters == {
        "properties": {"a": {"type": "string"}},
        "type": "object",
    }
    assert request.tools[0].description == "d"
    assert request.options == {"temperature": 0.5, "maxOutputTokens": 10}
    assert request.model == "gemini-2.0-flash"
    assert request.stream is False
    assert W.request(body(), STREAM).stream is True
    assert W.request(body()).model is None


@pytest.mark.parametrize(
    ("path", "model"),
    [
        (PATH, "gemini-2.0-flash"),
        (STREAM, "gemini-2.0-flash"),
        ("publishers/google/models/gemini-2.5-pro:generateContent", "gemini-2.5-pro"),
        ("tunedModels/abc123:generateContent", "tunedModels/abc123"),
        (
            "projects/p/locations/l/endpoints/42:streamGenerateContent?alt=sse",
            "projects/p/locations/l/endpoints/42",
        ),
        ("models", None),
    ],
)
def test_the_model_comes_from_the_path(path: str, model: str | None) -> None:
    assert model_of(path) == model


def test_an_unchanged_request_writes_back_the_same_body() -> None:
    original = body()
    snapshot = copy.deepcopy(original)
    request = W.request(original, PATH)
    assert W.write_request(request, original) == snapshot
    assert W.write_request(request.replace(), original) == snapshot
    assert original == snapshot  # inputs are never mutated
    assert W.write_path(request, PATH) == PATH


def test_a_new_system_prompt_keeps_every_content_dict_and_unmodelled_key() -> None:
    original = body()
    del original["systemInstruction"]
    request = W.request(original, PATH)
    changed = request.replace(messages=(hw.Message.system("SYS"), *request.messages))
    out = W.write_request(changed, original)
    assert out["systemInstruction"] == {"parts": [{"text": "SYS"}], "role": "user"}
    assert out["contents"] is original["contents"]
    for key in ("_url", "tools", "safetySettings", "toolConfig", "generationConfig"):
        assert out[key] is original[key]
    assert W.request(out, PATH).messages == changed.messages


def test_removing_the_system_prompt_removes_the_instruction() -> None:
    original = body()
    request = W.request(original, PATH)
    out = W.write_request(request.replace(messages=request.messages[1:]), original)
    assert "systemInstruction" not in out
    assert out["contents"] is original["contents"]


def test_a_changed_message_rebuilds_only_its_own_content() -> None:
    original = body()
    request = W.request(original, PATH)
    messages = list(request.messages)
    messages[1] = messages[1].replace(content="[redacted]")
    out = W.write_request(request.replace(messages=tuple(messages)), original)
    assert out["contents"][0] == {"role": "user", "parts": [{"text": "[redacted]"}]}
    assert out["contents"][1] is original["contents"][1]  # thought and signature kept
    assert out["contents"][2] is original["contents"][2]
    assert out["systemInstruction"] is original["systemInstruction"]


def test_a_new_tool_turn_is_written_as_function_call_and_response() -> None:
    original = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    request = W.request(original, PATH)
    synthetic = call_id("weather", {"city": "Rome"})
    turn = (
        hw.Message.assistant(
            "let me check",
            [hw.ToolCall(synthetic, "weather", {"city": "Rome"}), hw.ToolCall("c2", "time", {})],
        ),
        hw.Message.tool("rainy", synthetic),  # the name is found from the call
        hw.Message.tool('{"hour": 12}', "c2", "time"),
        hw.Message.user("thanks"),
    )
    out = W.write_request(request.replace(messages=(*request.messages, *turn)), original)
    assert out["contents"] == [
        original["contents"][0],
        {
            "role": "model",
            "parts": [
                {"text": "let me check"},
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
                {"functionCall": {"name": "time", "args": {}, "id": "c2"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"result": "rainy"}}},
                {"functionResponse": {"name": "time", "response": {"hour": 12}, "id": "c2"}},
            ],
        },
        {"role": "user", "parts": [{"text": "thanks"}]},
    ]
    named = (turn[0], turn[1].replace(name="weather"), *turn[2:])
    assert W.request(out, PATH).messages == (*request.messages, *named)


def test_a_kept_tool_call_keeps_its_thought_signature() -> None:
    original = body()
    request = W.request(original, PATH)
    assistant = request.messages[2]
    out = W.write_request(
        request.replace(
            messages=(
                *request.messages[:2],
                assistant.replace(content="checking"),
                *request.messages[3:],
            )
        ),
        original,
    )
    assert out["contents"][1]["parts"] == [
        {"text": "thinking", "thought": True},  # the thought stays too
        {"text": "checking"},
        {
            "functionCall": {"args": {"city": "Paris"}, "name": "weather"},
            "thoughtSignature": "c2ln",
        },
    ]


# -- a changed message in the history ------------------------------------------------------


def history() -> dict[str, Any]:
    """A function-calling conversation as an agent sends it: signed model turns, a thought,
    an image, two function responses in one content."""
    return {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "card 4111: weather and time?"},
                    {"inlineData": {"data": "iVBORw==", "mime_type": "image/png"}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {"text": "hmm", "thought": True},
                    {"text": "Card 4111 noted. ", "thoughtSignature": "c2lnMQ=="},
                    {
                        "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                        "thoughtSignature": "c2lnMg==",
                    },
                    {"functionCall": {"name": "time", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "weather", "response": {"result": "4111"}}},
                    {"functionResponse": {"name": "time", "response": {"hour": 12}}},
                ],
            },
            {"role": "model", "parts": [{"text": "Sunny.", "thoughtSignature": "c2lnMw=="}]},
        ]
    }


def redacted(request: hw.ModelRequest) -> tuple[hw.Message, ...]:
    """`request`'s messages with `4111` redacted, text and parts alike."""

    def part(p: hw.Part) -> hw.Part:
        return p.replace(text=p.text.replace("4111", "[card]")) if isinstance(p, hw.TextPart) else p

    return tuple(
        m.replace(content=m.content.replace("4111", "[card]"))
        if isinstance(m.content, str)
        else m.replace(content=tuple(map(part, m.content)))
        for m in request.messages
    )


def test_a_changed_message_is_written_into_its_own_parts() -> None:
    """A hook that redacts the history keeps each changed content's thoughts, signatures,
    calls and images where they were; unchanged contents are sent exactly as they came."""
    original = history()
    snapshot = copy.deepcopy(original)
    request = W.request(original, PATH)
    changed = request.replace(messages=redacted(request))
    out = W.write_request(changed, original)
    user, model, results, last = out["contents"]
    assert user["parts"][0] == {"text": "card [card]: weather and time?"}
    assert user["parts"][1] is original["contents"][0]["parts"][1]  # the image as it came
    assert model == {
        "role": "model",
        "parts": [
            {"text": "hmm", "thought": True},
            {"text": "Card [card] noted. ", "thoughtSignature": "c2lnMQ=="},
            *original["contents"][1]["parts"][2:],  # the calls, the first one signed
        ],
    }
    assert results["parts"] == [
        {"functionResponse": {"name": "weather", "response": {"result": "[card]"}}},
        original["contents"][2]["parts"][1],
    ]
    assert results["parts"][1] is original["contents"][2]["parts"][1]
    assert last is original["contents"][3]
    assert json.dumps(last) == json.dumps(snapshot["contents"][3])
    assert original == snapshot
    assert W.request(out, PATH).messages == changed.messages


def test_a_changed_call_keeps_the_signature_of_its_part() -> None:
    """As in a stream: the call part keeps its other keys, in the history and in an answer."""
    original = history()
    request = W.request(original, PATH)
    messages = list(request.messages)
    call = messages[1].tool_calls[0]
    rome = call.replace(id=call_id("weather", {"city": "Rome"}), arguments={"city": "Rome"})
    messages[1] = messages[1].replace(tool_calls=(rome, *messages[1].tool_calls[1:]))
    out = W.write_request(request.replace(messages=tuple(messages)), original)
    assert out["contents"][1]["parts"][2] == {
        "functionCall": {"name": "weather", "args": {"city": "Rome"}},
        "thoughtSignature": "c2lnMg==",
    }
    assert out["contents"][1]["parts"][3] == original["contents"][1]["parts"][3]
    data = {"candidates": [{"content": original["contents"][1], "finishReason": "STOP"}]}
    response = W.response(data)
    answer = response.message.replace(tool_calls=messages[1].tool_calls)
    parts = W.write_response(response.replace(message=answer), data)["candidates"][0]["content"]
    assert parts["parts"][2] == out["contents"][1]["parts"][2]


@pytest.mark.parametrize("where", ["insert", "remove", "insert before the image"])
def test_a_message_a_hook_adds_or_removes_takes_no_other_message_s_parts(where: str) -> None:
    original = history()
    request = W.request(original, PATH)
    messages = list(redacted(request))
    note = hw.Message.user("a note")
    if where == "insert":
        messages.insert(1, note)  # between the changed user and model turns
    elif where == "remove":
        del messages[0]  # the user turn with the image
    else:
        messages.insert(0, note)
    out = W.write_request(request.replace(messages=tuple(messages)), original)
    contents = out["contents"]
    if where != "remove":
        assert contents[messages.index(note)] == {"role": "user", "parts": [{"text": "a note"}]}
    images = [c for c in contents if any("inlineData" in p for p in c["parts"])]
    assert [c["parts"][0]["text"] for c in images] == (
        [] if where == "remove" else ["card [card]: weather and time?"]
    )
    (model,) = [c for c in contents if c["parts"][0].get("thought")]
    assert [p.get("thoughtSignature") for p in model["parts"]] == [
        None,
        "c2lnMQ==",
        "c2lnMg==",
        None,
    ]
    assert W.request(out, PATH).messages == tuple(messages)


IMAGE = {"inlineData": {"data": "iVBORw==", "mime_type": "image/png"}}
CODE = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}


def turn(*more: dict[str, Any]) -> list[dict[str, Any]]:
    """A model turn: a thought, a signed text, code, and `more`."""
    return [
        {"text": "plan", "thought": True},
        {"text": "your 4111", "thoughtSignature": "c2ln"},
        CODE,
        *more,
    ]


def test_a_message_given_a_str_in_place_of_its_image_keeps_its_thoughts_and_signature() -> None:
    """`m.replace(content=m.text...)` over a turn that held an image: the str holds no image,
    so the image goes (as for OpenAI and Anthropic), and the thought, the signature and the
    parts the neutral view leaves out stay."""
    original = {
        "contents": [
            {"role": "user", "parts": [{"text": "4111?"}, IMAGE]},
            {"role": "model", "parts": turn(IMAGE)},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ]
    }
    request = W.request(original, PATH)
    messages = tuple(m.replace(content=m.text.replace("4111", "[x]")) for m in request.messages)
    out = W.write_request(request.replace(messages=messages), original)
    signed = {"text": "your [x]", "thoughtSignature": "c2ln"}
    assert out["contents"][:2] == [
        {"role": "user", "parts": [{"text": "[x]?"}]},
        {"role": "model", "parts": [turn()[0], signed, CODE]},
    ]
    assert W.request(out, PATH).messages == messages


@pytest.mark.parametrize("image", [False, True])
@pytest.mark.parametrize("at", [1, 2])
def test_a_message_added_beside_a_changed_one_of_its_role_takes_none_of_its_parts(
    at: int, image: bool
) -> None:
    """The changed message is the one whose text is most like the original's, before or
    after the added one, whatever the form of its content."""
    parts = turn(IMAGE) if image else turn()
    original = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": parts},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ]
    }
    request = W.request(original, PATH)
    messages = [m.replace(content=m.text.replace("4111", "[x]")) for m in request.messages]
    messages.insert(at, hw.Message.assistant("a note"))
    out = W.write_request(request.replace(messages=tuple(messages)), original)
    note = {"role": "model", "parts": [{"text": "a note"}]}
    changed = {"role": "model", "parts": [parts[0], {**parts[1], "text": "your [x]"}, CODE]}
    assert out["contents"][at] == note
    assert out["contents"][3 - at] == changed


def test_changed_parts_are_paired_with_the_parts_they_were_read_from() -> None:
    """A message given as parts: an unchanged part stays as it came, a changed one keeps
    the keys of its part, a new one follows the part before it."""
    signed = {"text": "a", "thoughtSignature": "c2ln"}
    image = {"inline_data": {"data": "iVBORw==", "mime_type": "image/png"}, "partMetadata": {}}
    original = {"contents": [{"role": "user", "parts": [signed, image]}]}
    request = W.request(original, PATH)
    (message,) = request.messages
    text, picture = message.content
    content = (text.replace(text="b"), picture, hw.TextPart("c"))
    out = W.write_request(request.replace(messages=(message.replace(content=content),)), original)
    parts = out["contents"][0]["parts"]
    assert parts == [{"text": "b", "thoughtSignature": "c2ln"}, image, {"text": "c"}]
    assert parts[1] is image


def test_an_unchanged_content_keeps_its_own_parts_beside_an_equal_looking_one() -> None:
    """Of two contents that read the same, the one a hook left alone is sent as it came,
    and the changed one is written into its own parts, wherever the two stand."""

    def ok(signature: str) -> dict[str, Any]:
        return {"role": "model", "parts": [{"text": "ok", "thoughtSignature": signature}]}

    hi, bye = ({"role": "user", "parts": [{"text": t}]} for t in ("hi", "bye"))
    for contents in (
        [hi, ok("c2lnMQ=="), ok("c2lnMg==")],
        [hi, ok("c2lnMQ=="), ok("c2lnMg=="), bye],
    ):
        original = {"contents": contents}
        request = W.request(original, PATH)
        messages = list(request.messages)
        messages[1] = messages[1].replace(content="[redacted]")
        messages[3:] = [m.replace(content="see you") for m in messages[3:]]  # a changed end
        for note in ([], [hw.Message.user("a note")]):
            changed = [messages[0], *note, *messages[1:]]
            out = W.write_request(request.replace(messages=tuple(changed)), original)
            written = out["contents"]
            first, second = written[1 + len(note)], written[2 + len(note)]
            assert first == {
                "role": "model",
                "parts": [{"text": "[redacted]", "thoughtSignature": "c2lnMQ=="}],
            }
            assert second is contents[2]
            assert W.request(out, PATH).messages == tuple(changed)


@pytest.mark.parametrize("call_id_given", [False, True])
def test_a_tool_result_a_hook_adds_is_named_after_the_call_it_answers(
    call_id_given: bool,
) -> None:
    """`Message.tool` without a name, for a call in the history the hook left alone: Gemini
    pairs a function response with its call by name (and id, when the call has one)."""
    call = {
        "name": "weather",
        "args": {"city": "Paris"},
        **({"id": "fc_7"} if call_id_given else {}),
    }
    contents = [
        {"role": "user", "parts": [{"text": "weather in Paris?"}]},
        {"role": "model", "parts": [{"function_call": call, "thoughtSignature": "c2ln"}]},
    ]

    @hw.before_model
    def answer(request: hw.ModelRequest) -> hw.ModelRequest:
        (pending,) = request.messages[-1].tool_calls
        result = hw.Message.tool("sunny", tool_call_id=pending.id)
        return request.replace(messages=(*request.messages, result))

    seen: list[Any] = []
    client = gemini_client(reply(), [answer], seen)
    client.models.generate_content(model="gemini-2.0-flash", contents=contents)
    (sent,) = seen
    response = {"name": "weather", "response": {"result": "sunny"}}
    if call_id_given:
        response["id"] = "fc_7"
    assert sent["contents"][-1] == {"role": "user", "parts": [{"functionResponse": response}]}
    assert sent["contents"][1]["parts"][0]["thoughtSignature"] == "c2ln"


def test_images_are_written_as_inline_or_file_data() -> None:
    original: dict[str, Any] = {"contents": []}
    request = W.request(original, PATH)
    message = hw.Message.user(
        [
            hw.TextPart("look"),
            hw.ImagePart("data:image/jpeg;base64,AAAA", "image/jpeg"),
            hw.ImagePart("gs://bucket/cat.png", "image/png"),
        ]
    )
    out = W.write_request(request.replace(messages=(message,)), original)
    assert out["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "look"},
                {"inlineData": {"mimeType": "image/jpeg", "data": "AAAA"}},
                {"fileData": {"fileUri": "gs://bucket/cat.png", "mimeType": "image/png"}},
            ],
        }
    ]
    assert W.request(out, PATH).messages == (message,)


def test_tools_options_and_model_are_written_back() -> None:
    original = body()
    request = W.request(original, PATH)
    extra = hw.ToolSpec(
        "lookup", "Look up", {"type": "object", "properties": {"q": {"type": "string"}}}
    )
    changed = request.replace(
        tools=(*request.tools[1:], extra),
        options={"temperature": 0.0},
        model="gemini-2.5-pro",
    )
    out = W.write_request(changed, original)
    declarations = original["tools"][0]["functionDeclarations"]
    assert out["tools"] == [
        {
            "functionDeclarations": [
                declarations[1],
                {
                    "name": "lookup",
                    "parametersJsonSchema": dict(extra.parameters),
                    "description": "Look up",
                },
            ]
        },
        {"googleSearch": {}},
    ]
    assert out["tools"][0]["functionDeclarations"][0] is declarations[1]
    assert out["generationConfig"] == {"temperature": 0.0}
    assert W.write_path(changed, PATH) == "models/gemini-2.5-pro:generateContent"
    assert W.write_path(changed, STREAM) == "models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    tuned = changed.replace(model="tunedModels/t1")
    assert W.write_path(tuned, PATH) == "tunedModels/t1:generateContent"
    assert W.request(out, PATH).tools == changed.tools
    no_tools = W.write_request(request.replace(tools=(), options={}), original)
    assert no_tools["tools"] == [{"googleSearch": {}}]
    assert "generationConfig" not in no_tools


def test_tool_specs_appear_where_there_were_none() -> None:
    original = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    request = W.request(original, PATH)
    out = W.write_request(request.replace(tools=(hw.ToolSpec("t"),)), original)
    assert out["tools"] == [
        {
            "functionDeclarations": [
                {"name": "t", "parametersJsonSchema": {"type": "object", "properties": {}}}
            ]
        }
    ]


# -- response -------------------------------------------------------------------------------


def reply() -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "hmm", "thought": True},
                        {"text": "It is ", "thoughtSignature": "c2ln"},
                        {"text": "sunny."},
                        {"functionCall": {"name": "log", "args": {"n": 1}, "id": "fc1"}},
                    ],
                },
                "finishReason": "STOP",
                "index": 0,
                "safetyRatings": [],
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 7,
            "candidatesTokenCount": 3,
            "thoughtsTokenCount": 2,
            "totalTokenCount": 12,
        },
        "modelVersion": "gemini-2.0-flash-001",
        "responseId": "r1",
    }


def test_the_response_view() -> None:
    data = reply()
    response = W.response(data)
    assert response.text == "It is sunny."
    assert response.message.tool_calls == (hw.ToolCall("fc1", "log", {"n": 1}),)
    assert response.usage == hw.Usage(7, 5, 12)
    assert response.finish_reason == "STOP"
    assert response.model == "gemini-2.0-flash-001"
    assert response.raw is data


def test_an_unchanged_response_writes_back_the_same_body() -> None:
    data = reply()
    snapshot = copy.deepcopy(data)
    assert W.write_response(W.response(data), data) == snapshot
    assert data == snapshot


def test_a_changed_answer_keeps_thoughts_calls_and_other_keys() -> None:
    data = reply()
    response = W.response(data)
    out = W.write_response(
        response.replace(message=response.message.replace(content="[redacted]")), data
    )
    candidate = out["candidates"][0]
    thought, first, second, call = candidate["content"]["parts"]
    assert thought == {"text": "hmm", "thought": True}
    # the new text is split across the two text parts, which keep their keys
    assert first["thoughtSignature"] == "c2ln"
    assert first["text"] + second["text"] == "[redacted]"
    assert call == {"functionCall": {"name": "log", "args": {"n": 1}, "id": "fc1"}}
    assert candidate["safetyRatings"] == []
    assert out["responseId"] == "r1"
    assert out["usageMetadata"] is data["usageMetadata"]
    assert sdk(out).text == "[redacted]"


def test_usage_finish_and_model_changes_are_written() -> None:
    data = reply()
    response = W.response(data).replace(
        usage=hw.Usage(1, 2, 3), finish_reason="MAX_TOKENS", model="other"
    )
    out = W.write_response(response, data)
    assert out["usageMetadata"] == {  # the 2 thoughts of the 2 output tokens stay apart
        "promptTokenCount": 1,
        "candidatesTokenCount": 0,
        "thoughtsTokenCount": 2,
        "totalTokenCount": 3,
    }
    assert out["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert out["modelVersion"] == "other"
    assert W.response(out) == response


def test_a_new_response_body_is_complete_and_valid_for_the_sdk() -> None:
    response = hw.ModelResponse(
        hw.Message.assistant("hello", [hw.ToolCall(call_id("f", {"a": 1}), "f", {"a": 1})]),
        hw.Usage(1, 2, 3),
        None,
        "m",
    )
    out = W.write_response(response, None)
    assert out["candidates"][0]["content"]["parts"][1] == {
        "functionCall": {"name": "f", "args": {"a": 1}}  # the made-up id is not sent
    }
    assert W.response(out) == response.replace(finish_reason="STOP")
    native = types.GenerateContentResponse.model_validate(out)
    assert native.text == "hello"
    parsed = sdk(out)
    assert parsed.text == "hello"
    assert parsed.function_calls[0].name == "f"
    assert parsed.usage_metadata.total_token_count == 3


@given(
    text=st.text(max_size=20),
    calls=st.lists(
        st.tuples(
            st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
            st.dictionaries(
                st.from_regex(r"[a-z]{1,4}", fullmatch=True), st.integers(), max_size=3
            ),
        ),
        max_size=3,
        unique_by=lambda c: (c[0], json.dumps(c[1], sort_keys=True)),
    ),
    usage=st.none()
    | st.builds(hw.Usage, st.integers(0, 99), st.integers(0, 99), st.integers(0, 999)),
)
def test_responses_and_their_streams_round_trip(
    text: str, calls: list[tuple[str, dict[str, int]]], usage: hw.Usage | None
) -> None:
    tool_calls = [hw.ToolCall(call_id(n, a), n, a) for n, a in calls]
    response = hw.ModelResponse(hw.Message.assistant(text, tool_calls), usage, "STOP", "m")
    assert W.response(W.write_response(response, None)) == response
    chunks = [W.chunk(e) for e in W.stream_events(response)]
    assert "".join(c.text for c in chunks if c.kind == "text") == text
    started = [c for c in chunks if c.kind == "tool_call_start"]
    assert [(c.tool_call_id, c.tool_name, json.loads(c.text)) for c in started] == [
        (c.id, c.name, c.arguments) for c in tool_calls
    ]
    assert chunks[-1].kind == "finish"
    assert chunks[-1].usage == usage


# -- a text changed over several parts ----------------------------------------------------------


def two_texts() -> dict[str, Any]:
    """An answer whose text is in two signed parts, one each side of a code run."""
    parts = [
        {"text": "hmm", "thought": True},
        {"text": "Let me check ", "thoughtSignature": "c2lnMQ=="},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
        {"text": "Paris and Rome.", "thoughtSignature": "c2lnMg=="},
        {"functionCall": {"name": "log", "args": {"n": 1}}, "thoughtSignature": "c2lnMw=="},
    ]
    return {
        **reply(),
        "candidates": [{**reply()["candidates"][0], "content": {"role": "model", "parts": parts}}],
    }


def gemini_client(data: dict[str, Any], hooks: list[Any], seen: list[Any] | None = None) -> Any:
    """A google-genai client (wrapped with `hooks`) whose API answers `data`, putting the
    JSON of each request it gets in `seen`."""
    from google import genai

    try:  # what the SDK is built on: httpx2, or httpx for older releases
        import httpx2 as module
    except ImportError:  # pragma: no cover - older releases
        import httpx as module

    def answer(request: Any) -> Any:
        if seen is not None:
            seen.append(json.loads(request.content))
        return module.Response(200, json=data)

    args = {"transport": module.MockTransport(answer)}
    options = types.HttpOptions(base_url="http://fake.invalid/", client_args=args)
    return hw.wrap(genai.Client(api_key="k", http_options=options), use=hooks)


@pytest.mark.parametrize(
    ("change", "texts"),
    [
        (str.upper, ["LET ME CHECK ", "PARIS AND ROME."]),
        (lambda t: t.replace("Rome", "[city]"), ["Let me check ", "Paris and [city]."]),
        (lambda t: t.replace("check", "look"), ["Let me look ", "Paris and Rome."]),
        # a part left empty stays for its signature, as Gemini itself sends such parts
        (lambda t: t.replace("Paris and Rome.", ""), ["Let me check ", ""]),
    ],
)
def test_a_text_changed_after_the_model_stays_in_its_parts_with_their_signatures(
    change: Any, texts: list[str]
) -> None:
    """A hook's new text is split across the text parts it was read from, each kept in its
    place with its `thoughtSignature`, as in a stream; thoughts, code and calls stay put."""

    @hw.after_model
    def edit(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(content=change(response.text)))

    client = gemini_client(two_texts(), [edit])
    answer = client.models.generate_content(model="gemini-2.0-flash", contents="hi")
    parts = answer.candidates[0].content.parts
    assert [(p.text, p.thought_signature) for p in parts] == [
        ("hmm", None),
        (texts[0], b"sig1"),
        (None, None),
        (None, None),
        (texts[1], b"sig2"),
        (None, b"sig3"),
    ]
    assert parts[2].executable_code.code == "print(1)"
    assert parts[3].code_execution_result.output == "1"
    assert parts[5].function_call.name == "log"


# -- streams --------------------------------------------------------------------------------


def event(*parts: dict[str, Any], **extra: Any) -> Event:
    data: dict[str, Any] = {"modelVersion": "m1", **extra}
    if parts:
        data["candidates"] = [{"content": {"role": "model", "parts": list(parts)}}]
    return Event(None, data)


USAGE = {"promptTokenCount": 2, "candidatesTokenCount": 1, "totalTokenCount": 3}


def test_each_streamed_object_is_one_chunk() -> None:
    text = W.chunk(event({"text": "He"}, {"text": "llo"}))
    assert (text.kind, text.text, text.usage) == ("text", "Hello", None)
    thought = W.chunk(event({"text": "hm", "thought": True}, {"text": "Hi"}))
    assert (thought.kind, thought.text) == ("reasoning", "hm")
    call = W.chunk(event({"functionCall": {"name": "f", "args": {"x": 1}}}))
    assert (call.kind, call.tool_name, json.loads(call.text)) == ("tool_call_start", "f", {"x": 1})
    assert call.tool_call_id == call_id("f", {"x": 1})
    with_id = W.chunk(event({"functionCall": {"name": "f", "args": {}, "id": "abc"}}))
    assert with_id.tool_call_id == "abc"
    image = W.chunk(event({"inlineData": {"mimeType": "image/png", "data": "AA"}}))
    assert (image.kind, image.name) == ("custom", "inlineData")
    last = W.chunk(event({"text": "!"}, usageMetadata=USAGE))
    assert (last.kind, last.text, last.usage) == ("text", "!", hw.Usage(2, 1, 3))
    data = {"candidates": [{"finishReason": "STOP"}], "usageMetadata": USAGE}
    finish = W.chunk(Event(None, data))
    assert (finish.kind, finish.finish_reason, finish.usage) == (
        "finish",
        "STOP",
        hw.Usage(2, 1, 3),
    )
    usage = W.chunk(Event(None, {"usageMetadata": USAGE}))
    assert (usage.kind, usage.usage) == ("usage", hw.Usage(2, 1, 3))
    other = W.chunk(Event(None, {"promptFeedback": {"blockReason": "SAFETY"}}))
    assert (other.kind, other.name) == ("custom", "gemini")
    for chunk in (text, thought, call, image, last, finish, usage, other):
        assert isinstance(chunk.raw, Event)


def test_a_changed_chunk_is_written_into_its_own_object() -> None:
    source = event(
        {"text": "secret", "thoughtSignature": "c2ln"},
        {"text": " stuff"},
        {"functionCall": {"name": "f", "args": {}}},
        usageMetadata=USAGE,
    )
    chunk = W.chunk(source)
    (out,) = W.write_chunk(chunk.replace(text="[redacted] stuff"), None)
    assert out.data["candidates"][0]["content"]["parts"] == [  # each text part in its place
        {"text": "[redacted]", "thoughtSignature": "c2ln"},
        {"text": " stuff"},
        {"functionCall": {"name": "f", "args": {}}},
    ]
    assert out.data["usageMetadata"] is USAGE
    assert out.data["modelVersion"] == "m1"
    assert W.chunk(out) == chunk.replace(text="[redacted] stuff")
    assert sdk(out.data).text == "[redacted] stuff"
    call = W.chunk(
        event({"functionCall": {"name": "f", "args": {"x": 1}}, "thoughtSignature": "t"})
    )
    (out,) = W.write_chunk(call.replace(text='{"x": 2}'), None)
    assert out.data["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "f", "args": {"x": 2}}, "thoughtSignature": "t"}
    ]
    emptied = W.chunk(event({"text": "gone"}))
    assert W.write_chunk(emptied.replace(text=""), None) == []


@pytest.mark.parametrize(
    ("parts", "text", "texts"),
    [  # Gemini sends a signature in an empty text part after the text, or on each part
        ([{"text": "Mail a@b.c"}, {"text": "", "thoughtSignature": "c2ln"}], "Mail [email]", None),
        (
            [
                {"text": "a@b.c", "thoughtSignature": "c2lnMQ=="},
                {"text": " more", "thoughtSignature": "c2lnMg=="},
            ],
            "[email] more",
            ["[email]", " more"],
        ),
        ([{"text": "a@b.c", "thoughtSignature": "c2ln"}, {"text": " more"}], "", ["", ""]),
    ],
)
def test_a_changed_text_chunk_is_written_across_its_object_s_text_parts(
    parts: list[dict[str, Any]], text: str, texts: list[str] | None
) -> None:
    """As in an answer that is not streamed: each text part keeps its place and its keys (a
    signature); one left empty goes unless it carries more than its text."""
    source = event(*parts)
    (out,) = W.write_chunk(W.chunk(source).replace(text=text), None)
    written = out.data["candidates"][0]["content"]["parts"]
    if texts is None:
        assert written == [{"text": text}, parts[1]]
    else:
        assert written == [
            {**p, "text": t} for p, t in zip(parts, texts, strict=True) if t or len(p) > 1
        ]
    data = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    response = W.response(data)
    answer = response.message.replace(content=text)
    whole = W.write_response(response.replace(message=answer), data)
    assert whole["candidates"][0]["content"]["parts"] == written
    assert W.chunk(out).text == text


def test_new_chunks_take_the_stream_s_model_and_id() -> None:
    template = event({"text": "first"}, responseId="r9")
    (text,) = W.write_chunk(hw.Chunk("text", "extra"), template)
    assert text.data == {
        "modelVersion": "m1",
        "responseId": "r9",
        "candidates": [{"content": {"role": "model", "parts": [{"text": "extra"}]}, "index": 0}],
    }
    (thought,) = W.write_chunk(hw.Chunk("reasoning", "hm"), None)
    assert W.chunk(thought).kind == "reasoning"
    (finish,) = W.write_chunk(
        hw.Chunk("finish", finish_reason="STOP", usage=hw.Usage(1, 1, 2)), None
    )
    assert W.chunk(finish) == hw.Chunk("finish", finish_reason="STOP", usage=hw.Usage(1, 1, 2))
    (call,) = W.write_chunk(
        hw.Chunk("tool_call_start", '{"a": 1}', tool_call_id="x", tool_name="f"), None
    )
    assert call.data["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "f", "args": {"a": 1}, "id": "x"}}
    ]
    # a fragment of arguments cannot be sent on its own; a whole object can
    assert W.write_chunk(hw.Chunk("tool_call_args", '{"a": ', tool_call_id="x"), None) == []
    assert W.write_chunk(hw.Chunk("tool_call_end", tool_call_id="x"), None) == []
    with pytest.raises(ValueError, match="JSON object"):
        W.write_chunk(hw.Chunk("tool_call_start", "[1]", tool_name="f"), None)
    # a chunk whose kind changed is a new object, not an edit of its own
    source = event({"text": "x"})
    (moved,) = W.write_chunk(W.chunk(source).replace(kind="reasoning"), template)
    assert moved.data["candidates"][0]["content"]["parts"] == [{"text": "x", "thought": True}]
    for item in (text, thought, finish, call, moved):
        sdk(item.data)


def test_stream_events_are_valid_sdk_chunks() -> None:
    response = hw.ModelResponse(
        hw.Message.assistant("hi", [hw.ToolCall("id1", "f", {})]), hw.Usage(1, 2, 3), "STOP", "m"
    )
    events = W.stream_events(response)
    assert [W.chunk(e).kind for e in events] == ["text", "tool_call_start", "finish"]
    parsed = [sdk(e.data) for e in events]
    assert parsed[0].text == "hi"
    assert parsed[1].function_calls[0].id == "id1"
    assert parsed[2].usage_metadata.total_token_count == 3
    for item in events:
        assert Event(None, json.loads(item.encode().decode()[len("data: ") :])) == item


def test_split_gives_one_object_per_thing_its_parts_hold() -> None:
    """A run of text parts, each call, each other part; the finish reason and usage on the
    last; the usual object (one text part, or a run of them) is not split."""
    source = event(
        {"text": "He"},
        {"text": "llo"},
        {"functionCall": {"name": "f", "args": {"x": 1}}},
        {"functionCall": {"name": "g", "args": {}}},
        usageMetadata=USAGE,
    )
    source.data["candidates"][0]["finishReason"] = "STOP"
    parts = W.split(source)
    assert parts is not None
    chunks = [W.chunk(p) for p in parts]
    assert [(c.kind, c.text if c.kind == "text" else c.tool_name) for c in chunks] == [
        ("text", "Hello"),
        ("tool_call_start", "f"),
        ("tool_call_start", "g"),
    ]
    assert [c.finish_reason for c in chunks] == [None, None, "STOP"]
    assert [c.usage for c in chunks] == [None, None, hw.Usage(2, 1, 3)]
    for part in parts:
        sdk(part.data)
    assert W.split(event({"text": "He"}, {"text": "llo"})) is None
    assert W.split(event({"text": "Hi"})) is None
    assert W.chunks(source) == chunks


def test_a_history_a_hook_redacts_keeps_its_signatures_through_the_sdk() -> None:
    """Gemini 3 wants the signatures of earlier turns back: a `before_model` hook that
    redacts a model turn of an agent's history keeps its thought, signatures and call."""

    @hw.before_model
    def redact(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=redacted(request))

    seen: list[Any] = []
    client = gemini_client(reply(), [redact], seen)
    history = [
        types.Content(role="user", parts=[types.Part(text="card 4111?")]),
        types.Content(
            role="model",
            parts=[
                types.Part(text="hmm", thought=True),
                types.Part(text="Card 4111. ", thought_signature=b"sig1"),
                types.Part(
                    function_call=types.FunctionCall(name="log", args={"n": 1}),
                    thought_signature=b"sig2",
                ),
            ],
        ),
        types.Content(
            role="user",
            parts=[types.Part.from_function_response(name="log", response={"result": "ok"})],
        ),
    ]
    client.models.generate_content(model="gemini-2.0-flash", contents=history)
    (sent,) = seen
    assert sent["contents"][0]["parts"] == [{"text": "card [card]?"}]
    assert sent["contents"][1]["parts"] == [
        {"text": "hmm", "thought": True},
        {"text": "Card [card]. ", "thoughtSignature": "c2lnMQ=="},
        {"functionCall": {"name": "log", "args": {"n": 1}}, "thoughtSignature": "c2lnMg=="},
    ]
    assert sent["contents"][2]["parts"] == [
        {"functionResponse": {"name": "log", "response": {"result": "ok"}}}
    ]


def test_a_changed_usage_keeps_the_counts_the_neutral_one_leaves_out() -> None:
    meta = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 7,
        "thoughtsTokenCount": 30,
        "cachedContentTokenCount": 80,
        "totalTokenCount": 137,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 100}],
    }
    data = {**reply(), "usageMetadata": meta}
    response = W.response(data)
    assert response.usage == hw.Usage(100, 37, 137)  # the thoughts are output
    out = W.write_response(response.replace(usage=hw.Usage(100, 40, 140)), data)
    assert out["usageMetadata"] == {
        **meta,
        "candidatesTokenCount": 10,
        "totalTokenCount": 140,
    }
    assert W.response(out).usage == hw.Usage(100, 40, 140)
