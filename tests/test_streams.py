"""Streams (SPEC §1 on_chunk, §4): what on_chunk returns, lazy pulling, chunk_index, the end
of a stream, early close in every form, Respond and errors in streamed calls, and the law of
chunk conservation."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hookwrap as hw

Log = list[str]
CLOSED = "closed by consumer"
KINDS = ("sync", "async")


class Boom(Exception):
    """An error raised on purpose by a target."""


def stream_target(kind: str, items: Sequence[Any], log: Log) -> Callable[..., Any]:
    """A fresh generator function (sync or async) yielding `items`, logging each one as it
    is produced and when its body ends (normally or closed)."""
    if kind == "sync":

        def llm(prompt: str) -> Iterator[Any]:
            try:
                for i, item in enumerate(items):
                    log.append(f"produced {i}")
                    yield item
            finally:
                log.append("target done")

        return llm

    async def allm(prompt: str) -> AsyncIterator[Any]:
        try:
            for i, item in enumerate(items):
                log.append(f"produced {i}")
                yield item
        finally:
            log.append("target done")

    return allm


def consume(kind: str, fn: Callable[..., Any], log: Log | None = None) -> list[Any]:
    """Pull every item of `fn("hi")`, logging `got <item>` as each arrives."""

    def note(item: Any) -> None:
        if log is not None:
            log.append(f"got {item.get('text', '') if isinstance(item, dict) else item}")

    if kind == "sync":
        out: list[Any] = []
        for item in fn("hi"):
            note(item)
            out.append(item)
        return out

    async def main() -> list[Any]:
        out: list[Any] = []
        async for item in fn("hi"):
            note(item)
            out.append(item)
        return out

    return asyncio.run(main())


def terminal_hooks(log: Log) -> list[Any]:
    """Fresh on_finish / on_error / on_abort hooks logging how the run ended."""

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    @hw.on_error
    def errored(info: hw.FinishInfo) -> None:
        log.append(f"on_error {info.error!r}")

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append(f"on_abort {info.reason}")

    return [finished, errored, aborted]


# -- what on_chunk returns -----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_on_chunk_returning_a_chunk_replaces_it(kind: str) -> None:
    """A returned Chunk stands in for the one received; later hooks see the replacement."""
    seen: Log = []

    @hw.on_chunk
    def upper(chunk: hw.Chunk) -> hw.Chunk:
        return chunk.replace(text=chunk.text.upper())

    @hw.on_chunk
    def later(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    fn = stream_target(kind, ["ab", "c"], [])
    assert consume(kind, hw.model(fn, use=[upper, later])) == ["AB", "C"]
    assert seen == ["AB", "C"]


@pytest.mark.parametrize("kind", KINDS)
def test_on_chunk_returning_a_list_expands_and_later_hooks_see_each_new_chunk(kind: str) -> None:
    """A list of Chunks replaces one chunk by several; each goes through the later hooks."""
    seen: Log = []

    @hw.on_chunk
    def split(chunk: hw.Chunk) -> list[hw.Chunk]:
        return [chunk.replace(text=letter) for letter in chunk.text]

    @hw.on_chunk
    def later(chunk: hw.Chunk) -> hw.Chunk:
        seen.append(chunk.text)
        return chunk.replace(text=f"<{chunk.text}>")

    fn = stream_target(kind, ["ab", "c"], [])
    assert consume(kind, hw.model(fn, use=[split, later])) == ["<a>", "<b>", "<c>"]
    assert seen == ["a", "b", "c"]


@pytest.mark.parametrize("kind", KINDS)
def test_on_chunk_returning_drop_removes_it_and_later_hooks_never_see_it(kind: str) -> None:
    seen: Log = []

    @hw.on_chunk
    def drop_secret(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.text == "secret" else None

    @hw.on_chunk
    def later(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    fn = stream_target(kind, ["a", "secret", "b"], [])
    assert consume(kind, hw.model(fn, use=[drop_secret, later])) == ["a", "b"]
    assert seen == ["a", "b"]


@pytest.mark.parametrize("kind", KINDS)
def test_on_chunk_returning_none_leaves_the_chunk_unchanged(kind: str) -> None:
    seen: list[hw.Chunk] = []

    @hw.on_chunk
    def look(chunk: hw.Chunk) -> None:
        seen.append(chunk)

    @hw.on_chunk
    def later(chunk: hw.Chunk) -> None:
        assert chunk is seen[-1]

    fn = stream_target(kind, ["a", "b"], [])
    assert consume(kind, hw.model(fn, use=[look, later])) == ["a", "b"]
    assert [(c.kind, c.text) for c in seen] == [("text", "a"), ("text", "b")]


# -- pulled lazily -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_chunks_are_pulled_lazily_one_at_a_time(kind: str) -> None:
    """The hook sees chunk i, and the caller gets it, before the target produces i+1:
    nothing is buffered (even with after_model and on_usage hooks that need the whole
    response at the end)."""
    log: Log = []

    @hw.on_chunk
    def seen(chunk: hw.Chunk, ctx: hw.RunContext) -> None:
        log.append(f"hook {ctx.chunk_index} {chunk.text}")

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after {response.text}")

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        log.append("usage")

    fn = stream_target(kind, ["a", "b", "c"], log)
    consume(kind, hw.model(fn, use=[seen, after, usage]), log)
    assert log == [
        "produced 0",
        "hook 0 a",
        "got a",
        "produced 1",
        "hook 1 b",
        "got b",
        "produced 2",
        "hook 2 c",
        "got c",
        "target done",
        "after abc",
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_chunk_index_counts_chunks_from_the_model_from_zero_per_call(kind: str) -> None:
    """`ctx.chunk_index` numbers the model's chunks (not the ones a hook made), 0-based,
    starting again in every call."""
    seen: list[tuple[str, int]] = []

    @hw.on_chunk
    def split_first(chunk: hw.Chunk) -> Any:
        if chunk.text == "ab":
            return [chunk.replace(text="a"), chunk.replace(text="b")]
        return None

    @hw.on_chunk
    def record(chunk: hw.Chunk, ctx: hw.RunContext) -> None:
        seen.append((chunk.text, ctx.chunk_index))

    wrapped = hw.model(stream_target(kind, ["ab", "c", "d"], []), use=[split_first, record])
    assert consume(kind, wrapped) == ["a", "b", "c", "d"]
    assert consume(kind, wrapped) == ["a", "b", "c", "d"]
    once = [("a", 0), ("b", 0), ("c", 1), ("d", 2)]
    assert seen == once + once


# -- the end of a stream --------------------------------------------------------------------

USAGE = {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}


@pytest.mark.parametrize("kind", KINDS)
def test_end_of_stream_runs_on_usage_then_after_model_on_what_the_caller_received(
    kind: str,
) -> None:
    """When the stream is exhausted: on_usage with the usage seen, then after_model on the
    response assembled from the delivered chunks; after_model's return value is ignored."""
    log: Log = []
    items = [
        {"kind": "text", "text": "Hel"},
        {"kind": "text", "text": "lo"},
        {"kind": "text", "text": " secret"},
        {"kind": "usage", "usage": dict(USAGE)},
    ]
    responses: list[hw.ModelResponse] = []

    @hw.on_chunk
    def edit(chunk: hw.Chunk) -> Any:
        if chunk.text == " secret":
            return hw.DROP
        if chunk.text == "lo":
            return chunk.replace(text="LO")
        return None

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        log.append(f"usage {usage.input_tokens}/{usage.output_tokens}/{usage.total_tokens}")

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        responses.append(response)
        log.append(f"after {response.text}")
        return hw.ModelResponse(hw.Message.assistant("ignored"))

    got = consume(kind, hw.model(stream_target(kind, items, []), use=[edit, usage, after]), log)
    assert got[0] is items[0]
    assert got[1] == {"kind": "text", "text": "LO"}
    assert got[2] is items[3]
    assert len(got) == 3
    assert log == ["got Hel", "got LO", "got ", "usage 3/5/8", "after HelLO"]
    assert responses[0].usage == hw.Usage(3, 5, 8)


@pytest.mark.parametrize("kind", KINDS)
def test_in_a_stream_every_after_model_hook_sees_what_the_caller_received_whatever_they_return(
    kind: str,
) -> None:
    """In a stream `after_model` observes: a value of any type is ignored (no error at the
    end of a stream whose chunks are all delivered), and no hook's return value reaches the
    hooks after it."""
    seen: list[str] = []

    @hw.after_model(priority=1)  # runs last: "reverse" order
    def outer(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(f"outer {response.text}")

    @hw.after_model
    def summary(request: hw.ModelRequest, response: hw.ModelResponse) -> Any:
        seen.append(f"summary {response.text}")
        return response.text  # not a ModelResponse: a whole call would refuse it

    @hw.after_model(priority=-1)  # runs first
    def rewrite(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant("rewritten"))

    wrapped = hw.model(stream_target(kind, ["a", "b"], []), use=[outer, summary, rewrite])
    assert consume(kind, wrapped) == ["a", "b"]
    assert seen == ["summary ab", "outer ab"]


@pytest.mark.parametrize("kind", KINDS)
def test_no_usage_seen_means_no_on_usage(kind: str) -> None:
    log: Log = []

    @hw.on_usage
    def usage(usage: hw.Usage) -> None:
        log.append("usage")

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after {response.text} {response.usage}")

    assert consume(kind, hw.model(stream_target(kind, ["a", "b"], []), use=[usage, after])) == [
        "a",
        "b",
    ]
    assert log == ["after ab None"]


# -- the caller stops early -----------------------------------------------------------------


def _sync_stream_fn(shape: str, log: Log) -> Callable[..., Any]:
    """A generator function, or a plain `def` returning a generator."""
    gen = stream_target("sync", ["a", "b", "c"], log)
    if shape == "gen":
        return gen

    def llm(prompt: str) -> Iterator[str]:
        return gen(prompt)  # type: ignore[no-any-return]

    return llm


@pytest.mark.parametrize("shape", ["gen", "iter"])
def test_close_closes_the_inner_stream_at_once_and_aborts_a_one_call_run(shape: str) -> None:
    log: Log = []
    stream = hw.model(_sync_stream_fn(shape, log), use=terminal_hooks(log))("hi")
    assert next(stream) == "a"
    stream.close()
    assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]


@pytest.mark.parametrize("shape", ["gen", "iter"])
def test_break_closes_the_inner_stream_at_once_and_aborts_a_one_call_run(shape: str) -> None:
    log: Log = []
    wrapped = hw.model(_sync_stream_fn(shape, log), use=terminal_hooks(log))
    for item in wrapped("hi"):
        log.append(f"got {item}")
        break
    assert log == ["produced 0", "got a", "target done", f"on_abort {CLOSED}"]


@pytest.mark.parametrize("shape", ["gen", "iter"])
def test_dropping_the_last_reference_closes_the_stream(shape: str) -> None:
    log: Log = []
    stream = hw.model(_sync_stream_fn(shape, log), use=terminal_hooks(log))("hi")
    assert next(stream) == "a"
    del stream
    gc.collect()
    assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]


@pytest.mark.parametrize("shape", ["gen", "iter"])
def test_close_inside_an_explicit_run_just_ends_that_call(shape: str) -> None:
    """In `with hw.run():` an early close ends the call, not the run: later calls still run
    and the run ends with on_finish."""
    log: Log = []
    wrapped = hw.model(_sync_stream_fn(shape, log), use=terminal_hooks(log))
    with hw.run():
        stream = wrapped("hi")
        assert next(stream) == "a"
        stream.close()
        assert log == ["produced 0", "target done"]
        log.clear()
        assert list(wrapped("again")) == ["a", "b", "c"]
        assert log == ["produced 0", "produced 1", "produced 2", "target done"]
        log.clear()
    assert log == ["on_finish"]


def test_close_reaches_the_model_stream_through_a_hook_that_rewraps_it() -> None:
    """A wrap_model hook may hand the caller its own iterator over the model's stream; an
    early close still closes the model's stream at once."""
    log: Log = []

    @hw.wrap_model
    def tag(request: hw.ModelRequest) -> Any:
        stream = yield request

        def tagged() -> Iterator[hw.Chunk]:
            for chunk in stream:
                yield hw.Chunk("text", f"[{chunk.text}]")

        return tagged()

    stream = hw.model(_sync_stream_fn("gen", log), use=[tag, *terminal_hooks(log)])("hi")
    assert next(stream) == "[a]"
    stream.close()
    assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]


def test_aclose_reaches_the_model_stream_through_a_hook_that_rewraps_it() -> None:
    log: Log = []

    @hw.wrap_model
    async def tag(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = await call_next(request)

        async def tagged() -> AsyncIterator[hw.Chunk]:
            async for chunk in stream:
                yield hw.Chunk("text", f"[{chunk.text}]")

        return tagged()

    wrapped = hw.model(stream_target("async", ["a", "b"], log), use=[tag, *terminal_hooks(log)])

    async def main() -> None:
        stream = wrapped("hi")
        assert await stream.__anext__() == "[a]"
        await stream.aclose()
        assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]

    asyncio.run(main())


def test_aclose_closes_the_inner_stream_at_once_and_aborts_a_one_call_run() -> None:
    log: Log = []
    wrapped = hw.model(stream_target("async", ["a", "b", "c"], log), use=terminal_hooks(log))

    async def main() -> None:
        stream = wrapped("hi")
        assert await stream.__anext__() == "a"
        await stream.aclose()
        assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]

    asyncio.run(main())
    assert log == ["produced 0", "target done", f"on_abort {CLOSED}"]


def test_aclose_inside_an_explicit_async_run_just_ends_that_call() -> None:
    log: Log = []
    wrapped = hw.model(stream_target("async", ["a", "b", "c"], log), use=terminal_hooks(log))

    async def main() -> None:
        async with hw.run():
            stream = wrapped("hi")
            assert await stream.__anext__() == "a"
            await stream.aclose()
            assert log == ["produced 0", "target done"]
            log.clear()
        assert log == ["on_finish"]

    asyncio.run(main())


def _blocking_target(log: Log, waiting: list[asyncio.Event]) -> Callable[..., Any]:
    """An async generator that yields one chunk, then waits for ever for the next."""

    async def llm(prompt: str) -> AsyncIterator[str]:
        try:
            log.append("produced 0")
            yield "a"
            log.append("waiting")
            waiting[0].set()
            await asyncio.Event().wait()
            yield "never"
        finally:
            log.append("target done")

    return llm


def test_task_cancellation_closes_the_inner_stream_and_aborts_a_one_call_run() -> None:
    log: Log = []
    got: list[str] = []
    waiting: list[asyncio.Event] = []
    wrapped = hw.model(_blocking_target(log, waiting), use=terminal_hooks(log))

    async def reader() -> None:
        async for item in wrapped("hi"):
            got.append(item)

    async def main() -> None:
        waiting.append(asyncio.Event())
        task = asyncio.create_task(reader())
        await waiting[0].wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert got == ["a"]
    assert log == ["produced 0", "waiting", "target done", f"on_abort {CLOSED}"]


def test_wait_for_timeout_closes_the_inner_stream_and_aborts_a_one_call_run() -> None:
    """`asyncio.wait_for` around an `async for` cancels it; the target waits for ever, so
    only the cancellation can end it."""
    log: Log = []
    got: list[str] = []
    waiting: list[asyncio.Event] = []
    wrapped = hw.model(_blocking_target(log, waiting), use=terminal_hooks(log))

    async def reader() -> None:
        async for item in wrapped("hi"):
            got.append(item)

    async def main() -> None:
        waiting.append(asyncio.Event())
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader(), timeout=0.005)

    asyncio.run(main())
    assert got == ["a"]
    assert log == ["produced 0", "waiting", "target done", f"on_abort {CLOSED}"]


@pytest.mark.parametrize("kind", KINDS)
def test_chunks_a_wrap_hook_changes_with_replace_reach_the_caller(kind: str) -> None:
    """A generator-form wrap_model hook returning its own iterator of `chunk.replace(...)`
    copies: the caller gets the changed text, not the model's original item."""

    @hw.wrap_model
    def upper(request: hw.ModelRequest) -> Any:
        stream = yield request
        if hasattr(stream, "__anext__"):

            async def achanged() -> AsyncIterator[hw.Chunk]:
                async for chunk in stream:
                    yield chunk.replace(text=chunk.text.upper())

            return achanged()

        def changed() -> Iterator[hw.Chunk]:
            for chunk in stream:
                yield chunk.replace(text=chunk.text.upper())

        return changed()

    assert consume(kind, hw.model(stream_target(kind, ["a", "b"], []), use=[upper])) == ["A", "B"]


# -- Respond and errors in a streamed call --------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_respond_in_a_streamed_call_yields_the_answer_as_native_str_chunks(kind: str) -> None:
    """`Respond(x)` from before_model: the model never runs; the caller's stream carries
    `x` as str items; after_model still sees it."""
    log: Log = []

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after {response.text}")

    got = consume(kind, hw.model(stream_target(kind, ["model"], log), use=[cached, after]))
    assert all(type(item) is str for item in got), got
    assert "".join(got) == "from cache"
    assert log == ["after from cache"]


@pytest.mark.parametrize("kind", KINDS)
def test_error_mid_stream_reaches_the_caller_as_the_same_object_and_on_error_once(
    kind: str,
) -> None:
    log: Log = []
    boom = Boom("connection reset")
    errors: list[BaseException | None] = []

    @hw.on_error
    def errored(info: hw.FinishInfo) -> None:
        errors.append(info.error)

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append("on_abort")

    if kind == "sync":

        def llm(prompt: str) -> Iterator[str]:
            yield "a"
            raise boom

        fn: Callable[..., Any] = llm
    else:

        async def allm(prompt: str) -> AsyncIterator[str]:
            yield "a"
            raise boom

        fn = allm

    with pytest.raises(Boom) as excinfo:
        consume(kind, hw.model(fn, use=[errored, finished, aborted]), log)
    assert excinfo.value is boom
    assert log == ["got a"]
    assert len(errors) == 1
    assert errors[0] is boom


# -- native forms ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_str_streams_deliver_str_items(kind: str) -> None:
    @hw.on_chunk
    def upper_b(chunk: hw.Chunk) -> Any:
        return chunk.replace(text="B") if chunk.text == "b" else None

    @hw.on_chunk
    def split_c(chunk: hw.Chunk) -> Any:
        return [chunk.replace(text="c1"), chunk.replace(text="c2")] if chunk.text == "c" else None

    got = consume(kind, hw.model(stream_target(kind, ["a", "b", "c"], []), use=[upper_b, split_c]))
    assert got == ["a", "B", "c1", "c2"]
    assert all(type(item) is str for item in got)


@pytest.mark.parametrize("kind", KINDS)
def test_dict_streams_deliver_dicts_and_unchanged_dicts_are_the_same_objects(kind: str) -> None:
    items = [
        {"kind": "text", "text": "a"},
        {"kind": "text", "text": "b"},
        {"kind": "text", "text": "c"},
    ]

    @hw.on_chunk
    def upper_b(chunk: hw.Chunk) -> Any:
        return chunk.replace(text="B") if chunk.text == "b" else None

    @hw.on_chunk
    def same(chunk: hw.Chunk) -> hw.Chunk:
        return chunk

    got = consume(kind, hw.model(stream_target(kind, items, []), use=[upper_b, same]))
    assert len(got) == 3
    assert got[0] is items[0]
    assert got[2] is items[2]
    assert isinstance(got[1], dict)
    assert got[1]["text"] == "B"
    assert got[1].get("kind", "text") == "text"
    assert items[1] == {"kind": "text", "text": "b"}  # the target's own dict is not mutated


@pytest.mark.parametrize("kind", KINDS)
def test_dict_streams_keep_their_own_shape_when_a_hook_changes_them(kind: str) -> None:
    items = [
        {"content": "a", "id": 1},  # a chat-style delta
        {"role": "assistant", "content": "b"},
        {"kind": "text", "text": "c", "extra": 1},
        {"type": "text", "text": "d"},
    ]
    seen: list[str] = []

    @hw.on_chunk
    def upper(chunk: hw.Chunk) -> hw.Chunk:
        seen.append(chunk.text)
        return chunk.replace(text=chunk.text.upper())

    got = consume(kind, hw.model(stream_target(kind, items, []), use=[upper]))
    assert seen == ["a", "b", "c", "d"]  # hooks read the text of every shape
    assert got == [
        {"content": "A", "id": 1},
        {"role": "assistant", "content": "B"},
        {"kind": "text", "text": "C", "extra": 1},
        {"type": "text", "text": "D"},
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("items", ["dicts", "chunks"])
def test_chunks_a_hook_adds_or_rebuilds_take_the_form_of_the_streams_items(
    kind: str, items: str
) -> None:
    """A chunk a hook adds, or a wrap hook makes anew, reaches the caller in the form of the
    items the target yielded (dicts, `Chunk`s), whatever its return annotation says
    (`Iterator[Any]` here): no reasoning chunk lost, no text turned into a `str`."""
    given: list[Any] = [{"kind": "text", "text": "a"}, {"kind": "text", "text": "b"}]
    if items == "chunks":
        given = [hw.Chunk("text", "a"), hw.Chunk("text", "b")]

    @hw.on_chunk
    def add(chunk: hw.Chunk) -> Any:
        return [chunk, hw.Chunk("reasoning", "why")] if chunk.text == "a" else None

    @hw.wrap_model
    def rebuild(request: hw.ModelRequest) -> Any:
        chunks = yield request
        if kind == "sync":
            return (hw.Chunk("text", c.text.upper()) for c in chunks)

        async def upper() -> AsyncIterator[hw.Chunk]:
            async for c in chunks:
                yield hw.Chunk("text", c.text.upper())

        return upper()

    def form(item: Any) -> tuple[str, str]:
        return (item["kind"], item["text"]) if isinstance(item, dict) else (item.kind, item.text)

    got = consume(kind, hw.model(stream_target(kind, given, []), use=[add]))
    assert [type(item) for item in got] == [type(given[0])] * 3
    assert list(map(form, got)) == [("text", "a"), ("reasoning", "why"), ("text", "b")]
    got = consume(kind, hw.model(stream_target(kind, given, []), use=[rebuild]))
    assert [type(item) for item in got] == [type(given[0])] * 2
    assert list(map(form, got)) == [("text", "A"), ("text", "B")]


def test_a_changed_dict_answer_keeps_the_keys_a_message_does_not_have() -> None:
    def answer(prompt: str) -> dict[str, Any]:
        return {"role": "assistant", "content": "old", "id": "r1"}

    @hw.after_model
    def rewrite(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant("new"))

    assert hw.model(answer, use=[rewrite])("x") == {
        "role": "assistant",
        "content": "new",
        "id": "r1",
    }


# -- chunk conservation (hypothesis) ---------------------------------------------------------

Op = tuple[str, str]

OPS = st.one_of(
    st.just(("pass", "")),
    st.just(("same", "")),
    st.just(("expand", "")),
    st.tuples(st.just("drop"), st.sampled_from("abxy")),
)


def make_hook(op: Op) -> Callable[..., Any]:
    """A fresh on_chunk hook doing `op` (a decorated function is marked for good)."""
    action, arg = op
    if action == "pass":

        def keep(chunk: hw.Chunk) -> None:
            return None

        return hw.on_chunk(keep)
    if action == "same":

        def same(chunk: hw.Chunk) -> hw.Chunk:
            return chunk

        return hw.on_chunk(same)
    if action == "expand":

        def expand(chunk: hw.Chunk) -> list[hw.Chunk]:
            return [chunk.replace(text=chunk.text + "x"), chunk.replace(text=chunk.text + "y")]

        return hw.on_chunk(expand)

    def drop(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.text.endswith(arg) else None

    return hw.on_chunk(drop)


def predict(pieces: list[str], ops: list[Op]) -> list[str]:
    """What the caller must receive: each piece through the hooks in order."""
    out: list[str] = []
    for piece in pieces:
        texts = [piece]
        for action, arg in ops:
            if action == "expand":
                texts = [t + suffix for t in texts for suffix in "xy"]
            elif action == "drop":
                texts = [t for t in texts if not t.endswith(arg)]
        out.extend(texts)
    return out


@settings(max_examples=100, deadline=None)
@given(
    pieces=st.lists(st.text(alphabet="ab", max_size=3), max_size=6),
    ops=st.lists(OPS, max_size=4),
)
def test_chunk_conservation(pieces: list[str], ops: list[Op]) -> None:
    """Nothing is lost, duplicated or reordered except as the hooks ask, sync and async."""
    expected = predict(pieces, ops)
    for kind in KINDS:
        wrapped = hw.model(stream_target(kind, pieces, []), use=[make_hook(op) for op in ops])
        got = consume(kind, wrapped)
        assert got == expected
        assert all(type(item) is str for item in got)


class Connection:
    """A stream object of its own (as an SDK returns), not a generator; it notes each
    close in `log`."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def __iter__(self) -> Connection:
        return self

    def __next__(self) -> str:
        return "x"

    def close(self) -> None:
        self.log.append("closed")

    def __aiter__(self) -> Connection:
        return self

    async def __anext__(self) -> str:
        return "x"

    async def aclose(self) -> None:
        self.log.append("closed")


def connection_target(log: Log, is_async: bool = False) -> Callable[..., Any]:
    """A model function answering with a new `Connection`, sync or async."""

    def target(prompt: str) -> Connection:
        return Connection(log)

    async def atarget(prompt: str) -> Connection:
        return Connection(log)

    return atarget if is_async else target


def test_a_stream_a_failing_wrap_hook_never_pulled_is_closed_at_once() -> None:
    log: Log = []

    @hw.wrap_model
    def fails(request: hw.ModelRequest, call_next: Any) -> Any:
        call_next(request)  # opens the stream, never reads it
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        hw.model(connection_target(log), use=[fails])("hi")
    assert log == ["closed"]  # not left for the garbage collector


@pytest.mark.parametrize("pulled", [0, 1], ids=["never pulled", "pulled once"])
def test_a_stream_dropped_is_closed_at_once_not_by_the_garbage_collector(pulled: int) -> None:
    log: Log = []
    gc.disable()
    try:
        stream = hw.model(connection_target(log), use=terminal_hooks(log))("hi")
        for _ in range(pulled):
            next(stream)
        del stream
        assert log[0] == "closed"  # (close may be called more than once: it is idempotent)
        assert log[-1] == f"on_abort {CLOSED}"
    finally:
        gc.enable()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_the_adapter_fails_to_hand_over_is_closed_and_the_run_ends_once(
    is_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hookwrap.adapters.function import FunctionAdapter

    boom = RuntimeError("cannot hand over")

    def refuse(self: Any, stream: Any, call: Any) -> Any:
        raise boom

    monkeypatch.setattr(FunctionAdapter, "stream_result", refuse)
    log: Log = []
    wrapped = hw.model(connection_target(log, is_async), use=terminal_hooks(log))
    with pytest.raises(RuntimeError) as raised:
        result = wrapped("hi")
        if is_async:
            asyncio.run(result)
    assert raised.value is boom
    assert set(log[:-1]) == {"closed"}
    assert log[-1] == f"on_error {boom!r}"


def test_cancelling_a_stream_consumer_ends_its_one_call_run_as_closed_by_consumer() -> None:
    """The task pulling a stream is cancelled, before its first chunk came (an async hook
    is awaiting) or while waiting for the next: the consumer stopped early, whichever."""
    reasons: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    slow_hook = asyncio.Event()

    @hw.before_model
    async def waits(request: hw.ModelRequest) -> None:
        if not slow_hook.is_set():
            await asyncio.sleep(10)

    async def llm(prompt: str) -> AsyncIterator[str]:
        yield "first"
        await asyncio.sleep(10)
        yield "never"

    wrapped = hw.model(llm, use=[waits, aborted])

    async def consume() -> None:
        async for _ in wrapped("hi"):
            pass

    async def main() -> None:
        for ready in (False, True):  # in the hook; then waiting for the second chunk
            if ready:
                slow_hook.set()
            task = asyncio.create_task(consume())
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert reasons == ["closed by consumer", "closed by consumer"]
