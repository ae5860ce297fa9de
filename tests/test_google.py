"""google-genai through hookwrap (SPEC §3, §4, §6): the real SDK against a local fake of the
Gemini API, sync and `aio`, streamed and not, chats; the caller always gets native objects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._stack import Chain, flatten
from hookwrap.adapters._google_wire import GeminiWire
from hookwrap.adapters.google import GeminiClient, is_client, wrap_client

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")
try:
    import httpx2 as httpx
except ImportError:  # older google-genai speaks httpx
    import httpx  # type: ignore[no-redef]

W = GeminiWire()
MODEL = "gemini-2.0-flash"


class Body(httpx.SyncByteStream, httpx.AsyncByteStream):  # type: ignore[misc]
    """An SSE body that records how far it was read and whether it was closed."""

    def __init__(self, events: list[bytes]) -> None:
        self.events = events
        self.sent = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        for item in self.events:
            self.sent += 1
            yield item

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for item in self.events:
            self.sent += 1
            yield item

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


class Fake:
    """A Gemini endpoint: answers with `reply` (or the next of `queue`), as JSON or as SSE
    events: one per text piece of `reply`, then one with the finish reason and usage."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.reply = hw.ModelResponse(
            hw.Message.assistant("Hello there"), hw.Usage(4, 2, 6), "STOP", "gemini-fake-001"
        )
        self.pieces = ["Hel", "lo ", "there"]
        self.queue: list[hw.ModelResponse] = []
        self.bodies: list[Body] = []

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content) if request.content else {}
        self.seen.append((request.url.path, body))
        if request.url.path.endswith(":countTokens"):
            return httpx.Response(200, json={"totalTokens": 3})
        reply = self.queue.pop(0) if self.queue else self.reply
        if ":streamGenerateContent" not in request.url.path:
            return httpx.Response(200, json=W.write_response(reply, None))
        if reply is not self.reply:
            events = [e.encode() for e in W.stream_events(reply)]
        else:
            events = [
                e.encode()
                for p in self.pieces
                for e in W.stream_events(reply.replace(message=hw.Message.assistant(p)))[:1]
            ]
            events.extend(e.encode() for e in W.stream_events(reply)[-1:])
        stream = Body(events)
        self.bodies.append(stream)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    def client(self) -> Any:
        transport = httpx.MockTransport(self)
        options = types.HttpOptions(
            client_args={"transport": transport}, async_client_args={"transport": transport}
        )
        return genai.Client(api_key="test-key", http_options=options)

    @property
    def last(self) -> dict[str, Any]:
        return self.seen[-1][1]


def wrap(client: Any, *use: Any) -> Any:
    return wrap_client(client, Chain(flatten(list(use))))


@pytest.fixture
def fake() -> Fake:
    return Fake()


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.on_chunk
def shout(chunk: hw.Chunk) -> hw.Chunk | None:
    return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- the client -----------------------------------------------------------------------------


def test_the_wrapped_client_is_a_client_and_the_original_is_untouched(fake: Fake) -> None:
    client = fake.client()
    models, aio, api = client.models, client.aio, client._api_client
    calls: list[str] = []

    @hw.before_model
    def seen(request: hw.ModelRequest) -> None:
        calls.append(request.model or "")

    wrapped = wrap(client, seen)
    assert isinstance(wrapped, genai.Client)
    assert isinstance(wrapped, GeminiClient)
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
    assert client._api_client is api
    assert client.models.generate_content(model=MODEL, contents="hi").text == "Hello there"
    assert calls == []  # the original runs no hooks
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert calls == [MODEL]
    with wrapped as entered:
        assert entered is wrapped


def test_before_model_changes_reach_the_server(fake: Fake) -> None:
    wrapped = wrap(fake.client(), add_system)
    response = wrapped.models.generate_content(
        model=MODEL, contents="hi", config={"temperature": 0.2, "safety_settings": []}
    )
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text == "Hello there"
    assert fake.last["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert fake.last["contents"] == [{"parts": [{"text": "hi"}], "role": "user"}]
    assert fake.last["generationConfig"] == {"temperature": 0.2}
    assert fake.seen[-1][0].endswith(f"models/{MODEL}:generateContent")


def test_a_hook_can_change_the_model_and_options(fake: Fake) -> None:
    @hw.before_model
    def other(request: hw.ModelRequest) -> hw.ModelRequest:
        assert request.model == MODEL
        return request.replace(model="gemini-2.5-pro", options={"maxOutputTokens": 5})

    wrapped = wrap(fake.client(), other)
    wrapped.models.generate_content(model=MODEL, contents="hi")
    assert fake.seen[-1][0].endswith("models/gemini-2.5-pro:generateContent")
    assert fake.last["generationConfig"] == {"maxOutputTokens": 5}


def test_after_model_and_on_usage_see_the_answer_and_can_replace_it(fake: Fake) -> None:
    seen: list[Any] = []

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        seen.append(usage)

    @hw.after_model
    def redact(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        seen.append(response)
        return response.replace(message=hw.Message.assistant(response.text.replace("there", "[x]")))

    wrapped = wrap(fake.client(), usage, redact)
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert seen[0] == hw.Usage(4, 2, 6)
    assert seen[1].text == "Hello there"
    assert seen[1].finish_reason == "STOP"
    assert response.text == "Hello [x]"
    assert response.usage_metadata.total_token_count == 6
    assert response.model_version == "gemini-fake-001"


def test_a_response_left_alone_is_the_sdk_s_own(fake: Fake) -> None:
    wrapped = wrap(fake.client(), add_system)
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    client = fake.client()  # the SDK closes its HTTP client when the Client is collected
    plain = client.models.generate_content(model=MODEL, contents="hi")
    assert response.model_dump(exclude={"sdk_http_response"}) == plain.model_dump(
        exclude={"sdk_http_response"}
    )
    assert response.sdk_http_response.headers["content-type"] == "application/json"


def test_function_calls_come_back_native_and_neutral(fake: Fake) -> None:
    fake.reply = hw.ModelResponse(
        hw.Message.assistant("", [hw.ToolCall("", "weather", {"city": "Oslo"})]),
        None,
        "STOP",
    )
    calls: list[hw.ToolCall] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        calls.extend(response.message.tool_calls)

    wrapped = wrap(fake.client(), look)
    response = wrapped.models.generate_content(
        model=MODEL,
        contents="weather?",
        config={"automatic_function_calling": {"disable": True}},
    )
    assert response.function_calls[0].name == "weather"
    assert response.function_calls[0].args == {"city": "Oslo"}
    assert calls[0].name == "weather"
    assert calls[0].id.startswith("gemini-")


def test_each_step_of_automatic_function_calling_goes_through_the_hooks(fake: Fake) -> None:
    fake.queue.append(
        hw.ModelResponse(hw.Message.assistant("", [hw.ToolCall("", "weather", {"city": "Oslo"})]))
    )
    requests: list[hw.ModelRequest] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        requests.append(request)

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"snow in {city}"

    wrapped = wrap(fake.client(), look, add_system)
    response = wrapped.models.generate_content(
        model=MODEL, contents="weather in Oslo?", config={"tools": [weather]}
    )
    assert response.text == "Hello there"
    assert len(requests) == 2
    assert [t.name for t in requests[0].tools] == ["weather"]
    assert requests[0].tools[0].parameters["properties"] == {"city": {"type": "string"}}
    _, assistant, result = requests[1].messages
    (call,) = assistant.tool_calls
    assert (call.name, dict(call.arguments)) == ("weather", {"city": "Oslo"})
    assert (result.role, result.tool_call_id, result.text) == ("tool", call.id, "snow in Oslo")
    assert all("systemInstruction" in body for _, body in fake.seen)


def test_a_streamed_function_call(fake: Fake) -> None:
    fake.queue.append(
        hw.ModelResponse(
            hw.Message.assistant("", [hw.ToolCall("fc-1", "weather", {"city": "Oslo"})]),
            hw.Usage(3, 1, 4),
        )
    )
    seen: list[hw.Chunk] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        seen.append(chunk)

    wrapped = wrap(fake.client(), look)
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="weather?"))
    assert chunks[0].function_calls[0].args == {"city": "Oslo"}
    assert [c.kind for c in seen] == ["tool_call_start", "finish"]
    assert (seen[0].tool_call_id, seen[0].tool_name) == ("fc-1", "weather")
    assert json.loads(seen[0].text) == {"city": "Oslo"}
    assert seen[1].usage == hw.Usage(3, 1, 4)


def test_other_requests_pass_straight_through(fake: Fake) -> None:
    ran: list[str] = []

    @hw.before_model
    def hook(request: hw.ModelRequest) -> None:
        ran.append("model")

    wrapped = wrap(fake.client(), hook)
    result = wrapped.models.count_tokens(model=MODEL, contents="hi")
    assert result.total_tokens == 3
    assert ran == []


def test_respond_answers_without_any_request(fake: Fake) -> None:
    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    after: list[str] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        after.append(response.text)

    wrapped = wrap(fake.client(), cached, look)
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text == "from cache"
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "from cache"
    assert chunks[-1].candidates[0].finish_reason == "STOP"

    async def both() -> tuple[Any, list[Any]]:
        one = await wrapped.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        return one, [c async for c in stream]

    one, achunks = run(both())
    assert one.text == "from cache"
    assert "".join(c.text or "" for c in achunks) == "from cache"
    assert after == ["from cache"] * 4
    assert fake.seen == []


def test_respond_takes_a_native_response_too(fake: Fake) -> None:
    client = fake.client()
    cached = client.models.generate_content(model=MODEL, contents="hi")

    @hw.before_model
    def from_cache(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(cached)

    wrapped = wrap(client, from_cache)
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert response.text == "Hello there"
    assert response.usage_metadata.total_token_count == 6
    assert len(fake.seen) == 1
    with pytest.raises(TypeError, match="GenerateContentResponse"):
        wrap(client, hw.before_model(lambda request: hw.Respond(42))).models.generate_content(
            model=MODEL, contents="hi"
        )


def test_a_wrap_hook_may_answer_with_a_str(fake: Fake) -> None:
    @hw.wrap_model
    def replace(request: hw.ModelRequest, call_next: Any) -> Any:
        call_next(request)
        return "replaced"

    wrapped = wrap(fake.client(), replace)
    response = wrapped.models.generate_content(model=MODEL, contents="hi")
    assert response.text == "replaced"
    assert len(fake.seen) == 1


# -- streams --------------------------------------------------------------------------------


def test_on_chunk_changes_show_in_each_streamed_chunk(fake: Fake) -> None:
    seen: list[hw.ModelResponse] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    wrapped = wrap(fake.client(), add_system, shout, look)
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert all(isinstance(c, types.GenerateContentResponse) for c in chunks)
    assert [c.text for c in chunks[:3]] == ["HEL", "LO ", "THERE"]
    assert chunks[-1].usage_metadata.total_token_count == 6
    assert fake.last["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert fake.seen[-1][0].endswith(":streamGenerateContent")
    assert seen[0].text == "HELLO THERE"
    assert seen[0].usage == hw.Usage(4, 2, 6)
    assert fake.bodies[0].closed


def test_unchanged_chunks_are_the_sdk_s_own(fake: Fake) -> None:
    @hw.on_chunk
    def keep(chunk: hw.Chunk) -> None:
        return None

    wrapped = wrap(fake.client(), keep)
    hooked = list(wrapped.models.generate_content_stream(model=MODEL, contents="x"))
    client = fake.client()
    plain = list(client.models.generate_content_stream(model=MODEL, contents="x"))
    dump = [c.model_dump(exclude={"sdk_http_response"}) for c in hooked]
    assert dump == [c.model_dump(exclude={"sdk_http_response"}) for c in plain]


def test_on_chunk_can_drop_and_add_chunks(fake: Fake) -> None:
    @hw.on_chunk
    def edit(chunk: hw.Chunk) -> Any:
        if chunk.text == "lo ":
            return hw.DROP
        if chunk.text == "there":
            return [chunk, hw.Chunk("text", "!")]
        return None

    wrapped = wrap(fake.client(), edit)
    chunks = list(wrapped.models.generate_content_stream(model=MODEL, contents="x"))
    assert [c.text for c in chunks[:-1]] == ["Hel", "there", "!"]
    assert chunks[2].model_version == "gemini-fake-001"  # a new chunk takes the stream's model


def test_async_calls_and_streams(fake: Fake) -> None:
    seen: list[str] = []

    @hw.after_model
    async def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    wrapped = wrap(fake.client(), add_system, shout, look)

    async def main() -> tuple[Any, list[Any]]:
        one = await wrapped.aio.models.generate_content(model=MODEL, contents="hi")
        stream = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        return one, [c async for c in stream]

    one, chunks = run(main())
    assert isinstance(one, types.GenerateContentResponse)
    assert one.text == "Hello there"
    assert [c.text for c in chunks[:3]] == ["HEL", "LO ", "THERE"]
    assert seen == ["Hello there", "HELLO THERE"]
    assert all(body == {**fake.seen[0][1]} for _, body in fake.seen)
    assert fake.bodies[0].closed


def test_chats_go_through_the_hooks(fake: Fake) -> None:
    wrapped = wrap(fake.client(), add_system, shout)
    chat = wrapped.chats.create(model=MODEL)
    assert chat.send_message("one").text == "Hello there"
    streamed = [c.text for c in chat.send_message_stream("two")]
    assert streamed[:3] == ["HEL", "LO ", "THERE"]
    assert fake.last["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in fake.last["contents"]] == ["user", "model", "user"]
    answer = chat.get_history()[3:]  # the history has what the caller saw
    assert "".join(p.text or "" for c in answer for p in c.parts or ()) == "HELLO THERE"

    async def main() -> list[str]:
        achat = wrapped.aio.chats.create(model=MODEL)
        texts = [(await achat.send_message("one")).text]
        async for chunk in await achat.send_message_stream("two"):
            texts.append(chunk.text)
        return texts

    assert run(main())[:4] == ["Hello there", "HEL", "LO ", "THERE"]
    assert len(fake.seen) == 4


def test_an_early_break_closes_the_stream_and_aborts_the_run(fake: Fake) -> None:
    ended: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ended.append(info.reason)

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ended.append("finished")

    wrapped = wrap(fake.client(), aborted, finished)
    stream = wrapped.models.generate_content_stream(model=MODEL, contents="hi")
    for _ in stream:
        break
    stream.close()
    assert ended == ["closed by consumer"]
    assert fake.bodies[-1].closed
    body = fake.bodies[-1]
    assert body.closed
    assert body.sent < len(body.events)

    async def main() -> None:
        astream = await wrapped.aio.models.generate_content_stream(model=MODEL, contents="hi")
        async for _ in astream:
            break
        await astream.aclose()
        # The SDK's own async generators do not close what they iterate: each is closed by
        # the event loop's finalizer a step later; hookwrap closes the HTTP body once reached.
        for _ in range(20):
            if fake.bodies[-1].closed:
                break
            await asyncio.sleep(0)
        assert fake.bodies[-1].closed
        assert ended[-1] == "closed by consumer"

    run(main())
    assert ended == ["closed by consumer"] * 2
    assert fake.bodies[-1].closed
    list(wrapped.models.generate_content_stream(model=MODEL, contents="hi"))
    assert ended[-1] == "finished"


def test_wrapping_twice_puts_the_new_hooks_outside(fake: Fake) -> None:
    order: list[str] = []

    def hook(name: str) -> Any:
        @hw.wrap_model
        def layer(request: hw.ModelRequest) -> Any:
            order.append(f"{name} in")
            response = yield request
            order.append(f"{name} out")
            return response

        return layer

    once = wrap(fake.client(), hook("inner"))
    twice = wrap(once, hook("outer"))
    assert isinstance(twice, genai.Client)
    assert twice.models.generate_content(model=MODEL, contents="hi").text == "Hello there"
    assert order == ["outer in", "inner in", "inner out", "outer out"]
    order.clear()
    chunks = list(twice.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "Hello there"
    assert order[:2] == ["outer in", "inner in"]
    order.clear()
    run(twice.aio.models.generate_content(model=MODEL, contents="hi"))
    assert order == ["outer in", "inner in", "inner out", "outer out"]
    assert len(fake.seen) == 3
    table = hw.explain(twice)
    assert "generator, layer 0" in table
    assert "generator, layer 1" in table


def test_hooks_that_fit_only_one_shape_are_refused_on_that_shape(fake: Fake) -> None:
    @hw.before_model
    async def async_hook(request: hw.ModelRequest) -> None:
        return None

    wrapped = wrap(fake.client(), async_hook)
    with pytest.raises(TypeError, match="async_hook"):
        wrapped.models.generate_content(model=MODEL, contents="hi")
    assert run(wrapped.aio.models.generate_content(model=MODEL, contents="hi")).text

    @hw.wrap_model
    def sync_next(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match=r"(?s)neither.*async_hook.*sync_next"):
        wrap(fake.client(), async_hook, sync_next)  # fits neither: refused when wrapping
    with pytest.raises(TypeError, match="sync_next"):
        wrap(fake.client().aio, sync_next)


def test_hw_wrap_dispatches_to_this_adapter(fake: Fake) -> None:
    wrapped = hw.wrap(fake.client(), use=[add_system])
    assert isinstance(wrapped, GeminiClient)
    assert wrapped.models.generate_content(model=MODEL, contents="hi").text == "Hello there"
    assert fake.last["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


def test_the_adapter_module_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, hookwrap.adapters.google as g; "
        "assert 'google.genai' not in sys.modules; assert not g.is_client(object())"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
