"""The real `anthropic` SDK, wrapped, against the fake provider: `messages.create`, streams
and the `messages.stream()` helpers go through the hooks and keep their native types."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from new_chunks import own_chunks

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")

SECRET = "sk-live-1234"
USER = [{"role": "user", "content": "hi"}]


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.on_chunk
def redact(chunk: hw.Chunk) -> hw.Chunk | None:
    if chunk.kind == "text" and SECRET in chunk.text:
        return chunk.replace(text=chunk.text.replace(SECRET, "[redacted]"))
    return None


@hw.after_model
def redact_answer(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
    return response.replace(message=hw.Message.assistant(response.text.replace(SECRET, "[r]")))


def system_of(body: dict[str, Any]) -> str | None:
    """The system prompt sent, whether as a str or as text blocks."""
    system = body.get("system")
    if system is None or isinstance(system, str):
        return system
    return "".join(block["text"] for block in system)


def run(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return request.param == "async"


def test_wrapped_client_is_an_anthropic_client_and_the_original_is_untouched() -> None:
    provider = FakeProvider()
    client = provider.anthropic()
    wrapped = hw.wrap(client, use=[add_system])
    assert isinstance(wrapped, anthropic.Anthropic)
    client.messages.create(model="m", max_tokens=10, messages=USER)
    assert "system" not in provider.requests[-1].body
    wrapped.messages.create(model="m", max_tokens=10, messages=USER)
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_create_writes_the_system_prompt_and_returns_a_native_message(is_async: bool) -> None:
    provider = FakeProvider([f"key {SECRET}"])
    wrapped = hw.wrap(provider.anthropic(async_=is_async), use=[add_system, redact_answer])
    message = run(wrapped.messages.create(model="m", max_tokens=10, messages=USER))
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "key [r]"
    assert provider.requests[-1].body["messages"] == USER
    assert provider.requests[-1].body["max_tokens"] == 10


def test_stream_true_gives_native_events_through_on_chunk(is_async: bool) -> None:
    provider = FakeProvider([f"a {SECRET}"], chunk_size=100)
    seen: list[str] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    wrapped = hw.wrap(provider.anthropic(async_=is_async), use=[redact, record])

    async def read_async() -> tuple[Any, list[Any]]:
        stream = await wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
        return stream, [event async for event in stream]

    if is_async:
        stream, events = asyncio.run(read_async())
        assert isinstance(stream, anthropic.AsyncStream)
    else:
        stream = wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
        assert isinstance(stream, anthropic.Stream)
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == "a [redacted]"
    assert seen == ["a [redacted]"]


def test_stream_helper_text_stream_and_final_message(is_async: bool) -> None:
    provider = FakeProvider([f"one {SECRET}"], chunk_size=100)
    wrapped = hw.wrap(provider.anthropic(async_=is_async), use=[redact, add_system])

    async def helper_async() -> tuple[list[str], str, str]:
        async with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            pieces = [text async for text in stream.text_stream]
            final = await stream.get_final_message()
            text = await stream.get_final_text()
        return pieces, final.content[0].text, text

    if is_async:
        pieces, final_text, text = asyncio.run(helper_async())
    else:
        with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            pieces = list(stream.text_stream)
            final_text = stream.get_final_message().content[0].text
            text = stream.get_final_text()
            assert stream.current_message_snapshot.content[0].text == text
    assert "".join(pieces) == "one [redacted]"
    assert final_text == text == "one [redacted]"
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_until_done_and_beta_messages() -> None:
    provider = FakeProvider(["done", "beta"])
    log: list[str] = []

    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        log.append(request.messages[-1].text)

    wrapped = hw.wrap(provider.anthropic(), use=[count])
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        stream.until_done()
        assert stream.get_final_text() == "done"
    beta = wrapped.beta.messages.create(model="m", max_tokens=10, messages=USER)
    assert beta.content[0].text == "beta"
    assert log == ["hi", "hi"]


def test_raw_response_keeps_headers() -> None:
    provider = FakeProvider([SECRET])
    wrapped = hw.wrap(provider.anthropic(), use=[redact_answer])
    raw = wrapped.messages.with_raw_response.create(model="m", max_tokens=10, messages=USER)
    assert raw.headers["content-type"].startswith("application/json")
    assert raw.parse().content[0].text == "[r]"


def test_respond_gives_a_native_stream_without_http() -> None:
    provider = FakeProvider()

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    wrapped = hw.wrap(provider.anthropic(), use=[cached])
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        assert stream.get_final_text() == "from cache"
    message = wrapped.messages.create(model="m", max_tokens=10, messages=USER)
    assert message.content[0].text == "from cache"
    assert provider.requests == []


@hw.wrap_model
def own_stream(request: hw.ModelRequest) -> Any:
    """Answers a streamed call with chunks of its own: text, then a whole tool call."""
    return own_chunks((yield request), "toolu_1")


def test_a_stream_of_new_chunks_is_framed_for_the_stream_helper(is_async: bool) -> None:
    provider = FakeProvider(["the model's own answer"])
    wrapped = hw.wrap(provider.anthropic(async_=is_async), use=[own_stream])

    async def helper_async() -> tuple[list[str], Any]:
        async with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            return [t async for t in stream.text_stream], await stream.get_final_message()

    if is_async:
        pieces, final = asyncio.run(helper_async())
    else:
        with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            pieces, final = list(stream.text_stream), stream.get_final_message()
    assert pieces == ["Let me ", "look."]
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[0].text == "Let me look."
    assert (final.content[1].id, final.content[1].name) == ("toolu_1", "weather")
    assert final.content[1].input == {"city": "Paris"}
    assert final.stop_reason == "tool_use"
    assert final.model == "m"


def test_a_stream_of_new_chunks_opens_and_closes_as_the_api_does() -> None:
    wrapped = hw.wrap(FakeProvider(["x"]).anthropic(), use=[own_stream])
    stream = wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    events = [(e.type, getattr(e, "index", None)) for e in stream]
    assert events == [
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),  # numbered in order, though both chunks said nothing
        ("content_block_stop", 1),
        ("message_delta", None),
        ("message_stop", None),
    ]


def test_leaving_the_stream_early_closes_it_and_aborts_the_run() -> None:
    provider = FakeProvider(["x" * 60], chunk_size=2)
    ends: list[str] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ends.append(f"abort: {info.reason}")

    wrapped = hw.wrap(provider.anthropic(), use=[aborted])
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        for _ in stream.text_stream:
            break
    assert ends == ["abort: closed by consumer"]
    assert provider.closed == 1


def test_ping_and_message_stop_events_are_kept() -> None:
    provider = FakeProvider(["hello"])
    kinds: list[str] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        kinds.append(chunk.name or chunk.kind)

    wrapped = hw.wrap(provider.anthropic(), use=[look])
    events = list(wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True))
    assert events[-1].type == "message_stop"
    assert len(kinds) == len(events)


@pytest.fixture
def unpatched() -> Any:
    yield
    hw.unpatch()


@pytest.mark.usefixtures("unpatched")
def test_patch_reaches_an_existing_client_sync_and_async() -> None:
    provider = FakeProvider()
    client = provider.anthropic()
    aclient = provider.anthropic(async_=True)
    hw.patch("anthropic", use=[add_system])
    client.messages.create(model="m", max_tokens=10, messages=USER)
    assert system_of(provider.requests[-1].body) == "Be brief."
    asyncio.run(aclient.messages.create(model="m", max_tokens=10, messages=USER))
    assert system_of(provider.requests[-1].body) == "Be brief."
    hw.unpatch("anthropic")
    client.messages.create(model="m", max_tokens=10, messages=USER)
    assert "system" not in provider.requests[-1].body


def test_through_a_real_loopback_server() -> None:
    provider = FakeProvider([f"over http {SECRET}"], chunk_size=100)
    with (
        provider.serve() as url,
        anthropic.Anthropic(api_key="test", base_url=url, max_retries=0) as client,
    ):
        wrapped = hw.wrap(client, use=[redact])
        with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            text = stream.get_final_text()
    assert text == "over http [redacted]"


def test_parse_reads_what_the_hooks_left(is_async: bool) -> None:
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        degrees: int

    provider = FakeProvider(['{"city": "Paris", "degrees": 18}'])

    @hw.after_model
    def colder(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.replace("18", "9")))

    wrapped = hw.wrap(provider.anthropic(async_=is_async), use=[add_system, colder])
    parsed = run(
        wrapped.messages.parse(model="m", max_tokens=50, messages=USER, output_format=Weather)
    )
    assert parsed.parsed_output == Weather(city="Paris", degrees=9)
    assert system_of(provider.requests[-1].body) == "Be brief."


@pytest.mark.parametrize("order", ["usage_first", "usage_last"])
def test_the_usage_of_a_stream_of_new_chunks_reaches_the_final_message(order: str) -> None:
    """A wrap hook's own stream (a fallback's, say) reporting usage in a chunk of its own,
    before or after its finish chunk (OpenAI sends it after): the caller's final message
    has it, and keeps the stop reason."""
    usage = hw.Chunk("usage", usage=hw.Usage(3, 4, 7))
    finish = hw.Chunk("finish", finish_reason="end_turn")
    tail = [usage, finish] if order == "usage_first" else [finish, usage]

    @hw.wrap_model
    def own(request: hw.ModelRequest) -> Any:
        yield request
        return iter([hw.Chunk("text", "hi"), *tail])

    wrapped = hw.wrap(FakeProvider(["x"]).anthropic(), use=[own])
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == "hi"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 4


@pytest.mark.parametrize("after", ["text", "finish"])
def test_a_usage_chunk_added_to_the_apis_own_stream_reaches_the_final_message(after: str) -> None:
    """A hook adds a usage chunk to the API's own stream, before its `message_delta` (after
    a text chunk) or after it: no event of the API's carries it, so the stream is framed
    from there on, and its closing `message_delta` has the counts and the stop reason."""

    @hw.on_chunk
    def add_usage(chunk: hw.Chunk) -> Any:
        if chunk.kind == after:
            return [chunk, hw.Chunk("usage", usage=hw.Usage(1, 42, 43))]
        return None

    wrapped = hw.wrap(FakeProvider(["hello", "hello"]).anthropic(), use=[add_usage])
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == "hello"  # type: ignore[union-attr]
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 42
    events = list(wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True))
    plain = FakeProvider(["hello"]).anthropic()
    kinds = [
        e.type for e in plain.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    ]
    if after == "finish":  # the API's delta went out before the counts came: one more
        kinds.insert(-1, "message_delta")
    assert [event.type for event in events] == kinds
    assert events[-2].delta.stop_reason == "end_turn"  # type: ignore[union-attr]
    assert events[-2].usage.output_tokens == 42  # type: ignore[union-attr]


def test_a_streamed_answer_a_wrap_hook_gives_without_usage_reports_none() -> None:
    """The stream carries zeros where the API's events need counts; hooks see no usage."""
    seen: list[Any] = []

    @hw.wrap_model
    def answer(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant("from the cache"))

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        seen.append(usage)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.usage)

    provider = FakeProvider()
    client = hw.wrap(provider.anthropic(), use=[answer, usage, after])
    events = list(client.messages.create(model="m", max_tokens=9, messages=USER, stream=True))
    assert [e.type for e in events][0 :: len(events) - 1] == ["message_start", "message_stop"]
    assert seen == [None]
    assert provider.requests == []
