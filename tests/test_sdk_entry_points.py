"""SDK entry points not covered elsewhere: each goes through the hooks once per logical call
and hands the caller the SDK's own kind of object (SPEC §3, §4)."""

from __future__ import annotations

import asyncio
import inspect
import json
import warnings
from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest
from pydantic import BaseModel

import hookwrap as hw
from hookwrap.testing import FakeProvider

SECRET = "sk-live-1234"
USER = [{"role": "user", "content": "hi"}]
SYSTEM = {"role": "system", "content": "Be brief."}


class Weather(BaseModel):
    city: str
    degrees: int


def counted(log: list[str]) -> tuple[Any, Any]:
    """A `before_model` hook adding a system message and an `on_chunk` hook upper-casing
    streamed text, both logging each time they run."""

    @hw.before_model
    def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
        log.append("before")
        return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

    @hw.on_chunk
    def shout(chunk: hw.Chunk) -> hw.Chunk | None:
        if chunk.kind == "text":
            log.append("chunk")
            return chunk.replace(text=chunk.text.upper())
        return None

    return add_system, shout


def ended(log: list[str]) -> tuple[Any, Any]:
    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append(f"abort: {info.reason}")

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("finish")

    return aborted, finished


@hw.before_model
def cached(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond("from cache")


async def settle(done: Any) -> None:
    """Let the event loop run until `done()` holds (finalizers run a step later)."""
    for _ in range(50):
        if done():
            return
        await asyncio.sleep(0)


# -- openai -----------------------------------------------------------------------------------


def _openai() -> Any:
    return pytest.importorskip("openai")


def test_openai_async_parse_goes_through_the_hooks_once() -> None:
    openai = _openai()
    log: list[str] = []
    provider = FakeProvider(['{"city": "Paris", "degrees": 18}'])
    add_system, shout = counted(log)
    wrapped = hw.wrap(provider.openai(async_=True), use=[add_system, shout])

    async def main() -> Any:
        return await wrapped.chat.completions.parse(
            model="m", messages=USER, response_format=Weather
        )

    completion = asyncio.run(main())
    assert isinstance(completion, openai.types.chat.ParsedChatCompletion)
    assert completion.choices[0].message.parsed == Weather(city="Paris", degrees=18)
    assert log == ["before"]
    assert provider.requests[-1].body["messages"] == [SYSTEM, *USER]
    assert provider.requests[-1].body["response_format"]["type"] == "json_schema"


def test_openai_async_raw_response_keeps_headers_and_parse() -> None:
    openai = _openai()
    log: list[str] = []
    provider = FakeProvider([f"x {SECRET}"])
    add_system, _ = counted(log)

    @hw.after_model
    def redact(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.replace(SECRET, "[r]")))

    wrapped = hw.wrap(provider.openai(async_=True), use=[add_system, redact])

    async def main() -> tuple[Any, Any]:
        raw = await wrapped.chat.completions.with_raw_response.create(model="m", messages=USER)
        parsed = raw.parse()
        if inspect.isawaitable(parsed):
            parsed = await parsed
        return raw, parsed

    raw, completion = asyncio.run(main())
    assert raw.headers["content-type"].startswith("application/json")
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert completion.choices[0].message.content == "x [r]"
    assert log == ["before"]
    assert provider.requests[-1].body["messages"] == [SYSTEM, *USER]


def test_openai_async_streaming_response_parses_to_a_hooked_async_stream() -> None:
    openai = _openai()
    log: list[str] = []
    provider = FakeProvider(["abcdef"], chunk_size=2)
    wrapped = hw.wrap(provider.openai(async_=True), use=list(counted(log)))

    async def main() -> tuple[str, Any, str]:
        async with wrapped.chat.completions.with_streaming_response.create(
            model="m", messages=USER, stream=True
        ) as response:
            kind = response.headers["content-type"]
            stream = await response.parse()
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        return kind, stream, text

    kind, stream, text = asyncio.run(main())
    assert kind.startswith("text/event-stream")
    assert isinstance(stream, openai.AsyncStream)
    assert text == "ABCDEF"
    assert log == ["before", "chunk", "chunk", "chunk"]
    assert provider.requests[-1].body["messages"] == [SYSTEM, *USER]


def test_openai_raw_response_of_a_stream_parses_to_a_hooked_stream() -> None:
    openai = _openai()
    log: list[str] = []
    provider = FakeProvider(["abcdef"], chunk_size=3)
    wrapped = hw.wrap(provider.openai(), use=list(counted(log)))
    raw = wrapped.chat.completions.with_raw_response.create(model="m", messages=USER, stream=True)
    assert raw.headers["content-type"].startswith("text/event-stream")
    stream = raw.parse()
    assert isinstance(stream, openai.Stream)
    items = list(stream)
    assert all(isinstance(c, openai.types.chat.ChatCompletionChunk) for c in items)
    assert "".join(c.choices[0].delta.content or "" for c in items if c.choices) == "ABCDEF"
    assert log == ["before", "chunk", "chunk"]
    assert provider.requests[-1].body["messages"] == [SYSTEM, *USER]


def test_openai_async_with_options_and_copy_keep_the_hooks_and_the_type() -> None:
    openai = _openai()
    log: list[str] = []
    provider = FakeProvider()
    add_system, _ = counted(log)
    wrapped = hw.wrap(provider.openai(async_=True), use=[add_system])
    assert isinstance(wrapped, openai.AsyncOpenAI)
    clients = [wrapped.with_options(timeout=5), wrapped.copy(max_retries=0)]
    for client in clients:
        assert isinstance(client, openai.AsyncOpenAI)

    async def main() -> list[Any]:
        return [await c.chat.completions.create(model="m", messages=USER) for c in clients]

    completions = asyncio.run(main())
    assert all(isinstance(c, openai.types.chat.ChatCompletion) for c in completions)
    assert log == ["before", "before"]
    assert [r.body["messages"][0] for r in provider.requests] == [SYSTEM, SYSTEM]


def test_openai_respond_through_responses_create_streamed_and_not() -> None:
    openai = _openai()
    provider = FakeProvider()
    wrapped = hw.wrap(provider.openai(), use=[cached])
    response = wrapped.responses.create(model="m", input="hi")
    assert isinstance(response, openai.types.responses.Response)
    assert response.output_text == "from cache"
    stream = wrapped.responses.create(model="m", input="hi", stream=True)
    assert isinstance(stream, openai.Stream)
    events = list(stream)
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "from cache"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "from cache"
    assert provider.requests == []


def test_openai_respond_through_legacy_completions_streamed_and_not() -> None:
    openai = _openai()
    provider = FakeProvider()
    wrapped = hw.wrap(provider.openai(), use=[cached])
    completion = wrapped.completions.create(model="m", prompt="hi")
    assert isinstance(completion, openai.types.Completion)
    assert completion.choices[0].text == "from cache"
    stream = wrapped.completions.create(model="m", prompt="hi", stream=True)
    assert isinstance(stream, openai.Stream)
    items = list(stream)
    assert all(isinstance(c, openai.types.Completion) for c in items)
    assert "".join(c.choices[0].text for c in items if c.choices) == "from cache"
    assert provider.requests == []


def test_openai_respond_through_the_stream_helpers() -> None:
    openai = _openai()
    provider = FakeProvider()
    wrapped = hw.wrap(provider.openai(), use=[cached])
    with wrapped.chat.completions.stream(model="m", messages=USER) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == "from cache"
    assert isinstance(final, openai.types.chat.ParsedChatCompletion)
    assert final.choices[0].message.content == "from cache"
    with wrapped.responses.stream(model="m", input="hi") as rstream:
        rdeltas = [e.delta for e in rstream if e.type == "response.output_text.delta"]
        rfinal = rstream.get_final_response()
    assert "".join(rdeltas) == "from cache"
    assert rfinal.output_text == "from cache"
    assert provider.requests == []


def test_openai_respond_through_the_async_stream_helpers() -> None:
    openai = _openai()
    provider = FakeProvider()
    wrapped = hw.wrap(provider.openai(async_=True), use=[cached])

    async def main() -> tuple[str, Any, str]:
        manager = wrapped.chat.completions.stream(model="m", messages=USER)
        assert not inspect.iscoroutine(manager)  # still the SDK's async manager
        async with manager as stream:
            deltas = [e.delta async for e in stream if e.type == "content.delta"]
            final = await stream.get_final_completion()
        async with wrapped.responses.stream(model="m", input="hi") as rstream:
            await rstream.until_done()
            rfinal = await rstream.get_final_response()
        return "".join(deltas), final, rfinal.output_text

    text, final, rtext = asyncio.run(main())
    assert text == "from cache"
    assert isinstance(final, openai.types.chat.ParsedChatCompletion)
    assert final.choices[0].message.content == "from cache"
    assert rtext == "from cache"
    assert provider.requests == []


def test_openai_cancelling_the_consuming_task_closes_the_stream_and_aborts() -> None:
    _openai()
    log: list[str] = []
    provider = FakeProvider(["x" * 40], chunk_size=2)
    pulling = asyncio.Event()

    @hw.on_chunk
    async def slow(chunk: hw.Chunk) -> None:
        if chunk.kind == "text" and "chunk" in log:
            pulling.set()
            await asyncio.Event().wait()  # the task is cancelled while it pulls a chunk
        if chunk.kind == "text":
            log.append("chunk")

    wrapped = hw.wrap(provider.openai(async_=True), use=[*ended(log), slow])

    async def main() -> None:
        stream = await wrapped.chat.completions.create(model="m", messages=USER, stream=True)

        async def consume() -> None:
            async for _ in stream:
                pass

        task = asyncio.create_task(consume())
        await pulling.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert provider.closed == 1  # at once, not when collected

    asyncio.run(main())
    assert log == ["chunk", "abort: closed by consumer"]
    assert provider.closed == 1


def test_openai_cancelling_a_task_inside_async_with_closes_the_stream_and_aborts() -> None:
    _openai()
    log: list[str] = []
    provider = FakeProvider(["x" * 40], chunk_size=2)
    wrapped = hw.wrap(provider.openai(async_=True), use=list(ended(log)))
    got_one = asyncio.Event()

    async def main() -> None:
        stream = await wrapped.chat.completions.create(model="m", messages=USER, stream=True)

        async def consume() -> None:
            async with stream:
                async for _ in stream:
                    got_one.set()
                    await asyncio.Event().wait()

        task = asyncio.create_task(consume())
        await got_one.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert log == ["abort: closed by consumer"]
    assert provider.closed == 1


# -- anthropic --------------------------------------------------------------------------------


def _anthropic() -> Any:
    return pytest.importorskip("anthropic")


def system_of(body: dict[str, Any]) -> str | None:
    """The system prompt sent, whether as a str or as text blocks."""
    system = body.get("system")
    if system is None or isinstance(system, str):
        return system
    return "".join(block["text"] for block in system)


def test_anthropic_beta_stream_helper_goes_through_the_hooks() -> None:
    anthropic = _anthropic()
    log: list[str] = []
    provider = FakeProvider(["hello there"], chunk_size=4)
    wrapped = hw.wrap(provider.anthropic(), use=list(counted(log)))
    with wrapped.beta.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        assert isinstance(stream, anthropic.lib.streaming.BetaMessageStream)
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["HELL", "O TH", "ERE"]
    assert final.content[0].text == "HELLO THERE"
    assert log == ["before", "chunk", "chunk", "chunk"]
    assert system_of(provider.requests[-1].body) == "Be brief."


# some anthropic releases deprecate `output_format` on beta.messages.parse, still honouring it
@pytest.mark.filterwarnings("ignore:The 'output_format' parameter is deprecated:DeprecationWarning")
def test_anthropic_beta_parse_goes_through_the_hooks() -> None:
    _anthropic()
    from anthropic.resources.beta.messages import Messages

    if not hasattr(Messages, "parse"):
        pytest.skip("this anthropic release has no beta.messages.parse")
    log: list[str] = []
    provider = FakeProvider(['{"city": "Paris", "degrees": 18}'])

    @hw.after_model
    def colder(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        log.append("after")
        return response.replace(message=hw.Message.assistant(response.text.replace("18", "9")))

    add_system, _ = counted(log)
    wrapped = hw.wrap(provider.anthropic(), use=[add_system, colder])
    parsed = wrapped.beta.messages.parse(
        model="m", max_tokens=50, messages=USER, output_format=Weather
    )
    from anthropic.types.beta.parsed_beta_message import ParsedBetaMessage

    assert isinstance(parsed, ParsedBetaMessage)
    assert parsed.parsed_output == Weather(city="Paris", degrees=9)
    assert log == ["before", "after"]
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_anthropic_async_beta_create() -> None:
    anthropic = _anthropic()
    log: list[str] = []
    provider = FakeProvider(["beta"])
    add_system, _ = counted(log)
    wrapped = hw.wrap(provider.anthropic(async_=True), use=[add_system])
    message = asyncio.run(wrapped.beta.messages.create(model="m", max_tokens=10, messages=USER))
    assert isinstance(message, anthropic.types.beta.BetaMessage)
    assert message.content[0].text == "beta"
    assert log == ["before"]
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_anthropic_async_stream_helper_until_done() -> None:
    anthropic = _anthropic()
    log: list[str] = []
    provider = FakeProvider(["done it"], chunk_size=4)
    wrapped = hw.wrap(provider.anthropic(async_=True), use=list(counted(log)))

    async def main() -> tuple[Any, Any, str]:
        manager = wrapped.messages.stream(model="m", max_tokens=10, messages=USER)
        assert not inspect.iscoroutine(manager)  # still the SDK's async manager
        async with manager as stream:
            await stream.until_done()
            return manager, stream, await stream.get_final_text()

    manager, stream, text = asyncio.run(main())
    assert isinstance(manager, anthropic.lib.streaming.AsyncMessageStreamManager)
    assert isinstance(stream, anthropic.AsyncMessageStream)
    assert text == "DONE IT"
    assert log == ["before", "chunk", "chunk"]
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_anthropic_async_raw_response_keeps_headers_and_parse() -> None:
    anthropic = _anthropic()
    log: list[str] = []
    provider = FakeProvider(["raw"])
    add_system, _ = counted(log)
    wrapped = hw.wrap(provider.anthropic(async_=True), use=[add_system])

    async def main() -> tuple[Any, Any]:
        raw = await wrapped.messages.with_raw_response.create(
            model="m", max_tokens=10, messages=USER
        )
        parsed = raw.parse()
        if inspect.isawaitable(parsed):
            parsed = await parsed
        return raw, parsed

    raw, message = asyncio.run(main())
    assert raw.headers["content-type"].startswith("application/json")
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "raw"
    assert log == ["before"]
    assert system_of(provider.requests[-1].body) == "Be brief."


def test_anthropic_with_stream_as_s_is_the_sdk_stream_and_its_chunks_pass_on_chunk() -> None:
    anthropic = _anthropic()
    log: list[str] = []
    provider = FakeProvider(["hello there"], chunk_size=4)
    wrapped = hw.wrap(provider.anthropic(), use=list(counted(log)))
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as s:
        assert isinstance(s, anthropic.MessageStream)
        events = list(s)
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert deltas == ["HELL", "O TH", "ERE"]
    assert events[-1].type == "message_stop"
    assert log == ["before", "chunk", "chunk", "chunk"]


def test_anthropic_no_stray_attributes_on_sdk_objects() -> None:
    _anthropic()
    provider = FakeProvider(["plain", "hooked", "plain", "hooked", "plain", "hooked"])
    client = provider.anthropic()
    log: list[str] = []

    @hw.after_model
    def change(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text + "!"))

    add_system, shout = counted(log)
    wrapped = hw.wrap(client, use=[add_system, shout, change])

    plain = client.messages.create(model="m", max_tokens=10, messages=USER)
    hooked = wrapped.messages.create(model="m", max_tokens=10, messages=USER)
    assert hooked.content[0].text == "hooked!"
    assert set(vars(hooked)) == set(vars(plain))
    assert set(vars(hooked.content[0])) == set(vars(plain.content[0]))

    plain_stream = client.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    plain_events = list(plain_stream)
    stream = wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    events = list(stream)
    assert set(vars(stream)) == set(vars(plain_stream))
    assert [set(vars(e)) for e in events] == [set(vars(e)) for e in plain_events]

    with client.messages.stream(model="m", max_tokens=10, messages=USER) as plain_helper:
        plain_helper.until_done()
    with wrapped.messages.stream(model="m", max_tokens=10, messages=USER) as helper:
        helper.until_done()
    assert helper.get_final_text() == "HOOKED"
    assert set(vars(helper)) == set(vars(plain_helper))
    assert log.count("before") == 3


def test_anthropic_async_stream_closed_from_another_task() -> None:
    _anthropic()
    log: list[str] = []
    provider = FakeProvider(["x" * 40], chunk_size=2)
    wrapped = hw.wrap(provider.anthropic(async_=True), use=list(ended(log)))

    async def main() -> None:
        stream = await wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)

        async def read_one() -> None:
            async for _ in stream:
                break

        await asyncio.create_task(read_one())
        await asyncio.create_task(stream.close())  # another task, another context

    asyncio.run(main())
    assert log == ["abort: closed by consumer"]
    assert provider.closed == 1


def test_anthropic_respond_with_create_stream_true_sync_and_async() -> None:
    anthropic = _anthropic()
    provider = FakeProvider()
    wrapped = hw.wrap(provider.anthropic(), use=[cached])
    stream = wrapped.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    assert isinstance(stream, anthropic.Stream)
    events = list(stream)
    assert events[0].type == "message_start"
    assert events[-1].type == "message_stop"
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == "from cache"

    awrapped = hw.wrap(provider.anthropic(async_=True), use=[cached])

    async def main() -> tuple[Any, list[Any]]:
        astream = await awrapped.messages.create(
            model="m", max_tokens=10, messages=USER, stream=True
        )
        return astream, [e async for e in astream]

    astream, aevents = asyncio.run(main())
    assert isinstance(astream, anthropic.AsyncStream)
    assert [e.type for e in aevents] == [e.type for e in events]
    atext = "".join(e.delta.text for e in aevents if e.type == "content_block_delta")
    assert atext == "from cache"
    assert provider.requests == []


def test_anthropic_patch_twice_is_a_no_op_and_unpatch_restores_exactly() -> None:
    _anthropic()
    from anthropic import _base_client

    classes = (_base_client.SyncAPIClient, _base_client.AsyncAPIClient)
    before = {cls: dict(cls.__dict__) for cls in classes}
    log: list[str] = []
    add_system, _ = counted(log)
    provider = FakeProvider()
    try:
        hw.patch("anthropic", use=[add_system])
        patched = {cls: dict(cls.__dict__) for cls in classes}
        hw.patch("anthropic", use=[add_system])  # the same hooks again: nothing changes
        for cls in classes:
            again = dict(cls.__dict__)
            assert again.keys() == patched[cls].keys()
            assert all(again[name] is patched[cls][name] for name in again)
            assert cls.__dict__["request"] is not before[cls]["request"]
        provider.anthropic().messages.create(model="m", max_tokens=10, messages=USER)
        asyncio.run(
            provider.anthropic(async_=True).messages.create(model="m", max_tokens=10, messages=USER)
        )
        assert log == ["before", "before"]  # once per call, not once per patch
        assert [system_of(r.body) for r in provider.requests] == ["Be brief.", "Be brief."]
    finally:
        hw.unpatch("anthropic")
    for cls in classes:
        after = dict(cls.__dict__)
        assert after.keys() == before[cls].keys()
        assert all(after[name] is before[cls][name] for name in after)
    provider.anthropic().messages.create(model="m", max_tokens=10, messages=USER)
    assert "system" not in provider.requests[-1].body
    assert log == ["before", "before"]


# -- google-genai -----------------------------------------------------------------------------


def test_google_aio_break_then_aclose_closes_the_stream_and_aborts() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    log: list[str] = []
    provider = FakeProvider(["a" * 40], chunk_size=2)
    add_system, shout = counted(log)
    wrapped = hw.wrap(provider.genai(), use=[*ended(log), add_system, shout])

    async def main() -> list[Any]:
        made = await wrapped.aio.models.generate_content_stream(model="gemini", contents="hi")
        assert inspect.isasyncgen(made)
        stream = cast("AsyncGenerator[types.GenerateContentResponse, None]", made)
        got = []
        async for chunk in stream:
            got.append(chunk)
            break
        await stream.aclose()
        await settle(lambda: provider.closed == 1)
        return got

    got = asyncio.run(main())
    assert isinstance(got[0], types.GenerateContentResponse)
    assert got[0].text == "AA"
    assert log == ["before", "chunk", "abort: closed by consumer"]
    assert provider.closed == 1
    assert provider.requests[-1].body["systemInstruction"] == {
        "parts": [{"text": "Be brief."}],
        "role": "user",
    }


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_hooked_stream_hands_the_sdk_its_events_without_decoding_them_again(
    sdk: str, is_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hookwrap has read and parsed every event already; the SDK stream takes them as they
    are, not as bytes to split into lines and parse a second time."""
    streaming = pytest.importorskip(f"{sdk}._streaming")

    def refused(self: Any, iterator: Any) -> Any:
        raise AssertionError("the SDK decoded a stream hookwrap had decoded already")

    monkeypatch.setattr(streaming.SSEDecoder, "iter_bytes", refused)
    monkeypatch.setattr(streaming.SSEDecoder, "aiter_bytes", refused)
    log: list[str] = []
    provider = FakeProvider(["hello there", "again"], chunk_size=3)
    client = getattr(provider, sdk)(async_=is_async)
    wrapped = hw.wrap(client, use=[*counted(log), *ended(log)])

    def create(target: Any) -> Any:
        if sdk == "openai":
            return target.chat.completions.create(model="m", messages=USER, stream=True)
        return target.messages.create(model="m", max_tokens=9, messages=USER, stream=True)

    def text_of(items: list[Any]) -> str:
        if sdk == "openai":
            return "".join(c.choices[0].delta.content or "" for c in items if c.choices)
        return "".join(e.delta.text for e in items if e.type == "content_block_delta")

    async def read_async(target: Any = wrapped, first: bool = False) -> list[Any]:
        stream = await create(target)
        if first:
            return [await stream.__anext__()]
        return [item async for item in stream]

    items = asyncio.run(read_async()) if is_async else list(create(wrapped))
    assert text_of(items) == "HELLO THERE"
    assert log.count("finish") == 1
    assert "abort" not in " ".join(log)
    with pytest.raises(AssertionError, match="decoded already"):  # the check bites
        if is_async:
            asyncio.run(read_async(client, first=True))
        else:
            next(iter(create(client)))


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("change", ["flag", "other", "nothing"])
def test_extra_body_is_in_the_request_hooks_see_and_their_change_to_it_is_sent(
    sdk: str, change: str
) -> None:
    """`extra_body` keys go into the JSON body the SDK sends: hooks see them in
    `request.options` and may change them, as any other key."""
    pytest.importorskip(sdk)
    seen: list[Any] = []

    @hw.before_model
    def vendor(request: hw.ModelRequest) -> hw.ModelRequest | None:
        seen.append(request.options.get("vendor_flag"))
        if change == "flag":
            return request.replace(options={**request.options, "vendor_flag": "from the hook"})
        if change == "other":
            return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))
        return None

    provider = FakeProvider(["ok"])
    wrapped = hw.wrap(getattr(provider, sdk)(), use=[vendor])
    extra = {"extra_body": {"vendor_flag": "from the caller"}}
    if sdk == "openai":
        wrapped.chat.completions.create(model="m", messages=USER, **extra)
    else:
        wrapped.messages.create(model="m", max_tokens=9, messages=USER, **extra)
    assert seen == ["from the caller"]
    sent = provider.requests[-1].body
    assert sent["vendor_flag"] == ("from the hook" if change == "flag" else "from the caller")
    if change == "other":
        assert "Be brief." in json.dumps(sent)


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_response_hooks_changed_or_made_keeps_its_elapsed_time(sdk: str) -> None:
    """httpx times a response when it is closed (`.elapsed`); one made from what hooks
    changed takes the time of the one received, and one a hook answered, zero."""
    module = pytest.importorskip(sdk)

    @hw.after_model
    def shout(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=response.message.replace(content=response.text.upper()))

    @hw.on_chunk
    def shout_chunk(chunk: hw.Chunk) -> hw.Chunk | None:
        return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None

    def create(client: Any, **options: Any) -> Any:
        if sdk == "openai":
            return client.chat.completions.create(model="m", messages=USER, **options)
        return client.messages.create(model="m", max_tokens=9, messages=USER, **options)

    def raw(client: Any) -> Any:
        resource = client.chat.completions if sdk == "openai" else client.messages
        kwargs: dict[str, Any] = {"model": "m", "messages": USER}
        if sdk == "anthropic":
            kwargs["max_tokens"] = 9
        return resource.with_raw_response.create(**kwargs)

    provider = FakeProvider(["hello there"], chunk_size=3)
    with provider.serve() as url:
        base = f"{url}/v1" if sdk == "openai" else url
        make = module.OpenAI if sdk == "openai" else module.Anthropic
        client = make(api_key="k", base_url=base, max_retries=0)
        changed = hw.wrap(client, use=[shout, shout_chunk])
        stream = create(changed, stream=True)
        list(stream)
        assert stream.response.elapsed.total_seconds() > 0
        assert raw(changed).elapsed.total_seconds() > 0
        cached = hw.wrap(client, use=[cached_answer])
        stream = create(cached, stream=True)
        list(stream)
        assert stream.response.elapsed.total_seconds() == 0
        assert raw(cached).elapsed.total_seconds() == 0
        client.close()


@hw.before_model
def cached_answer(request: hw.ModelRequest) -> hw.Respond:
    return hw.Respond("from cache")


def stream_of(client: Any, sdk: str) -> Any:
    """A streamed call of an OpenAI or Anthropic `client` (awaited, for an async one)."""
    if sdk == "openai":
        return client.chat.completions.create(model="m", messages=USER, stream=True)
    return client.messages.create(model="m", max_tokens=9, messages=USER, stream=True)


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("how", ["break", "drop unread"])
def test_a_dropped_sdk_stream_is_closed_at_once_not_by_the_garbage_collector(
    sdk: str, how: str, no_gc: None
) -> None:
    """OpenAI's `Stream` (and older Anthropic releases') holds itself in a reference cycle
    through its iterator; the hooked one does not, so leaving it ends the call at once."""
    pytest.importorskip(sdk)
    log: list[str] = []
    provider = FakeProvider(["a long answer to read"], chunk_size=2)
    wrapped = hw.wrap(getattr(provider, sdk)(), use=[*ended(log)])
    stream = stream_of(wrapped, sdk)
    if how == "break":
        for _ in stream:
            break
    del stream
    assert log == ["abort: closed by consumer"]
    assert provider.closed == 1


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("when", ["in the loop", "as the loop ends"])
def test_an_async_sdk_stream_left_by_break_is_closed_by_the_loop_not_the_collector(
    sdk: str, when: str, no_gc: None
) -> None:
    """Dropped, it is closed by the loop's finalizer for async generators a few steps
    later; left when `asyncio.run`'s coroutine returns, by the loop as it shuts down. Each
    ends the run with `on_abort` once, and no generator is started after that shutdown."""
    pytest.importorskip(sdk)
    log: list[str] = []
    provider = FakeProvider(["a long answer to read"], chunk_size=2)
    wrapped = hw.wrap(getattr(provider, sdk)(async_=True), use=[*ended(log)])

    async def main() -> None:
        stream = await stream_of(wrapped, sdk)
        async for _ in stream:
            break
        if when == "in the loop":
            del stream
            await settle(lambda: log)
            assert log == ["abort: closed by consumer"]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
    assert [str(w.message) for w in caught] == []
    assert log == ["abort: closed by consumer"]
    assert provider.closed == 1


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_wrapped_client_follows_patch_and_unpatch_made_after_it(sdk: str) -> None:
    """A client wrapped before `hw.patch` runs the patched hooks too (inside its own), as
    every client of the SDK does; one wrapped while patched keeps working after
    `hw.unpatch`, with its own hooks only."""
    pytest.importorskip(sdk)
    log: list[str] = []

    @hw.before_model
    def own(request: hw.ModelRequest) -> None:
        log.append("own")

    @hw.before_model
    def patched(request: hw.ModelRequest) -> None:
        log.append("patched")

    raw = getattr(FakeProvider(), sdk)()

    def call(client: Any) -> list[str]:
        log.clear()
        if sdk == "openai":
            client.chat.completions.create(model="m", messages=USER)
        else:
            client.messages.create(model="m", max_tokens=5, messages=USER)
        return list(log)

    before = hw.wrap(raw, use=[own])
    hw.patch(sdk, use=[patched])
    try:
        assert call(before) == ["own", "patched"]
        during = hw.wrap(raw, use=[own])
        assert call(during) == ["own", "patched"]
    finally:
        hw.unpatch(sdk)
    assert call(during) == ["own"]
    assert call(before) == ["own"]
    assert call(raw) == []


def test_patching_from_many_threads_at_once_patches_once() -> None:
    """Threads patching the same SDK with the same hooks at once: one patch, which
    `hw.unpatch` takes off exactly (without the lock, two could stack, and the second
    took the first one's method for the SDK's own)."""
    openai = pytest.importorskip("openai")
    import sys
    import threading

    @hw.before_model
    def noted(request: hw.ModelRequest) -> None:
        return None

    base = openai._base_client.SyncAPIClient.__dict__["request"]
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def patch() -> None:
        barrier.wait()
        try:
            hw.patch("openai", use=[noted])
        except BaseException as exc:  # pragma: no cover - what the test looks for
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=patch) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        hw.unpatch("openai")
    assert errors == []
    assert openai._base_client.SyncAPIClient.__dict__["request"] is base


@pytest.mark.parametrize("sdk", ["openai", "openai stream", "anthropic"])
def test_unpatching_while_a_call_is_under_way_lets_it_end_through_the_hooks(sdk: str) -> None:
    """`hw.unpatch` (and a new `hw.patch`) while a call waits for its answer in another
    thread: the call ends as it began, through the hooks, and once it has, the SDK's
    methods are back exactly."""
    import threading

    name = sdk.split()[0]
    module = pytest.importorskip(name)
    classes = (module._base_client.SyncAPIClient, module._base_client.AsyncAPIClient)
    before = {cls: dict(cls.__dict__) for cls in classes}
    inside, go = threading.Event(), threading.Event()

    def answer(request: hw.ModelRequest) -> str:
        inside.set()
        go.wait(5)
        return "fine"

    log: list[str] = []
    add_system, _ = counted(log)
    provider = FakeProvider([answer])
    got: list[Any] = []

    def call() -> None:
        try:
            if sdk == "openai":
                made = provider.openai().chat.completions.create(model="m", messages=USER)
                got.append(made.choices[0].message.content)
            elif sdk == "openai stream":
                stream = provider.openai().chat.completions.create(
                    model="m", messages=USER, stream=True
                )
                got.append("".join(c.choices[0].delta.content or "" for c in stream))
            else:
                message = provider.anthropic().messages.create(
                    model="m", max_tokens=9, messages=USER
                )
                got.append(message.content[0].text)
        except Exception as exc:  # pragma: no cover - what the test looks for
            got.append(exc)

    hw.patch(name, use=[add_system])
    try:
        thread = threading.Thread(target=call)
        thread.start()
        assert inside.wait(5)
        hw.unpatch(name)
        hw.patch(name, use=[add_system])  # patched anew before the call under way ends
        hw.unpatch(name)
        go.set()
        thread.join(5)
    finally:
        go.set()
        hw.unpatch(name)
    assert got == ["fine"]
    assert log == ["before"]
    assert "Be brief." in json.dumps(provider.requests[-1].body)
    for cls in classes:
        after = dict(cls.__dict__)
        assert after.keys() == before[cls].keys()
        assert all(after[key] is before[cls][key] for key in after)


def test_extra_body_keys_marked_omit_are_left_out_as_the_sdk_leaves_them() -> None:
    openai = pytest.importorskip("openai")
    seen: list[dict[str, Any]] = []

    @hw.before_model
    def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(dict(request.options))
        return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

    provider = FakeProvider(["ok"])
    wrapped = hw.wrap(provider.openai(), use=[add_system])
    extra = {"temperature": openai.omit, "top_k": 3}
    wrapped.chat.completions.create(model="m", messages=USER, temperature=0.5, extra_body=extra)
    assert seen == [{"top_k": 3}]
    sent = provider.requests[-1].body
    assert sent["top_k"] == 3
    assert "temperature" not in sent


def test_a_call_that_found_the_patch_before_an_unpatch_goes_to_the_sdk_alone() -> None:
    """A thread may look the patched method up, then lose the processor to `hw.unpatch`
    before its call starts: the call then goes to the SDK as if never patched."""
    openai = pytest.importorskip("openai")
    log: list[str] = []
    add_system, _ = counted(log)
    provider = FakeProvider(["fine"])
    client = provider.openai()
    hw.patch("openai", use=[add_system])
    try:
        found = openai._base_client.SyncAPIClient.request  # looked up while patched
    finally:
        hw.unpatch("openai")
    from openai.types.chat import ChatCompletion

    options = openai._models.FinalRequestOptions.construct(
        method="post", url="/chat/completions", json_data={"model": "m", "messages": USER}
    )
    completion = found(client, ChatCompletion, options)
    assert completion.choices[0].message.content == "fine"
    assert log == []  # unpatched: no hook ran
