"""Anthropic clients with client-level middleware (`Anthropic(middleware=[...])`, from
anthropic 2.x): the middleware runs inside the hooked call, once per HTTP attempt, and gets
the SDK's own response; the hooks run once per call; the caller gets the SDK's objects."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

anthropic = pytest.importorskip("anthropic")
if not hasattr(anthropic, "Middleware"):
    pytest.skip("this anthropic release has no client middleware", allow_module_level=True)

USER = [{"role": "user", "content": "hi"}]
ARGS: dict[str, Any] = {"model": "m", "max_tokens": 5, "messages": USER}


def run(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return request.param == "async"


class Seen(anthropic.Middleware):  # type: ignore[misc]
    """Notes, per HTTP attempt, what `call_next` gave back; `change` may replace it."""

    def __init__(self, change: Callable[[Any], Any] | None = None) -> None:
        self.seen: list[tuple[str, int]] = []
        self.change = change

    def note(self, response: Any) -> Any:
        self.seen.append((type(response).__name__, response.http_response.status_code))
        return response if self.change is None else self.change(response)

    def handle(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        return self.note(call_next(request))

    async def handle_async(self, request: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        return self.note(await call_next(request))


class Calls:
    """Hooks that count the calls they see and end the answer's text with `!`."""

    def __init__(self) -> None:
        self.before = 0
        self.errors: list[BaseException] = []

        @hw.before_model
        def count(request: hw.ModelRequest) -> None:
            self.before += 1

        @hw.after_model
        def shout(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
            return response.replace(message=hw.Message.assistant(response.text + "!"))

        @hw.on_chunk
        def upper(chunk: hw.Chunk) -> hw.Chunk:
            return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else chunk

        @hw.on_error
        def failed(info: hw.FinishInfo) -> None:
            assert info.error is not None
            self.errors.append(info.error)

        self.use = [count, shout, upper, failed]


def client_with(provider: FakeProvider, is_async: bool, *middleware: Any, retries: int = 2) -> Any:
    return provider.anthropic(is_async, max_retries=retries).with_middleware(*middleware)


def response_name(is_async: bool) -> str:
    return "AsyncAPIResponse" if is_async else "APIResponse"


def test_create_returns_the_message_the_hooks_left(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(client_with(provider, is_async, seen), use=calls.use)
    message = run(wrapped.messages.create(**ARGS))
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "hello!"
    assert seen.seen == [(response_name(is_async), 200)]
    assert calls.before == 1


def test_a_stream_comes_as_the_sdks_stream_through_the_chunk_hooks(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(client_with(provider, is_async, seen), use=calls.use)

    async def read_async() -> tuple[Any, str]:
        stream = await wrapped.messages.create(**ARGS, stream=True)
        events = [event async for event in stream]
        return stream, "".join(e.delta.text for e in events if e.type == "content_block_delta")

    def read() -> tuple[Any, str]:
        stream = wrapped.messages.create(**ARGS, stream=True)
        return stream, "".join(e.delta.text for e in stream if e.type == "content_block_delta")

    stream, text = asyncio.run(read_async()) if is_async else read()
    assert isinstance(stream, anthropic.AsyncStream if is_async else anthropic.Stream)
    assert text == "HELLO"
    assert seen.seen == [(response_name(is_async), 200)]
    assert calls.before == 1


def test_the_stream_helpers_build_their_message_from_the_hooked_stream(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(client_with(provider, is_async, seen), use=calls.use)

    async def final_async() -> str:
        async with wrapped.messages.stream(**ARGS) as stream:
            text: str = await stream.get_final_text()
            return text

    def final() -> str:
        with wrapped.messages.stream(**ARGS) as stream:
            text: str = stream.get_final_text()
            return text

    assert (asyncio.run(final_async()) if is_async else final()) == "HELLO"
    assert seen.seen == [(response_name(is_async), 200)]


def test_the_hooks_see_the_response_a_middleware_put_in(is_async: bool) -> None:
    provider = FakeProvider(["hello"])

    def replace(response: Any) -> Any:
        http = response.http_response
        body = json.loads(http.content)  # (read already: the SDK does not stream this call)
        body["content"][0]["text"] = "from the middleware"
        fresh = type(http)(200, headers=http.headers, json=body, request=http.request)
        return type(response)(
            raw=fresh,
            cast_to=response._cast_to,
            client=response._client,
            stream=False,
            stream_cls=None,
            options=response._options,
            retries_taken=response.retries_taken,
        )

    client = client_with(provider, is_async, Seen(replace))
    message = run(hw.wrap(client, use=Calls().use).messages.create(**ARGS))
    assert message.content[0].text == "from the middleware!"


def test_the_sdk_retries_run_the_middleware_per_attempt_and_the_hooks_once(
    is_async: bool,
) -> None:
    provider = FakeProvider(["hello"])
    provider.fail(503, times=2, retry_after=0)
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(client_with(provider, is_async, seen), use=calls.use)
    raw = run(wrapped.messages.with_raw_response.create(**ARGS))
    assert raw.retries_taken == 2
    assert run(raw.parse()).content[0].text == "hello!"
    name = response_name(is_async)
    assert seen.seen == [(name, 503), (name, 503), (name, 200)]
    assert calls.before == 1


def test_a_middleware_that_retries_runs_inside_one_hooked_call(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    provider.fail(500)
    attempts: list[int] = []

    def again(request: Any, call_next: Callable[[Any], Any]) -> Any:
        response = call_next(request)
        attempts.append(response.status_code)
        return call_next(request) if response.status_code >= 500 else response

    async def again_async(request: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        response = await call_next(request)
        attempts.append(response.status_code)
        return await call_next(request) if response.status_code >= 500 else response

    calls = Calls()
    client = client_with(provider, is_async, again_async if is_async else again, retries=0)
    message = run(hw.wrap(client, use=calls.use).messages.create(**ARGS))
    assert message.content[0].text == "hello!"
    assert attempts == [500]
    assert len(provider.requests) == 2
    assert calls.before == 1


def test_an_error_the_sdk_does_not_retry_is_raised_through_the_hooks(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    provider.fail(400)
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(client_with(provider, is_async, seen), use=calls.use)
    with pytest.raises(anthropic.BadRequestError):
        run(wrapped.messages.create(**ARGS))
    assert [type(e) for e in calls.errors] == [anthropic.BadRequestError]
    assert seen.seen == [(response_name(is_async), 400)]


def test_with_middleware_on_a_wrapped_client_keeps_the_hooks(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(provider.anthropic(is_async), use=calls.use)
    derived = wrapped.with_middleware(seen)
    assert isinstance(derived, anthropic.AsyncAnthropic if is_async else anthropic.Anthropic)
    assert derived.middleware == (seen,)
    assert run(derived.messages.create(**ARGS)).content[0].text == "hello!"
    assert seen.seen == [(response_name(is_async), 200)]
    assert calls.before == 1


def test_a_patched_sdk_hooks_clients_with_middleware_and_unpatches_cleanly(
    is_async: bool,
) -> None:
    base = anthropic._base_client
    sdk = {cls: dict(cls.__dict__) for cls in (base.SyncAPIClient, base.AsyncAPIClient)}
    provider = FakeProvider(["hello", "again"])
    seen, calls = Seen(), Calls()
    hw.patch("anthropic", use=calls.use)
    try:
        message = run(client_with(provider, is_async, seen).messages.create(**ARGS))
        plain = run(provider.anthropic(is_async).messages.create(**ARGS))
    finally:
        hw.unpatch("anthropic")
    assert message.content[0].text == "hello!"
    assert plain.content[0].text == "again!"  # a client without middleware, as before
    assert seen.seen == [(response_name(is_async), 200)]
    assert calls.before == 2
    for cls, before in sdk.items():
        for name in ("request", "_process_response", "_finalize_middleware_result"):
            assert cls.__dict__[name] is before[name]


def test_a_middleware_answering_with_its_own_value_is_refused_by_name(is_async: bool) -> None:
    provider = FakeProvider(["hello"])
    cached = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "cached"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )

    def cache(request: Any, call_next: Any) -> Any:
        return cached

    async def cache_async(request: Any, call_next: Any) -> Any:
        return cached

    client = client_with(provider, is_async, cache_async if is_async else cache)
    assert run(client.messages.create(**ARGS)) is cached  # the SDK's own behaviour
    with pytest.raises(TypeError, match=r"middleware .* answered with Message"):
        run(hw.wrap(client, use=Calls().use).messages.create(**ARGS))


def test_a_subclass_client_with_middleware_is_hooked(is_async: bool) -> None:
    """A client of the user's own subclass of the SDK's class (in the user's module) is of
    that SDK all the same: its middleware's response is read as the SDK's."""
    provider = FakeProvider(["hello"])
    plain = provider.anthropic(is_async)

    class Mine(plain.__class__):  # type: ignore[misc,name-defined]
        pass

    mine = Mine(api_key="test", base_url=str(plain.base_url), http_client=plain._client)
    seen, calls = Seen(), Calls()
    wrapped = hw.wrap(mine.with_middleware(seen), use=calls.use)
    message = run(wrapped.messages.create(**ARGS))
    assert message.content[0].text == "hello!"
    assert seen.seen == [(response_name(is_async), 200)]
