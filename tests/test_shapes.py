"""The four call shapes (SPEC §1, §4) for plain functions: sync, async, sync stream and async
stream, served by the same hooks; wrap-time shape checks; what wrapping keeps of the target."""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._hooks import async_twin
from hookwrap.testing import FakeProvider

Log = list[str]
OnCall = Callable[[str], None]

ANSWER = "answer"
PIECES = ("ans", "wer")

# sync def, async def, generator function, def returning an iterator, async generator
# function, async def returning an async iterator.
SHAPES = ("sync", "async", "sync_gen", "sync_iter", "async_gen", "async_iter")
# The four shapes as the target itself declares them.
DECLARED = ("sync", "async", "sync_gen", "async_gen")
# Shapes whose target runs (and so may fail) when it is called, not when it is pulled.
EAGER = ("sync", "async", "sync_iter", "async_iter")
ASYNC = ("async", "async_gen", "async_iter")
STREAMS = ("sync_gen", "sync_iter", "async_gen", "async_iter")


class Boom(Exception):
    """An error raised on purpose by a target."""


class Flaky(Exception):
    """A transient error: the first call fails, the next succeeds."""


def recorder(log: Log) -> OnCall:
    def on_call(prompt: str) -> None:
        log.append(f"model:{prompt}")

    return on_call


def failing(log: Log, *errors: BaseException) -> OnCall:
    """Record the call, then raise the next of `errors` (none left: succeed)."""
    pending = list(errors)

    def on_call(prompt: str) -> None:
        log.append(f"model:{prompt}")
        if pending:
            raise pending.pop(0)

    return on_call


async def _apieces(pieces: tuple[str, ...]) -> AsyncIterator[str]:
    for piece in pieces:
        yield piece


def target(shape: str, on_call: OnCall) -> Callable[..., Any]:
    """A fresh plain model function of `shape`, answering "answer" for a `prompt`."""
    if shape == "sync":

        def sync_fn(prompt: str) -> str:
            """Answer synchronously."""
            on_call(prompt)
            return ANSWER

        return sync_fn
    if shape == "async":

        async def async_fn(prompt: str) -> str:
            """Answer asynchronously."""
            on_call(prompt)
            return ANSWER

        return async_fn
    if shape == "sync_gen":

        def gen_fn(prompt: str) -> Iterator[str]:
            """Stream the answer from a generator."""
            on_call(prompt)
            yield from PIECES

        return gen_fn
    if shape == "sync_iter":

        def iter_fn(prompt: str) -> Iterator[str]:
            """Return an iterator over the answer."""
            on_call(prompt)
            return iter(PIECES)

        return iter_fn
    if shape == "async_gen":

        async def agen_fn(prompt: str) -> AsyncIterator[str]:
            """Stream the answer from an async generator."""
            on_call(prompt)
            for piece in PIECES:
                yield piece

        return agen_fn
    assert shape == "async_iter"

    async def aiter_fn(prompt: str) -> AsyncIterator[str]:
        """Return an async iterator over the answer."""
        on_call(prompt)
        return _apieces(PIECES)

    return aiter_fn


def drive(shape: str, fn: Callable[..., Any], prompt: str = "hi") -> Any:
    """Call `fn` as a caller of `shape` would; a stream is consumed and its items joined."""
    if shape == "sync":
        return fn(prompt)
    if shape in ("sync_gen", "sync_iter"):
        items = list(fn(prompt))
        assert all(type(item) is str for item in items), items
        return "".join(items)

    async def main() -> Any:
        if shape == "async":
            return await fn(prompt)
        stream = fn(prompt) if shape == "async_gen" else await fn(prompt)
        items = [item async for item in stream]
        assert all(type(item) is str for item in items), items
        return "".join(items)

    return asyncio.run(main())


def kind_of(response: Any) -> str:
    if isinstance(response, hw.ModelResponse):
        return "response"
    if hasattr(response, "__anext__"):
        return "async stream"
    if hasattr(response, "__next__"):
        return "stream"
    return type(response).__name__


EXPECTED_KIND = {
    "sync": "response",
    "async": "response",
    "sync_gen": "stream",
    "sync_iter": "stream",
    "async_gen": "async stream",
    "async_iter": "async stream",
}


# -- the generator form of wrap_model serves every shape --------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_generator_form_hook_runs_in_every_shape(shape: str) -> None:
    """`response = yield request` written once: the inner call happens at the yield, the
    response (or, in a streamed call, the stream of Chunks) is sent back in."""
    log: Log = []

    @hw.wrap_model
    def timed(request: hw.ModelRequest) -> Any:
        log.append(f"hook:before:{request.messages[-1].text}")
        response = yield request
        log.append(f"hook:after:{kind_of(response)}")
        return response

    assert drive(shape, hw.model(target(shape, recorder(log)), use=[timed])) == ANSWER
    expected = ["hook:before:hi", "model:hi", f"hook:after:{EXPECTED_KIND[shape]}"]
    if shape in ("sync_gen", "async_gen"):
        # a generator function's body runs when pulled, which may be after the hook returned
        assert log[0] == expected[0]
        assert sorted(log) == sorted(expected)
    else:
        assert log == expected


@pytest.mark.parametrize("shape", ["sync_gen", "async_gen"])
def test_a_whole_response_from_a_wrap_hook_reaches_a_streaming_caller_as_a_stream(
    shape: str,
) -> None:
    """A wrap hook may answer a streamed call with a whole response (a cache, a fallback):
    the caller still gets a stream, of the target's own chunk type, with that text."""
    seen: list[str] = []

    @hw.wrap_model
    def whole(request: hw.ModelRequest) -> Any:
        yield request
        return hw.ModelResponse(hw.Message.assistant("from the hook"))

    @hw.on_chunk
    def record(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    hooked = hw.model(target(shape, recorder([])), use=[whole, record])
    assert drive(shape, hooked) == "from the hook"  # `drive` checks every item is a str
    assert seen == ["from the hook"]


def test_a_whole_answer_with_tool_calls_keeps_them_in_a_dict_stream() -> None:
    """Its tool calls, usage and finish reason become chunks too, and `after_model` (which
    sees what the caller received) gets them back."""
    seen: list[hw.ModelResponse] = []
    call = hw.ToolCall("call_1", "get_weather", {"city": "Paris"})

    @hw.wrap_model
    def whole(request: hw.ModelRequest) -> Any:
        yield request
        message = hw.Message("assistant", "Checking.", tool_calls=(call,))
        return hw.ModelResponse(message, hw.Usage(3, 2, 5), "tool_calls")

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    def llm(prompt: str) -> Iterator[dict[str, Any]]:
        yield {"kind": "text", "text": "never"}

    chunks = list(hw.model(llm, use=[whole, record])("hi"))
    assert [c["kind"] for c in chunks] == ["text", "tool_call_start", "usage", "finish"]
    assert chunks[1]["tool_name"] == "get_weather"
    assert seen[0].message.tool_calls == (call,)
    assert seen[0].usage == hw.Usage(3, 2, 5)
    assert seen[0].finish_reason == "tool_calls"


def test_a_stream_annotated_as_chunks_gets_chunks_a_hook_adds_or_responds() -> None:
    """Before the stream yielded anything, the annotation says the form: `Chunk`s here."""

    @hw.wrap_model
    def prepend(request: hw.ModelRequest) -> Any:
        inner = yield request

        def chunks() -> Iterator[hw.Chunk]:
            yield hw.Chunk("text", "pre ")
            yield from inner

        return chunks()

    @hw.before_model
    def canned(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("canned")

    def llm(prompt: str) -> Iterator[hw.Chunk]:
        yield hw.Chunk("text", "said")

    added = list(hw.model(llm, use=[prepend])("hi"))
    assert added == [hw.Chunk("text", "pre "), hw.Chunk("text", "said")]
    assert list(hw.model(llm, use=[canned])("hi")) == [hw.Chunk("text", "canned")]


@pytest.mark.parametrize("shape", EAGER)
def test_generator_form_hook_retries_by_yielding_again(shape: str) -> None:
    """The inner exception is thrown in at the `yield`; yielding again calls again."""
    log: Log = []
    flaky = Flaky("first call fails")
    caught: list[BaseException] = []

    @hw.wrap_model
    def retry_once(request: hw.ModelRequest) -> Any:
        try:
            response = yield request
        except Flaky as exc:
            caught.append(exc)
            response = yield request
        return response

    wrapped = hw.model(target(shape, failing(log, flaky)), use=[retry_once])
    assert drive(shape, wrapped) == ANSWER
    assert len(caught) == 1
    assert caught[0] is flaky
    assert log == ["model:hi", "model:hi"]


@pytest.mark.parametrize("shape", EAGER)
def test_generator_form_hook_sees_the_inner_exception_object(shape: str) -> None:
    """The target's exception is thrown in at the `yield` as the same object, and a hook
    that re-raises lets that object reach the caller."""
    log: Log = []
    boom = Boom("model down")
    caught: list[BaseException] = []

    @hw.wrap_model
    def observe(request: hw.ModelRequest) -> Any:
        try:
            response = yield request
        except Boom as exc:
            caught.append(exc)
            raise
        return response

    wrapped = hw.model(target(shape, failing(log, boom)), use=[observe])
    with pytest.raises(Boom) as excinfo:
        drive(shape, wrapped)
    assert excinfo.value is boom
    assert len(caught) == 1
    assert caught[0] is boom
    assert log == ["model:hi"]


def _substitute(response: Any, text: str) -> Any:
    """A different response of the same kind as `response`."""
    if isinstance(response, hw.ModelResponse):
        return hw.ModelResponse(hw.Message.assistant(text))
    if hasattr(response, "__anext__"):

        async def chunks() -> AsyncIterator[hw.Chunk]:
            yield hw.Chunk("text", text[:2])
            yield hw.Chunk("text", text[2:])

        return chunks()
    close = getattr(response, "close", None)
    if close is not None:
        close()
    return iter([hw.Chunk("text", text[:2]), hw.Chunk("text", text[2:])])


@pytest.mark.parametrize("shape", SHAPES)
def test_generator_form_hook_can_return_a_different_response(shape: str) -> None:
    """What the hook returns replaces the inner response (a stream of Chunks in a stream)."""

    @hw.wrap_model
    def replace(request: hw.ModelRequest) -> Any:
        response = yield request
        return _substitute(response, "replaced")

    wrapped = hw.model(target(shape, recorder([])), use=[replace])
    assert drive(shape, wrapped) == "replaced"


@pytest.mark.parametrize(
    "value",
    ["plain text", {"role": "assistant", "content": "plain text"}, hw.Message.assistant("x")],
    ids=("str", "dict", "Message"),
)
def test_a_plain_def_streams_per_call_only_when_it_returns_an_iterator(value: Any) -> None:
    """One `def`: a returned iterator is a stream (chunks pass on_chunk); a returned str,
    dict or Message is an ordinary answer, passed back as is."""
    seen: Log = []
    answers: list[Any] = [iter(["a", "b"]), value]

    def llm(prompt: str) -> Any:
        return answers.pop(0)

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    wrapped = hw.model(llm, use=[look])
    assert list(wrapped("hi")) == ["a", "b"]
    assert seen == ["a", "b"]
    assert wrapped("hi") is value
    assert seen == ["a", "b"]


@pytest.mark.parametrize("how", ["generator function", "generator __call__", "plain def"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_request_stream_says_what_the_target_says_before_the_call(how: str, is_async: bool) -> None:
    """`request.stream` is true in `before_model` when the target says it streams before it
    is called: a generator function, or an object whose `__call__` is one; a plain `def`
    returning an iterator is found to stream only when it returns."""
    seen: list[bool] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        seen.append(request.stream)

    def gen(prompt: str) -> Iterator[str]:
        yield "a"

    async def agen(prompt: str) -> AsyncIterator[str]:
        yield "a"

    def returns(prompt: str) -> Any:
        return iter(["a"])

    async def areturns(prompt: str) -> Any:
        return agen(prompt)

    class Gen:
        def __call__(self, prompt: str) -> Iterator[str]:
            yield "a"

    class AGen:
        async def __call__(self, prompt: str) -> AsyncIterator[str]:
            yield "a"

    target: Any = {
        ("generator function", False): gen,
        ("generator function", True): agen,
        ("generator __call__", False): Gen(),
        ("generator __call__", True): AGen(),
        ("plain def", False): returns,
        ("plain def", True): areturns,
    }[how, is_async]
    wrapped = hw.model(target, use=[look])

    async def pull() -> list[Any]:
        answer = wrapped("hi")
        if how == "plain def":
            answer = await answer
        return [chunk async for chunk in answer]

    got = asyncio.run(pull()) if is_async else list(wrapped("hi"))
    assert got == ["a"]
    assert seen == [how != "plain def"]


# -- call_next hooks must match the call ------------------------------------------------------


@pytest.mark.parametrize("shape", ASYNC)
def test_sync_call_next_hook_on_async_target_is_a_wrap_time_type_error(shape: str) -> None:
    """A `def` call_next hook cannot await an async call: refused at wrap time, pointing to
    the generator form."""

    @hw.wrap_model
    def sync_passthrough(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    fn = target(shape, recorder([]))
    with pytest.raises(TypeError) as excinfo:
        hw.model(fn, use=[sync_passthrough])
    message = str(excinfo.value)
    assert "sync_passthrough" in message
    assert "generator form" in message


@pytest.mark.parametrize("shape", ["sync", "sync_gen", "sync_iter"])
def test_async_call_next_hook_on_sync_target_is_a_wrap_time_type_error(shape: str) -> None:
    """An `async def` call_next hook in a sync call: refused at wrap time, pointing to the
    generator form."""

    @hw.wrap_model
    async def async_passthrough(request: hw.ModelRequest, call_next: Any) -> Any:
        return await call_next(request)

    fn = target(shape, recorder([]))
    with pytest.raises(TypeError) as excinfo:
        hw.model(fn, use=[async_passthrough])
    message = str(excinfo.value)
    assert "async_passthrough" in message
    assert "generator form" in message


class Twinned(hw.Middleware):
    """A `call_next` hook with an `async def` twin, as hookwrap's own middleware write
    them: one object serving sync and async targets."""

    def __init__(self, log: Log) -> None:
        self.log = log

    async def _awrap(self, request: hw.ModelRequest, call_next: Any) -> Any:
        self.log.append("async twin")
        return await call_next(request)

    @hw.wrap_model
    @async_twin(_awrap)
    def wrap(self, request: hw.ModelRequest, call_next: Any) -> Any:
        self.log.append("sync")
        return call_next(request)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_call_next_hook_with_an_async_twin_serves_both_shapes(shape: str) -> None:
    log: Log = []
    hooked = hw.model(target(shape, recorder([])), use=[Twinned(log)])
    assert drive(shape, hooked) == ANSWER
    assert log == (["async twin"] if shape in ASYNC else ["sync"])


def test_an_async_twin_must_be_an_async_def() -> None:
    def not_async(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match=r"not_async.*must be an `async def`"):
        async_twin(not_async)


def async_hook(kind: str) -> Callable[..., Any]:
    """A fresh `async def` (or async generator) hook of `kind`, named after it."""
    if kind == "before_model":

        async def async_before_model(request: hw.ModelRequest) -> None:
            return None

        return hw.before_model(async_before_model)
    if kind == "on_chunk":

        async def async_on_chunk(chunk: hw.Chunk) -> None:
            return None

        return hw.on_chunk(async_on_chunk)
    if kind == "after_model":

        async def async_after_model(request: hw.ModelRequest, response: Any) -> None:
            return None

        return hw.after_model(async_after_model)
    if kind == "on_usage":

        async def async_on_usage(usage: hw.Usage) -> None:
            return None

        return hw.on_usage(async_on_usage)
    if kind == "on_start":

        async def async_on_start() -> None:
            return None

        return hw.on_start(async_on_start)
    if kind == "on_finish":

        async def async_on_finish(info: hw.FinishInfo) -> None:
            return None

        return hw.on_finish(async_on_finish)
    assert kind == "wrap_model"

    async def async_wrap_model(request: hw.ModelRequest) -> AsyncIterator[Any]:
        yield request

    return hw.wrap_model(async_wrap_model)


ASYNC_HOOK_KINDS = (
    "before_model",
    "on_chunk",
    "after_model",
    "on_usage",
    "on_start",
    "on_finish",
    "wrap_model",
)


@pytest.mark.parametrize("kind", ASYNC_HOOK_KINDS)
@pytest.mark.parametrize("shape", ["sync", "sync_gen", "sync_iter"])
def test_async_hook_on_sync_target_is_a_wrap_time_type_error_naming_it(
    shape: str, kind: str
) -> None:
    """An async hook cannot run in a sync call: `hw.model(...)` refuses it, by name."""
    hook = async_hook(kind)
    fn = target(shape, recorder([]))
    with pytest.raises(TypeError) as excinfo:
        hw.model(fn, use=[hook])
    assert f"async_{kind}" in str(excinfo.value)


# -- sync and async hooks in async calls -----------------------------------------------------


def _expected_hook_log(shape: str) -> Log:
    chunks = ["chunk:ans", "chunk:wer"] if shape in STREAMS else []
    return [
        "start",
        "before:hi",
        "wrap:in",
        "wrap:out",
        *chunks,
        f"after:{ANSWER}",
        "finish",
    ]


def _without_model(log: Log) -> Log:
    assert log.count("model:hi") == 1, log
    return [entry for entry in log if entry != "model:hi"]


@pytest.mark.parametrize("shape", ASYNC)
def test_sync_hooks_run_in_async_calls(shape: str) -> None:
    """Sync before/after/on_* hooks and a sync generator-form wrap hook serve async calls."""
    log: Log = []

    @hw.on_start
    def start() -> None:
        log.append("start")

    @hw.before_model
    def before(request: hw.ModelRequest) -> None:
        log.append(f"before:{request.messages[-1].text}")

    @hw.wrap_model
    def around(request: hw.ModelRequest) -> Any:
        log.append("wrap:in")
        response = yield request
        log.append("wrap:out")
        return response

    @hw.on_chunk
    def chunk(chunk: hw.Chunk) -> None:
        log.append(f"chunk:{chunk.text}")

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after:{response.text}")

    @hw.on_finish
    def finish(info: hw.FinishInfo) -> None:
        log.append("finish")

    hooks = [start, before, around, chunk, after, finish]
    assert drive(shape, hw.model(target(shape, recorder(log)), use=hooks)) == ANSWER
    assert _without_model(log) == _expected_hook_log(shape)


@pytest.mark.parametrize("shape", ASYNC)
def test_async_hooks_run_in_async_calls(shape: str) -> None:
    """`async def` hooks, an async call_next hook and an async generator-form hook all run
    (and are awaited) in async calls."""
    log: Log = []

    @hw.on_start
    async def start() -> None:
        await asyncio.sleep(0)
        log.append("start")

    @hw.before_model
    async def before(request: hw.ModelRequest) -> None:
        await asyncio.sleep(0)
        log.append(f"before:{request.messages[-1].text}")

    @hw.wrap_model
    async def around(request: hw.ModelRequest) -> AsyncIterator[Any]:
        log.append("wrap:in")
        yield request
        log.append("wrap:out")

    @hw.wrap_model
    async def inner_around(request: hw.ModelRequest, call_next: Any) -> Any:
        log.append("call_next:in")
        response = await call_next(request)
        log.append("call_next:out")
        return response

    @hw.on_chunk
    async def chunk(chunk: hw.Chunk) -> None:
        await asyncio.sleep(0)
        log.append(f"chunk:{chunk.text}")

    @hw.after_model
    async def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        await asyncio.sleep(0)
        log.append(f"after:{response.text}")

    @hw.on_finish
    async def finish(info: hw.FinishInfo) -> None:
        await asyncio.sleep(0)
        log.append("finish")

    hooks = [start, before, around, inner_around, chunk, after, finish]
    assert drive(shape, hw.model(target(shape, recorder(log)), use=hooks)) == ANSWER
    expected = _expected_hook_log(shape)
    expected[3:3] = ["call_next:in", "call_next:out"]
    assert _without_model(log) == expected


# -- what wrapping keeps -------------------------------------------------------------------------


@hw.before_model
def _noop(request: hw.ModelRequest) -> None:
    return None


@pytest.mark.parametrize("hooked", [False, True], ids=("no_hooks", "hooks"))
@pytest.mark.parametrize("shape", SHAPES)
def test_wrapped_function_keeps_name_doc_signature_and_kind(shape: str, hooked: bool) -> None:
    """`__name__`, `__doc__`, `inspect.signature` and the coroutine/generator answers of
    `inspect` are those of the original function."""
    fn = target(shape, recorder([]))
    wrapped = hw.model(fn, use=[_noop] if hooked else [])
    assert wrapped.__name__ == fn.__name__
    assert wrapped.__doc__ == fn.__doc__
    assert wrapped.__doc__
    assert inspect.signature(wrapped) == inspect.signature(fn)
    assert inspect.iscoroutinefunction(wrapped) is inspect.iscoroutinefunction(fn)
    assert inspect.isasyncgenfunction(wrapped) is inspect.isasyncgenfunction(fn)
    assert inspect.isgeneratorfunction(wrapped) is inspect.isgeneratorfunction(fn)


def test_the_kind_answers_differ_between_shapes() -> None:
    """The `inspect` answers checked above really tell the declared shapes apart."""
    answers = {
        shape: (
            inspect.iscoroutinefunction(w),
            inspect.isasyncgenfunction(w),
            inspect.isgeneratorfunction(w),
        )
        for shape in DECLARED
        for w in [hw.model(target(shape, recorder([])), use=[_noop])]
    }
    assert answers == {
        "sync": (False, False, False),
        "async": (True, False, False),
        "sync_gen": (False, False, True),
        "async_gen": (False, True, False),
    }


@pytest.mark.parametrize("shape", SHAPES)
def test_target_wrapped_without_hooks_is_called_directly(shape: str) -> None:
    """No hooks at all: the target is called as is, with no run around it."""
    seen: Log = []

    def probe(prompt: str) -> None:
        try:
            hw.current()
        except LookupError:
            seen.append(f"no run:{prompt}")
        else:
            seen.append(f"run:{prompt}")

    assert drive(shape, hw.model(target(shape, probe), use=[])) == ANSWER
    assert drive(shape, hw.model(target(shape, probe))) == ANSWER
    assert seen == ["no run:hi", "no run:hi"]


def test_target_wrapped_without_hooks_returns_its_own_objects() -> None:
    """Called directly: what the target returns reaches the caller untouched."""
    marker = object()

    def llm(prompt: str) -> Any:
        return marker

    def stream(prompt: str) -> Iterator[str]:
        yield prompt

    assert hw.model(llm)("hi") is marker
    gen = hw.model(stream)("hi")
    assert inspect.isgenerator(gen)
    assert gen.gi_code is stream.__code__
    assert list(gen) == ["hi"]


# -- wrapping twice ----------------------------------------------------------------------------


def _layer(name: str, log: Log, run_ids: list[str]) -> list[Any]:
    """Fresh before/wrap/after/on_finish hooks of one layer, logging as `name`."""

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        run_ids.append(ctx.run_id)
        log.append(f"{name}:before")

    @hw.wrap_model
    def around(request: hw.ModelRequest, ctx: hw.RunContext) -> Any:
        run_ids.append(ctx.run_id)
        log.append(f"{name}:in")
        response = yield request
        log.append(f"{name}:out")
        return response

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        run_ids.append(ctx.run_id)
        log.append(f"{name}:after")

    @hw.on_finish
    def finish(info: hw.FinishInfo) -> None:
        run_ids.append(info.run_id)
        log.append(f"{name}:finish")

    return [before, around, after, finish]


@pytest.mark.parametrize("shape", DECLARED)
def test_wrapping_twice_runs_the_outer_stack_outside_the_inner_once_in_one_run(
    shape: str,
) -> None:
    """`hw.model(hw.model(fn, use=[a]), use=[b])`: b runs outside a, every hook once, all
    in one run that ends with one on_finish per hook."""
    log: Log = []
    run_ids: list[str] = []
    inner = hw.model(target(shape, recorder(log)), use=_layer("a", log, run_ids))
    outer = hw.model(inner, use=_layer("b", log, run_ids))
    assert drive(shape, outer) == ANSWER

    entries = [f"{n}:{s}" for n in "ab" for s in ("before", "in", "out", "after", "finish")]
    assert Counter(log) == Counter([*entries, "model:hi"])
    at = log.index
    assert at("b:before") < at("a:before")
    assert at("b:in") < at("a:in")
    assert at("a:after") < at("b:after")
    if shape in ("sync", "async"):
        # a stream's inner call starts only when pulled, after the outer hook has returned
        assert at("a:in") < at("model:hi") < at("a:out") < at("b:out")
    finishes = [at("a:finish"), at("b:finish")]
    assert min(finishes) > max(at(e) for e in log if not e.endswith(":finish"))
    assert len(set(run_ids)) == 1


@pytest.mark.parametrize("how", ["function", "tool", "client", "method"])
def test_wrapping_again_with_the_same_stack_runs_its_hooks_once(how: str) -> None:
    """Wrapping a wrapped target again with a stack whose hooks it has already (the same
    stack twice, by accident) adds only the hooks it lacks: each runs once."""
    log: Log = []

    @hw.before_model
    def counted(request: hw.ModelRequest) -> None:
        log.append("counted")

    @hw.before_model
    def other(request: hw.ModelRequest) -> None:
        log.append("other")

    @hw.before_tool
    def checked(call: hw.ToolCall) -> None:
        log.append("counted")

    @hw.before_tool
    def other_tool(call: hw.ToolCall) -> None:
        log.append("other")

    if how == "tool":
        stack = hw.Stack(checked)

        def add(a: int) -> int:
            return a

        twice = hw.wrap(hw.tool(add, use=stack), use=[stack, other_tool])
        assert twice(1) == 1
    elif how == "function":
        stack = hw.Stack(counted)

        def llm(prompt: str) -> str:
            return ANSWER

        twice = hw.wrap(hw.model(llm, use=stack), use=[stack, other])
        assert twice("hi") == ANSWER
    else:
        pytest.importorskip("openai")
        stack = hw.Stack(counted)
        client = FakeProvider(["fine"]).openai()
        inner = hw.wrap(client if how == "client" else client.chat.completions.create, use=stack)
        twice = hw.wrap(inner, use=[stack, other])
        create = twice.chat.completions.create if how == "client" else twice
        create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert log == ["other", "counted"]


# -- methods --------------------------------------------------------------------------------


def test_decorated_method_still_binds_self() -> None:
    """`@hw.model(use=...)` on a method: `self` is bound, and hook changes reach the right
    argument."""
    seen: Log = []

    @hw.before_model
    def shout(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(request.messages[-1].text)
        return request.replace(messages=(hw.Message.user(request.messages[-1].text.upper()),))

    class Bot:
        def __init__(self, name: str) -> None:
            self.name = name

        @hw.model(use=[shout])
        def ask(self, prompt: str) -> str:
            return f"{self.name} heard {prompt}"

        @hw.model(use=[shout])
        async def aask(self, prompt: str) -> str:
            return f"{self.name} heard {prompt} async"

    ada, bob = Bot("ada"), Bot("bob")
    assert ada.ask("hi") == "ada heard HI"
    assert bob.ask(prompt="yo") == "bob heard YO"
    assert asyncio.run(ada.aask("hey")) == "ada heard HEY async"
    assert Bot.ask(bob, "direct") == "bob heard DIRECT"
    assert seen == ["hi", "yo", "hey", "direct"]


def test_an_object_with_an_async_call_is_an_async_target() -> None:
    class Model:
        async def __call__(self, prompt: str) -> str:
            return f"answer to {prompt}"

    @hw.before_model
    def ask_better(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.user("a better question"),))

    wrapped = hw.model(Model(), use=[ask_better])
    assert asyncio.run(wrapped("q")) == "answer to a better question"

    @hw.wrap_model
    def sync_next(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match="a call_next hook must be `async def`"):
        hw.model(Model(), use=[sync_next])
