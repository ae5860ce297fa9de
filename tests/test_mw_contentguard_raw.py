"""ContentGuard keeps `response.raw` in step with what it filtered (docs/middleware/
content-guard.md: "`response.raw` holds the filtered text too"): a hook that runs after the
guard (an audit log reading the answer's JSON, say) finds no more of the model's text in
`raw` than the caller gets, for an answer of one text block as for one of several, from
every SDK and from a plain function; an answer the guard leaves alone keeps its `raw`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import ContentGuard
from hookwrap.testing import FakeProvider

KEY = (r"sk-[A-Za-z0-9]{8,40}", "[key]")
SECRET = "sk-abcdefgh12"
USER = [{"role": "user", "content": "x"}]
SDKS = ("chat", "responses", "anthropic", "genai")
MODULES = {"chat": "openai", "responses": "openai", "anthropic": "anthropic"}


def sdk_client(sdk: str, provider: FakeProvider, is_async: bool = False) -> Any:
    pytest.importorskip(MODULES.get(sdk, "google.genai"))
    if sdk == "genai":
        client = provider.genai(max_retries=0)
        return client.aio if is_async else client
    maker = provider.anthropic if sdk == "anthropic" else provider.openai
    return maker(async_=is_async, max_retries=0)


def ask(sdk: str, client: Any, stream: bool = False) -> Any:
    """The call's answer (a whole one), or its stream's events."""
    if sdk == "chat":
        return client.chat.completions.create(model="m", messages=USER, stream=stream)
    if sdk == "responses":
        return client.responses.create(model="m", input="x", stream=stream)
    if sdk == "anthropic":
        return client.messages.create(model="m", max_tokens=5, messages=USER, stream=stream)
    if stream:
        return client.models.generate_content_stream(model="m", contents="x")
    return client.models.generate_content(model="m", contents="x")


def text_of(sdk: str, answer: Any) -> str:
    if sdk == "chat":
        return str(answer.choices[0].message.content)
    if sdk == "responses":
        return str(answer.output_text)
    if sdk == "anthropic":
        return "".join(block.text for block in answer.content if block.type == "text")
    return str(answer.text)


def watched(seen: list[Any]) -> Any:
    """An `after_model` hook that notes `response.raw`: listed before the guard, it runs
    after it (after hooks run inside out)."""

    @hw.after_model
    def audit(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.raw)

    return audit


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", SDKS)
def test_the_raw_json_of_a_one_block_answer_holds_the_filtered_text(
    sdk: str, is_async: bool
) -> None:
    seen: list[Any] = []
    provider = FakeProvider([f"the key {SECRET} ok"])
    client = hw.wrap(
        sdk_client(sdk, provider, is_async), use=[watched(seen), ContentGuard(rules=[KEY])]
    )
    answer = ask(sdk, client)
    if is_async:
        answer = asyncio.run(answer)
    assert text_of(sdk, answer) == "the key [key] ok"
    (raw,) = seen
    assert SECRET not in json.dumps(raw)
    # the JSON reads, in the SDK's own type, as the answer the caller got
    assert text_of(sdk, type(answer).model_validate(raw)) == "the key [key] ok"


@pytest.mark.parametrize("sdk", ["anthropic", "genai"])
def test_the_raw_json_of_several_blocks_holds_each_filtered_block(sdk: str) -> None:
    seen: list[Any] = []
    reply = hw.Message("assistant", (hw.TextPart(f"key {SECRET}"), hw.TextPart(" bye")))
    client = hw.wrap(
        sdk_client(sdk, FakeProvider([reply])), use=[watched(seen), ContentGuard(rules=[KEY])]
    )
    answer = ask(sdk, client)
    assert text_of(sdk, answer) == "key [key] bye"
    assert SECRET not in json.dumps(seen[0])
    if sdk == "anthropic":
        assert [block["text"] for block in seen[0]["content"]] == ["key [key]", " bye"]
    else:
        parts = seen[0]["candidates"][0]["content"]["parts"]
        assert [part["text"] for part in parts] == ["key [key]", " bye"]


def test_chat_logprobs_of_the_filtered_text_go_from_raw_as_from_the_callers_answer() -> None:
    """The logprobs spell out the old text's tokens: the raw JSON drops them, as the answer
    the caller gets does."""
    openai = pytest.importorskip("openai")
    from canned_sse import http_module

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
                "message": {"role": "assistant", "content": f"key {SECRET}", "refusal": None},
            }
        ],
    }
    module = http_module(openai.DefaultHttpxClient)
    http = openai.DefaultHttpxClient(
        transport=module.MockTransport(lambda request: module.Response(200, json=body))
    )
    sdk = openai.OpenAI(api_key="k", base_url="http://fake.invalid", http_client=http)
    seen: list[Any] = []
    answer = hw.wrap(sdk, use=[watched(seen), ContentGuard(rules=[KEY])]).chat.completions.create(
        model="m", messages=USER
    )
    assert answer.choices[0].message.content == "key [key]"
    assert answer.choices[0].logprobs is None
    assert SECRET not in json.dumps(seen[0])
    assert type(answer).model_validate(seen[0]) == answer


@pytest.mark.parametrize("sdk", SDKS)
def test_a_streamed_answer_leaves_no_raw_json_to_hold_the_text(sdk: str) -> None:
    """In a stream, `after_model` hooks see the answer assembled from what the caller got:
    no JSON of the model's answer to filter."""
    seen: list[Any] = []
    provider = FakeProvider([f"the key {SECRET} ok"], chunk_size=3)
    client = hw.wrap(sdk_client(sdk, provider), use=[watched(seen), ContentGuard(rules=[KEY])])
    events = list(ask(sdk, client, stream=True))
    assert events
    assert SECRET not in json.dumps(seen, default=repr)


@pytest.mark.parametrize(
    ("answer", "filtered"),
    [
        (f"key {SECRET}", "key [key]"),
        (hw.Message.assistant(f"key {SECRET}"), hw.Message.assistant("key [key]")),
        (
            {"role": "assistant", "content": f"key {SECRET}", "id": 7},
            {"role": "assistant", "content": "key [key]", "id": 7},
        ),
        (
            {"content": [{"type": "text", "text": f"key {SECRET}"}]},
            {"content": [{"type": "text", "text": "key [key]"}]},
        ),
    ],
    ids=["str", "Message", "dict", "dict-of-parts"],
)
def test_a_plain_functions_own_answer_holds_the_filtered_text_in_its_form(
    answer: Any, filtered: Any
) -> None:
    seen: list[Any] = []

    def llm(messages: Any) -> Any:
        return answer

    got = hw.model(llm, use=[watched(seen), ContentGuard(rules=[KEY])])(USER)
    assert seen == [filtered]
    # what the caller gets is as before (a dict gets a role)
    assert got == (filtered if not isinstance(answer, dict) else {**filtered, "role": "assistant"})


def test_a_raw_that_holds_no_answer_text_is_kept() -> None:
    seen: list[Any] = []
    reply = hw.ModelResponse(hw.Message.assistant(f"key {SECRET}"), raw="request-17")

    def llm(messages: Any) -> hw.ModelResponse:
        return reply

    assert hw.model(llm, use=[watched(seen), ContentGuard(rules=[KEY])])(USER).text == "key [key]"
    assert seen == ["request-17"]


@pytest.mark.parametrize("sdk", SDKS)
def test_an_answer_the_guard_leaves_alone_keeps_its_very_raw(sdk: str) -> None:
    inner: list[Any] = []
    outer: list[Any] = []
    client = hw.wrap(
        sdk_client(sdk, FakeProvider(["nothing to hide"])),
        use=[watched(outer), ContentGuard(rules=[KEY]), watched(inner)],
    )
    assert text_of(sdk, ask(sdk, client)) == "nothing to hide"
    assert outer[0] is inner[0]


def _served(openai: Any, body: dict[str, Any]) -> Any:
    """An OpenAI client every request of which is answered with the JSON `body`."""
    from canned_sse import http_module

    module = http_module(openai.DefaultHttpxClient)
    http = openai.DefaultHttpxClient(
        transport=module.MockTransport(lambda request: module.Response(200, json=body))
    )
    return openai.OpenAI(api_key="k", base_url="http://fake.invalid", http_client=http)


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_the_raw_json_of_an_openai_answer_without_object_holds_the_filtered_text(
    api: str,
) -> None:
    """Some compatible servers leave `object` out: the answer is known by its shape."""
    openai = pytest.importorskip("openai")
    if api == "chat":
        choice: dict[str, Any] = {"message": {"role": "assistant", "content": f"key {SECRET}"}}
    else:
        choice = {"text": f"key {SECRET}", "logprobs": None}
    body = {
        "id": "c1",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", **choice}],
    }
    seen: list[Any] = []
    client = hw.wrap(_served(openai, body), use=[watched(seen), ContentGuard(rules=[KEY])])
    if api == "chat":
        answer = client.chat.completions.create(model="m", messages=USER)
        assert answer.choices[0].message.content == "key [key]"
        assert seen[0]["choices"][0]["message"]["content"] == "key [key]"
    else:
        answer = client.completions.create(model="m", prompt="x")
        assert answer.choices[0].text == "key [key]"
        assert seen[0]["choices"][0]["text"] == "key [key]"
    assert SECRET not in json.dumps(seen[0])
    assert "object" not in seen[0]


def test_a_raw_with_choices_of_no_known_shape_is_kept() -> None:
    seen: list[Any] = []
    raw = {"choices": [{"index": 0, "answer": f"key {SECRET}"}]}

    def llm(messages: Any) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant(f"key {SECRET}"), raw=raw)

    assert hw.model(llm, use=[watched(seen), ContentGuard(rules=[KEY])])(USER).text == "key [key]"
    assert seen == [raw]
