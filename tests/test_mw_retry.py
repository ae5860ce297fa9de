"""`Retry` (SPEC §8): backoff with full jitter, what is retried by default, `Retry-After`,
streams retried only before their first chunk, tools on request, and the real SDKs."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import CallLimit, ContentGuard, Timeout, ToolCache
from hookwrap.middleware._retry import Retry, is_transient
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


class Waits:
    """Records the waits instead of sleeping (`time.sleep` and `asyncio.sleep`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seconds: list[float] = []
        real = asyncio.sleep

        async def asleep(seconds: float) -> None:
            self.seconds.append(seconds)
            await real(0)

        monkeypatch.setattr("hookwrap.middleware._retry.time.sleep", self.seconds.append)
        monkeypatch.setattr("hookwrap.middleware._retry.asyncio.sleep", asleep)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    return Waits(monkeypatch)


def flaky(failures: list[BaseException]) -> tuple[Callable[[str], str], list[str]]:
    """A model function raising `failures` in turn, then answering."""
    calls: list[str] = []

    def model(prompt: str) -> str:
        calls.append(prompt)
        if failures:
            raise failures.pop(0)
        return f"answer to {prompt}"

    return model, calls


def aflaky(failures: list[BaseException]) -> tuple[Callable[[str], Any], list[str]]:
    sync, calls = flaky(failures)

    async def model(prompt: str) -> str:
        return sync(prompt)

    return model, calls


class HttpError(Exception):
    """An error shaped like the SDKs' status errors."""

    def __init__(self, status_code: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.response = type("Response", (), {"headers": headers or {}})()


# -- what is retried ---------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_transient_failures_are_retried_until_an_answer(waits: Waits, is_async: bool) -> None:
    failures: list[BaseException] = [ConnectionError("reset"), HttpError(503)]
    target, calls = aflaky(failures) if is_async else flaky(failures)
    retry = Retry(initial_delay=0.5, jitter=False)
    ask = hw.model(target, use=[retry])
    answer = asyncio.run(ask("q")) if is_async else ask("q")
    assert answer == "answer to q"
    assert calls == ["q", "q", "q"]
    assert waits.seconds == [0.5, 1.0]  # initial_delay * backoff**n


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_last_error_propagates_with_a_note_once_retries_run_out(
    waits: Waits, is_async: bool
) -> None:
    errors = [TimeoutError(f"t{i}") for i in range(4)]
    target, calls = aflaky(list(errors)) if is_async else flaky(list(errors))
    ask = hw.model(target, use=[Retry(max_retries=2, jitter=False)])
    with pytest.raises(TimeoutError) as excinfo:
        asyncio.run(ask("q")) if is_async else ask("q")
    assert excinfo.value is errors[2]
    assert "Retry gave up after 2 retries" in getattr(excinfo.value, "__notes__", [])
    assert len(calls) == 3
    assert len(waits.seconds) == 2


@pytest.mark.parametrize(
    ("max_retries", "notes"),
    [(0, []), (1, ["Retry gave up after 1 retry"])],
    ids=["none", "one"],
)
def test_the_give_up_note_counts_the_retries_that_ran(
    waits: Waits, max_retries: int, notes: list[str]
) -> None:
    """As retry.md says: one retry reads "1 retry"; with none there is nothing to give up."""
    errors = [TimeoutError(f"t{i}") for i in range(3)]
    target, calls = flaky(list(errors))
    ask = hw.model(target, use=[Retry(max_retries=max_retries, jitter=False)])
    with pytest.raises(TimeoutError) as excinfo:
        ask("q")
    assert excinfo.value is errors[max_retries]
    assert [n for n in getattr(excinfo.value, "__notes__", []) if "Retry" in n] == notes
    assert len(calls) == max_retries + 1
    assert len(waits.seconds) == max_retries


@pytest.mark.parametrize(
    "error",
    [ValueError("bad"), HttpError(400), HttpError(401), hw.Aborted("stop"), KeyboardInterrupt()],
    ids=repr,
)
def test_other_errors_are_not_retried(waits: Waits, error: BaseException) -> None:
    target, calls = flaky([error])
    with pytest.raises(type(error)) as excinfo:
        hw.model(target, use=[Retry()])("q")
    assert excinfo.value is error
    assert calls == ["q"]
    assert waits.seconds == []
    assert not any("Retry" in note for note in getattr(error, "__notes__", []))


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ConnectionResetError(), True),
        (TimeoutError(), True),
        (HttpError(408), True),  # Request Timeout
        (HttpError(429), True),
        (HttpError(500), True),
        (HttpError(599), True),
        (HttpError(404), False),
        (HttpError(600), False),
        (RuntimeError(), False),
    ],
    ids=repr,
)
def test_the_default_retry_on(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


@pytest.mark.parametrize(
    ("retry_on", "retried"),
    [
        (ValueError, True),
        ((KeyError, ValueError), True),
        ([KeyError], False),
        (lambda exc: "again" in str(exc), True),
        (lambda exc: False, False),
    ],
    ids=["type", "tuple", "list, no match", "predicate", "predicate, no"],
)
def test_retry_on_takes_types_or_a_predicate(waits: Waits, retry_on: Any, retried: bool) -> None:
    target, calls = flaky([ValueError("again")])
    ask = hw.model(target, use=[Retry(retry_on=retry_on)])
    if retried:
        assert ask("q") == "answer to q"
        assert len(calls) == 2
    else:
        with pytest.raises(ValueError, match="again"):
            ask("q")
        assert len(calls) == 1


# -- how long it waits -------------------------------------------------------------------------


def test_backoff_is_exponential_and_capped() -> None:
    retry = Retry(initial_delay=1, backoff=3, max_delay=20, jitter=False)
    assert [retry.delay(n, ConnectionError()) for n in range(5)] == [1, 3, 9, 20, 20]


def test_the_cap_stays_max_delay_however_many_retries() -> None:
    """`backoff ** n` passes the largest float after about a thousand retries."""
    retry = Retry(max_retries=5000, initial_delay=0.5, max_delay=30, jitter=False)
    assert [retry.delay(n, ConnectionError()) for n in (0, 1, 1100, 4999)] == [0.5, 1, 30, 30]
    assert Retry(initial_delay=0, jitter=False).delay(1100, ConnectionError()) == 0


def test_full_jitter_draws_between_zero_and_the_cap() -> None:
    retry = Retry(initial_delay=2, backoff=2, max_delay=60)
    random.seed(7)
    draws = [retry.delay(3, ConnectionError()) for _ in range(400)]
    assert all(0 <= d <= 16 for d in draws)
    assert min(draws) < 2  # spread over the whole range, not a fixed wait
    assert max(draws) > 14


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "120"}, 4.0),  # longer than max_delay: the backoff decides
        ({"retry-after": "soon"}, 4.0),
        ({}, 4.0),
        ({"retry-after": "0"}, 0.0),
        # a negative or non-finite wait means nothing: ignored, and the backoff decides
        ({"retry-after": "-5"}, 4.0),
        ({"retry-after-ms": "-5000", "retry-after": "-5"}, 4.0),
        ({"retry-after-ms": "-5000", "retry-after": "2"}, 2.0),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after": "-inf"}, 4.0),
        ({"retry-after-ms": "inf"}, 4.0),
    ],
)
def test_retry_after_is_honoured(headers: dict[str, str], expected: float) -> None:
    retry = Retry(initial_delay=4, max_delay=60, jitter=False)
    assert retry.delay(0, HttpError(429, headers)) == expected


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = Retry(jitter=False).delay(0, HttpError(503, {"retry-after": when}))
    assert 25 < wait <= 30
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert Retry(jitter=False).delay(0, HttpError(503, {"retry-after": past})) == 0


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_negative_retry_after_from_an_sdk_is_ignored_alike_sync_and_async(
    waits: Waits, is_async: bool
) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["Hello!"])
    provider.fail(429, times=2, retry_after=-5)  # retry-after: -5, retry-after-ms: -5000
    client = hw.wrap(provider.openai(is_async, max_retries=0), use=[Retry(jitter=False)])
    made = client.chat.completions.create(model="m", messages=USER)
    completion = asyncio.run(made) if is_async else made
    assert completion.choices[0].message.content == "Hello!"
    assert waits.seconds == [1.0, 2.0]  # the backoff's, not -5


def test_a_negative_retry_after_does_not_break_a_real_sleep() -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["Hello!"])
    provider.fail(429, retry_after=-5)
    client = hw.wrap(provider.openai(max_retries=0), use=[Retry(initial_delay=0)])
    completion = client.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "Hello!"


# -- streams -----------------------------------------------------------------------------------


def stream_target(plan: list[str]) -> tuple[Callable[[str], Iterator[str]], list[str]]:
    """Each call streams "a", "b", "c"; `plan` says per call where it fails: "start",
    "middle" or "" (never)."""
    log: list[str] = []

    def model(prompt: str) -> Iterator[str]:
        when = plan.pop(0) if plan else ""
        log.append(f"call:{when}")
        try:
            if when == "start":
                raise ConnectionError("dropped before the first chunk")
            yield "a"
            if when == "middle":
                raise ConnectionError("dropped mid-stream")
            yield "b"
            yield "c"
        finally:
            log.append("closed")

    return model, log


def astream_target(plan: list[str]) -> tuple[Callable[[str], AsyncIterator[str]], list[str]]:
    sync, log = stream_target(plan)

    async def model(prompt: str) -> AsyncIterator[str]:
        for piece in sync(prompt):
            yield piece

    return model, log


def read(stream: Any) -> list[str]:
    if hasattr(stream, "__anext__"):

        async def collect() -> list[str]:
            return [piece async for piece in stream]

        return asyncio.run(collect())
    return list(stream)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_failing_before_its_first_chunk_is_retried(waits: Waits, is_async: bool) -> None:
    target, log = (astream_target if is_async else stream_target)(["start", "start"])
    ask = hw.model(target, use=[Retry(jitter=False)])
    assert read(ask("q")) == ["a", "b", "c"]
    assert log == ["call:start", "closed", "call:start", "closed", "call:", "closed"]
    assert len(waits.seconds) == 2


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_failing_after_a_chunk_reached_the_caller_is_not(
    waits: Waits, is_async: bool
) -> None:
    target, log = (astream_target if is_async else stream_target)(["middle"])
    ask = hw.model(target, use=[Retry()])
    got: list[str] = []

    async def areceive() -> None:
        async for piece in ask("q"):  # type: ignore[attr-defined]
            got.append(piece)

    with pytest.raises(ConnectionError, match="mid-stream"):
        if is_async:
            asyncio.run(areceive())
        else:
            got.extend(ask("q"))
    assert got == ["a"]
    assert log == ["call:middle", "closed"]
    assert waits.seconds == []


def test_a_stream_closed_early_closes_the_inner_stream_at_once() -> None:
    target, log = stream_target([])
    stream = hw.model(target, use=[Retry()])("q")
    assert next(stream) == "a"
    stream.close()
    assert log == ["call:", "closed"]


def test_an_empty_stream_stays_empty() -> None:
    def nothing(prompt: str) -> Iterator[str]:
        yield from ()

    assert list(hw.model(nothing, use=[Retry()])("q")) == []


# -- tools -------------------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("tools", [False, True])
def test_tools_are_retried_only_when_asked(waits: Waits, is_async: bool, tools: bool) -> None:
    calls: list[str] = []

    def body(city: str) -> str:
        calls.append(city)
        if len(calls) == 1:
            raise ConnectionError("weather service down")
        return f"sunny in {city}"

    if is_async:

        async def aweather(city: str) -> str:
            """The weather."""
            return body(city)

        tool: Any = hw.tool(aweather, use=[Retry(tools=tools)])
    else:

        def weather(city: str) -> str:
            """The weather."""
            return body(city)

        tool = hw.tool(weather, use=[Retry(tools=tools)])

    def call() -> str:
        result = tool("Paris")
        return asyncio.run(result) if is_async else result  # type: ignore[no-any-return]

    if tools:
        assert call() == "sunny in Paris"
        assert calls == ["Paris", "Paris"]
    else:
        with pytest.raises(ConnectionError):
            call()
        assert calls == ["Paris"]


# -- the real SDKs -----------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_openai_503s_are_retried_with_the_sdk_retries_off(
    waits: Waits, is_async: bool, stream: bool
) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["Hello!"])
    provider.fail(503, times=2)
    client = hw.wrap(provider.openai(is_async, max_retries=0), use=[Retry(jitter=False)])

    async def acall() -> str:
        made = await client.chat.completions.create(model="m", messages=USER, stream=stream)
        if stream:
            return "".join([c.choices[0].delta.content or "" async for c in made if c.choices])
        return made.choices[0].message.content  # type: ignore[no-any-return]

    def call() -> str:
        made = client.chat.completions.create(model="m", messages=USER, stream=stream)
        if stream:
            return "".join(c.choices[0].delta.content or "" for c in made if c.choices)
        return made.choices[0].message.content  # type: ignore[no-any-return]

    assert (asyncio.run(acall()) if is_async else call()) == "Hello!"
    assert [r.status for r in provider.requests] == [503, 503, 200]
    assert waits.seconds == [1.0, 2.0]


def test_anthropic_429_waits_as_long_as_retry_after_says(waits: Waits) -> None:
    anthropic = pytest.importorskip("anthropic")
    provider = FakeProvider(["Hello!"])
    provider.fail(429, retry_after=3)
    client = hw.wrap(provider.anthropic(max_retries=0), use=[Retry(initial_delay=10)])
    message = client.messages.create(model="m", max_tokens=10, messages=USER)
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "Hello!"
    assert waits.seconds == [3.0]


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "google.genai"])
def test_a_408_request_timeout_is_retried_for_every_sdk(waits: Waits, sdk: str) -> None:
    pytest.importorskip(sdk)
    provider = FakeProvider(["Hello!"])
    provider.fail(408)
    retry = Retry(jitter=False)
    if sdk == "openai":
        openai = hw.wrap(provider.openai(max_retries=0), use=[retry])
        text = openai.chat.completions.create(model="m", messages=USER).choices[0].message.content
    elif sdk == "anthropic":
        anthropic = hw.wrap(provider.anthropic(max_retries=0), use=[retry])
        block = anthropic.messages.create(model="m", max_tokens=10, messages=USER).content[0]
        text = getattr(block, "text", None)
    else:
        genai = hw.wrap(provider.genai(max_retries=0), use=[retry])
        text = genai.models.generate_content(model="gemini", contents="hi").text
    assert text == "Hello!"
    assert [r.status for r in provider.requests] == [408, 200]
    assert waits.seconds == [1.0]


def test_anthropic_400_is_not_retried(waits: Waits) -> None:
    anthropic = pytest.importorskip("anthropic")
    provider = FakeProvider(["Hello!"])
    provider.fail(400)
    client = hw.wrap(provider.anthropic(max_retries=0), use=[Retry()])
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model="m", max_tokens=10, messages=USER)
    assert len(provider.requests) == 1
    assert waits.seconds == []


def test_google_500s_are_retried(waits: Waits) -> None:
    pytest.importorskip("google.genai")
    provider = FakeProvider(["Hello!"])
    provider.fail(500)
    client = hw.wrap(provider.genai(max_retries=0), use=[Retry(jitter=False)])
    answer = client.models.generate_content(model="gemini", contents="hi")
    assert answer.text == "Hello!"
    assert [r.status for r in provider.requests] == [500, 200]


IN_STREAM_ERRORS = {
    # what each API sends inside a stream it answered with HTTP 200, by the error's type
    "anthropic": b'event: error\ndata: {"type": "error", "error": {"type": "%s"}}\n\n',
    "openai": b'data: {"error": {"message": "x", "type": "%s"}}\n\n',
}


def sdk_streaming_model(sdk: str, first: bytes) -> tuple[Callable[[str], str], list[int]]:
    """A model function that reads an SDK's stream itself; the first HTTP answer is a 200
    stream holding `first`, the next ones are the fake provider's."""
    from hookwrap.testing._fake import _httpx_module  # pyright: ignore[reportPrivateUsage]

    module = pytest.importorskip(sdk)
    http_client: Any = module.DefaultHttpxClient
    httpx = _httpx_module(sdk_client=http_client)
    inner = FakeProvider(["Hello!"]).transport(httpx)
    status: list[int] = []

    def handle(request: Any) -> Any:
        if not status:
            status.append(200)
            headers = {"content-type": "text/event-stream"}
            return httpx.Response(200, headers=headers, content=first)
        status.append(200)
        return inner.handle_request(request)

    transport = http_client(transport=httpx.MockTransport(handle))
    if sdk == "anthropic":
        client: Any = module.Anthropic(
            api_key="k", base_url="http://x", max_retries=0, http_client=transport
        )

        def ask(prompt: str) -> str:
            messages = [{"role": "user", "content": prompt}]
            with client.messages.stream(model="m", max_tokens=9, messages=messages) as stream:
                return str(stream.get_final_text())

        return ask, status
    client = module.OpenAI(
        api_key="k", base_url="http://x/v1", max_retries=0, http_client=transport
    )

    def ask_openai(prompt: str) -> str:
        messages = [{"role": "user", "content": prompt}]
        chunks = client.chat.completions.create(model="m", messages=messages, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    return ask_openai, status


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_an_overloaded_error_inside_a_200_stream_is_retried(waits: Waits, sdk: str) -> None:
    """The API said so in an event, not a status: the SDK's error has status 200 (or none)
    and names the type in its body."""
    kind = b"overloaded_error" if sdk == "anthropic" else b"server_error"
    ask, status = sdk_streaming_model(sdk, IN_STREAM_ERRORS[sdk] % kind)
    assert hw.model(ask, use=[Retry()])("hi") == "Hello!"
    assert len(status) == 2
    assert len(waits.seconds) == 1


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_an_invalid_request_error_inside_a_200_stream_is_not(waits: Waits, sdk: str) -> None:
    ask, status = sdk_streaming_model(sdk, IN_STREAM_ERRORS[sdk] % b"invalid_request_error")
    module = pytest.importorskip(sdk)
    with pytest.raises(module.APIError):
        hw.model(ask, use=[Retry()])("hi")
    assert len(status) == 1
    assert waits.seconds == []


def test_a_patched_sdk_takes_retry_for_sync_and_async_clients(waits: Waits) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["one", "two"])
    hw.patch("openai", use=[Retry(jitter=False)])
    try:
        provider.fail(503)
        sync = provider.openai(max_retries=0)
        first = sync.chat.completions.create(model="m", messages=USER)
        provider.fail(503)
        aclient = provider.openai(True, max_retries=0)
        second = asyncio.run(aclient.chat.completions.create(model="m", messages=USER))
    finally:
        hw.unpatch("openai")
    assert [first.choices[0].message.content, second.choices[0].message.content] == ["one", "two"]
    assert waits.seconds == [1.0, 1.0]


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_retries": -1}, ValueError, "max_retries.*int >= 0.*-1"),
        ({"max_retries": 2.5}, TypeError, "max_retries"),
        ({"max_retries": True}, TypeError, "max_retries"),
        ({"initial_delay": "1"}, TypeError, r"initial_delay.*seconds >= 0 \(got str: '1'\)"),
        ({"initial_delay": True}, TypeError, r"initial_delay.*\(got bool: True\)"),
        ({"initial_delay": -1}, ValueError, r"initial_delay=...\) expects .*>= 0 \(got -1\)"),
        ({"initial_delay": float("nan")}, ValueError, r"initial_delay.*finite.*\(got nan\)"),
        ({"initial_delay": 10**400}, ValueError, "initial_delay.*finite"),
        ({"max_delay": "60"}, TypeError, "max_delay.*seconds >= 0"),
        ({"max_delay": -0.5}, ValueError, r"max_delay=...\) expects .*seconds >= 0 \(got -0.5\)"),
        ({"max_delay": float("inf")}, ValueError, r"max_delay.*finite.*\(got inf\)"),
        ({"backoff": "2"}, TypeError, r"backoff=...\) expects a finite number >= 1 \(got str"),
        ({"backoff": 0.5}, ValueError, r"backoff=...\) expects a finite number >= 1 \(got 0.5\)"),
        ({"backoff": -1}, ValueError, r"backoff.*>= 1 \(got -1\)"),
        ({"backoff": float("inf")}, ValueError, "backoff.*finite"),
        ({"jitter": "yes"}, TypeError, "jitter.*True or False"),
        ({"tools": 1}, TypeError, "tools.*True or False"),
        ({"retry_on": "ConnectionError"}, TypeError, "retry_on.*exception type"),
        ({"retry_on": (ValueError, 3)}, TypeError, "retry_on"),
        ({"retry_on": ()}, TypeError, "retry_on"),
    ],
)
def test_bad_arguments_are_refused_when_made(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Retry(**kwargs)


def test_the_limits_accept_ints_floats_and_their_edges() -> None:
    retry = Retry(initial_delay=0, max_delay=0.0, backoff=1)
    assert (retry.initial_delay, retry.max_delay, retry.backoff) == (0.0, 0.0, 1.0)


# Wrong type: TypeError; right type, wrong value: ValueError; both name the argument and what
# it expects. Retry's rule, which every built-in middleware follows.
@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: Retry(initial_delay=-1), ValueError, r"Retry\(initial_delay=...\) expects"),
        (lambda: Timeout(model=-1), ValueError, r"Timeout\(model=...\) must be"),
        (lambda: Timeout(tool="1"), TypeError, r"Timeout\(tool=...\) must be"),
        (lambda: CallLimit(model_calls=-1), ValueError, r"CallLimit\(model_calls=...\) expects"),
        (lambda: CallLimit(tool_calls=1.5), TypeError, r"CallLimit\(tool_calls=...\) expects"),
        (lambda: ToolCache(ttl=-1), ValueError, r"ToolCache\(ttl=...\)"),
        (lambda: ToolCache(ttl=10**400), ValueError, r"ToolCache\(ttl=...\)"),
        (lambda: Timeout(model=10**400), ValueError, r"Timeout\(model=...\) must be"),
        (lambda: ToolCache(ttl="1"), TypeError, r"ToolCache\(ttl=...\)"),
        (lambda: ToolCache(max_size=0), ValueError, r"ToolCache\(max_size=...\) expects"),
        (
            lambda: ContentGuard(rules=[("a", "b")], strategy="lines"),
            ValueError,
            r"ContentGuard\(strategy=...\) expects 'buffered' or 'chunk' \(got 'lines'\)",
        ),
        (
            lambda: ContentGuard(rules=[("a", "b")], strategy=1),
            TypeError,
            r"ContentGuard\(strategy=...\) expects 'buffered' or 'chunk' \(got int: 1\)",
        ),
        (lambda: ContentGuard(rules=[("a", "b")], window=0), ValueError, r"\(window=...\)"),
    ],
)
def test_every_constructor_tells_a_wrong_type_from_a_wrong_value(
    make: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(Exception, match=message) as excinfo:
        make()
    assert type(excinfo.value) is error


def test_it_provides_no_tools_of_its_own() -> None:
    """`tools=` says what is retried; the Middleware's `tools` (tools it adds) stay empty."""
    assert Retry(tools=True).tools == ()


def test_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Retry(3)  # type: ignore[misc]
