"""The real `openai` SDK, wrapped, against the fake provider: every entry point goes
through the hooks once per logical call and returns the SDK's own objects."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from new_chunks import own_chunks

import hookwrap as hw
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

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
    message = hw.Message.assistant(response.text.replace(SECRET, "[redacted]"))
    return response.replace(message=message)


def run(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


def streamed(make: Any) -> tuple[Any, list[Any]]:
    """Make a stream and read it all, in one event loop when the client is async."""

    async def read() -> tuple[Any, list[Any]]:
        stream = await make()
        return stream, [item async for item in stream]

    made = make()
    if inspect.isawaitable(made):
        made.close()  # type: ignore[attr-defined]
        return asyncio.run(read())
    return made, list(made)


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return request.param == "async"


def test_wrapped_client_is_still_an_openai_client_and_the_original_is_untouched() -> None:
    provider = FakeProvider()
    client = provider.openai()
    wrapped = hw.wrap(client, use=[add_system])
    assert isinstance(wrapped, openai.OpenAI)
    assert wrapped.api_key == client.api_key
    assert "request" not in vars(client)
    client.chat.completions.create(model="m", messages=USER)
    assert provider.requests[-1].body["messages"] == USER  # the original has no hooks
    wrapped.chat.completions.create(model="m", messages=USER)
    assert provider.requests[-1].body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_wrapped_clients_attributes_are_its_hooked_copys_to_read_set_and_delete() -> None:
    from hookwrap.adapters._apiclient import ClientProxy

    wrapped = hw.wrap(FakeProvider().openai(), use=[add_system])
    hooked = wrapped.__wrapped__
    assert type(wrapped) is not ClientProxy  # a subclass naming the client's attributes
    assert "chat" in type(wrapped).__dict__
    assert wrapped.chat is hooked.chat
    assert wrapped.completions is hooked.completions
    assert wrapped.with_options is not hooked.with_options  # the proxy's own: keeps hooks
    wrapped.max_retries = 7  # a named attribute: set on the client, not on the proxy
    assert hooked.max_retries == 7
    wrapped.note = "mine"  # any other attribute too, as a proxy does
    assert hooked.note == "mine"
    del wrapped.note
    assert not hasattr(hooked, "note")
    with pytest.raises(AttributeError, match="no attribute 'not_there'"):
        wrapped.not_there  # noqa: B018
    again = hw.wrap(FakeProvider().openai(), use=[add_system])
    assert type(again) is type(wrapped)  # one proxy class per client class


def test_create_sends_what_before_model_wrote_and_returns_a_native_completion(
    is_async: bool,
) -> None:
    provider = FakeProvider([f"the key is {SECRET}"])
    wrapped = hw.wrap(provider.openai(async_=is_async), use=[add_system, redact_answer])
    completion = run(wrapped.chat.completions.create(model="m", messages=USER))
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert completion.choices[0].message.content == "the key is [redacted]"
    sent = provider.requests[-1].body
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, *USER]
    assert sent["model"] == "m"


def test_stream_chunks_pass_on_chunk_and_stay_native(is_async: bool) -> None:
    provider = FakeProvider([f"a {SECRET} b"], chunk_size=3)
    seen: list[hw.ModelResponse] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    wrapped = hw.wrap(provider.openai(async_=is_async), use=[redact, record])
    stream, items = streamed(
        lambda: wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    )
    expected = openai.AsyncStream if is_async else openai.Stream
    assert isinstance(stream, expected)
    assert all(isinstance(c, openai.types.chat.ChatCompletionChunk) for c in items)
    text = "".join(c.choices[0].delta.content or "" for c in items if c.choices)
    # the fake splits the secret over several chunks: per-chunk redaction cannot see it
    assert text == f"a {SECRET} b"
    assert [r.text for r in seen] == [text]


def test_a_chunk_holding_the_whole_secret_is_rewritten_in_the_native_chunk() -> None:
    provider = FakeProvider([SECRET], chunk_size=len(SECRET))
    wrapped = hw.wrap(provider.openai(), use=[redact])
    items = list(wrapped.chat.completions.create(model="m", messages=USER, stream=True))
    texts = [c.choices[0].delta.content for c in items if c.choices and c.choices[0].delta.content]
    assert texts == ["[redacted]"]
    assert all(type(c) is openai.types.chat.ChatCompletionChunk for c in items)


def test_respond_answers_without_any_http_request(is_async: bool) -> None:
    provider = FakeProvider()

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    wrapped = hw.wrap(provider.openai(async_=is_async), use=[cached])
    completion = run(wrapped.chat.completions.create(model="m", messages=USER))
    assert completion.choices[0].message.content == "from cache"
    _, items = streamed(
        lambda: wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in items if c.choices) == "from cache"
    assert provider.requests == []


def test_raw_response_keeps_headers_and_parse() -> None:
    provider = FakeProvider([f"x {SECRET}"])
    wrapped = hw.wrap(provider.openai(), use=[redact_answer])
    raw = wrapped.chat.completions.with_raw_response.create(model="m", messages=USER)
    assert raw.headers["content-type"].startswith("application/json")
    assert raw.parse().choices[0].message.content == "x [redacted]"


def test_streaming_response_keeps_headers_and_parses_to_a_stream() -> None:
    provider = FakeProvider(["abcdef"], chunk_size=2)
    calls: list[str] = []

    @hw.on_chunk
    def upper(chunk: hw.Chunk) -> hw.Chunk | None:
        calls.append(chunk.kind)
        return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None

    wrapped = hw.wrap(provider.openai(), use=[upper])
    with wrapped.chat.completions.with_streaming_response.create(
        model="m", messages=USER, stream=True
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = response.parse()
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "ABCDEF"
    assert "text" in calls


@pytest.mark.parametrize("stream", [True, False])
def test_a_response_the_hooks_hand_on_keeps_the_headers_as_received(stream: bool) -> None:
    """The response an answer the hooks changed goes on in (a stream's chunks, a whole answer
    written anew) carries the headers that came, each as often as it came and as sent
    (a value that is not ASCII too), less those its body no longer fits."""
    import httpx2

    fake = FakeProvider([f"x {SECRET}"]).transport()
    note = "é€".encode()

    def handle(request: Any) -> Any:
        answer = fake.handle_request(request)
        sent = [(b"set-cookie", b"a=1"), (b"set-cookie", b"b=2"), (b"x-note", note)]
        if not stream:
            sent.append((b"content-length", str(len(answer.read())).encode()))
            return httpx2.Response(
                200, headers=[*answer.headers.raw, *sent], content=answer.content
            )
        return httpx2.Response(200, headers=[*answer.headers.raw, *sent], stream=answer.stream)

    client = openai.OpenAI(
        api_key="k",
        base_url="http://fake.invalid/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
    )

    @hw.on_chunk
    def shout(chunk: hw.Chunk) -> hw.Chunk | None:
        return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None

    wrapped = hw.wrap(client, use=[shout, redact_answer])  # each answer goes on anew
    with wrapped.chat.completions.with_streaming_response.create(
        model="m", messages=USER, stream=stream
    ) as response:
        assert response.headers.get_list("set-cookie") == ["a=1", "b=2"]
        assert response.headers["x-note"] == note.decode()
        if stream:
            assert "content-length" not in response.headers
            parsed = response.parse()
            text = "".join(c.choices[0].delta.content or "" for c in parsed if c.choices)
        else:
            text = response.parse().choices[0].message.content
            assert int(response.headers["content-length"]) == len(response.read())
    assert text == ("X SK-LIVE-1234" if stream else "x [redacted]")


def test_stream_helper_and_final_completion_see_the_hooks(is_async: bool) -> None:
    provider = FakeProvider([f"one {SECRET}"], chunk_size=100)
    wrapped = hw.wrap(provider.openai(async_=is_async), use=[redact, add_system])

    async def async_helper() -> str:
        async with wrapped.chat.completions.stream(model="m", messages=USER) as stream:
            async for _ in stream:
                pass
            final = await stream.get_final_completion()
        return str(final.choices[0].message.content)

    if is_async:
        text = asyncio.run(async_helper())
    else:
        with wrapped.chat.completions.stream(model="m", messages=USER) as stream:
            for _ in stream:
                pass
            text = str(stream.get_final_completion().choices[0].message.content)
    assert text == "one [redacted]"
    assert provider.requests[-1].body["messages"][0]["role"] == "system"


def test_parse_goes_through_the_hooks() -> None:
    provider = FakeProvider(['{"city": "Paris", "degrees": 18}'])
    seen: list[str] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        degrees: int

    wrapped = hw.wrap(provider.openai(), use=[add_system, look])
    completion = wrapped.chat.completions.parse(model="m", messages=USER, response_format=Weather)
    assert completion.choices[0].message.parsed == Weather(city="Paris", degrees=18)
    assert seen == ['{"city": "Paris", "degrees": 18}']
    assert provider.requests[-1].body["messages"][0]["role"] == "system"


def test_responses_api_create_and_stream(is_async: bool) -> None:
    provider = FakeProvider([f"r {SECRET}", f"s {SECRET}"], chunk_size=100)
    wrapped = hw.wrap(provider.openai(async_=is_async), use=[add_system, redact, redact_answer])
    response = run(wrapped.responses.create(model="m", input="hi"))
    assert response.output_text == "r [redacted]"
    _, events = streamed(lambda: wrapped.responses.create(model="m", input="hi", stream=True))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "s [redacted]"
    # the closing events repeat the text: they carry what the deltas delivered
    done = [e.text for e in events if e.type == "response.output_text.done"]
    completed = [e.response.output_text for e in events if e.type == "response.completed"]
    assert done == completed == ["s [redacted]"]
    sent = provider.requests[-1].body
    assert "Be brief." in str(sent.get("instructions", "")) + str(sent.get("input", ""))


def test_with_options_and_copy_keep_the_hooks() -> None:
    provider = FakeProvider()
    wrapped = hw.wrap(provider.openai(), use=[add_system])
    for client in (wrapped.with_options(timeout=5), wrapped.copy(max_retries=0)):
        assert isinstance(client, openai.OpenAI)
        client.chat.completions.create(model="m", messages=USER)
        assert provider.requests[-1].body["messages"][0]["content"] == "Be brief."


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_wrapped_client_used_with_with_is_the_wrapped_client(sdk: str) -> None:
    """`with hw.wrap(OpenAI()) as client:` gives the wrapped client, whose `with_options()`
    and `copy()` keep the hooks (the SDK's own `__enter__` gave the copy behind it)."""
    pytest.importorskip(sdk)
    provider = FakeProvider()

    def asked(client: Any) -> None:
        if sdk == "openai":
            client.chat.completions.create(model="m", messages=USER)
        else:
            client.messages.create(model="m", max_tokens=9, messages=USER)
        sent = provider.requests[-1].body
        assert (sent.get("system") or sent["messages"][0]["content"]) == "Be brief."

    made = provider.openai() if sdk == "openai" else provider.anthropic()
    wrapped = hw.wrap(made, use=[add_system])
    with wrapped as client:
        assert client is wrapped
        for derived in (client, client.with_options(timeout=5), client.copy()):
            asked(derived)

    async def main() -> None:
        made = provider.openai(True) if sdk == "openai" else provider.anthropic(True)
        wrapped = hw.wrap(made, use=[add_system])
        async with wrapped as client:
            assert client is wrapped

    asyncio.run(main())


def test_wrapping_a_wrapped_client_adds_the_new_stack_outside() -> None:
    provider = FakeProvider()
    log: list[str] = []

    def tag(name: str) -> Any:
        @hw.before_model(name=name)
        def hook(request: hw.ModelRequest) -> hw.ModelRequest:
            log.append(name)
            return request.replace(messages=(*request.messages, hw.Message.user(name)))

        return hook

    inner = hw.wrap(provider.openai(), use=[tag("inner")])
    outer = hw.wrap(inner, use=[tag("outer")])
    outer.chat.completions.create(model="m", messages=USER)
    assert log == ["outer", "inner"]
    assert [m["content"] for m in provider.requests[-1].body["messages"]] == [
        "hi",
        "outer",
        "inner",
    ]
    assert len(provider.requests) == 1


def test_sdk_retries_stay_inside_one_hooked_call() -> None:
    provider = FakeProvider(["ok"])
    provider.fail(503, times=1)
    log: list[str] = []

    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        log.append("before")

    wrapped = hw.wrap(provider.openai(max_retries=2), use=[count])
    completion = wrapped.with_options(timeout=5).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "ok"
    assert len(provider.requests) == 2
    assert log == ["before"]


def test_breaking_out_of_a_stream_closes_it_and_ends_the_run_with_on_abort() -> None:
    provider = FakeProvider(["a" * 40], chunk_size=2)
    ends: list[str] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ends.append(f"abort: {info.reason}")

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ends.append("finish")

    wrapped = hw.wrap(provider.openai(), use=[aborted, finished])
    stream = wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    for _ in stream:
        break
    stream.close()
    assert ends == ["abort: closed by consumer"]
    assert provider.closed == 1


def test_non_model_requests_pass_through_untouched() -> None:
    provider = FakeProvider()
    log: list[str] = []

    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        log.append("before")

    wrapped = hw.wrap(provider.openai(max_retries=0), use=[count])
    with pytest.raises(openai.APIStatusError):
        wrapped.models.list()  # the fake knows no /models: a 404, and no hook ran
    assert log == []


def test_sync_client_refuses_async_hooks_when_wrapped() -> None:
    @hw.before_model
    async def check(request: hw.ModelRequest) -> None:
        return None

    with pytest.raises(TypeError, match="check"):
        hw.wrap(FakeProvider().openai(), use=[check])


# -- hw.patch ---------------------------------------------------------------------------------


@pytest.fixture
def unpatched() -> Any:
    yield
    hw.unpatch()


@pytest.mark.usefixtures("unpatched")
def test_patch_reaches_clients_made_before_it_and_unpatch_restores_exactly() -> None:
    from openai import _base_client

    before = {
        cls: (cls.__dict__["request"], cls.__dict__["_process_response"])
        for cls in (_base_client.SyncAPIClient, _base_client.AsyncAPIClient)
    }
    provider = FakeProvider()
    early = provider.openai()
    early_async = provider.openai(async_=True)
    hw.patch("openai", use=[add_system])
    hw.patch("openai", use=[add_system])  # twice: a no-op
    early.chat.completions.create(model="m", messages=USER)
    assert [m["role"] for m in provider.requests[-1].body["messages"]] == ["system", "user"]
    asyncio.run(early_async.chat.completions.create(model="m", messages=USER))
    assert [m["role"] for m in provider.requests[-1].body["messages"]] == ["system", "user"]
    hw.unpatch("openai")
    after = {
        cls: (cls.__dict__["request"], cls.__dict__["_process_response"])
        for cls in (_base_client.SyncAPIClient, _base_client.AsyncAPIClient)
    }
    assert after == before
    early.chat.completions.create(model="m", messages=USER)
    assert [m["role"] for m in provider.requests[-1].body["messages"]] == ["user"]


@pytest.mark.usefixtures("unpatched")
def test_patch_refuses_call_next_wrap_hooks_and_other_hooks_on_a_patched_sdk() -> None:
    @hw.wrap_model
    def timed(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match="generator form"):
        hw.patch("openai", use=[timed])
    hw.patch("openai", use=[add_system])
    with pytest.raises(ValueError, match="unpatch"):
        hw.patch("openai", use=[redact])
    with pytest.raises(ValueError, match="knows the SDKs"):
        hw.patch("no-such-sdk")
    with pytest.raises(TypeError, match=r"takes an SDK's name, one of .* \(got int: 42\)"):
        hw.patch(42)  # type: ignore[arg-type]


@pytest.mark.usefixtures("unpatched")
def test_patch_serves_generator_form_wrap_hooks_sync_and_async() -> None:
    log: list[str] = []

    @hw.wrap_model
    def around(request: hw.ModelRequest) -> Any:
        log.append("in")
        response = yield request
        log.append("out")
        return response

    provider = FakeProvider()
    hw.patch("openai", use=[around])
    provider.openai().chat.completions.create(model="m", messages=USER)
    asyncio.run(provider.openai(async_=True).chat.completions.create(model="m", messages=USER))
    assert log == ["in", "out", "in", "out"]


def test_through_a_real_loopback_server() -> None:
    provider = FakeProvider([f"over http {SECRET}"])
    with (
        provider.serve() as url,
        openai.OpenAI(api_key="test", base_url=f"{url}/v1", max_retries=0) as client,
    ):
        wrapped = hw.wrap(client, use=[add_system, redact_answer])
        completion = wrapped.chat.completions.create(model="m", messages=USER)
        stream = wrapped.chat.completions.create(model="m", messages=USER, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert completion.choices[0].message.content == "over http [redacted]"
    assert text.startswith("You said: hi")
    assert provider.requests[0].body["messages"][0]["role"] == "system"


def test_a_chat_stream_of_new_chunks_is_framed_for_the_stream_helper(is_async: bool) -> None:
    @hw.wrap_model
    def own_stream(request: hw.ModelRequest) -> Any:
        return own_chunks((yield request), "call_1")

    wrapped = hw.wrap(FakeProvider(["the model's own"]).openai(async_=is_async), use=[own_stream])
    messages = [{"role": "user", "content": "hi"}]

    async def helper_async() -> tuple[list[Any], Any]:
        async with wrapped.chat.completions.stream(model="m", messages=messages) as stream:
            chunks = [event.chunk async for event in stream if event.type == "chunk"]
            return chunks, await stream.get_final_completion()

    if is_async:
        chunks, final = asyncio.run(helper_async())
    else:
        with wrapped.chat.completions.stream(model="m", messages=messages) as stream:
            chunks = [event.chunk for event in stream if event.type == "chunk"]
            final = stream.get_final_completion()
    assert len({c.id for c in chunks}) == 1  # one completion, as the API streams it
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    message = final.choices[0].message
    assert message.content == "Let me look."
    assert message.tool_calls is not None
    assert (message.tool_calls[0].id, message.tool_calls[0].function.name) == ("call_1", "weather")
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.model == "m"


def test_a_responses_stream_of_new_chunks_is_framed_for_the_stream_helper(
    is_async: bool,
) -> None:
    @hw.wrap_model
    def own_stream(request: hw.ModelRequest) -> Any:
        return own_chunks((yield request), "call_1")

    wrapped = hw.wrap(FakeProvider(["the model's own"]).openai(async_=is_async), use=[own_stream])

    async def helper_async() -> tuple[list[str], Any]:
        async with wrapped.responses.stream(model="m", input="hi") as stream:
            kinds = [event.type async for event in stream]
            return kinds, await stream.get_final_response()

    if is_async:
        kinds, final = asyncio.run(helper_async())
    else:
        with wrapped.responses.stream(model="m", input="hi") as stream:
            kinds, final = [event.type for event in stream], stream.get_final_response()
    assert (kinds[0], kinds[-1]) == ("response.created", "response.completed")
    assert final.output_text == "Let me look."
    assert [item.type for item in final.output] == ["message", "function_call"]
    call = final.output[1]
    assert (call.call_id, call.name, call.arguments) == ("call_1", "weather", '{"city": "Paris"}')
    assert final.status == "completed"


def test_responses_stream_helper_parse_and_legacy_completions(is_async: bool) -> None:
    provider = FakeProvider(
        [f"helper {SECRET}", '{"city": "Oslo", "degrees": 3}', f"legacy {SECRET}"],
        chunk_size=100,
    )
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        degrees: int

    wrapped = hw.wrap(provider.openai(async_=is_async), use=[redact, redact_answer, add_system])

    async def async_calls() -> tuple[str, Any, str]:
        async with wrapped.responses.stream(model="m", input="hi") as stream:
            async for _ in stream:
                pass
            final = await stream.get_final_response()
        parsed = await wrapped.responses.parse(model="m", input="hi", text_format=Weather)
        legacy = await wrapped.completions.create(model="m", prompt="hi")
        return final.output_text, parsed.output_parsed, legacy.choices[0].text

    if is_async:
        final_text, parsed, legacy_text = asyncio.run(async_calls())
    else:
        with wrapped.responses.stream(model="m", input="hi") as stream:
            for _ in stream:
                pass
            final_text = stream.get_final_response().output_text
        parsed = wrapped.responses.parse(model="m", input="hi", text_format=Weather).output_parsed
        legacy_text = wrapped.completions.create(model="m", prompt="hi").choices[0].text
    assert final_text == "helper [redacted]"
    assert parsed == Weather(city="Oslo", degrees=3)
    assert legacy_text == "legacy [r]" or legacy_text == "legacy [redacted]"
    assert provider.requests[-1].body["prompt"].startswith("Be brief.")


def test_explain_lists_both_layers_of_a_twice_wrapped_client() -> None:
    inner = hw.wrap(FakeProvider().openai(), use=[redact])
    outer = hw.wrap(inner, use=[add_system])
    table = hw.explain(outer)
    lines = [line for line in table.splitlines() if "add_system" in line or "redact" in line]
    assert [line.split()[0] for line in lines] == ["before_model", "on_chunk"]
    assert "layer 0" in lines[0]
    assert "layer 1" in lines[1]


def test_with_stream_as_s_gives_the_hooked_stream_and_no_attributes_are_added() -> None:
    provider = FakeProvider([SECRET, SECRET], chunk_size=100)
    plain = provider.openai().chat.completions.create(model="m", messages=USER, stream=True)
    plain_attrs = set(vars(plain))
    plain.close()
    wrapped = hw.wrap(provider.openai(), use=[redact])
    stream = wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    with stream as s:
        assert s is stream
        text = "".join(c.choices[0].delta.content or "" for c in s if c.choices)
    assert text == "[redacted]"
    assert set(vars(stream)) == plain_attrs  # nothing of hookwrap's is left on SDK objects


def test_an_async_stream_closed_from_another_task_ends_cleanly() -> None:
    provider = FakeProvider(["x" * 40], chunk_size=2)
    ends: list[str] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ends.append(str(info.reason))

    wrapped = hw.wrap(provider.openai(async_=True), use=[aborted, redact])

    async def main() -> None:
        stream = await wrapped.chat.completions.create(model="m", messages=USER, stream=True)

        async def read_one() -> None:
            async for _ in stream:
                break

        await asyncio.create_task(read_one())
        await asyncio.create_task(stream.close())  # another task, another context

    asyncio.run(main())
    assert ends == ["closed by consumer"]
    assert provider.closed == 1


def noting(seen: list[str], name: str) -> Any:
    """A `before_model` hook that notes `name` in `seen` each time it runs."""

    @hw.before_model(name=name)
    def note(request: hw.ModelRequest) -> None:
        seen.append(name)

    return note


@pytest.mark.usefixtures("unpatched")
@pytest.mark.parametrize("sdk", ["openai", "anthropic", "google"])
def test_wrapping_a_client_of_a_patched_sdk_does_not_run_a_patched_hook_twice(sdk: str) -> None:
    pytest.importorskip("google.genai" if sdk == "google" else sdk)
    seen: list[str] = []
    count, other = noting(seen, "count"), noting(seen, "other")

    provider = FakeProvider()
    hw.patch(sdk, use=[count])
    made = {"openai": provider.openai, "anthropic": provider.anthropic, "google": provider.genai}
    client: Any = hw.wrap(made[sdk](), use=[count, other])
    if sdk == "openai":
        client.chat.completions.create(model="m", messages=USER)
    elif sdk == "anthropic":
        client.messages.create(model="m", max_tokens=9, messages=USER)
    else:
        client.models.generate_content(model="m", contents="hi")
    assert sorted(seen) == ["count", "other"]


@pytest.mark.parametrize("member", ["resource", "method"])
def test_wrapping_a_member_of_a_wrapped_client_does_not_run_its_hooks_twice(member: str) -> None:
    seen: list[str] = []
    count, other = noting(seen, "count"), noting(seen, "other")

    wrapped = hw.wrap(FakeProvider().openai(), use=[count])
    completions = wrapped.chat.completions
    target = completions if member == "resource" else completions.create
    again: Any = hw.wrap(target, use=[count, other])
    create = again.create if member == "resource" else again
    create(model="m", messages=USER)
    assert sorted(seen) == ["count", "other"]


@pytest.mark.parametrize("view", ["with_raw_response", "with_streaming_response"])
def test_a_raw_or_streaming_response_method_wrapped_alone_goes_through_the_hooks(
    view: str,
) -> None:
    provider = FakeProvider(["Hello."])
    completions = provider.openai().chat.completions
    create: Any = hw.wrap(getattr(completions, view).create, use=[add_system])
    if view == "with_raw_response":
        raw = create(model="m", messages=USER)
        assert raw.headers["content-type"].startswith("application/json")
        assert raw.parse().choices[0].message.content == "Hello."
    else:
        with create(model="m", messages=USER) as response:
            assert response.parse().choices[0].message.content == "Hello."
    assert provider.requests[-1].body["messages"][0] == {"role": "system", "content": "Be brief."}


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_wrapped_clients_request_method_looks_like_the_sdks(sdk: str, is_async: bool) -> None:
    provider = FakeProvider()
    made = getattr(provider, sdk)(is_async)
    wrapped = hw.wrap(made, use=[add_system])
    assert inspect.signature(wrapped.request) == inspect.signature(made.request)
    assert wrapped.request.__name__ == "request"
    assert inspect.iscoroutinefunction(wrapped.request) is is_async


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_raw_response_says_how_many_retries_the_sdk_took(sdk: str, is_async: bool) -> None:
    provider = FakeProvider(["Hello."])
    provider.fail(503, times=2)
    client: Any = hw.wrap(getattr(provider, sdk)(is_async, max_retries=3), use=[add_system])
    if sdk == "openai":
        made = client.chat.completions.with_raw_response.create(model="m", messages=USER)
    else:
        made = client.messages.with_raw_response.create(model="m", max_tokens=9, messages=USER)
    raw = run(made)
    assert raw.retries_taken == 2
    assert len(provider.requests) == 3


def test_wrapping_the_models_of_a_wrapped_genai_client_does_not_run_its_hooks_twice() -> None:
    pytest.importorskip("google.genai")
    seen: list[str] = []
    count, other = noting(seen, "count"), noting(seen, "other")
    wrapped = hw.wrap(FakeProvider().genai(), use=[count])
    models: Any = hw.wrap(wrapped.models, use=[count, other])
    models.generate_content(model="m", contents="hi")
    assert sorted(seen) == ["count", "other"]
