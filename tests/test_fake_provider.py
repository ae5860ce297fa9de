"""`hookwrap.testing.FakeProvider` through the real SDKs: every endpoint, sync and async,
streamed and not, through the httpx transport and the loopback server; scripted replies,
the echo, usage, injected failures with SDK retries, and streams closed early."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider, Received

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai_errors = pytest.importorskip("google.genai.errors")
httpx2 = pytest.importorskip("httpx2")

USER = [{"role": "user", "content": "hi"}]
GEMINI = "gemini-2.0-flash"
CLAUDE = "claude-sonnet-4-6"


def tokens(text: str) -> int:
    """The fake's documented count: one token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


# -- OpenAI ------------------------------------------------------------------------------------


def test_openai_chat_create_answers_the_script_and_records_the_request() -> None:
    provider = FakeProvider(["Hello there"])
    with provider.openai() as client:
        completion = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert completion.choices[0].message.content == "Hello there"
    assert completion.model == "gpt-4o"
    assert completion.choices[0].finish_reason == "stop"
    usage = completion.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (tokens("hi"), tokens("Hello there"))
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    [received] = provider.requests
    assert isinstance(received, Received)
    assert received.path == "/v1/chat/completions"
    assert received.status == 200
    assert received.body == {"model": "gpt-4o", "messages": USER}
    assert received.headers["authorization"] == "Bearer test"
    assert received.request.model == "gpt-4o"
    assert [(m.role, m.text) for m in received.request.messages] == [("user", "hi")]
    assert received.request.stream is False
    assert not provider.replies  # the script is used up


def test_openai_chat_stream_is_split_into_chunks_with_usage_on_request() -> None:
    text = "a streamed answer of some length"
    provider = FakeProvider([text, text], chunk_size=5)
    with provider.openai() as client:
        chunks = list(
            client.chat.completions.create(
                model="gpt-4o",
                messages=USER,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        plain = list(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert "".join(pieces) == text
    assert len(pieces) == -(-len(text) // 5)
    assert [c.usage.completion_tokens for c in chunks if c.usage] == [tokens(text)]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert all(c.usage is None for c in plain)  # no include_usage: no usage, as the API does
    text_of_plain = "".join(c.choices[0].delta.content or "" for c in plain if c.choices)
    assert text_of_plain == text
    assert provider.requests[0].request.stream is True
    assert provider.closed == 0


def test_openai_chat_tool_calls_from_a_scripted_message() -> None:
    call = hw.ToolCall("call_1", "get_weather", {"city": "Paris"})
    provider = FakeProvider([hw.Message.assistant("", [call])])
    with provider.openai() as client:
        completion = client.chat.completions.create(model="gpt-4o", messages=USER)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    [tool_call] = choice.message.tool_calls or []
    assert tool_call.id == "call_1"
    assert tool_call.function.name == "get_weather"
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}


def test_openai_responses_create_and_stream() -> None:
    provider = FakeProvider(["first answer", "second, streamed answer"])
    with provider.openai() as client:
        response = client.responses.create(model="gpt-4o", input="hello")
        events = list(client.responses.create(model="gpt-4o", input="hello", stream=True))
    assert response.output_text == "first answer"
    assert response.usage is not None
    assert response.usage.output_tokens == tokens("first answer")
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "second, streamed answer"
    completed = [e for e in events if e.type == "response.completed"]
    assert completed
    assert completed[0].response.output_text == "second, streamed answer"
    assert [r.path for r in provider.requests] == ["/v1/responses", "/v1/responses"]
    assert provider.requests[0].request.messages[-1].text == "hello"


def test_openai_responses_stream_helper_gives_the_final_response() -> None:
    provider = FakeProvider(["the final text"])
    with (
        provider.openai() as client,
        client.responses.stream(model="gpt-4o", input="hello") as stream,
    ):
        final = stream.get_final_response()
    assert final.output_text == "the final text"


def test_openai_legacy_completions() -> None:
    provider = FakeProvider(["completed text", "streamed completion"])
    with provider.openai() as client:
        completion = client.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say")
        stream = client.completions.create(
            model="gpt-3.5-turbo-instruct", prompt="Say", stream=True
        )
        pieces = [c.choices[0].text for c in stream if c.choices]
    assert completion.choices[0].text == "completed text"
    assert "".join(pieces) == "streamed completion"
    assert len([p for p in pieces if p]) > 1
    assert provider.requests[0].path == "/v1/completions"


def test_openai_async_create_and_stream() -> None:
    provider = FakeProvider(["async answer", "async streamed answer"])

    async def main() -> tuple[str | None, str]:
        async with provider.openai(async_=True) as client:
            completion = await client.chat.completions.create(model="gpt-4o", messages=USER)
            stream = await client.chat.completions.create(
                model="gpt-4o", messages=USER, stream=True
            )
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        return completion.choices[0].message.content, text

    assert asyncio.run(main()) == ("async answer", "async streamed answer")


# -- Anthropic ---------------------------------------------------------------------------------


def test_anthropic_messages_create() -> None:
    provider = FakeProvider(["Bonjour"])
    with provider.anthropic() as client:
        message = client.messages.create(model=CLAUDE, max_tokens=100, messages=USER)
    assert [block.text for block in message.content if block.type == "text"] == ["Bonjour"]
    assert message.model == CLAUDE
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (1, tokens("Bonjour"))
    [received] = provider.requests
    assert received.path == "/v1/messages"
    assert "anthropic-version" in received.headers
    key = received.headers.get("x-api-key") or received.headers["authorization"]
    assert key.removeprefix("Bearer ") == "test"
    assert received.body["max_tokens"] == 100


def test_anthropic_messages_create_streamed() -> None:
    provider = FakeProvider(["a streamed reply"])
    with provider.anthropic() as client:
        events = list(
            client.messages.create(model=CLAUDE, max_tokens=100, messages=USER, stream=True)
        )
    types = [e.type for e in events]
    assert types[0] == "message_start"
    assert types[-1] == "message_stop"
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "a streamed reply"
    [usage] = [e.usage for e in events if e.type == "message_delta"]
    assert usage.output_tokens == tokens("a streamed reply")


def test_anthropic_messages_stream_helper() -> None:
    provider = FakeProvider(["the helper's text"])
    with (
        provider.anthropic() as client,
        client.messages.stream(model=CLAUDE, max_tokens=100, messages=USER) as stream,
    ):
        pieces = list(stream.text_stream)
        final = stream.get_final_text()
    assert final == "the helper's text"
    assert len(pieces) > 1
    assert provider.requests[0].request.stream is True


def test_anthropic_async_stream_helper() -> None:
    provider = FakeProvider()

    async def main() -> str:
        async with (
            provider.anthropic(async_=True) as client,
            client.messages.stream(model=CLAUDE, max_tokens=10, messages=USER) as stream,
        ):
            return await stream.get_final_text()

    assert asyncio.run(main()) == "You said: hi"


# -- Google GenAI ------------------------------------------------------------------------------


def test_genai_generate_content() -> None:
    provider = FakeProvider(["Hallo"])
    with provider.genai() as client:
        response = client.models.generate_content(model=GEMINI, contents="hi there")
    assert response.text == "Hallo"
    usage = response.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (2, tokens("Hallo"))
    [received] = provider.requests
    assert received.path.endswith(f"/models/{GEMINI}:generateContent")
    assert received.headers["x-goog-api-key"] == "test"
    assert received.request.model == GEMINI  # from the path: the body does not name it
    assert received.request.messages[-1].text == "hi there"
    assert received.request.stream is False


def test_genai_generate_content_stream() -> None:
    provider = FakeProvider(["several pieces of text"])
    with provider.genai() as client:
        chunks = list(client.models.generate_content_stream(model=GEMINI, contents="hi"))
    assert len(chunks) > 1
    assert "".join(c.text or "" for c in chunks) == "several pieces of text"
    assert provider.requests[0].path.endswith(f"/models/{GEMINI}:streamGenerateContent")
    assert provider.requests[0].request.stream is True
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage
    assert usage[-1].candidates_token_count == tokens("several pieces of text")


def test_genai_async() -> None:
    provider = FakeProvider(["one", "two and more"])

    async def main() -> tuple[str | None, str]:
        client = provider.genai()
        try:
            response = await client.aio.models.generate_content(model=GEMINI, contents="x")
            stream = await client.aio.models.generate_content_stream(model=GEMINI, contents="x")
            text = "".join([c.text or "" async for c in stream])
        finally:
            await client.aio.aclose()
            client.close()
        return response.text, text

    assert asyncio.run(main()) == ("one", "two and more")


# -- the loopback server -----------------------------------------------------------------------


def test_openai_through_the_loopback_server() -> None:
    provider = FakeProvider(["over a real socket"], chunk_size=3)
    with provider.serve() as url, provider.openai(url=url) as client:
        assert url.startswith("http://127.0.0.1:")
        stream = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
        pieces = [c.choices[0].delta.content for c in stream if c.choices]
        again = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert "".join(p or "" for p in pieces) == "over a real socket"
    assert len([p for p in pieces if p]) == 6
    assert again.choices[0].message.content == "You said: hi"
    assert [r.path for r in provider.requests] == ["/v1/chat/completions"] * 2


def test_anthropic_through_the_loopback_server() -> None:
    provider = FakeProvider(["served"])
    with (
        provider.serve() as url,
        provider.anthropic(url=url) as client,
        client.messages.stream(model=CLAUDE, max_tokens=10, messages=USER) as stream,
    ):
        assert stream.get_final_text() == "served"
    assert provider.requests[0].path == "/v1/messages"


def test_genai_through_the_loopback_server() -> None:
    provider = FakeProvider(["served by gemini", "not streamed"])
    with provider.serve() as url, provider.genai(url=url) as client:
        chunks = list(client.models.generate_content_stream(model=GEMINI, contents="hi"))
        response = client.models.generate_content(model=GEMINI, contents="hi")
    assert "".join(c.text or "" for c in chunks) == "served by gemini"
    assert len(chunks) > 1
    assert response.text == "not streamed"


def test_the_server_frames_sse_with_chunked_encoding() -> None:
    provider = FakeProvider(["abcdefgh"], chunk_size=2)
    body = json.dumps({"model": "m", "messages": USER, "stream": True}).encode()
    with provider.serve() as url:
        request = urllib.request.Request(f"{url}/v1/chat/completions?x=1", body, method="POST")
        with urllib.request.urlopen(request) as response:
            headers = response.headers
            raw = response.read().decode()
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"
    events = [e for e in raw.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    texts = [
        json.loads(e.removeprefix("data: "))["choices"][0]["delta"].get("content")
        for e in events[:-1]
    ]
    assert [t for t in texts if t] == ["ab", "cd", "ef", "gh"]
    assert provider.requests[0].path == "/v1/chat/completions"


def test_the_server_answers_unknown_paths_with_404() -> None:
    provider = FakeProvider()
    with provider.serve() as url:
        request = urllib.request.Request(f"{url}/v1/nothing", b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request)
        error = json.loads(caught.value.read())
        caught.value.close()
    assert caught.value.code == 404
    assert "/v1/nothing" in error["error"]["message"]


# -- scripts and echo --------------------------------------------------------------------------


def test_replies_of_every_kind_then_the_echo() -> None:
    seen: list[hw.ModelRequest] = []

    def answer(request: hw.ModelRequest) -> str:
        seen.append(request)
        return f"{len(request.messages)} messages"

    usage = hw.Usage(7, 8, 15)
    provider = FakeProvider(
        [
            "a string",
            hw.Message.assistant("a message"),
            hw.ModelResponse(hw.Message.assistant("a response"), usage, "length", "other"),
            answer,
        ]
    )
    with provider.openai() as client:

        def ask(text: str) -> Any:
            messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]
            return client.chat.completions.create(model="gpt-4o", messages=messages)

        results = [ask(f"question {n}") for n in range(6)]
    texts = [r.choices[0].message.content for r in results]
    assert texts == [
        "a string",
        "a message",
        "a response",
        "2 messages",
        "You said: question 4",
        "You said: question 5",
    ]
    third = results[2]
    assert (third.usage.prompt_tokens, third.usage.completion_tokens) == (7, 8)
    assert third.choices[0].finish_reason == "length"
    assert third.model == "other"
    [request] = seen
    assert request.messages[-1].text == "question 3"
    provider.replies.append("appended later")
    with provider.openai() as client:
        later = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert later.choices[0].message.content == "appended later"


def test_echo_uses_the_last_user_message() -> None:
    provider = FakeProvider()
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]
    with provider.openai() as client:
        completion = client.chat.completions.create(model="gpt-4o", messages=messages)
    assert completion.choices[0].message.content == "You said: second"


def test_a_failing_reply_is_a_400_naming_the_error() -> None:
    def broken(request: hw.ModelRequest) -> str:
        raise RuntimeError("scripted bug")

    provider = FakeProvider([broken])
    with provider.openai() as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    assert "scripted bug" in str(caught.value)
    assert [r.status for r in provider.requests] == [400]


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        FakeProvider(chunk_size=0)


# -- failures and retries ----------------------------------------------------------------------


def test_openai_retries_a_failure_then_succeeds() -> None:
    provider = FakeProvider(["after the retry"])
    provider.fail(503, retry_after=0.01)
    with provider.openai(max_retries=2) as client:
        completion = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert completion.choices[0].message.content == "after the retry"
    assert [r.status for r in provider.requests] == [503, 200]
    assert provider.requests[0].body == provider.requests[1].body


def test_openai_failure_without_retries_has_the_openai_error_shape() -> None:
    provider = FakeProvider()
    provider.fail(429, times=2, retry_after=2)
    with provider.openai(max_retries=0) as client:
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as caught:
                client.chat.completions.create(model="gpt-4o", messages=USER)
        assert caught.value.status_code == 429
        assert caught.value.response.headers["retry-after"] == "2"
        assert caught.value.response.headers["retry-after-ms"] == "2000"
        assert caught.value.body["type"] == "rate_limit_error"
        ok = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert ok.choices[0].message.content == "You said: hi"
    assert [r.status for r in provider.requests] == [429, 429, 200]


def test_a_custom_failure_body() -> None:
    provider = FakeProvider()
    provider.fail(500, body={"error": {"message": "custom trouble", "type": "x"}})
    with provider.openai(max_retries=0) as client, pytest.raises(openai.InternalServerError) as e:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    # openai < 3.38 puts the whole body in the message, later releases only its `message`
    assert e.value.message.startswith("Error code: 500 - ")
    assert "custom trouble" in e.value.message
    assert e.value.body == {"message": "custom trouble", "type": "x"}
    assert e.value.type == "x"


def test_anthropic_retries_and_error_shape() -> None:
    provider = FakeProvider(["fine"])
    provider.fail(529, retry_after=0.01)
    with provider.anthropic() as client:
        message = client.messages.create(model=CLAUDE, max_tokens=10, messages=USER)
    assert message.content[0].text == "fine"
    assert [r.status for r in provider.requests] == [529, 200]
    provider.fail(400)
    with provider.anthropic(max_retries=0) as client, pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=CLAUDE, max_tokens=10, messages=USER)
    assert e.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "FakeProvider: a scripted failure"},
    }


def test_genai_retries_and_error_shape() -> None:
    provider = FakeProvider(["after"])
    provider.fail(503)
    with provider.genai(max_retries=1) as client:
        response = client.models.generate_content(model=GEMINI, contents="hi")
    assert response.text == "after"
    assert [r.status for r in provider.requests] == [503, 200]
    provider.fail(503)
    with provider.genai(max_retries=0) as client, pytest.raises(genai_errors.ServerError) as e:
        client.models.generate_content(model=GEMINI, contents="hi")
    assert (e.value.code, e.value.status) == (503, "UNAVAILABLE")


def test_a_retried_stream_succeeds() -> None:
    provider = FakeProvider(["streamed after a failure"])
    provider.fail(500, retry_after=0.01)
    with provider.openai() as client:
        stream = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "streamed after a failure"
    assert [r.status for r in provider.requests] == [500, 200]


def test_fail_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="status"):
        FakeProvider().fail(200)
    with pytest.raises(ValueError, match="times"):
        FakeProvider().fail(times=0)


# -- streams closed early ----------------------------------------------------------------------


def test_closing_a_stream_early_is_recorded() -> None:
    provider = FakeProvider(["x" * 40, "y" * 40], chunk_size=2)
    with provider.openai() as client:
        stream = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
        next(iter(stream))
        stream.close()
        assert provider.closed == 1
        finished = client.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in finished) == "y" * 40
    assert provider.closed == 1


def test_closing_an_async_stream_early_is_recorded() -> None:
    provider = FakeProvider(["x" * 40], chunk_size=2)

    async def main() -> None:
        async with provider.anthropic(async_=True) as client:
            stream = await client.messages.create(
                model=CLAUDE, max_tokens=10, messages=USER, stream=True
            )
            async for _ in stream:
                break
            await stream.close()

    asyncio.run(main())
    assert provider.closed == 1


# -- the transport on its own ------------------------------------------------------------------


def test_the_transport_streams_sse_events_one_by_one() -> None:
    provider = FakeProvider(["abcdef"], chunk_size=2)
    body = {"model": "m", "messages": USER, "stream": True}
    with (
        httpx2.Client(transport=provider.transport(httpx2)) as http,
        http.stream("POST", "http://x/v1/chat/completions", json=body) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-request-id"] == "req_fake_1"
        raw = list(response.iter_raw())
    assert len(raw) > 3  # one piece per event: a real stream, not one buffered body
    assert all(piece.endswith(b"\n\n") for piece in raw)
    assert raw[-1] == b"data: [DONE]\n\n"


def test_the_transport_answers_bad_bodies_with_400() -> None:
    provider = FakeProvider(["kept"])
    transport = provider.async_transport()

    async def main() -> Any:
        async with httpx2.AsyncClient(transport=transport) as http:
            return await http.post("http://x/v1/messages", content=b"not json")

    response = asyncio.run(main())
    assert response.status_code == 400
    assert response.json()["type"] == "error"
    assert list(provider.replies) == ["kept"]  # a rejected request uses no reply
    assert provider.requests[0].status == 400


def test_importing_needs_no_sdk_and_the_server_needs_no_httpx() -> None:
    code = textwrap.dedent(
        """
        import json, sys, urllib.request

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {"openai", "anthropic", "google", "httpx", "httpx2"}:
                    raise ImportError(f"blocked: {name}")

        sys.meta_path.insert(0, Block())
        from hookwrap.testing import FakeProvider

        provider = FakeProvider(["offline"])
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        with provider.serve() as url:
            request = urllib.request.Request(f"{url}/v1/chat/completions", body.encode())
            with urllib.request.urlopen(request) as response:
                print(json.load(response)["choices"][0]["message"]["content"])
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    assert result.stderr == ""
    assert result.stdout == "offline\n"


def test_sse_decoder_keeps_each_event_and_its_bytes_however_the_body_is_split() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from hookwrap.adapters._wire import SSEDecoder, encode_sse

    events = [
        ("message_start", {"type": "message_start", "n": 1}),
        (None, {"text": "a\\nb"}),
        (None, "[DONE]"),
    ]
    body = b": keep-alive\n\n".join(encode_sse(name, data) for name, data in events)

    @given(st.lists(st.integers(min_value=0, max_value=len(body)), max_size=8))
    def check(cuts: list[int]) -> None:
        decoder = SSEDecoder()
        found = []
        start = 0
        for cut in [*sorted(cuts), len(body)]:
            found.extend(decoder.feed(body[start:cut]))
            start = cut
        found.extend(decoder.flush())
        assert [(e.event, e.data) for e in found] == events
        assert [e.raw for e in found] == [encode_sse(name, data) for name, data in events]

    check()


def test_one_reply_alone_is_a_script_of_one() -> None:
    provider = FakeProvider("Hello there!")
    assert list(provider.replies) == ["Hello there!"]  # not one reply per character
    answer = provider.openai().chat.completions.create(model="m", messages=USER)
    assert answer.choices[0].message.content == "Hello there!"


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: FakeProvider([42]), TypeError, r"replies=...\)\[0\] must be a str, an assistant"),
        (lambda: FakeProvider(["ok", None]), TypeError, r"\[1\] must be .*\(got NoneType"),
        (lambda: FakeProvider(42), TypeError, r"expects a list of replies \(got int: 42\)"),
        (lambda: FakeProvider(chunk_size=2.5), TypeError, r"chunk_size=...\) expects an int >= 1"),
        (lambda: FakeProvider(chunk_size=0), ValueError, r"chunk_size=...\) expects an int >= 1"),
        (lambda: FakeProvider().fail("503"), TypeError, r"fail\(status=...\) expects an int"),
        (lambda: FakeProvider().fail(200), ValueError, r"fail\(status=...\) expects an int >= 400"),
        (lambda: FakeProvider().fail(600), ValueError, "an HTTP error status, 400 to 599"),
        (
            lambda: FakeProvider().fail(times=0),
            ValueError,
            r"fail\(times=...\) expects an int >= 1",
        ),
        (lambda: FakeProvider().fail(body="oops"), TypeError, r"fail\(body=...\) expects a dict"),
        (
            lambda: FakeProvider().fail(retry_after="x"),
            TypeError,
            "retry_after=...\\) expects a finite number",
        ),
        (
            lambda: FakeProvider().fail(retry_after=math.inf),
            TypeError,
            "a finite number of seconds",
        ),
        (
            lambda: FakeProvider().transport("httpx"),
            TypeError,
            "expects the httpx or httpx2 module",
        ),
        (
            lambda: FakeProvider().openai("yes"),
            TypeError,
            r"openai\(async_\) expects True or False",
        ),
        (lambda: FakeProvider().anthropic(1), TypeError, r"anthropic\(async_\) expects True or"),
    ],
)
def test_bad_arguments_are_refused_when_given(
    make: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()


def test_retry_after_is_whole_seconds_as_http_has_it_and_the_ms_header_exact() -> None:
    for seconds, header, ms in [(0.25, "1", "250"), (2, "2", "2000"), (1234567, "1234567", None)]:
        provider = FakeProvider()
        provider.fail(429, retry_after=seconds)
        with (
            provider.openai(max_retries=0) as client,
            pytest.raises(openai.RateLimitError) as caught,
        ):
            client.chat.completions.create(model="gpt-4o", messages=USER)
        headers = caught.value.response.headers
        assert headers["retry-after"] == header
        assert ms is None or headers["retry-after-ms"] == ms


def test_anthropic_reads_the_request_id_of_an_answer_and_of_an_error() -> None:
    provider = FakeProvider(["hi"])
    with provider.anthropic(max_retries=0) as client:
        message = client.messages.create(model="c", max_tokens=5, messages=USER)
        assert message._request_id == "req_fake_1"  # pyright: ignore[reportPrivateUsage]
        provider.fail(500)
        with pytest.raises(anthropic.APIStatusError) as caught:
            client.messages.create(model="c", max_tokens=5, messages=USER)
        assert caught.value.request_id == "req_fake_2"


def test_the_server_keeps_quiet_when_a_client_drops_its_connection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hookwrap.testing._server import _Server  # pyright: ignore[reportPrivateUsage]

    server = _Server(lambda path, headers, body: None)  # type: ignore[arg-type,return-value]
    try:
        for error in (ConnectionResetError(104, "reset by peer"), BrokenPipeError(32, "pipe")):
            try:
                raise error
            except OSError:
                server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real fault")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert "ValueError: a real fault" in capsys.readouterr().err
    finally:
        server.server_close()


@pytest.mark.parametrize("stream", [False, True])
def test_a_filtered_responses_answer_is_incomplete_saying_why(stream: bool) -> None:
    filtered = hw.ModelResponse(hw.Message.assistant("x"), finish_reason="content_filter")
    with FakeProvider([filtered]).openai() as client:
        if stream:
            events = list(client.responses.create(model="m", input="hi", stream=True))
            assert events[-1].type == "response.incomplete"
            response: Any = events[-1].response
        else:
            response = client.responses.create(model="m", input="hi")
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "content_filter"
