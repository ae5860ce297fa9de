"""The run (SPEC §5): `hw.current()`, phases, run and call identity, run-local state,
call-local state, the user's context, abort, defer, emit, `hw.run()` and terminal hooks."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw

Log = list[str]


def echo(prompt: str) -> str:
    return f"echo: {prompt}"


def passthrough() -> Callable[..., Any]:
    """A fresh no-op `before_model` hook, so a wrapped target really runs through hookwrap."""

    def noop(request: hw.ModelRequest) -> None:
        return None

    return hw.before_model(noop)


def hookwrap_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "hookwrap" or r.name.startswith("hookwrap.")]


# -- hw.current() and the ctx parameter ------------------------------------------------------


def test_current_outside_any_run_is_a_lookup_error() -> None:
    """`hw.current()` outside every run raises LookupError."""
    with pytest.raises(LookupError):
        hw.current()


def test_current_in_hooks_and_target_is_the_ctx_parameter() -> None:
    """Within one call, every hook's `ctx`, `hw.current()` in a hook and `hw.current()` in the
    target are one and the same RunContext."""
    seen: dict[str, Any] = {}

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen["before_ctx"] = ctx
        seen["before_current"] = hw.current()

    @hw.wrap_model
    def around(request: hw.ModelRequest, call_next: Any, ctx: hw.RunContext) -> Any:
        seen["wrap_ctx"] = ctx
        return call_next(request)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen["after_ctx"] = ctx
        seen["after_current"] = hw.current()

    def llm(prompt: str) -> str:
        seen["target"] = hw.current()
        return "ok"

    assert hw.model(llm, use=[before, around, after])("hi") == "ok"
    target = seen["target"]
    assert isinstance(target, hw.RunContext)
    for key in ("before_ctx", "before_current", "wrap_ctx", "after_ctx", "after_current"):
        assert seen[key] is target, key
    with pytest.raises(LookupError):
        hw.current()  # the one-call run is over


def test_current_in_a_tool_is_the_ctx_of_its_hooks() -> None:
    """In a tool call, the tool function's `hw.current()` is the ctx its hooks received."""
    seen: dict[str, Any] = {}

    @hw.before_tool
    def before(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        seen["before"] = ctx

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome, ctx: hw.RunContext) -> None:
        seen["after"] = ctx

    @hw.tool(use=[before, after])
    def lookup(key: str) -> str:
        seen["tool"] = hw.current()
        return key.upper()

    assert lookup("k") == "K"
    assert isinstance(seen["tool"], hw.RunContext)
    assert seen["before"] is seen["tool"]
    assert seen["after"] is seen["tool"]


# -- phases -----------------------------------------------------------------------------------


def test_phases_of_a_model_call() -> None:
    """before_model → "before_model", the wrap_model onion and the model → "model",
    after_model → "after_model"."""
    phases: list[tuple[str, str]] = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        phases.append(("before_model", ctx.phase))

    @hw.wrap_model
    def around(request: hw.ModelRequest, call_next: Any, ctx: hw.RunContext) -> Any:
        phases.append(("wrap_model", ctx.phase))
        return call_next(request)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        phases.append(("after_model", ctx.phase))

    def llm(prompt: str) -> str:
        phases.append(("target", hw.current().phase))
        return "ok"

    hw.model(llm, use=[before, around, after])("hi")
    assert phases == [
        ("before_model", "before_model"),
        ("wrap_model", "model"),
        ("target", "model"),
        ("after_model", "after_model"),
    ]


def test_terminal_hooks_of_a_one_call_run_see_phase_finished() -> None:
    """`on_finish` and `on_error` of a one-call run see the phase "finished"."""
    phases: list[tuple[str, str]] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo, ctx: hw.RunContext) -> None:
        phases.append(("on_finish", ctx.phase))

    @hw.on_error
    def errored(info: hw.FinishInfo, ctx: hw.RunContext) -> None:
        phases.append(("on_error", ctx.phase))

    def llm(prompt: str) -> str:
        if prompt == "fail":
            raise ValueError(prompt)
        return "ok"

    chat = hw.model(llm, use=[finished, errored])
    chat("hi")
    with pytest.raises(ValueError):
        chat("fail")
    assert phases == [("on_finish", "finished"), ("on_error", "finished")]


def test_phases_of_a_streamed_model_call() -> None:
    """While a stream is pulled, the target and `on_chunk` see "model_stream"; after the
    stream ends, `after_model` sees "after_model"."""
    phases: list[tuple[str, str]] = []

    @hw.on_chunk
    def chunk_hook(chunk: hw.Chunk, ctx: hw.RunContext) -> None:
        phases.append(("on_chunk", ctx.phase))

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        phases.append(("after_model", ctx.phase))

    def llm(prompt: str) -> Iterator[str]:
        for piece in ("a", "b"):
            phases.append(("target", hw.current().phase))
            yield piece

    assert list(hw.model(llm, use=[chunk_hook, after])("hi")) == ["a", "b"]
    assert phases == [
        ("target", "model_stream"),
        ("on_chunk", "model_stream"),
        ("target", "model_stream"),
        ("on_chunk", "model_stream"),
        ("after_model", "after_model"),
    ]


def test_phases_of_an_async_streamed_model_call() -> None:
    """The async stream twin: "model_stream" while pulled, then "after_model"."""
    phases: list[tuple[str, str]] = []

    @hw.on_chunk
    def chunk_hook(chunk: hw.Chunk, ctx: hw.RunContext) -> None:
        phases.append(("on_chunk", ctx.phase))

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        phases.append(("after_model", ctx.phase))

    async def llm(prompt: str) -> AsyncIterator[str]:
        for piece in ("a", "b"):
            phases.append(("target", hw.current().phase))
            yield piece

    wrapped = hw.model(llm, use=[chunk_hook, after])

    async def main() -> list[str]:
        return [piece async for piece in wrapped("hi")]

    assert asyncio.run(main()) == ["a", "b"]
    assert phases == [
        ("target", "model_stream"),
        ("on_chunk", "model_stream"),
        ("target", "model_stream"),
        ("on_chunk", "model_stream"),
        ("after_model", "after_model"),
    ]


def test_phases_of_a_tool_call() -> None:
    """before_tool → "before_tool", the wrap_tool onion and the tool → "tool",
    after_tool → "after_tool"."""
    phases: list[tuple[str, str]] = []

    @hw.before_tool
    def before(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        phases.append(("before_tool", ctx.phase))

    @hw.wrap_tool
    def around(call: hw.ToolCall, call_next: Any, ctx: hw.RunContext) -> Any:
        phases.append(("wrap_tool", ctx.phase))
        return call_next(call)

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome, ctx: hw.RunContext) -> None:
        phases.append(("after_tool", ctx.phase))

    @hw.tool(use=[before, around, after])
    def add(a: int, b: int) -> int:
        phases.append(("tool", hw.current().phase))
        return a + b

    assert add(2, 3) == 5
    assert phases == [
        ("before_tool", "before_tool"),
        ("wrap_tool", "tool"),
        ("tool", "tool"),
        ("after_tool", "after_tool"),
    ]


def test_phase_is_init_inside_run_outside_calls_and_finished_in_on_finish() -> None:
    """Inside `with hw.run()` but outside any call the phase is "init", before and after
    calls; `on_finish` of the run sees "finished"."""
    phases: list[str] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo, ctx: hw.RunContext) -> None:
        phases.append(ctx.phase)

    chat = hw.model(echo, use=[passthrough()])
    with hw.run(use=[finished]) as run:
        assert run.phase == "init"
        assert hw.current().phase == "init"
        chat("hi")
        assert hw.current().phase == "init"
        assert hw.current() is run
    assert phases == ["finished"]


def test_current_in_the_lifecycle_hooks_of_a_run_is_the_run() -> None:
    """`hw.current()` inside `on_start` and `on_finish` of `with hw.run()` returns the run's
    RunContext (the same object as their `ctx` parameter)."""
    seen: list[tuple[str, bool]] = []

    @hw.on_start
    def started(ctx: hw.RunContext) -> None:
        seen.append(("on_start", hw.current() is ctx))

    @hw.on_finish
    def finished(info: hw.FinishInfo, ctx: hw.RunContext) -> None:
        seen.append(("on_finish", hw.current() is ctx))

    with hw.run(use=[started, finished]):
        pass
    assert seen == [("on_start", True), ("on_finish", True)]


# -- run_id -----------------------------------------------------------------------------------


def test_run_id_is_stable_within_a_run_and_differs_across_runs() -> None:
    """Every call and hook of one run sees the run's id; two runs have different ids."""
    ids: list[str] = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ids.append(ctx.run_id)

    def llm(prompt: str) -> str:
        ids.append(hw.current().run_id)
        return "ok"

    chat = hw.model(llm, use=[before])
    with hw.run() as first:
        chat("a")
        chat("b")
    with hw.run() as second:
        chat("c")
    assert isinstance(first.run_id, str)
    assert first.run_id
    assert ids[:4] == [first.run_id] * 4
    assert ids[4:] == [second.run_id] * 2
    assert first.run_id != second.run_id


def test_one_call_runs_have_distinct_run_ids() -> None:
    """Each wrapped call outside a run is its own run, with its own id."""
    ids: list[str] = []

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        ids.append(ctx.run_id)

    chat = hw.model(echo, use=[after])
    for _ in range(5):
        chat("x")
    assert len(set(ids)) == 5


# -- state ------------------------------------------------------------------------------------


def test_state_get_set_delete_and_contains() -> None:
    """`state` supports get (with a default), set, delete and `in`."""
    with hw.run() as run:
        state = run.state
        assert state.get("missing") is None
        assert state.get("missing", 7) == 7
        assert "k" not in state
        state.set("k", {"a": 1})
        assert "k" in state
        assert state.get("k") == {"a": 1}
        state.set("k", 2)
        assert state.get("k") == 2
        state.delete("k")
        assert "k" not in state
        assert state.get("k", "gone") == "gone"


def test_state_is_shared_by_all_calls_of_one_run() -> None:
    """What one call's hook stores in `state` the next call's hook and the target read, and
    the run sees it after the calls; a new run starts empty."""
    counts: list[int] = []

    @hw.before_model
    def count(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.state.set("calls", ctx.state.get("calls", 0) + 1)

    def llm(prompt: str) -> str:
        counts.append(hw.current().state.get("calls"))
        return "ok"

    @hw.before_tool
    def tool_count(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        ctx.state.set("calls", ctx.state.get("calls", 0) + 1)

    @hw.tool(use=[tool_count])
    def noop() -> str:
        counts.append(hw.current().state.get("calls"))
        return "done"

    chat = hw.model(llm, use=[count])
    with hw.run() as run:
        chat("a")
        noop()
        chat("b")
        assert run.state.get("calls") == 3
    assert counts == [1, 2, 3]
    with hw.run() as fresh:
        assert "calls" not in fresh.state


def test_state_takes_concurrent_sets_from_many_threads() -> None:
    """Eight threads, each setting its own keys into one run's state through wrapped calls,
    lose nothing."""

    @hw.before_model
    def store(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.state.set(request.messages[-1].text, True)

    chat = hw.model(echo, use=[store])
    per_thread = 200
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            chat(f"{n}-{i}")

    with hw.run() as run:
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(worker, n))
            for n in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        expected = {f"{n}-{i}" for n in range(8) for i in range(per_thread)}
        assert all(key in run.state for key in expected)


def test_state_direct_concurrent_sets_all_land() -> None:
    """Concurrent `set` of distinct keys on one State from 8 threads: every key lands."""
    with hw.run() as run:
        state = run.state
        barrier = threading.Barrier(8)

        def worker(n: int) -> None:
            barrier.wait()
            for i in range(500):
                state.set(f"{n}:{i}", i)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(state.get(f"{n}:{i}") == i for n in range(8) for i in range(500))


# -- call_state and call_id -------------------------------------------------------------------


def test_call_state_hands_over_from_before_to_after_and_resets_per_call() -> None:
    """`call_state` written by `before_model` is read by `after_model` of the same call; the
    next call starts with an empty dict."""
    seen_before: list[dict[str, Any]] = []
    seen_after: list[Any] = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen_before.append(dict(ctx.call_state))
        ctx.call_state["prompt"] = request.messages[-1].text

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen_after.append(ctx.call_state.get("prompt"))

    chat = hw.model(echo, use=[before, after])
    with hw.run():
        chat("one")
        chat("two")
    chat("three")  # a one-call run
    assert seen_before == [{}, {}, {}]
    assert seen_after == ["one", "two", "three"]


def test_call_state_hands_over_from_before_tool_to_after_tool() -> None:
    """`call_state` of a tool call: `before_tool` writes, the tool and `after_tool` read."""
    seen: list[Any] = []

    @hw.before_tool
    def before(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        seen.append(dict(ctx.call_state))
        ctx.call_state["x"] = call.arguments["x"]

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome, ctx: hw.RunContext) -> None:
        seen.append(ctx.call_state["x"])

    @hw.tool(use=[before, after])
    def double(x: int) -> int:
        seen.append(hw.current().call_state["x"])
        return 2 * x

    with hw.run():
        assert double(1) == 2
        assert double(5) == 10
    assert seen == [{}, 1, 1, {}, 5, 5]


def test_call_id_is_stable_within_a_call_and_differs_across_calls() -> None:
    """Hooks and the target of one call see one `call_id`; each call has its own."""
    ids: list[tuple[str, str]] = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ids.append(("before", ctx.call_id))

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        ids.append(("after", ctx.call_id))

    def llm(prompt: str) -> str:
        ids.append(("target", hw.current().call_id))
        return "ok"

    chat = hw.model(llm, use=[before, after])
    with hw.run():
        chat("a")
        chat("b")
    chat("c")
    per_call = [ids[i : i + 3] for i in range(0, 9, 3)]
    call_ids = []
    for stages in per_call:
        assert [s for s, _ in stages] == ["before", "target", "after"]
        assert len({cid for _, cid in stages}) == 1
        assert isinstance(stages[0][1], str)
        assert stages[0][1]
        call_ids.append(stages[0][1])
    assert len(set(call_ids)) == 3


# -- context ----------------------------------------------------------------------------------


class Deps:
    """A user's object handed to every hook through `ctx.context`."""

    def __init__(self, user: str) -> None:
        self.user = user


def test_context_reaches_hooks_and_target() -> None:
    """`hw.run(context=obj)`: `ctx.context is obj` in hooks, the target and the run itself."""
    deps = Deps("ada")
    seen: list[Any] = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext[Deps]) -> None:
        seen.append(ctx.context)

    @hw.on_finish
    def finished(info: hw.FinishInfo, ctx: hw.RunContext[Deps]) -> None:
        seen.append(ctx.context)

    def llm(prompt: str) -> str:
        seen.append(hw.current().context)
        return "ok"

    chat = hw.model(llm, use=[before])
    with hw.run(context=deps, use=[finished]) as run:
        assert run.context is deps
        chat("a")
    assert len(seen) == 3
    assert all(item is deps for item in seen)


# -- abort ------------------------------------------------------------------------------------


def test_abort_raises_aborted_out_of_the_call_and_the_run_after_on_abort() -> None:
    """`ctx.abort(reason)` raises `hw.Aborted(reason)`; the same object leaves the call and
    `with hw.run()`, after `on_abort` ran once with `info.reason == reason`; the model and
    the other terminal hooks do not run."""
    log: Log = []
    infos: list[hw.FinishInfo] = []

    @hw.before_model
    def guard(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("budget exhausted")

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append("on_abort")
        infos.append(info)

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    @hw.on_error
    def errored(info: hw.FinishInfo) -> None:
        log.append("on_error")

    def llm(prompt: str) -> str:
        log.append("model")
        return "ok"

    chat = hw.model(llm, use=[guard, errored])
    from_call: list[BaseException] = []
    with pytest.raises(hw.Aborted) as excinfo, hw.run(use=[aborted, finished]):
        try:
            chat("hi")
        except hw.Aborted as exc:
            from_call.append(exc)
            log.append("caught in run")
            raise
    exc = excinfo.value
    assert from_call == [exc]
    assert from_call[0] is exc
    assert exc.reason == "budget exhausted"
    assert log == ["caught in run", "on_abort"]
    assert len(infos) == 1
    assert infos[0].reason == "budget exhausted"
    assert infos[0].error is None


def test_abort_in_a_one_call_run_runs_on_abort() -> None:
    """A one-call run ended by `ctx.abort` fires `on_abort` (with the reason) and no other
    terminal hook; `hw.Aborted` reaches the caller."""
    log: list[tuple[str, Any]] = []

    @hw.after_model
    def stop(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        ctx.abort("no")

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append(("on_abort", info.reason))

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append(("on_finish", None))

    with pytest.raises(hw.Aborted) as excinfo:
        hw.model(echo, use=[stop, aborted, finished])("hi")
    assert excinfo.value.reason == "no"
    assert log == [("on_abort", "no")]


# -- defer ------------------------------------------------------------------------------------


def test_defer_runs_after_the_terminal_hook() -> None:
    """Deferred callables run after the run's terminal hook, in the order deferred."""
    log: Log = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.defer(lambda: log.append("deferred 1"))
        ctx.defer(lambda: log.append("deferred 2"))

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    chat = hw.model(echo, use=[before])
    with hw.run(use=[finished]):
        chat("a")
        log.append("body done")
    assert log == ["body done", "on_finish", "deferred 1", "deferred 2"]


def test_defer_in_a_one_call_run_runs_after_on_finish() -> None:
    """A one-call run also runs its deferred work after its terminal hook."""
    log: Log = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.defer(lambda: log.append("deferred"))

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    def llm(prompt: str) -> str:
        log.append("model")
        return "ok"

    assert hw.model(llm, use=[before, finished])("hi") == "ok"
    assert log == ["model", "on_finish", "deferred"]


@pytest.mark.parametrize("shape", ["sync", "async", "stream"])
def test_defer_from_the_only_hook_of_a_one_call_run_runs(shape: str) -> None:
    """Deferred work runs when its hook is the only one (no terminal hook, no hook that sees
    the answer), in every call shape: the call then makes no response view, yet its run
    ends."""
    log: Log = []

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.defer(lambda: log.append("deferred"))

    def llm(prompt: str) -> str:
        log.append("model")
        return "ok"

    async def allm(prompt: str) -> str:
        return llm(prompt)

    def streamed(prompt: str) -> Iterator[str]:
        yield llm(prompt)

    if shape == "sync":
        assert hw.model(llm, use=[before])("hi") == "ok"
    elif shape == "async":
        assert asyncio.run(hw.model(allm, use=[before])("hi")) == "ok"
    else:
        assert list(hw.model(streamed, use=[before])("hi")) == ["ok"]
    assert log == ["model", "deferred"]


def test_a_failing_deferred_callable_is_logged_and_never_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A deferred callable that raises is logged through the `hookwrap` logger; the run ends
    normally and later deferred work still runs."""
    log: Log = []

    def broken() -> None:
        raise RuntimeError("cleanup failed")

    caplog.set_level(logging.DEBUG, logger="hookwrap")
    with hw.run() as run:
        run.defer(broken)
        run.defer(lambda: log.append("after broken"))
    assert log == ["after broken"]
    records = hookwrap_records(caplog)
    assert len(records) == 1
    assert records[0].levelno >= logging.WARNING
    assert records[0].exc_info is not None
    assert isinstance(records[0].exc_info[1], RuntimeError)


def test_defer_of_a_coroutine_is_awaited_in_an_async_run() -> None:
    """`ctx.defer(coroutine)` in an async run is awaited after the terminal hook, and so is
    the coroutine an async deferred function returns."""
    log: Log = []

    async def cleanup(label: str) -> None:
        await asyncio.sleep(0)
        log.append(label)

    @hw.on_finish
    async def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    async def main() -> None:
        async with hw.run(use=[finished]) as run:
            run.defer(cleanup("awaitable"))
            run.defer(lambda: cleanup("from callable"))
            log.append("body done")

    asyncio.run(main())
    assert log == ["body done", "on_finish", "awaitable", "from callable"]


# -- emit -------------------------------------------------------------------------------------


def test_emit_appends_to_the_run_events() -> None:
    """`ctx.emit(name, value)` adds `(name, value)` to `ctx.events`, in order, run-wide."""

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.emit("prompt", request.messages[-1].text)

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        ctx.emit("answer", response.text)

    chat = hw.model(echo, use=[before, after])
    with hw.run() as run:
        run.emit("begin", {"n": 1})
        chat("a")
        chat("b")
        assert list(run.events) == [
            ("begin", {"n": 1}),
            ("prompt", "a"),
            ("answer", "echo: a"),
            ("prompt", "b"),
            ("answer", "echo: b"),
        ]


# -- hw.run() and terminal hooks --------------------------------------------------------------


def test_run_use_fires_on_start_and_on_finish() -> None:
    """`hw.run(use=[on_start, on_finish])`: on_start on entry, on_finish on exit, once each."""
    log: Log = []

    @hw.on_start
    def started() -> None:
        log.append("on_start")

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    with hw.run(use=[started, finished]):
        log.append("body")
    assert log == ["on_start", "body", "on_finish"]


def test_terminal_hooks_of_every_stack_that_took_part_fire_once_on_exit() -> None:
    """Two wrapped functions sharing one on_finish hook: it runs once, at the end of the run,
    not after each call; a stack whose calls did not take part does not fire."""
    log: Log = []

    @hw.on_start
    def started() -> None:
        log.append("on_start")

    @hw.on_finish
    def shared(info: hw.FinishInfo) -> None:
        log.append("shared on_finish")

    @hw.on_finish
    def only_second(info: hw.FinishInfo) -> None:
        log.append("second on_finish")

    @hw.on_finish
    def unused(info: hw.FinishInfo) -> None:
        log.append("unused on_finish")

    def first_llm(prompt: str) -> str:
        log.append("first")
        return "1"

    def second_llm(prompt: str) -> str:
        log.append("second")
        return "2"

    first = hw.model(first_llm, use=[started, shared])
    second = hw.model(second_llm, use=[shared, only_second])
    never = hw.model(echo, use=[unused])
    assert never is not None
    with hw.run():
        first("a")
        second("b")
        first("c")
        log.append("body done")
    assert log == [
        "on_start",
        "first",
        "second",
        "first",
        "body done",
        "shared on_finish",
        "second on_finish",
    ]


def test_terminal_hook_in_run_use_and_in_a_stack_fires_once() -> None:
    """A terminal hook listed both in `hw.run(use=...)` and in a wrapped call's stack runs
    once."""
    log: Log = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    chat = hw.model(echo, use=[finished])
    with hw.run(use=[finished]):
        chat("a")
        chat("b")
    assert log == ["on_finish"]


def test_one_call_run_success_fires_on_start_and_on_finish_only() -> None:
    """A wrapped call outside any run: on_start, the call, then on_finish alone."""
    log: Log = []
    use = [
        hw.on_start(lambda: log.append("on_start")),
        hw.on_finish(lambda info: log.append("on_finish")),
        hw.on_error(lambda info: log.append("on_error")),
        hw.on_abort(lambda info: log.append("on_abort")),
    ]

    def llm(prompt: str) -> str:
        log.append("model")
        return "ok"

    assert hw.model(llm, use=use)("hi") == "ok"
    assert log == ["on_start", "model", "on_finish"]


def test_one_call_run_error_fires_on_error_only_with_the_error() -> None:
    """A one-call run whose target raises: on_error alone, `info.error` is the raised object,
    which reaches the caller."""
    log: Log = []
    infos: list[hw.FinishInfo] = []
    boom = ValueError("model down")

    def record_error(info: hw.FinishInfo) -> None:
        log.append("on_error")
        infos.append(info)

    use = [
        hw.on_start(lambda: log.append("on_start")),
        hw.on_finish(lambda info: log.append("on_finish")),
        hw.on_error(record_error),
        hw.on_abort(lambda info: log.append("on_abort")),
    ]

    def llm(prompt: str) -> str:
        raise boom

    with pytest.raises(ValueError) as excinfo:
        hw.model(llm, use=use)("hi")
    assert excinfo.value is boom
    assert log == ["on_start", "on_error"]
    assert infos[0].error is boom
    assert infos[0].reason is None


def test_one_call_tool_run_fires_exactly_one_terminal_hook() -> None:
    """A tool called outside a run is its own run: on_start, then on_finish; on_error when it
    raises."""
    log: Log = []
    use = [
        hw.on_start(lambda: log.append("on_start")),
        hw.on_finish(lambda info: log.append("on_finish")),
        hw.on_error(lambda info: log.append("on_error")),
        hw.on_abort(lambda info: log.append("on_abort")),
    ]

    @hw.tool(use=use)
    def divide(a: int, b: int) -> float:
        return a / b

    assert divide(6, 3) == 2
    assert log == ["on_start", "on_finish"]
    log.clear()
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
    assert log == ["on_start", "on_error"]


# -- FinishInfo -------------------------------------------------------------------------------


def usage_model(usage: hw.Usage) -> Callable[[hw.ModelRequest], hw.ModelResponse]:
    def llm(request: hw.ModelRequest) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant("ok"), usage=usage)

    return llm


def test_finish_info_sums_the_usage_of_the_calls_of_a_run() -> None:
    """`on_finish` of a run gets `info.usage` summed over its calls and `duration >= 0`."""
    infos: list[hw.FinishInfo] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        infos.append(info)

    chat = hw.model(usage_model(hw.Usage(10, 5, 15)), use=[passthrough()])
    other = hw.model(usage_model(hw.Usage(1, 2, 3)), use=[passthrough()])
    request = hw.ModelRequest(messages=[hw.Message.user("hi")])
    with hw.run(use=[finished]) as run:
        assert chat(request).text == "ok"
        chat(request)
        other(request)
    assert len(infos) == 1
    info = infos[0]
    assert info.usage == hw.Usage(21, 12, 33)
    assert info.duration >= 0
    assert info.error is None
    assert info.reason is None
    assert info.run_id == run.run_id


def test_finish_info_of_a_one_call_run_has_that_calls_usage() -> None:
    """A one-call run's `on_finish` sees the usage of its one call."""
    infos: list[hw.FinishInfo] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        infos.append(info)

    chat = hw.model(usage_model(hw.Usage(3, 4, 7)), use=[finished])
    chat(hw.ModelRequest(messages=[hw.Message.user("hi")]))
    assert [i.usage for i in infos] == [hw.Usage(3, 4, 7)]
    assert infos[0].duration >= 0


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("layers", [1, 2], ids=["wrapped once", "wrapped twice"])
def test_a_run_counts_each_model_call_once(streamed: bool, layers: int) -> None:
    """Inside `hw.run()`, a call adds its usage to the run once: a streamed one too (its
    usage chunk), and a model wrapped twice (each layer with hooks of its own) too."""
    infos: list[hw.FinishInfo] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        infos.append(info)

    def whole(request: hw.ModelRequest) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant("ok"), usage=hw.Usage(3, 4, 7))

    def stream(request: hw.ModelRequest) -> Iterator[hw.Chunk]:
        yield hw.Chunk("text", "ok")
        yield hw.Chunk("usage", usage=hw.Usage(3, 4, 7))

    chat: Any = hw.model(stream if streamed else whole, use=[passthrough()])
    if layers == 2:
        chat = hw.wrap(chat, use=[passthrough()])
    request = hw.ModelRequest(messages=[hw.Message.user("hi")])
    with hw.run(use=[finished]):
        for _ in range(2):
            answer = chat(request)
            if streamed:
                assert [c.text for c in answer] == ["ok", ""]
    assert [i.usage for i in infos] == [hw.Usage(6, 8, 14)]


def test_an_agent_counts_the_calls_of_a_model_with_hooks_of_its_own_once() -> None:
    """An agent whose model is wrapped with hooks of its own reports each call's usage
    once, in `RunResult.usage` and in `on_finish`."""
    infos: list[hw.FinishInfo] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        infos.append(info)

    model = hw.model(usage_model(hw.Usage(1, 2, 3)), use=[passthrough()])
    result = hw.Agent(model, use=[finished]).run("hi")
    assert result.usage == hw.Usage(1, 2, 3)
    assert [i.usage for i in infos] == [hw.Usage(1, 2, 3)]


def test_run_ended_by_an_error_fires_on_error_with_it() -> None:
    """An exception leaving `with hw.run()` fires on_error with `info.error` that object and
    propagates unchanged."""
    infos: list[tuple[str, hw.FinishInfo]] = []
    boom = KeyError("k")
    use = [
        hw.on_finish(lambda info: infos.append(("on_finish", info))),
        hw.on_error(lambda info: infos.append(("on_error", info))),
        hw.on_abort(lambda info: infos.append(("on_abort", info))),
    ]
    with pytest.raises(KeyError) as excinfo, hw.run(use=use):
        raise boom
    assert excinfo.value is boom
    assert [k for k, _ in infos] == ["on_error"]
    assert infos[0][1].error is boom
    assert infos[0][1].duration >= 0


# -- async with -------------------------------------------------------------------------------


def test_async_run_works_the_same() -> None:
    """`async with hw.run()`: on_start, shared state and context, `hw.current()`, one
    on_finish with the summed usage, then deferred work; async and sync hooks both run."""
    log: Log = []
    infos: list[hw.FinishInfo] = []
    deps = Deps("grace")

    @hw.on_start
    async def started() -> None:
        log.append("on_start")

    @hw.on_finish
    async def finished(info: hw.FinishInfo) -> None:
        infos.append(info)
        log.append("on_finish")

    @hw.before_model
    async def before(request: hw.ModelRequest, ctx: hw.RunContext[Deps]) -> None:
        await asyncio.sleep(0)
        ctx.state.set("n", ctx.state.get("n", 0) + 1)
        log.append(f"before {ctx.context.user} {ctx.state.get('n')}")

    async def llm(request: hw.ModelRequest) -> hw.ModelResponse:
        assert hw.current().context is deps
        return hw.ModelResponse(hw.Message.assistant("ok"), usage=hw.Usage(1, 1, 2))

    chat = hw.model(llm, use=[before])
    request = hw.ModelRequest(messages=[hw.Message.user("hi")])

    async def main() -> str:
        async with hw.run(context=deps, use=[started, finished]) as run:
            assert hw.current() is run
            assert run.phase == "init"
            await chat(request)
            await chat(request)
            run.defer(lambda: log.append("deferred"))
            assert run.state.get("n") == 2
            return run.run_id

    run_id = asyncio.run(main())
    assert log == ["on_start", "before grace 1", "before grace 2", "on_finish", "deferred"]
    assert len(infos) == 1
    assert infos[0].usage == hw.Usage(2, 2, 4)
    assert infos[0].run_id == run_id
    with pytest.raises(LookupError):
        hw.current()


def test_async_run_abort_propagates_after_on_abort() -> None:
    """In `async with hw.run()`, an abort from an async hook propagates out of the run after
    its async `on_abort` ran with the reason."""
    log: list[tuple[str, Any]] = []

    @hw.before_model
    async def guard(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("stop here")

    @hw.on_abort
    async def aborted(info: hw.FinishInfo) -> None:
        log.append(("on_abort", info.reason))

    async def llm(prompt: str) -> str:
        log.append(("model", None))
        return "ok"

    chat = hw.model(llm, use=[guard])

    async def main() -> None:
        async with hw.run(use=[aborted]):
            await chat("hi")

    with pytest.raises(hw.Aborted) as excinfo:
        asyncio.run(main())
    assert excinfo.value.reason == "stop here"
    assert log == [("on_abort", "stop here")]


# -- misuse -----------------------------------------------------------------------------------


def test_sync_run_with_an_async_terminal_hook_is_a_type_error() -> None:
    """An `async def` terminal hook in a plain `with hw.run()` is a TypeError naming it."""

    @hw.on_finish
    async def async_finish(info: hw.FinishInfo) -> None:
        return None

    with pytest.raises(TypeError, match="async_finish"), hw.run(use=[async_finish]):
        pass  # pragma: no cover - the run refuses to open


def test_run_use_takes_lifecycle_hooks_only() -> None:
    """`hw.run(use=[a before_model hook])` is a TypeError naming the hook (model and tool
    hooks belong on a wrapped target; a design decision of this implementation)."""

    @hw.before_model
    def misplaced(request: hw.ModelRequest) -> None:
        return None

    with pytest.raises(TypeError, match="misplaced"):
        hw.run(use=[misplaced])


def test_is_one_call_tells_a_calls_own_run_from_a_run_it_joined() -> None:
    seen: list[bool] = []

    @hw.before_model
    def record(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen.append(ctx.is_one_call)

    @hw.on_start
    def started() -> None:
        pass

    def llm(prompt: str) -> str:
        return prompt

    plain = hw.model(llm, use=[record])  # no lifecycle hooks: the run is made lazily
    with_start = hw.model(llm, use=[record, started])
    plain("a")
    with_start("b")
    with hw.run():
        plain("c")
        with_start("d")
    agent = hw.Agent(lambda request: "done", use=[record])
    agent.run("e")
    assert seen == [True, True, False, False, False]


@pytest.mark.parametrize("how", ["wrapped twice", "called inside"])
def test_async_lifecycle_hooks_of_an_inner_call_run_in_an_async_one_call_run(how: str) -> None:
    """The outer stack has no lifecycle hooks of its own, so its one-call run is made when
    the inner call joins it: an async run, as the call is."""
    events: list[str] = []

    @hw.on_start
    async def started() -> None:
        events.append("on_start")

    @hw.on_finish
    async def finished(info: hw.FinishInfo) -> None:
        events.append("on_finish")

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        events.append("before_model")

    async def llm(messages: list[Any]) -> str:
        return "answer"

    inner = hw.model(llm, use=[started, finished])

    async def step(messages: list[Any]) -> str:
        return await inner(messages)

    outer = hw.model(inner if how == "wrapped twice" else step, use=[look])
    assert asyncio.run(outer([{"role": "user", "content": "q"}])) == "answer"
    assert events == ["before_model", "on_start", "on_finish"]


@pytest.mark.parametrize("shape", ["sync", "async"])
def test_on_start_hooks_see_the_init_phase(shape: str) -> None:
    phases: list[str] = []

    @hw.on_start
    def started(ctx: hw.RunContext) -> None:
        phases.append(ctx.phase)

    @hw.before_model
    def before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        phases.append(ctx.phase)

    async def allm(prompt: str) -> str:
        return prompt

    if shape == "sync":
        hw.model(lambda prompt: prompt, use=[started, before])("hi")
    else:
        asyncio.run(hw.model(allm, use=[started, before])("hi"))
    assert phases == ["init", "before_model"]


# -- the end of a run --------------------------------------------------------------------------


def test_a_call_a_terminal_hook_or_deferred_work_makes_is_a_run_of_its_own() -> None:
    """The run is ending: a call its `on_finish` or deferred work makes cannot join it
    (its terminal hooks were chosen already), so it ends itself, with its own terminal
    hook, exactly one."""
    log: list[Any] = []

    @hw.on_finish
    def judged(info: hw.FinishInfo) -> None:
        log.append("judge on_finish")

    judge = hw.model(lambda messages: "8/10", use=[judged])

    @hw.on_finish
    def report(info: hw.FinishInfo) -> None:
        log.append(("report", judge([{"role": "user", "content": "q"}])))

    with hw.run(use=[report]) as run:
        run.defer(lambda: log.append(("deferred", judge([{"role": "user", "content": "q"}]))))
    assert log == ["judge on_finish", ("report", "8/10"), "judge on_finish", ("deferred", "8/10")]


def test_cancelled_in_an_async_on_finish_the_others_and_deferred_work_still_run() -> None:
    log: list[str] = []

    @hw.on_finish
    async def flush(info: hw.FinishInfo) -> None:
        log.append("flush start")
        await asyncio.sleep(10)

    @hw.on_finish
    def audit(info: hw.FinishInfo) -> None:
        log.append("audit")

    async def main() -> None:
        async with hw.run(use=[flush, audit]) as run:
            run.defer(lambda: log.append("deferred"))

    async def cancel_soon() -> None:
        task = asyncio.ensure_future(main())
        while "flush start" not in log:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    assert log == ["flush start", "audit", "deferred"]


def test_a_run_in_a_generator_closed_early_ends_closed_by_consumer() -> None:
    seen: list[Any] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        seen.append(info.reason)

    def words() -> Iterator[str]:
        with hw.run(use=[aborted]):
            yield "a"
            yield "b"

    stream = words()
    assert next(stream) == "a"
    stream.close()
    assert seen == ["closed by consumer"]


def test_a_run_closed_in_another_context_ends_once_and_raises_nothing() -> None:
    """A generator holding the run, closed from another thread: its terminal hook runs,
    and a call made afterwards where it was opened is a run of its own."""
    ended: list[str] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        ended.append(info.run_id)

    def words() -> Iterator[str]:
        with hw.run(use=[aborted]):
            yield "a"
            yield "b"

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ended.append("own run")

    here = contextvars.copy_context()  # where it is opened: the ended run stays current
    stream = words()
    here.run(next, stream)
    closer = threading.Thread(target=stream.close)
    closer.start()
    closer.join()
    assert len(ended) == 1
    with pytest.raises(LookupError):  # over, though still set there
        here.run(hw.current)
    assert here.run(hw.model(lambda prompt: "ok", use=[finished]), "hi") == "ok"
    assert ended[1:] == ["own run"]


def test_a_second_on_finish_error_is_noted_on_the_first() -> None:
    first, second = ValueError("first"), KeyError("second")

    @hw.on_finish
    def one(info: hw.FinishInfo) -> None:
        raise first

    @hw.on_finish
    def two(info: hw.FinishInfo) -> None:
        raise second

    with pytest.raises(ValueError) as caught, hw.run(use=[one, two]):
        pass
    assert caught.value is first
    assert any("failed too: KeyError('second')" in note for note in first.__notes__)


def test_a_run_used_again_after_it_ended_says_it_is_over() -> None:
    run = hw.run()
    with run:
        pass
    with pytest.raises(RuntimeError, match=r"this hw.run\(\) is over; create a new one per run"):
        run.__enter__()
