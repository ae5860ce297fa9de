"""google-genai through hookwrap (SPEC §3, §4, §6): the real SDK against the fake provider,
sync and `aio`, streamed and not, chats, wrapped and patched; the caller always gets native
objects."""

# google-genai's signatures name `PIL.Image.Image`; without Pillow installed pyright sees
# Unknown in every `generate_content`, so only that report is off here.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
import gc
import inspect
import json
from collections.abc import AsyncGenerator, Callable, Generator, Iterator
from typing import Any, cast

import pytest

import hookwrap as hw
from hookwrap.adapters.google import GeminiAsyncClient, GeminiClient, is_client
from hookwrap.testing import FakeProvider

pytest.importorskip("google.genai")

from google import genai  # after the skip: the SDK is an optional extra
from google.genai import _api_client, errors, types

MODEL = "gemini-2.0-flash"
HELLO = hw.ModelResponse(
    hw.Message.assistant("Hello there"), hw.Usage(4, 2, 6), "STOP", "gemini-fake-001"
)
PIECES = ["Hell", "o th", "ere"]  # HELLO as the fake streams it, 4 characters a chunk
PATCHED = ("request", "request_streamed", "async_request", "async_request_streamed")


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.on_chunk
def shout(chunk: hw.Chunk) -> hw.Chunk | None:
    return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def body(provider: FakeProvider) -> Any:
    """The JSON body of the last request the provider received."""
    return provider.requests[-1].body


def texts(chunks: list[types.GenerateContentResponse]) -> list[str | None]:
    return [c.text for c in chunks]


def layered(name: str, order: list[str]) -> Any:
    """A generator-form `wrap_model` hook that logs the way in and out."""

    @hw.wrap_model(name=name)
    def layer(request: hw.ModelRequest) -> Generator[hw.ModelRequest, Any, Any]:
        order.append(f"{name} in")
        response = yield request
        order.append(f"{name} out")
        return response

    return layer


# -- the client -----------------------------------------------------------------------------


def test_the_wrapped_client_is_a_client_and_the_original_is_untouched() -> None:
    provider = FakeProvider()
    client = provider.genai()
    models, aio, api = client.models, client.aio, client._api_client  # pyright: ignore[reportPrivateUsage]
    calls: list[str] = []

    @hw.before_model
    def seen(request: hw.ModelRequest) -> None:
        calls.append(request.model or "")

    wrapped = hw.wrap(client, use=[seen])
    assert isinstance(wrapped, genai.Client)
    assert isinstance(wrapped, GeminiClient)
    assert isinstance(wrapped.aio, GeminiAsyncClient)
    assert is_client(client)
    assert is_client(wrapped)
    assert is_client(client.aio)
    assert not is_client(object())
    assert wrapped.vertexai is False
    assert wrapped.files is client.files  # untouched attributes pass through
    assert wrapped.models is not models
    assert wrapped.aio.models is not aio.models
    assert isinstance(wrapped.aio, type(aio))
    assert client.models is models
    assert client.aio is aio
    assert client._api_client is api  # pyright: ignore[reportPrivateUsage]
    assert client.models.generate_content(model=MODEL, contents="hi").text == "You said: hi"
    assert calls == []  # the original runs no hooks
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert calls == [MODEL]
    with wrapped as entered:
        assert entered is wrapped


def test_the_hooked_api_client_shares_the_original_s_state_and_adds_nothing_to_it() -> None:
    provider = FakeProvider()
    client = provider.genai()
    api = client._api_client  # pyright: ignore[reportPrivateUsage]
    before = dict(vars(api))
    wrapped = hw.wrap(client, use=[add_system])
    hooked = wrapped.models._api_client  # pyright: ignore[reportPrivateUsage]
    assert vars(api) == before  # nothing of hookwrap's on the user's object
    assert type(api) is _api_client.BaseApiClient
    assert isinstance(hooked, _api_client.BaseApiClient)
    assert hooked is not api
    assert hooked.api_key == api.api_key
    api.shared_by_both = 1  # pyright: ignore[reportAttributeAccessIssue]
    assert hooked.shared_by_both == 1  # pyright: ignore[reportAttributeAccessIssue]
    del api.shared_by_both  # pyright: ignore[reportAttributeAccessIssue]
    assert wrapped.models.generate_content(model=MODEL, contents="hi").text == "You said: hi"
    assert body(provider)["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}


def test_a_wrapped_client_let_go_of_leaves_the_original_open() -> None:
    provider = FakeProvider()
    client = provider.genai()
    for _ in range(2):  # also a client wrapped twice
        wrapped = hw.wrap(hw.wrap(client, use=[add_system]), use=[add_system])
        wrapped.models.generate_content(model=MODEL, contents="hi")
        del wrapped
        gc.collect()
    # the SDK closes its HTTP client when its API client is collected; the twin's is not
    assert client.models.generate_content(model=MODEL, contents="hi").text == "You said: hi"
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "You said: hi"


def test_before_model_changes_reach_the_server() -> None:
    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(), use=[add_system])
    response = wrapped.models.generate_content(
        model=MODEL, contents="hi", config={"temperature": 0.2, "safety_settings": []}
    )
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text == "You said: hi"
    assert body(provider)["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}
    assert body(provider)["contents"] == [{"parts": [{"text": "hi"}], "role": "user"}]
    assert body(provider)["generationConfig"] == {"temperature": 0.2}
    assert provider.requests[-1].path.endswith(f"models/{MODEL}:generateContent")


def test_a_hook_can_change_the_model_and_options() -> None:
    @hw.before_model
    def other(request: hw.ModelRequest) -> hw.ModelRequest:
        assert request.model == MODEL
        return request.replace(model="gemini-2.5-pro", options={"maxOutputTokens": 5})

    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(), use=[other])
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert provider.requests[-1].path.endswith("models/gemini-2.5-pro:generateContent")
    assert body(provider)["generationConfig"] == {"maxOutputTokens": 5}


def test_after_model_and_on_usage_see_the_answer_and_can_replace_it() -> None:
    seen: list[Any] = []

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        seen.append(usage)

    @hw.after_model
    def redact(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        seen.append(response)
        return response.replace(message=hw.Message.assistant(response.text.replace("there", "[x]")))

    wrapped = hw.wrap(FakeProvider([HELLO]).genai(), use=[usage, redact])
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert seen[0] == hw.Usage(4, 2, 6)
    assert seen[1].text == "Hello there"
    assert seen[1].finish_reason == "STOP"
    assert response.text == "Hello [x]"
    assert response.usage_metadata is not None
    assert response.usage_metadata.total_token_count == 6
    assert response.model_version == "gemini-fake-001"


def test_a_response_left_alone_is_the_sdk_s_own() -> None:
    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        return None

    provider = FakeProvider()
    client = provider.genai()
    response = hw.wrap(client, use=[look]).models.generate_content(model=MODEL, contents="hi")
    plain = client.models.generate_content(model=MODEL, contents="hi")
    assert response.model_dump(exclude={"sdk_http_response"}) == plain.model_dump(
        exclude={"sdk_http_response"}
    )
    assert response.sdk_http_response is not None
    assert response.sdk_http_response.headers is not None
    assert response.sdk_http_response.headers["content-type"] == "application/json"


def test_function_calls_come_back_native_and_neutral() -> None:
    provider = FakeProvider(
        [hw.Message.assistant("", [hw.ToolCall("", "weather", {"city": "Oslo"})])]
    )
    calls: list[hw.ToolCall] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        calls.extend(response.message.tool_calls)

    wrapped = hw.wrap(provider.genai(), use=[look])
    response = wrapped.models.generate_content(
        model=MODEL,
        contents="weather?",
        config={"automatic_function_calling": {"disable": True}},
    )
    assert response.function_calls is not None
    assert response.function_calls[0].name == "weather"
    assert response.function_calls[0].args == {"city": "Oslo"}
    assert calls[0].name == "weather"
    assert calls[0].id.startswith("gemini-")


def test_each_step_of_automatic_function_calling_goes_through_the_hooks() -> None:
    provider = FakeProvider(
        [hw.Message.assistant("", [hw.ToolCall("", "weather", {"city": "Oslo"})]), "It snows."]
    )
    requests: list[hw.ModelRequest] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        requests.append(request)

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"snow in {city}"

    wrapped = hw.wrap(provider.genai(), use=[look, add_system])
    response = wrapped.models.generate_content(
        model=MODEL, contents="weather in Oslo?", config={"tools": [weather]}
    )
    assert response.text == "It snows."
    assert len(requests) == 2
    assert [t.name for t in requests[0].tools] == ["weather"]
    assert requests[0].tools[0].parameters["properties"] == {"city": {"type": "string"}}
    _, assistant, result = requests[1].messages
    (call,) = assistant.tool_calls
    assert (call.name, dict(call.arguments)) == ("weather", {"city": "Oslo"})
    assert (result.role, result.tool_call_id, result.text) == ("tool", call.id, "snow in Oslo")
    assert all("systemInstruction" in r.body for r in provider.requests)


def test_a_streamed_function_call() -> None:
    provider = FakeProvider(
        [
            hw.ModelResponse(
                hw.Message.assistant("", [hw.ToolCall("fc-1", "weather", {"city": "Oslo"})]),
                hw.Usage(3, 1, 4),
            )
        ]
    )
    seen: list[hw.Chunk] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        seen.append(chunk)

    wrapped = hw.wrap(provider.genai(), use=[look])
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="weather?"))
    assert chunks[0].function_calls is not None
    assert chunks[0].function_calls[0].args == {"city": "Oslo"}
    assert [c.kind for c in seen] == ["tool_call_start", "finish"]
    assert (seen[0].tool_call_id, seen[0].tool_name) == ("fc-1", "weather")
    assert json.loads(seen[0].text) == {"city": "Oslo"}
    assert seen[1].usage == hw.Usage(3, 1, 4)


def test_other_requests_pass_straight_through() -> None:
    ran: list[str] = []

    @hw.before_model
    def hook(request: hw.ModelRequest) -> None:
        ran.append("model")

    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(max_retries=0), use=[hook])
    with pytest.raises(errors.ClientError, match="404"):
        wrapped.models.count_tokens(model=MODEL, contents="hi")  # the fake has no countTokens
    assert provider.requests[-1].path.endswith(":countTokens")
    assert ran == []


def test_respond_answers_without_any_request() -> None:
    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    after: list[str] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        after.append(response.text)

    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(), use=[cached, look])
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text == "from cache"
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "from cache"
    assert chunks[-1].candidates is not None
    assert chunks[-1].candidates[0].finish_reason == "STOP"

    async def both() -> tuple[Any, list[Any]]:
        one = await wrapped.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        return one, [c async for c in stream]

    one, achunks = run(both())
    assert one.text == "from cache"
    assert "".join(c.text or "" for c in achunks) == "from cache"
    assert after == ["from cache"] * 4
    assert provider.requests == []


def test_respond_takes_a_native_response_too() -> None:
    provider = FakeProvider([HELLO])
    client = provider.genai()
    cached = client.models.generate_content(model=MODEL, contents="hi")

    @hw.before_model
    def from_cache(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(cached)

    response = hw.wrap(client, use=[from_cache]).models.generate_content(model=MODEL, contents="x")
    assert response.text == "Hello there"
    assert response.usage_metadata is not None
    assert response.usage_metadata.total_token_count == 6
    assert len(provider.requests) == 1

    @hw.before_model
    def odd(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(42)

    with pytest.raises(TypeError, match="GenerateContentResponse"):
        hw.wrap(client, use=[odd]).models.generate_content(model=MODEL, contents="hi")


def test_a_wrap_hook_may_answer_with_a_str() -> None:
    @hw.wrap_model
    def replace(request: hw.ModelRequest, call_next: Callable[[hw.ModelRequest], Any]) -> Any:
        call_next(request)
        return "replaced"

    provider = FakeProvider()
    wrapped = hw.wrap(provider.genai(), use=[replace])
    assert wrapped.models.generate_content(model=MODEL, contents="hi").text == "replaced"
    assert len(provider.requests) == 1


# -- streams --------------------------------------------------------------------------------


def test_on_chunk_changes_show_in_each_streamed_chunk() -> None:
    seen: list[hw.ModelResponse] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    provider = FakeProvider([HELLO])
    wrapped = hw.wrap(provider.genai(), use=[add_system, shout, look])
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert all(isinstance(c, types.GenerateContentResponse) for c in chunks)
    assert texts(chunks[:3]) == [p.upper() for p in PIECES]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata.total_token_count == 6
    assert body(provider)["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}
    assert provider.requests[-1].path.endswith(":streamGenerateContent")
    assert seen[0].text == "HELLO THERE"
    assert seen[0].usage == hw.Usage(4, 2, 6)


def test_unchanged_chunks_are_the_sdk_s_own() -> None:
    @hw.on_chunk
    def keep(chunk: hw.Chunk) -> None:
        return None

    client = FakeProvider().genai()
    hooked = list(
        hw.wrap(client, use=[keep]).models.generate_content_stream(model=MODEL, contents="x")
    )
    plain = list(client.models.generate_content_stream(model=MODEL, contents="x"))
    dump = [c.model_dump(exclude={"sdk_http_response"}) for c in hooked]
    assert dump == [c.model_dump(exclude={"sdk_http_response"}) for c in plain]


def test_on_chunk_can_drop_and_add_chunks() -> None:
    @hw.on_chunk
    def edit(chunk: hw.Chunk) -> Any:
        if chunk.text == "o th":
            return hw.DROP
        if chunk.text == "ere":
            return [chunk, hw.Chunk("text", "!")]
        return None

    wrapped = hw.wrap(FakeProvider([HELLO]).genai(), use=[edit])
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="x"))
    assert texts(chunks[:-1]) == ["Hell", "ere", "!"]
    assert chunks[2].model_version == "gemini-fake-001"  # a new chunk takes the stream's model


def test_async_calls_and_streams() -> None:
    seen: list[str] = []

    @hw.after_model
    async def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    provider = FakeProvider([HELLO, HELLO])
    wrapped = hw.wrap(provider.genai(), use=[add_system, shout, look])

    async def main() -> tuple[Any, list[Any]]:
        one = await wrapped.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        return one, [c async for c in stream]

    one, chunks = run(main())
    assert isinstance(one, types.GenerateContentResponse)
    assert one.text == "Hello there"
    assert texts(chunks[:3]) == [p.upper() for p in PIECES]
    assert seen == ["Hello there", "HELLO THERE"]
    assert provider.requests[0].body == provider.requests[1].body
    assert "systemInstruction" in body(provider)


def test_chats_go_through_the_hooks() -> None:
    provider = FakeProvider([HELLO] * 4)
    wrapped = hw.wrap(provider.genai(), use=[add_system, shout])
    chat = wrapped.chats.create(model=MODEL)
    assert chat.send_message("one").text == "Hello there"
    streamed = [c.text for c in chat.send_message_stream("two")]
    assert streamed[:3] == [p.upper() for p in PIECES]
    assert body(provider)["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}
    assert [c["role"] for c in body(provider)["contents"]] == ["user", "model", "user"]
    answer = chat.get_history()[3:]  # the history has what the caller saw
    assert "".join(p.text or "" for c in answer for p in c.parts or ()) == "HELLO THERE"

    async def main() -> list[str | None]:
        achat = wrapped.aio.chats.create(model=MODEL)
        said = [(await achat.send_message("one")).text]
        async for chunk in await achat.send_message_stream("two"):
            said.append(chunk.text)
        return said

    assert run(main())[:4] == ["Hello there", *(p.upper() for p in PIECES)]
    assert len(provider.requests) == 4


def test_an_early_break_closes_the_stream_and_aborts_the_run() -> None:
    ended: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ended.append(info.reason)

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ended.append("finished")

    provider = FakeProvider([HELLO] * 3)
    wrapped = hw.wrap(provider.genai(), use=[aborted, finished])
    made = wrapped.models.generate_content_stream(model=MODEL, contents="hi")
    assert inspect.isgenerator(made)  # the SDK's own generator, typed as an Iterator
    stream = cast("Generator[types.GenerateContentResponse, None, None]", made)
    for _ in stream:
        break
    stream.close()
    assert ended == ["closed by consumer"]
    assert provider.closed == 1  # the HTTP body, closed before its last event

    async def main() -> None:
        amade = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        assert inspect.isasyncgen(amade)
        astream = cast("AsyncGenerator[types.GenerateContentResponse, None]", amade)
        async for _ in astream:
            break
        await astream.aclose()
        # The SDK's own async generators do not close what they iterate: each is closed by
        # the event loop's finalizer a step later; hookwrap closes the HTTP body once reached.
        for _ in range(20):
            if provider.closed == 2:
                break
            await asyncio.sleep(0)
        assert provider.closed == 2
        assert ended[-1] == "closed by consumer"

    run(main())
    assert ended == ["closed by consumer"] * 2
    list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert ended[-1] == "finished"
    assert provider.closed == 2


def test_through_a_real_loopback_server() -> None:
    provider = FakeProvider([HELLO] * 3)
    with provider.serve() as url, provider.genai(url=url) as client:
        wrapped = hw.wrap(client, use=[add_system, shout])
        one = wrapped.models.generate_content(model=MODEL, contents="hi")
        chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))

        async def main() -> list[Any]:
            async with wrapped.aio as aio:  # its pooled connections close in this loop
                assert aio is wrapped.aio
                stream = await aio.models.generate_content_stream(model=MODEL, contents="hi")
                return [c async for c in stream]

        achunks = run(main())
    assert one.text == "Hello there"
    assert texts(chunks[:3]) == texts(achunks[:3]) == [p.upper() for p in PIECES]
    assert [r.status for r in provider.requests] == [200] * 3
    assert all("systemInstruction" in r.body for r in provider.requests)


# -- layers ---------------------------------------------------------------------------------


def test_wrapping_twice_puts_the_new_hooks_outside_and_explain_shows_both() -> None:
    order: list[str] = []
    provider = FakeProvider()
    once = hw.wrap(provider.genai(), use=[layered("inner", order)])
    twice = hw.wrap(once, use=[layered("outer", order), add_system])
    assert isinstance(twice, genai.Client)
    assert twice.models.generate_content(model=MODEL, contents="hi").text == "You said: hi"
    assert order == ["outer in", "inner in", "inner out", "outer out"]
    order.clear()
    chunks = list(twice.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "You said: hi"
    assert order[:2] == ["outer in", "inner in"]
    order.clear()
    run(twice.aio.models.generate_content(model=MODEL, contents="hi"))
    assert order == ["outer in", "inner in", "inner out", "outer out"]
    assert len(provider.requests) == 3
    for target in (twice, twice.aio):
        rows = hw.explain(target).splitlines()[2:]
        assert [row.split()[:3] for row in rows] == [
            ["before_model", "1", "add_system"],
            ["wrap_model", "1", "outer"],
            ["wrap_model", "2", "inner"],
        ]
        assert rows[1].endswith("generator, layer 0")
        assert rows[2].endswith("generator, layer 1")
    assert "outer" not in hw.explain(once)
    assert "inner" in hw.explain(once.aio)
    assert "inner" in hw.explain(hw.wrap(FakeProvider().genai().aio, use=[layered("inner", [])]))


def test_hooks_that_fit_only_one_shape_are_refused_on_that_shape() -> None:
    @hw.before_model
    async def async_hook(request: hw.ModelRequest) -> None:
        return None

    wrapped = hw.wrap(FakeProvider().genai(), use=[async_hook])
    with pytest.raises(TypeError, match="async_hook"):
        wrapped.models.generate_content(model=MODEL, contents="hi")
    assert run(wrapped.aio.models.generate_content(model=MODEL, contents="hi")).text

    @hw.wrap_model
    def sync_next(request: hw.ModelRequest, call_next: Callable[[hw.ModelRequest], Any]) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match=r"(?s)neither.*async_hook.*sync_next"):
        hw.wrap(FakeProvider().genai(), use=[async_hook, sync_next])  # fits neither
    with pytest.raises(TypeError, match="sync_next"):
        hw.wrap(FakeProvider().genai().aio, use=[sync_next])


def test_the_adapter_module_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, hookwrap.adapters.google as g; "
        "assert 'google.genai' not in sys.modules; assert not g.is_client(object())"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- hw.patch ---------------------------------------------------------------------------------


def originals() -> dict[str, Any]:
    return {name: _api_client.BaseApiClient.__dict__[name] for name in PATCHED}


@pytest.fixture
def unpatched() -> Iterator[dict[str, Any]]:
    """The SDK's own methods; the SDK is unpatched after the test, whatever happened."""
    before = originals()
    yield before
    hw.unpatch("google-genai")
    assert originals() == before


def test_patch_reaches_existing_clients_sync_aio_and_chats_and_unpatch_restores_exactly(
    unpatched: dict[str, Any],
) -> None:
    provider = FakeProvider()
    early = provider.genai()
    chat = early.chats.create(model=MODEL)
    achat = early.aio.chats.create(model=MODEL)
    hw.patch("google-genai", use=[add_system, shout])
    assert all(originals()[name] is not unpatched[name] for name in PATCHED)
    assert originals()["request"].__wrapped__ is unpatched["request"]

    assert early.models.generate_content(model=MODEL, contents="hi").text == "You said: hi"
    assert "systemInstruction" in body(provider)
    stream = early.models.generate_content_stream(model=MODEL, contents="hi")
    assert texts(list(stream))[:3] == ["YOU ", "SAID", ": HI"]
    assert chat.send_message("one").text == "You said: one"
    assert [c.text for c in chat.send_message_stream("two")][:1] == ["YOU "]

    async def main() -> list[str | None]:
        one = await early.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await early.aio.models.generate_content_stream(model=MODEL, contents="hi")
        said = [one.text, *[c.text async for c in stream][:1]]
        said.append((await achat.send_message("three")).text)
        said.extend([c.text async for c in await achat.send_message_stream("four")][:1])
        return said

    assert run(main()) == ["You said: hi", "YOU ", "You said: three", "YOU "]
    assert len(provider.requests) == 8
    assert all("systemInstruction" in r.body for r in provider.requests)
    late = provider.genai()  # made after the patch
    late.models.generate_content(model=MODEL, contents="hi")
    assert "systemInstruction" in body(provider)

    hw.unpatch("google-genai")
    assert originals() == unpatched
    assert "__hookwrap_saved__" not in _api_client.BaseApiClient.__dict__
    early.models.generate_content(model=MODEL, contents="hi")
    assert "systemInstruction" not in body(provider)
    hw.unpatch("google-genai")  # not patched: nothing to do


@pytest.mark.usefixtures("unpatched")
def test_patching_twice_with_the_same_hooks_is_a_no_op() -> None:
    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        counted.append(1)

    counted: list[int] = []
    client = FakeProvider().genai()
    hw.patch("google-genai", use=[count])
    patched = originals()
    hw.patch("google.genai", use=[count])
    assert originals() == patched
    client.models.generate_content(model=MODEL, contents="hi")
    assert counted == [1]
    with pytest.raises(ValueError, match="unpatch"):
        hw.patch("google", use=[add_system])

    @hw.wrap_model
    def timed(request: hw.ModelRequest, call_next: Callable[[hw.ModelRequest], Any]) -> Any:
        return call_next(request)

    hw.unpatch("google-genai")
    with pytest.raises(TypeError, match="generator form"):
        hw.patch("google-genai", use=[timed])


@pytest.mark.usefixtures("unpatched")
def test_patch_serves_generator_form_wrap_hooks_sync_and_async() -> None:
    order: list[str] = []
    client = FakeProvider().genai()
    hw.patch("google-genai", use=[layered("patched", order)])
    client.models.generate_content(model=MODEL, contents="hi")
    assert order == ["patched in", "patched out"]
    list(client.models.generate_content_stream(model=MODEL, contents="hi"))
    assert order[2:] == ["patched in", "patched out"]

    async def main() -> None:
        await client.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
        assert "".join([c.text or "" async for c in stream]) == "You said: hi"

    run(main())
    assert order == ["patched in", "patched out"] * 4


@pytest.mark.usefixtures("unpatched")
def test_a_wrapped_client_on_a_patched_sdk_runs_both_wrap_outside() -> None:
    order: list[str] = []
    provider = FakeProvider()
    hw.patch("google-genai", use=[layered("patched", order)])
    wrapped = hw.wrap(provider.genai(), use=[layered("wrapped", order)])
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert order == ["wrapped in", "patched in", "patched out", "wrapped out"]
    order.clear()
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "You said: hi"
    assert order == ["wrapped in", "patched in", "patched out", "wrapped out"]
    order.clear()
    run(wrapped.aio.models.generate_content(model=MODEL, contents="hi"))
    assert order == ["wrapped in", "patched in", "patched out", "wrapped out"]
    hw.unpatch("google-genai")
    order.clear()
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert order == ["wrapped in", "wrapped out"]  # the wrap layer stays; the patch is gone


@pytest.mark.usefixtures("unpatched")
def test_a_patched_stack_of_async_hooks_serves_aio_and_refuses_sync_calls() -> None:
    @hw.before_model
    async def audit(request: hw.ModelRequest) -> None:
        return None

    client = FakeProvider().genai(max_retries=0)
    hw.patch("google-genai", use=[audit])
    assert run(client.aio.models.generate_content(model=MODEL, contents="hi")).text
    with pytest.raises(TypeError, match="audit"):
        client.models.generate_content(model=MODEL, contents="hi")
    with pytest.raises(errors.ClientError, match="404"):  # other requests pass, unrefused
        client.models.count_tokens(model=MODEL, contents="hi")


def test_a_wrapped_client_as_a_context_manager_hands_out_the_hooked_client() -> None:
    """`with hw.wrap(genai.Client(...)) as client` (and `async with ... .aio`) gives the
    hooked client, and leaving closes the SDK's (forwarded by hookwrap itself, as wrapt 1.x
    forwards no `__aexit__`)."""

    @hw.after_model
    def loud(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.upper()))

    provider = FakeProvider([HELLO] * 2)
    with hw.wrap(provider.genai(), use=[loud]) as client:
        assert isinstance(client, GeminiClient)
        answer = client.models.generate_content(model=MODEL, contents="hi")
    assert answer.text == HELLO.text.upper()

    async def main() -> Any:
        async with hw.wrap(provider.genai(), use=[loud]).aio as aio:
            assert isinstance(aio, GeminiAsyncClient)
            return await aio.models.generate_content(model=MODEL, contents="hi")

    assert run(main()).text == HELLO.text.upper()
