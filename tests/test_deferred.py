"""Deferred views: an SDK call's request and response are read from the native call the
first time someone looks at them, and then are what reading them at once gives."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import pickle
import sys
import threading
from collections.abc import Callable
from typing import Any

import attrs
import pytest

import hookwrap as hw
from hookwrap._types import Message, ModelRequest, ModelResponse, Usage, deferred_request
from hookwrap._types import deferred_response as deferred_response_of
from hookwrap.adapters import _google_wire, _wire, google
from hookwrap.adapters._anthropic_wire import MessagesWire
from hookwrap.adapters._google_wire import STREAM_PATH, GeminiWire
from hookwrap.adapters._openai_wire import ChatCompletionsWire, CompletionsWire, ResponsesWire
from hookwrap.adapters._wire import Wire
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

USER = [{"role": "user", "content": "hi"}]
FULL = ModelRequest((Message.user("hi"),), model="full", options={"temperature": 0}, stream=True)


class Reads:
    """A `read` for deferred views that counts its calls."""

    def __init__(self, result: Any = FULL) -> None:
        self.result = result
        self.calls = 0

    def __call__(self, arg: Any) -> Any:
        self.calls += 1
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


def lazy(read: Callable[[Any], Any], model: str | None = "m", stream: bool = False) -> Any:
    return deferred_request(model, stream, "raw", read, "body")


# -- the views themselves --------------------------------------------------------------------


def test_a_deferred_view_is_a_model_request_and_reads_nothing_until_asked() -> None:
    read = Reads()
    view = lazy(read)
    assert isinstance(view, ModelRequest)
    assert (view.model, view.stream, view.raw) == ("m", False, "raw")  # given: no read
    assert read.calls == 0
    assert view.messages == FULL.messages
    assert type(view) is ModelRequest  # once read, a plain one


def test_the_public_classes_read_their_attributes_at_full_speed() -> None:
    """No `__getattr__` on the public classes: Python specializes attribute reads only on
    classes without one; the deferred views' own subclass has it."""
    for cls in (ModelRequest, ModelResponse):
        assert not hasattr(cls, "__getattr__")
    assert hasattr(type(lazy(Reads())), "__getattr__")


def test_the_first_field_read_fills_every_other_once_and_keeps_the_given_ones() -> None:
    read = Reads()
    view = lazy(read)
    assert view.messages == FULL.messages
    assert (view.tools, view.options) == (FULL.tools, FULL.options)
    assert read.calls == 1
    # the fields it was made with stay as given, not as the complete view has them
    assert (view.model, view.stream, view.raw) == ("m", False, "raw")
    assert view.options is FULL.options  # the read's own values, not copies


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(lambda v: v == ModelRequest(FULL.messages, (), "m", FULL.options), id="eq"),
        pytest.param(lambda v: "hi" in repr(v), id="repr"),
        pytest.param(lambda v: v.replace(model="x").messages == FULL.messages, id="replace"),
        pytest.param(lambda v: attrs.asdict(v)["options"] == {"temperature": 0}, id="asdict"),
        pytest.param(lambda v: copy.copy(v).messages == FULL.messages, id="copy"),
        pytest.param(lambda v: pickle.loads(pickle.dumps(v)).tools == (), id="pickle"),
    ],
)
def test_every_way_of_looking_at_a_view_sees_it_filled(use: Callable[[Any], bool]) -> None:
    read = Reads(FULL.replace(options={"temperature": 0}, tools=()))
    view = lazy(read)
    assert use(view)
    assert read.calls == 1


def test_replace_copy_and_pickle_give_plain_views_of_the_public_class() -> None:
    for make in (
        lambda v: v.replace(model="other"),
        lambda v: attrs.evolve(v, model="other"),
        lambda v: copy.copy(v).replace(model="other"),
        lambda v: copy.deepcopy(v).replace(model="other"),
        lambda v: pickle.loads(pickle.dumps(v)).replace(model="other", raw="raw"),
    ):
        changed = make(lazy(Reads()))
        assert type(changed) is ModelRequest
        assert changed == ModelRequest(FULL.messages, (), "other", FULL.options)
        assert changed.raw == "raw"


def test_an_unread_view_equals_the_complete_view_from_either_side() -> None:
    plain = ModelRequest(FULL.messages, (), "m", FULL.options)
    assert lazy(Reads()) == plain
    assert plain == lazy(Reads())
    assert (plain != lazy(Reads())) is False
    assert lazy(Reads()) != plain.replace(model="x")


def test_a_name_the_class_does_not_have_is_an_attribute_error_and_reads_nothing() -> None:
    read = Reads()
    view = lazy(read)
    with pytest.raises(AttributeError, match="has no attribute 'mesages'"):
        view.mesages  # noqa: B018
    assert not hasattr(view, "mesages")
    assert read.calls == 0


def test_a_view_is_frozen_before_and_after_it_is_filled() -> None:
    view = lazy(Reads())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        view.messages = ()
    assert view.messages == FULL.messages
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        view.messages = ()


def test_a_read_that_fails_raises_its_own_error_at_every_look() -> None:
    read = Reads(ValueError("a message has role 'robot'"))
    view = lazy(read)
    for _ in range(2):
        with pytest.raises(ValueError, match="role 'robot'"):
            view.messages  # noqa: B018
    assert read.calls == 2
    assert view.model == "m"  # what it was made with still reads


def test_a_deferred_response_reads_every_field_on_first_use() -> None:
    full = ModelResponse(Message.assistant("hello"), Usage(1, 2, 3), "stop", "m", {"id": 1})
    read = Reads(full)
    view = deferred_response_of(read, b"{}")
    assert isinstance(view, ModelResponse)
    assert read.calls == 0
    assert view.text == "hello"  # through a property too
    assert (view.usage, view.finish_reason, view.model, view.raw) == (
        Usage(1, 2, 3),
        "stop",
        "m",
        {"id": 1},
    )
    assert view == full
    assert read.calls == 1


def test_threads_reading_one_view_at_once_all_see_the_complete_view() -> None:
    for _ in range(20):
        gate = threading.Barrier(8)
        view = lazy(Reads())
        seen: list[Any] = []

        def look(view: Any = view, gate: threading.Barrier = gate, seen: list[Any] = seen) -> None:
            gate.wait()
            seen.append((view.messages, view.tools, view.options, view.model))

        threads = [threading.Thread(target=look) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [(FULL.messages, (), FULL.options, "m")] * 8


# -- the wires: the fields a view is made with are those the full reading gives ---------------


class Placeholder:
    """Like the SDKs' `omit` / `NOT_GIVEN`: falsy, and not a str."""

    def __bool__(self) -> bool:
        return False


BODIES = [
    {},
    {"model": "m"},
    {"model": "m", "stream": True},
    {"model": "m", "stream": False},
    {"model": None, "stream": None},
    {"model": Placeholder(), "stream": Placeholder()},
    {"model": 7, "stream": 1},
]


@pytest.mark.parametrize(
    ("wire", "extra"),
    [
        (ChatCompletionsWire(), {"messages": USER}),
        (ResponsesWire(), {"input": "hi", "instructions": "Be brief."}),
        (CompletionsWire(), {"prompt": "hi"}),
        (MessagesWire(), {"messages": USER, "max_tokens": 5, "system": "Be brief."}),
    ],
    ids=("chat", "responses", "completions", "anthropic"),
)
@pytest.mark.parametrize("head", BODIES, ids=range(len(BODIES)))
def test_a_view_of_a_body_is_its_full_reading(
    wire: Wire, extra: dict[str, Any], head: dict[str, Any]
) -> None:
    body = {**extra, **head}
    full = wire.request(body)
    view = wire.view(body, "raw")
    assert (view.model, view.stream) == (full.model, full.stream)  # made with, not read
    assert view == full
    assert view.raw == "raw"


@pytest.mark.parametrize(
    "path",
    [None, "models/gemini-2.5-flash:generateContent", f"models/g{STREAM_PATH}", "models/x"],
)
def test_a_gemini_view_is_its_full_reading(path: str | None) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    wire = GeminiWire()
    full = wire.request(body, path)
    view = wire.view(body, "raw", path)
    assert (view.model, view.stream) == (full.model, full.stream)
    assert view == full
    assert view.raw == "raw"


# -- SDK calls: read when a hook looks, not otherwise -----------------------------------------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the views SDK adapters made were read (filled), requests and responses."""
    counts = {"request": 0, "response": 0}

    def counting(make: Any, kind: str) -> Any:
        def made(*args: Any) -> Any:
            *given, read, arg = args

            def counted(arg: Any) -> Any:
                counts[kind] += 1
                return read(arg)

            return make(*given, counted, arg)

        return made

    for module in (_wire, _google_wire):
        monkeypatch.setattr(module, "deferred_request", counting(deferred_request, "request"))
    for module in (_wire, google):
        monkeypatch.setattr(module, "deferred_response", counting(deferred_response_of, "response"))
    return counts


def _client(sdk: str, provider: FakeProvider, use: list[Any]) -> Callable[[], str]:
    if sdk == "openai":
        client = hw.wrap(provider.openai(), use=use)
        return lambda: (
            client.chat.completions.create(model="m", messages=USER).choices[0].message.content
        )
    if sdk == "anthropic":
        client = hw.wrap(provider.anthropic(), use=use)
        return lambda: (
            client.messages.create(model="m", max_tokens=9, messages=USER).content[0].text
        )
    client = hw.wrap(provider.genai(), use=use)
    return lambda: client.models.generate_content(model="m", contents="hi").text


def _installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


# google-genai needs Python 3.11 or newer: where it is not installed its cases are skipped
SDKS = (
    "openai",
    "anthropic",
    pytest.param(
        "genai",
        marks=pytest.mark.skipif(not _installed("google.genai"), reason="needs google-genai"),
    ),
)


@hw.before_model
def glance(request: hw.ModelRequest) -> None:
    return None


@hw.after_model
def nod(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    return None


@hw.wrap_model
def around(request: hw.ModelRequest, call_next: Any) -> Any:
    return call_next(request)


@pytest.mark.parametrize("sdk", SDKS)
def test_hooks_that_do_not_look_leave_the_call_unread(sdk: str, reads: dict[str, int]) -> None:
    call = _client(sdk, FakeProvider(["hello"]), [glance, nod, around])
    assert call() == "hello"
    assert reads == {"request": 0, "response": 0}


@pytest.mark.parametrize("sdk", SDKS)
def test_hooks_that_look_read_the_call_once_and_see_it_all(sdk: str, reads: dict[str, int]) -> None:
    seen: list[Any] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        seen.append(request.messages[-1].text)

    @hw.after_model
    def look_after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append((request.messages[-1].text, response.text, response.usage is not None))

    call = _client(sdk, FakeProvider(["hello"]), [look, look_after, nod, glance])
    assert call() == "hello"
    assert seen == ["hi", ("hi", "hello", True)]
    assert reads == {"request": 1, "response": 1}


@pytest.mark.parametrize("sdk", SDKS)
def test_inside_a_run_the_usage_is_read_and_counted(sdk: str, reads: dict[str, int]) -> None:
    finished: list[Any] = []

    @hw.on_finish
    def done(info: hw.FinishInfo) -> None:
        finished.append(info.usage)

    call = _client(sdk, FakeProvider(["hello"]), [glance])
    with hw.run(use=[done]):
        call()
    assert len(finished) == 1
    assert finished[0] is not None
    assert finished[0].output_tokens > 0
    assert reads["response"] == 1


# -- no hooks at all: the SDK alone ------------------------------------------------------------


def _noting_runs(runs: list[bool]) -> Callable[[hw.ModelRequest], str]:
    """A scripted reply that notes whether the provider was called inside a run."""

    def reply(request: hw.ModelRequest) -> str:
        try:
            hw.current()
        except LookupError:
            runs.append(False)
        else:
            runs.append(True)
        return "hello"

    return reply


@pytest.mark.parametrize("hooked", [False, True], ids=("no_hooks", "hooks"))
@pytest.mark.parametrize("sdk", SDKS)
def test_a_client_wrapped_with_no_hooks_calls_the_sdk_directly(
    sdk: str, hooked: bool, reads: dict[str, int]
) -> None:
    runs: list[bool] = []
    call = _client(sdk, FakeProvider([_noting_runs(runs)]), [glance] if hooked else [])
    assert call() == "hello"
    assert runs == [hooked]  # a hooked call runs in its one-call run; a bare one in none


def test_an_async_client_wrapped_with_no_hooks_calls_the_sdk_directly() -> None:
    pytest.importorskip("google.genai")
    runs: list[bool] = []
    provider = FakeProvider([_noting_runs(runs), _noting_runs(runs)])
    openai_client = hw.wrap(provider.openai(async_=True), use=[])
    genai_client = hw.wrap(provider.genai(), use=[]).aio

    async def main() -> None:
        await openai_client.chat.completions.create(model="m", messages=USER)
        await genai_client.models.generate_content(model="m", contents="hi")

    asyncio.run(main())
    assert runs == [False, False]


# -- streams no hook looks at chunk by chunk ---------------------------------------------------


@pytest.fixture
def chunks_made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every chunk the wires made of a stream's events."""
    made: list[Any] = []
    for cls in (ChatCompletionsWire, MessagesWire, GeminiWire):
        original = cls.chunk

        def counted(self: Any, event: Any, _fn: Any = original) -> Any:
            chunk = _fn(self, event)
            made.append(chunk)
            return chunk

        monkeypatch.setattr(cls, "chunk", counted)
    return made


def _stream(sdk: str, provider: FakeProvider, use: list[Any]) -> Callable[[], Any]:
    if sdk == "openai":
        client = hw.wrap(provider.openai(), use=use)
        return lambda: client.chat.completions.create(model="m", messages=USER, stream=True)
    if sdk == "anthropic":
        anthropic_client = hw.wrap(provider.anthropic(), use=use)
        return lambda: anthropic_client.messages.create(
            model="m", max_tokens=9, messages=USER, stream=True
        )
    genai_client = hw.wrap(provider.genai(), use=use)
    _ALIVE.append(genai_client)  # a google-genai client closes its HTTP client when collected
    return lambda: genai_client.models.generate_content_stream(model="m", contents="hi")


_ALIVE: list[Any] = []


def _text(sdk: str, stream: Any) -> str:
    if sdk == "openai":
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    if sdk == "anthropic":
        return "".join(e.delta.text for e in stream if e.type == "content_block_delta")
    return "".join(c.text or "" for c in stream)


STREAMING = SDKS


@pytest.mark.parametrize("sdk", STREAMING)
def test_a_stream_no_hook_looks_into_makes_no_chunks(sdk: str, chunks_made: list[Any]) -> None:
    plain = _text(sdk, _stream(sdk, FakeProvider(["hello there"]), [])())
    by_the_fake = len(chunks_made)  # the fake provider reads what it serves through the wire
    hooked = _text(sdk, _stream(sdk, FakeProvider(["hello there"]), [glance, nod, around])())
    assert hooked == plain == "hello there"
    assert len(chunks_made) == 2 * by_the_fake


@pytest.mark.parametrize("sdk", STREAMING)
def test_an_after_model_hook_that_looks_sees_the_stream_assembled(
    sdk: str, chunks_made: list[Any]
) -> None:
    seen: list[Any] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append((response.text, response.finish_reason is not None, response.model))

    _text(sdk, _stream(sdk, FakeProvider(["hello there"]), [])())
    by_the_fake = len(chunks_made)
    stream = _stream(sdk, FakeProvider(["hello there"]), [look, around])()
    assert _text(sdk, stream) == "hello there"
    assert seen == [("hello there", True, "m")]
    assert len(chunks_made) > 2 * by_the_fake  # made once someone looked


@pytest.mark.parametrize("sdk", STREAMING)
def test_a_stream_of_native_items_counts_its_usage_in_a_run(sdk: str) -> None:
    usages: list[Any] = []
    finished: list[Any] = []

    @hw.on_usage
    def count(usage: hw.Usage) -> None:
        usages.append(usage)

    @hw.on_finish
    def done(info: hw.FinishInfo) -> None:
        finished.append(info.usage)

    provider = FakeProvider(["hello there"])
    with hw.run(use=[done]):
        _text(sdk, _stream(sdk, provider, [count, nod])())
    if sdk == "openai":  # Chat Completions streams carry usage only when asked for
        assert usages == []
        assert finished == [hw.Usage()]
    else:
        assert len(usages) == 1
        assert usages[0].output_tokens > 0
        assert finished == usages


@pytest.mark.parametrize("sdk", STREAMING)
def test_leaving_a_stream_of_native_items_early_closes_it_at_once(sdk: str) -> None:
    ends: list[Any] = []

    @hw.on_abort
    def aborted(info: Any) -> None:
        ends.append("abort")

    provider = FakeProvider(["one two three four five six"])
    stream = _stream(sdk, provider, [nod, aborted])()
    for _ in stream:
        break
    stream.close()
    assert ends == ["abort"]
    assert provider.closed == 1


@hw.wrap_model
def agreed(request: hw.ModelRequest) -> Any:
    response = yield request
    return response


@hw.wrap_model
def peek(request: hw.ModelRequest, call_next: Any) -> Any:
    chunks = call_next(request)
    first = next(chunks)

    def rest() -> Any:
        yield first
        yield from chunks

    return rest()


@pytest.mark.parametrize("sdk", STREAMING)
def test_a_stream_a_wrap_hook_pulled_from_is_read_as_chunks(
    sdk: str, chunks_made: list[Any]
) -> None:
    _text(sdk, _stream(sdk, FakeProvider(["hello there"]), [])())
    by_the_fake = len(chunks_made)
    stream = _stream(sdk, FakeProvider(["hello there"]), [peek, nod])()
    assert _text(sdk, stream) == "hello there"
    assert len(chunks_made) > 2 * by_the_fake


@pytest.mark.parametrize("sdk", STREAMING)
def test_an_async_stream_no_hook_looks_into_makes_no_chunks(
    sdk: str, chunks_made: list[Any]
) -> None:
    seen: list[str] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    async def main(use: list[Any]) -> str:
        provider = FakeProvider(["hello there"])
        if sdk == "openai":
            client = hw.wrap(provider.openai(async_=True), use=use)
            stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
            return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        if sdk == "anthropic":
            aclient = hw.wrap(provider.anthropic(async_=True), use=use)
            stream = await aclient.messages.create(
                model="m", max_tokens=9, messages=USER, stream=True
            )
            return "".join([e.delta.text async for e in stream if e.type == "content_block_delta"])
        gclient = hw.wrap(provider.genai(), use=use).aio
        _ALIVE.append(gclient)
        stream = await gclient.models.generate_content_stream(model="m", contents="hi")
        return "".join([c.text or "" async for c in stream])

    assert asyncio.run(main([])) == "hello there"
    by_the_fake = len(chunks_made)
    assert asyncio.run(main([glance, nod, agreed])) == "hello there"
    assert len(chunks_made) == 2 * by_the_fake
    assert asyncio.run(main([look])) == "hello there"
    assert seen == ["hello there"]
    assert len(chunks_made) > 3 * by_the_fake


def test_a_body_the_views_cannot_read_is_refused_in_the_hook_that_looks() -> None:
    """An Anthropic message with a role the neutral types do not have: the hook that reads
    the messages gets the wire's `ValueError`, noted with its name."""

    @hw.before_model
    def reads_messages(request: hw.ModelRequest) -> None:
        request.messages  # noqa: B018

    client = hw.wrap(FakeProvider(["hello"]).anthropic(), use=[glance, reads_messages])
    robot = [{"role": "robot", "content": "beep"}]
    with pytest.raises(ValueError, match="role 'user', 'assistant' or 'system'") as caught:
        client.messages.create(model="m", max_tokens=9, messages=robot)  # type: ignore[misc,list-item]
    assert any("reads_messages" in note for note in getattr(caught.value, "__notes__", []))


@hw.wrap_model
def asks_twice_keeps_the_first(request: hw.ModelRequest, call_next: Any) -> Any:
    first = call_next(request)
    call_next(request)  # made, never read: closed with the call
    return first


@pytest.mark.parametrize("sdk", STREAMING)
def test_the_stream_handed_on_is_the_one_the_wrap_hook_returned(sdk: str) -> None:
    provider = FakeProvider(["first answer", "second answer"])
    stream = _stream(sdk, provider, [asks_twice_keeps_the_first, nod])()
    assert _text(sdk, stream) == "first answer"
    # each call of the model sent its request (google-genai's too: the hook's call reads
    # the stream's first object, where an error opening it reaches the hook)
    assert len(provider.requests) == 2


def test_a_stream_of_native_items_broken_midway_ends_the_run_with_its_error() -> None:
    # the HTTP library the SDK is built on (httpx2, or httpx for older releases)
    httpx2: Any = next(
        sys.modules[root]
        for cls in openai.DefaultHttpxClient.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )

    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    event = {**head, "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}

    class Broken(httpx2.SyncByteStream):
        def __iter__(self) -> Any:
            yield f"data: {json.dumps(event)}\n\n".encode()
            raise httpx2.ReadError("connection reset")

    def handle(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Broken())

    ends: list[Any] = []

    @hw.on_error
    def errored(info: hw.FinishInfo) -> None:
        ends.append(type(info.error).__name__)

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ends.append("finish")

    client = openai.OpenAI(
        api_key="k",
        base_url="http://fake.invalid/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )
    wrapped = hw.wrap(client, use=[nod, errored, finished])
    stream = wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    got: list[str] = []
    sdk_errors = (httpx2.ReadError, openai.APIConnectionError)  # as the SDK puts it
    with pytest.raises(sdk_errors) as caught:
        for chunk in stream:
            got.append(chunk.choices[0].delta.content)
    assert got == ["a"]
    assert ends == [type(caught.value).__name__]  # the run ends once, with the caller's error


def test_a_gemini_view_reads_its_model_right_past_the_paths_it_remembers() -> None:
    wire = GeminiWire()
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    for n in range(600):
        suffix = STREAM_PATH if n % 2 else ":generateContent"
        view = wire.view(body, None, f"models/m{n}{suffix}")
        assert (view.model, view.stream) == (f"m{n}", bool(n % 2))


def test_the_converter_unstructures_an_unread_view_as_the_complete_one() -> None:
    from hookwrap._convert import converter

    plain = ModelRequest(FULL.messages, (), "m", FULL.options, raw="raw")
    assert converter.unstructure(lazy(Reads())) == converter.unstructure(plain)
    full = ModelResponse(Message.assistant("hello"), Usage(1, 2, 3), "stop", "m", None)
    view = deferred_response_of(Reads(full), b"{}")
    assert converter.unstructure(view) == converter.unstructure(full)


# -- plain function streams ---------------------------------------------------------------------

ITEMS: list[Any] = [
    "Hel",
    "lo",
    {"kind": "text", "text": " there"},
    hw.Chunk("usage", usage=hw.Usage(2, 3, 5)),
    "",
    {"kind": "finish", "finish_reason": "stop"},
]


def _function_stream(is_async: bool, items: list[Any]) -> Any:
    if is_async:

        async def allm(prompt: str) -> Any:
            for item in items:
                yield item

        return allm

    def llm(prompt: str) -> Any:
        yield from items

    return llm


def _drain(is_async: bool, wrapped: Any) -> list[Any]:
    if not is_async:
        return list(wrapped("hi"))

    async def main() -> list[Any]:
        return [item async for item in wrapped("hi")]

    return asyncio.run(main())


@hw.on_chunk
def passes(chunk: hw.Chunk) -> None:
    return None


@pytest.mark.parametrize("is_async", [False, True], ids=("sync", "async"))
def test_a_function_stream_no_hook_looks_into_gives_what_a_looked_at_one_gives(
    is_async: bool,
) -> None:
    """The same items, and the same response for `after_model`, whether the stream is
    read as chunks (an `on_chunk` hook) or handed on as it came (none)."""
    seen: list[Any] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    fn = _function_stream(is_async, ITEMS)
    as_chunks = _drain(is_async, hw.model(fn, use=[look, passes]))
    as_items = _drain(is_async, hw.model(fn, use=[look]))
    assert as_items == as_chunks
    assert as_items[:2] == ["Hel", "lo"]
    assert as_items[0] is ITEMS[0]  # the very objects
    assert seen[0] == seen[1]
    assert seen[1].text == "Hello there"
    assert seen[1].usage == hw.Usage(2, 3, 5)
    assert seen[1].finish_reason == "stop"


@pytest.mark.parametrize("is_async", [False, True], ids=("sync", "async"))
def test_a_function_stream_handed_on_still_refuses_what_is_no_chunk(is_async: bool) -> None:
    fn = _function_stream(is_async, ["ok", 7])
    with pytest.raises(TypeError, match="streamed a int; a streaming model function yields"):
        _drain(is_async, hw.model(fn, use=[nod]))


def test_a_function_stream_no_hook_looks_into_makes_no_chunk_of_its_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hookwrap.adapters import function

    made: list[Any] = []
    original = function.new_chunk

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(function, "new_chunk", counted)
    fn = _function_stream(False, ["a", "b", "c"])
    assert list(hw.model(fn, use=[nod])("hi")) == ["a", "b", "c"]
    assert made == []
    assert list(hw.model(fn, use=[nod, passes])("hi")) == ["a", "b", "c"]
    assert len(made) == 3


# -- plain functions ---------------------------------------------------------------------------


def test_a_function_call_no_hook_looks_into_reads_neither_its_messages_nor_its_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hookwrap.adapters import function

    made: list[Any] = []
    original = function.new_message

    def counted(*args: Any) -> Any:
        made.append(args)
        return original(*args)

    monkeypatch.setattr(function, "new_message", counted)
    got: list[Any] = []

    @hw.before_model
    def before(request: hw.ModelRequest) -> None:
        got.append(request)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        got.append(response)

    def answer(prompt: str) -> str:
        return prompt.upper()

    assert hw.model(answer, use=[before, after])("hi") == "HI"
    assert made == []  # neither the prompt nor the answer became a Message
    request, response = got
    assert type(request) is not ModelRequest
    assert isinstance(request, ModelRequest)
    assert type(response) is not ModelResponse
    assert isinstance(response, ModelResponse)
    assert request.messages == (Message.user("hi"),)  # read now, on first use
    assert type(request) is ModelRequest
    assert response == ModelResponse(Message.assistant("HI"), raw="HI")
    assert type(response) is ModelResponse


def test_a_function_calls_views_read_late_are_what_reading_them_at_once_gives() -> None:
    late: list[Any] = []
    early: list[Any] = []

    @hw.before_model
    def keep(request: hw.ModelRequest) -> None:
        late.append(request)

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        early.append((request.messages, request.tools, request.model, request.options))

    def chat(messages: list[Any], model: str = "", temperature: float = 1.0) -> str:
        return "ok"

    given = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    hw.model(chat, use=[keep])(given, model="m1", temperature=0.5)
    hw.model(chat, use=[look])(given, model="m1", temperature=0.5)
    (request,) = late
    assert (request.messages, request.tools, request.model, request.options) == early[0]
    assert request.options == {"temperature": 0.5}
    assert request.messages[0] == Message.system("be brief")


def test_a_function_calls_request_shows_the_messages_it_was_called_with() -> None:
    """Read after the call, the request still holds the messages as they were when the
    call was made, although the target appended to its list meanwhile."""
    seen: list[Any] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(request.messages)

    def chat(messages: list[dict[str, str]]) -> str:
        messages.append({"role": "assistant", "content": "ok"})
        return "ok"

    history = [{"role": "user", "content": "hi"}]
    hw.model(chat, use=[look])(history)
    assert len(history) == 2
    assert seen == [(Message.user("hi"),)]


def test_a_message_no_view_can_hold_is_refused_in_the_hook_that_looks() -> None:
    """As for SDK bodies: the first hook that reads the messages gets the error, with its
    note; a call whose hooks never look passes them to the target as they were."""
    robot = [{"role": "robot", "content": "beep"}]
    given: list[Any] = []

    def chat(messages: list[dict[str, str]]) -> str:
        given.append(messages)
        return "ok"

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        request.messages  # noqa: B018

    with pytest.raises(ValueError, match="role must be one of") as caught:
        hw.model(chat, use=[look])(robot)
    assert any("look" in note for note in caught.value.__notes__)
    assert given == []
    assert hw.model(chat, use=[nod])(robot) == "ok"
    assert given == [robot]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_stream_whose_body_was_read_already_passes_the_hooks(sdk: str, is_async: bool) -> None:
    """A streamed answer whose body the transport read already (a response made with its
    content, as mock transports make them) is read from memory: the hooks see its chunks
    and the caller gets what it gets without them."""
    module: Any = pytest.importorskip(sdk)
    httpx: Any = next(
        sys.modules[root]
        for cls in module.DefaultHttpxClient.__mro__
        if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
    )
    live = FakeProvider(["hello there"] * 2).transport(httpx)  # one call each way

    def handle(request: Any) -> Any:
        streamed = live.handle_request(request)
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(streamed.status_code, headers=headers, content=streamed.read())

    client_class = getattr(module, ("Async" if is_async else "") + sdk.title().replace("ai", "AI"))
    http_class = module.DefaultAsyncHttpxClient if is_async else module.DefaultHttpxClient
    client = client_class(
        api_key="k",
        base_url="http://fake.invalid/v1" if sdk == "openai" else "http://fake.invalid",
        http_client=http_class(transport=httpx.MockTransport(handle)),
        max_retries=0,
    )

    @hw.on_chunk
    def upper(chunk: hw.Chunk) -> Any:
        return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None

    def texts(given: Any) -> list[str]:
        async def pull() -> list[Any]:
            if sdk == "openai":
                stream = await given.chat.completions.create(model="m", messages=USER, stream=True)
            else:
                stream = await given.messages.create(
                    model="m", max_tokens=9, messages=USER, stream=True
                )
            return [event async for event in stream]

        if not is_async:
            if sdk == "openai":
                events = list(given.chat.completions.create(model="m", messages=USER, stream=True))
            else:
                events = list(
                    given.messages.create(model="m", max_tokens=9, messages=USER, stream=True)
                )
        else:
            events = asyncio.run(pull())
        if sdk == "openai":
            return [
                e.choices[0].delta.content
                for e in events
                if e.choices and e.choices[0].delta.content
            ]
        return [e.delta.text for e in events if e.type == "content_block_delta"]

    plain = texts(client)
    assert "".join(plain) == "hello there"
    assert texts(hw.wrap(client, use=[upper])) == [t.upper() for t in plain]
