"""Fail-fast and its switches (SPEC §2), fail-open hooks (§1), Abort, terminal hooks, and
fault injection at every stage of every call shape."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw

Log = list[str]


class Boom(Exception):
    """An error raised on purpose by a hook or a target."""


def notes_of(exc: BaseException) -> list[str]:
    return list(getattr(exc, "__notes__", []))


def assert_noted(exc: BaseException, name: str, kind: str, priority: int) -> None:
    """Exactly one PEP 678 note names this hook, its kind and its priority."""
    notes = notes_of(exc)
    matching = [n for n in notes if name in n and kind in n and str(priority) in n]
    assert len(matching) == 1, notes


def recording_llm(log: Log, answer: str = "model answer") -> Callable[[str], str]:
    def llm(prompt: str) -> str:
        log.append("model")
        return answer

    return llm


def raiser(exc: BaseException) -> Callable[..., Any]:
    def hook(*args: Any) -> Any:
        raise exc

    return hook


def recorder(log: Log, label: str, result: Any = None) -> Callable[..., Any]:
    def hook(*args: Any) -> Any:
        log.append(label)
        return result

    return hook


def hookwrap_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "hookwrap" or r.name.startswith("hookwrap.")]


# -- fail-fast ---------------------------------------------------------------------------------


def test_first_raising_before_model_stops_the_stage_and_the_model() -> None:
    """The first raising hook ends its stage; the same exception object propagates, noted
    with the hook's name, kind and priority; later hooks and the model never run."""
    log: Log = []
    boom = Boom("no credentials")
    use = [
        hw.before_model(priority=9000, name="first")(recorder(log, "first")),
        hw.before_model(priority=4242, name="auth_guard")(raiser(boom)),
        hw.before_model(priority=1, name="later")(recorder(log, "later")),
        hw.wrap_model(name="wrap")(lambda request, call_next: call_next(request)),
        hw.after_model(name="after")(recorder(log, "after")),
    ]
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value is boom
    assert_noted(boom, "auth_guard", "before_model", 4242)
    assert log == ["first"]


def test_first_raising_after_model_stops_the_remaining_after_hooks() -> None:
    """after_model runs mirrored; the first one to raise stops the rest of the stage."""
    log: Log = []
    boom = Boom("bad answer")
    use = [
        hw.after_model(priority=1, name="outer_after")(recorder(log, "outer_after")),
        hw.after_model(priority=2121, name="checker")(raiser(boom)),
        hw.after_model(priority=3000, name="inner_after")(recorder(log, "inner_after")),
    ]
    # "in order" is 3000, 2121, 1; after_model runs the mirror: 1, then 2121 raises.
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value is boom
    assert_noted(boom, "checker", "after_model", 2121)
    assert log == ["model", "outer_after"]


def test_raising_wrap_model_before_call_next_skips_the_model_and_after_hooks() -> None:
    """A wrap hook raising on the way in stops the call: no inner layer, model or after."""
    log: Log = []
    boom = Boom("wrap refused")

    @hw.wrap_model(name="refuser", priority=7777)
    def refuser(request: hw.ModelRequest, call_next: Any) -> Any:
        raise boom

    use = [
        refuser,
        hw.wrap_model(name="inner")(recorder(log, "inner")),
        hw.after_model(name="after")(recorder(log, "after")),
    ]
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value is boom
    assert_noted(boom, "refuser", "wrap_model", 7777)
    assert log == []


def test_respond_short_circuits_before_hooks_onion_and_model_but_not_after() -> None:
    """The first Respond skips the remaining before_model hooks, the onion and the model;
    after_model hooks still see that response."""
    log: Log = []

    @hw.after_model
    def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after saw {response.text!r}")

    use = [
        hw.before_model(name="cache")(recorder(log, "cache", hw.Respond("cached answer"))),
        hw.before_model(name="later")(recorder(log, "later")),
        hw.wrap_model(name="wrap")(recorder(log, "wrap")),
        after,
    ]
    assert hw.model(recording_llm(log), use=use)("hi") == "cached answer"
    assert log == ["cache", "after saw 'cached answer'"]


def test_respond_short_circuits_in_an_async_call() -> None:
    """The same short-circuit in an async call."""
    log: Log = []

    async def allm(prompt: str) -> str:
        log.append("model")
        return "model answer"

    @hw.after_model
    async def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(f"after saw {response.text!r}")

    use = [
        hw.before_model(recorder(log, "cache", hw.Respond("cached"))),
        hw.before_model(recorder(log, "later")),
        after,
    ]
    assert asyncio.run(hw.model(allm, use=use)("hi")) == "cached"
    assert log == ["cache", "after saw 'cached'"]


# -- continue_on_error / continue_on_response --------------------------------------------------


def test_continue_on_error_runs_every_before_hook_then_raises_the_first_error() -> None:
    """continue_on_error=True: the whole stage runs; the first error is raised at its end and
    the model (after that stage) is never called."""
    log: Log = []
    first, second = Boom("first"), Boom("second")
    stack = hw.Stack(
        hw.before_model(name="fails_first", priority=6001)(raiser(first)),
        hw.before_model(name="fails_second")(raiser(second)),
        hw.before_model(name="last")(recorder(log, "last")),
        hw.after_model(name="after")(recorder(log, "after")),
        continue_on_error=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=stack)("hi")
    assert excinfo.value is first
    assert_noted(first, "fails_first", "before_model", 6001)
    assert log == ["last"]


def test_continue_on_error_runs_every_after_hook() -> None:
    """The same for the mirrored after_model stage: the first error in execution order wins."""
    log: Log = []
    early, late = Boom("raised first"), Boom("raised second")
    stack = hw.Stack(
        hw.after_model(name="runs_last")(recorder(log, "runs_last")),
        hw.after_model(name="late")(raiser(late)),
        hw.after_model(name="early")(raiser(early)),
        continue_on_error=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=stack)("hi")
    assert excinfo.value is early
    assert log == ["model", "runs_last"]


def test_continue_on_error_covers_all_stages_like_on_usage() -> None:
    """An "all" stage (on_usage) also runs every hook before raising the first error."""
    log: Log = []
    boom = Boom("meter down")

    @hw.wrap_model(priority=-10)
    def with_usage(request: hw.ModelRequest) -> Iterator[Any]:
        response = yield request
        return response.replace(usage=hw.Usage(3, 4, 7))

    stack = hw.Stack(
        with_usage,
        hw.on_usage(name="meter")(raiser(boom)),
        hw.on_usage(name="billing")(recorder(log, "billing")),
        hw.after_model(name="after")(recorder(log, "after")),
        continue_on_error=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=stack)("hi")
    assert excinfo.value is boom
    assert log == ["model", "billing"]


def test_without_continue_on_response_the_first_respond_wins() -> None:
    """By default the first Respond ends the before_model stage."""
    log: Log = []
    use = [
        hw.before_model(recorder(log, "r1", hw.Respond("first"))),
        hw.before_model(recorder(log, "r2", hw.Respond("second"))),
    ]
    assert hw.model(recording_llm(log), use=use)("hi") == "first"
    assert log == ["r1"]


def test_continue_on_response_keeps_running_and_the_last_respond_wins() -> None:
    """continue_on_response=True: before_model hooks go on after a Respond; the last wins;
    the model is still skipped."""
    log: Log = []
    stack = hw.Stack(
        hw.before_model(recorder(log, "r1", hw.Respond("first"))),
        hw.before_model(recorder(log, "r2", hw.Respond("second"))),
        hw.before_model(recorder(log, "observer")),
        continue_on_response=True,
    )
    assert hw.model(recording_llm(log), use=stack)("hi") == "second"
    assert log == ["r1", "r2", "observer"]


def test_error_after_a_respond_wins() -> None:
    """With both an error and a Respond in the stage, the error propagates."""
    log: Log = []
    boom = Boom("late failure")
    stack = hw.Stack(
        hw.before_model(recorder(log, "responder", hw.Respond("cached"))),
        hw.before_model(name="failing")(raiser(boom)),
        hw.after_model(recorder(log, "after")),
        continue_on_response=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=stack)("hi")
    assert excinfo.value is boom
    assert log == ["responder"]


def test_error_before_a_respond_wins() -> None:
    """An error kept by continue_on_error still wins over a later Respond."""
    log: Log = []
    boom = Boom("early failure")
    stack = hw.Stack(
        hw.before_model(name="failing")(raiser(boom)),
        hw.before_model(recorder(log, "responder", hw.Respond("cached"))),
        hw.after_model(recorder(log, "after")),
        continue_on_error=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=stack)("hi")
    assert excinfo.value is boom
    assert log == ["responder"]


def test_combined_stacks_each_hook_keeps_its_stacks_continue_on_error() -> None:
    """A hook from a continue_on_error stack lets the stage go on, into other stacks' hooks."""
    log: Log = []
    boom = Boom("tolerated")
    use = [
        hw.Stack(
            hw.before_model(name="tolerant")(raiser(boom)),
            hw.before_model(recorder(log, "same_stack")),
            continue_on_error=True,
        ),
        hw.Stack(hw.before_model(recorder(log, "strict_stack"))),
    ]
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value is boom
    assert log == ["same_stack", "strict_stack"]


def test_combined_stacks_a_strict_hook_stops_even_before_a_tolerant_stack() -> None:
    """A hook from a fail-fast stack stops the stage, whatever the next stack's switches."""
    log: Log = []
    boom = Boom("strict")
    outer = hw.Stack(
        hw.Stack(hw.before_model(name="strict")(raiser(boom))),
        hw.Stack(hw.before_model(recorder(log, "tolerant_stack")), continue_on_error=True),
        continue_on_error=True,
    )
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=outer)("hi")
    assert excinfo.value is boom
    assert log == []


def test_combined_stacks_each_hook_keeps_its_stacks_continue_on_response() -> None:
    """A Respond from a continue_on_response stack lets later hooks run; one from a default
    stack ends the stage even if a later stack continues on responses."""
    log: Log = []
    go_on = [
        hw.Stack(
            hw.before_model(recorder(log, "r_continue", hw.Respond("kept"))),
            continue_on_response=True,
        ),
        hw.Stack(hw.before_model(recorder(log, "default_stack"))),
    ]
    assert hw.model(recording_llm(log), use=go_on)("hi") == "kept"
    assert log == ["r_continue", "default_stack"]

    log.clear()
    stop = [
        hw.Stack(hw.before_model(recorder(log, "r_default", hw.Respond("first")))),
        hw.Stack(
            hw.before_model(recorder(log, "continuing_stack", hw.Respond("second"))),
            continue_on_response=True,
        ),
    ]
    assert hw.model(recording_llm(log), use=stop)("hi") == "first"
    assert log == ["r_default"]


# -- fail-open hooks -----------------------------------------------------------------------------


def _usage_source() -> Any:
    @hw.wrap_model(priority=-100, name="usage_source")
    def usage_source(request: hw.ModelRequest) -> Iterator[Any]:
        response = yield request
        return response.replace(usage=hw.Usage(3, 4, 7))

    return usage_source


@pytest.mark.parametrize("kind", ["before_model", "after_model", "on_usage", "on_finish"])
def test_fail_open_plain_hook_is_logged_and_skipped(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A fail-open hook that raises is logged through the `hookwrap` logger and skipped;
    the other hooks of its stage and the call go on."""
    log: Log = []
    boom = Boom("telemetry down")
    deco = getattr(hw, kind)
    use = [
        _usage_source(),
        deco(fail_open=True, name="telemetry", priority=50)(raiser(boom)),
        deco(name="next_hook")(recorder(log, "next_hook")),
    ]
    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        assert hw.model(recording_llm(log), use=use)("hi") == "model answer"
    assert log == ["next_hook", "model"] if kind == "before_model" else ["model", "next_hook"]
    records = hookwrap_records(caplog)
    assert len(records) == 1
    assert records[0].levelno >= logging.WARNING
    assert "telemetry" in records[0].getMessage()
    assert records[0].exc_info is not None
    assert records[0].exc_info[1] is boom


def test_fail_open_on_chunk_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    """A fail-open on_chunk that raises leaves the chunk as it was."""
    boom = Boom("chunk audit down")

    @hw.on_chunk(fail_open=True, name="audit")
    def audit(chunk: hw.Chunk) -> None:
        if chunk.text == "b":
            raise boom

    def stream(prompt: str) -> Iterator[str]:
        yield from ("a", "b", "c")

    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        assert list(hw.model(stream, use=[audit])("hi")) == ["a", "b", "c"]
    records = hookwrap_records(caplog)
    assert [r.exc_info[1] if r.exc_info else None for r in records] == [boom]


def _wrap_sync_call_next(boom: Boom, when: str) -> Any:
    def hook(request: hw.ModelRequest, call_next: Any) -> Any:
        if when == "before":
            raise boom
        call_next(request)
        raise boom

    return hook


def _wrap_sync_generator(boom: Boom, when: str) -> Any:
    def hook(request: hw.ModelRequest) -> Iterator[Any]:
        if when == "before":
            raise boom
        yield request
        raise boom

    return hook


def _wrap_async_call_next(boom: Boom, when: str) -> Any:
    async def hook(request: hw.ModelRequest, call_next: Any) -> Any:
        if when == "before":
            raise boom
        await call_next(request)
        raise boom

    return hook


def _wrap_async_generator(boom: Boom, when: str) -> Any:
    async def hook(request: hw.ModelRequest) -> AsyncIterator[Any]:
        if when == "before":
            raise boom
        yield request
        raise boom

    return hook


WRAP_FORMS = {
    "sync-call_next": (_wrap_sync_call_next, False),
    "sync-generator": (_wrap_sync_generator, False),
    "async-call_next": (_wrap_async_call_next, True),
    "async-sync_generator": (_wrap_sync_generator, True),
    "async-async_generator": (_wrap_async_generator, True),
}


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("form", list(WRAP_FORMS))
def test_fail_open_wrap_model_is_skipped_and_keeps_a_returned_response(
    form: str, when: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A fail-open wrap_model that raises before call_next is skipped (the call goes on);
    one that raises after call_next returned leaves that response in place. The model runs
    exactly once either way."""
    boom = Boom(f"wrap failed {when}")
    make, is_async = WRAP_FORMS[form]
    hook = hw.wrap_model(fail_open=True, name="flaky_wrap")(make(boom, when))
    calls: list[str] = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        return f"answer to {prompt}"

    async def allm(prompt: str) -> str:
        calls.append(prompt)
        return f"answer to {prompt}"

    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        if is_async:
            assert asyncio.run(hw.model(allm, use=[hook])("hi")) == "answer to hi"
        else:
            assert hw.model(llm, use=[hook])("hi") == "answer to hi"
    assert calls == ["hi"]
    records = hookwrap_records(caplog)
    assert [r.exc_info[1] if r.exc_info else None for r in records] == [boom]
    assert "flaky_wrap" in records[0].getMessage()


def test_fail_open_wrap_tool_keeps_the_tool_result(caplog: pytest.LogCaptureFixture) -> None:
    """The same for wrap_tool: a failure after call_next returned keeps that result."""
    boom = Boom("audit down")
    calls: list[int] = []

    @hw.wrap_tool(fail_open=True, name="audit")
    def audit(call: hw.ToolCall, call_next: Any) -> Any:
        call_next(call)
        raise boom

    @hw.tool(use=[audit])
    def add(a: int, b: int) -> int:
        calls.append(a)
        return a + b

    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        assert add(2, 3) == 5
    assert calls == [2]
    assert [r.exc_info[1] if r.exc_info else None for r in hookwrap_records(caplog)] == [boom]


@pytest.mark.parametrize("fails", [False, True], ids=["passes it on", "fails on it"])
@pytest.mark.parametrize("form", list(WRAP_FORMS))
def test_fail_open_wrap_does_not_swallow_the_models_error(
    form: str, fails: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A model error passing through a fail-open wrap hook is not the hook's failure: it
    propagates, and the model is not called again. So too when the hook fails while
    handling it (its audit sink is down too): the hook is skipped, its failure logged."""
    boom = Boom("provider down")
    calls: list[str] = []
    is_async = WRAP_FORMS[form][1]

    def handle(exc: Boom) -> None:
        if fails:
            raise RuntimeError("audit sink down") from exc

    def audit_sync(request: hw.ModelRequest, call_next: Any) -> Any:
        try:
            return call_next(request)
        except Boom as exc:
            handle(exc)
            raise

    def audit_gen(request: hw.ModelRequest) -> Iterator[Any]:
        try:
            return (yield request)
        except Boom as exc:
            handle(exc)
            raise

    async def audit_async(request: hw.ModelRequest, call_next: Any) -> Any:
        try:
            return await call_next(request)
        except Boom as exc:
            handle(exc)
            raise

    async def audit_agen(request: hw.ModelRequest) -> AsyncIterator[Any]:
        try:
            yield request
        except Boom as exc:
            handle(exc)
            raise

    fn = {
        "sync-call_next": audit_sync,
        "sync-generator": audit_gen,
        "async-call_next": audit_async,
        "async-sync_generator": audit_gen,
        "async-async_generator": audit_agen,
    }[form]
    hook = hw.wrap_model(fail_open=True, name="audit")(fn)

    def llm(prompt: str) -> str:
        calls.append(prompt)
        raise boom

    async def allm(prompt: str) -> str:
        return llm(prompt)

    with caplog.at_level(logging.DEBUG, logger="hookwrap"), pytest.raises(Boom) as excinfo:
        if is_async:
            asyncio.run(hw.model(allm, use=[hook])("hi"))
        else:
            hw.model(llm, use=[hook])("hi")
    assert excinfo.value is boom
    assert calls == ["hi"]
    assert not any("audit" in note for note in notes_of(boom))
    records = hookwrap_records(caplog)
    if not fails:
        assert records == []
        return
    [record] = records  # the hook's own failure, logged
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)


# -- attribution --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", list(WRAP_FORMS))
def test_model_error_through_a_wrap_hook_is_not_attributed_to_it(form: str) -> None:
    """An error from the model propagates unchanged through a wrap hook: same object, and no
    note names the wrap hook (it did not raise it)."""
    boom = Boom("rate limited")
    is_async = WRAP_FORMS[form][1]
    seen: list[str] = []

    def layer(name: str, priority: int) -> Any:
        def sync_cn(request: hw.ModelRequest, call_next: Any) -> Any:
            seen.append(name)
            return call_next(request)

        def sync_gen(request: hw.ModelRequest) -> Iterator[Any]:
            seen.append(name)
            return (yield request)

        async def async_cn(request: hw.ModelRequest, call_next: Any) -> Any:
            seen.append(name)
            return await call_next(request)

        async def async_gen(request: hw.ModelRequest) -> AsyncIterator[Any]:
            seen.append(name)
            yield request

        fn = {
            "sync-call_next": sync_cn,
            "sync-generator": sync_gen,
            "async-call_next": async_cn,
            "async-sync_generator": sync_gen,
            "async-async_generator": async_gen,
        }[form]
        return hw.wrap_model(name=name, priority=priority)(fn)

    outer = layer("outer_layer", 5)
    inner = layer("inner_layer", 0)

    def llm(prompt: str) -> str:
        raise boom

    async def allm(prompt: str) -> str:
        raise boom

    with pytest.raises(Boom) as excinfo:
        if is_async:
            asyncio.run(hw.model(allm, use=[outer, inner])("hi"))
        else:
            hw.model(llm, use=[outer, inner])("hi")
    assert excinfo.value is boom
    assert seen == ["outer_layer", "inner_layer"]
    assert not any("outer_layer" in n or "inner_layer" in n for n in notes_of(boom))


def test_tool_error_through_a_wrap_tool_hook_is_not_attributed_to_it() -> None:
    """The same for a tool's own error passing through wrap_tool."""
    boom = Boom("tool broke")

    @hw.wrap_tool(name="layer")
    def layer(call: hw.ToolCall, call_next: Any) -> Any:
        return call_next(call)

    @hw.tool(use=[layer])
    def explode(x: int) -> int:
        raise boom

    with pytest.raises(Boom) as excinfo:
        explode(1)
    assert excinfo.value is boom
    assert not any("layer" in n for n in notes_of(boom))


def test_a_wrap_hooks_own_error_after_call_next_is_attributed_to_it() -> None:
    """An error a wrap hook raises itself (after the inner call returned) names that hook,
    and only that hook."""
    boom = Boom("post-processing failed")

    @hw.wrap_model(name="outer_layer", priority=10)
    def outer(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    @hw.wrap_model(name="post", priority=5151)
    def post(request: hw.ModelRequest) -> Iterator[Any]:
        yield request
        raise boom

    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm([]), use=[outer, post])("hi")
    assert excinfo.value is boom
    assert_noted(boom, "post", "wrap_model", 5151)
    assert not any("outer_layer" in n for n in notes_of(boom))


# -- Abort ----------------------------------------------------------------------------------------


def test_abort_in_before_tool_raises_aborted_at_once() -> None:
    """`Abort(reason)` from before_tool raises hw.Aborted(reason) at once: later before_tool
    hooks, the tool and after_tool do not run; on_abort does, with the reason."""
    log: Log = []

    @hw.before_tool
    def guard(call: hw.ToolCall) -> Any:
        log.append("guard")
        return hw.Abort(f"city {call.arguments['city']!r} is not allowed")

    @hw.on_abort
    def aborted(info: Any) -> None:
        log.append(f"on_abort: {info.reason}")

    use = [
        guard,
        hw.before_tool(recorder(log, "later")),
        hw.wrap_tool(recorder(log, "wrap")),
        hw.after_tool(recorder(log, "after")),
        aborted,
        hw.on_error(recorder(log, "on_error")),
        hw.on_finish(recorder(log, "on_finish")),
    ]

    @hw.tool(use=use)
    def weather(city: str) -> str:
        log.append("tool")
        return "sunny"

    with pytest.raises(hw.Aborted) as excinfo:
        weather("Atlantis")
    assert excinfo.value.reason == "city 'Atlantis' is not allowed"
    assert log == ["guard", "on_abort: city 'Atlantis' is not allowed"]


def test_abort_in_async_before_tool_raises_aborted_at_once() -> None:
    """The same in an async tool, with an async before_tool hook."""
    log: Log = []

    @hw.before_tool
    async def guard(call: hw.ToolCall) -> Any:
        return hw.Abort("over budget")

    @hw.tool(use=[guard, hw.before_tool(recorder(log, "later"))])
    async def search(query: str) -> str:
        log.append("tool")
        return "results"

    with pytest.raises(hw.Aborted) as excinfo:
        asyncio.run(search("x"))
    assert excinfo.value.reason == "over budget"
    assert log == []


@pytest.mark.parametrize("where", ["before_model", "wrap_model", "current"])
def test_ctx_abort_raises_aborted_at_once(where: str) -> None:
    """`ctx.abort(reason)` (or `hw.current().abort`) raises hw.Aborted(reason) right there:
    nothing after it in the call runs except on_abort."""
    log: Log = []

    @hw.before_model
    def stop_before(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("budget exhausted")
        log.append("unreachable")

    @hw.wrap_model
    def stop_wrap(request: hw.ModelRequest, call_next: Any, ctx: hw.RunContext) -> Any:
        ctx.abort("budget exhausted")
        log.append("unreachable")

    @hw.before_model
    def stop_current(request: hw.ModelRequest) -> None:
        hw.current().abort("budget exhausted")

    stopper = {"before_model": stop_before, "wrap_model": stop_wrap, "current": stop_current}
    use = [
        stopper[where],
        hw.before_model(priority=-1)(recorder(log, "later_before")),
        hw.wrap_model(priority=-1)(recorder(log, "inner_wrap")),
        hw.after_model(recorder(log, "after")),
        hw.on_abort(lambda info: log.append(f"on_abort: {info.reason}")),
        hw.on_error(recorder(log, "on_error")),
    ]
    with pytest.raises(hw.Aborted) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value.reason == "budget exhausted"
    expected = ["on_abort: budget exhausted"]
    if where == "wrap_model":
        expected = ["later_before", *expected]
    assert log == expected


def test_aborted_propagates_out_of_hw_run_after_on_abort() -> None:
    """In an explicit run, Aborted leaves the call and the `with`; on_abort runs once."""
    log: Log = []

    @hw.before_model
    def stop(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("stop now")

    chat = hw.model(recording_llm(log), use=[stop])
    run_hooks = [
        hw.on_abort(lambda info: log.append(f"on_abort: {info.reason}")),
        hw.on_finish(recorder(log, "on_finish")),
        hw.on_error(recorder(log, "on_error")),
    ]
    with pytest.raises(hw.Aborted) as excinfo, hw.run(use=run_hooks):
        chat("hi")
        log.append("unreachable")
    assert excinfo.value.reason == "stop now"
    assert log == ["on_abort: stop now"]


@pytest.mark.parametrize("how", ["returned", "ctx.abort"])
def test_an_abort_after_an_earlier_error_ends_the_stage_at_once(how: str) -> None:
    """In a stack that continues on errors, a `before_tool` hook's `Abort` (returned, or
    `ctx.abort()`) after an earlier hook raised is what propagates, at once: the later
    hooks do not run, and the earlier error is its context."""
    log: Log = []
    boom = Boom("guard failed")

    @hw.before_tool(priority=3)
    def broken(call: hw.ToolCall) -> None:
        raise boom

    @hw.before_tool(priority=2)
    def stop(call: hw.ToolCall, ctx: hw.RunContext) -> Any:
        if how == "returned":
            return hw.Abort("stop")
        ctx.abort("stop")

    @hw.before_tool(priority=1)
    def later(call: hw.ToolCall) -> None:
        log.append("later")

    @hw.tool(use=hw.Stack(broken, stop, later, continue_on_error=True))
    def lookup(q: str) -> str:
        log.append("tool")
        return q

    with pytest.raises(hw.Aborted) as excinfo:
        lookup("x")
    assert excinfo.value.reason == "stop"
    assert excinfo.value.__context__ is boom
    assert log == []


@pytest.mark.parametrize("where", ["one-call", "run", "async run"])
def test_ctx_abort_in_on_start_ends_the_stage_at_once_whatever_the_switches(where: str) -> None:
    """`ctx.abort()` in an `on_start` hook of a stack that continues on errors raises at
    once: the later `on_start` hooks do not run, nor does the model."""
    log: Log = []

    @hw.on_start(priority=1)
    def refuse(ctx: hw.RunContext) -> None:
        log.append("refuse")
        ctx.abort("closed today")

    @hw.on_start
    def later() -> None:
        log.append("later")

    stack = hw.Stack(refuse, later, continue_on_error=True)
    with pytest.raises(hw.Aborted, match="closed today"):
        if where == "one-call":
            hw.model(recording_llm(log), use=stack)("hi")
        elif where == "run":
            with hw.run(use=stack):
                log.append("body")
        else:

            async def main() -> None:
                async with hw.run(use=stack):
                    log.append("body")

            asyncio.run(main())
    assert log == ["refuse"]


# -- terminal hooks --------------------------------------------------------------------------------


def test_on_finish_error_propagates_after_the_other_on_finish_hooks_ran() -> None:
    """Every on_finish hook runs; the error of one of them then propagates, noted."""
    log: Log = []
    boom = Boom("flush failed")
    hooks = [
        hw.on_finish(name="first_finish", priority=2)(recorder(log, "first_finish")),
        hw.on_finish(name="broken_finish", priority=1)(raiser(boom)),
        hw.on_finish(name="last_finish")(recorder(log, "last_finish")),
    ]
    with pytest.raises(Boom) as excinfo, hw.run(use=hooks):
        log.append("body")
    assert excinfo.value is boom
    assert log == ["body", "first_finish", "last_finish"]
    assert any("broken_finish" in n for n in notes_of(boom))


def test_on_finish_error_in_a_one_call_run() -> None:
    """In a wrapped call's own run, an on_finish error propagates after the others ran."""
    log: Log = []
    boom = Boom("flush failed")
    use = [
        hw.on_finish(name="broken_finish")(raiser(boom)),
        hw.on_finish(name="other_finish")(recorder(log, "other_finish")),
    ]
    with pytest.raises(Boom) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value is boom
    assert log == ["model", "other_finish"]


@pytest.mark.parametrize("shape", ["sync", "async", "sync_stream", "async_stream"])
def test_an_on_finish_error_ends_a_one_call_run_once_in_every_shape(shape: str) -> None:
    """A one-call run whose `on_finish` hook raises has had its one terminal stage: the
    error propagates, and no `on_error` hook runs after it (exactly one of the three per
    run), in every call shape."""
    log: Log = []
    boom = Boom("flush failed")
    use = [
        hw.on_finish(name="broken_finish")(raiser(boom)),
        hw.on_error(recorder(log, "on_error")),
        hw.on_abort(recorder(log, "on_abort")),
    ]
    tracker = Tracker()
    received, errors, _ = drive(shape, hw.model(make_target(shape, tracker), use=use), tracker)
    assert errors == [boom]
    assert log == []
    assert "".join(received) == ("hello world" if "stream" in shape else "")
    assert tracker.calls == 1


def test_on_error_hook_error_becomes_a_note_on_the_original_error() -> None:
    """An on_error hook that raises does not replace the error: its failure is added as a
    note, the other on_error hooks run, and the original error propagates."""
    log: Log = []
    original = Boom("model failed")
    secondary = RuntimeError("alerting is down too")

    def llm(prompt: str) -> str:
        raise original

    use = [
        hw.on_error(name="alert", priority=1)(raiser(secondary)),
        hw.on_error(name="report")(lambda info: log.append(f"report {info.error is original}")),
    ]
    with pytest.raises(Boom) as excinfo:
        hw.model(llm, use=use)("hi")
    assert excinfo.value is original
    assert log == ["report True"]
    assert any("alert" in n and "alerting is down too" in n for n in notes_of(original))


def test_on_abort_hook_error_becomes_a_note_on_the_aborted() -> None:
    """The same for on_abort: Aborted propagates, with the hook's failure as a note."""
    log: Log = []
    secondary = RuntimeError("abort logger broke")

    @hw.before_model
    def stop(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("no budget")

    use = [
        stop,
        hw.on_abort(name="abort_logger", priority=1)(raiser(secondary)),
        hw.on_abort(name="abort_counter")(lambda info: log.append(f"counted {info.reason}")),
    ]
    with pytest.raises(hw.Aborted) as excinfo:
        hw.model(recording_llm(log), use=use)("hi")
    assert excinfo.value.reason == "no budget"
    assert log == ["counted no budget"]
    notes = notes_of(excinfo.value)
    assert any("abort_logger" in n and "abort logger broke" in n for n in notes)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("outcome", ["finish", "error", "abort"])
def test_exactly_one_terminal_hook_kind_per_run(outcome: str, is_async: bool) -> None:
    """Each run ends with exactly one of on_finish / on_error / on_abort, once."""
    ended: list[tuple[str, Any]] = []
    boom = Boom("failed")

    @hw.before_model
    def steer(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        if outcome == "error":
            raise boom
        if outcome == "abort":
            ctx.abort("stopped")

    use = [
        steer,
        hw.on_finish(lambda info: ended.append(("on_finish", info.error))),
        hw.on_error(lambda info: ended.append(("on_error", info.error))),
        hw.on_abort(lambda info: ended.append(("on_abort", info.reason))),
    ]

    def llm(prompt: str) -> str:
        return "fine"

    async def allm(prompt: str) -> str:
        return "fine"

    def call() -> Any:
        if is_async:
            return asyncio.run(hw.model(allm, use=use)("hi"))
        return hw.model(llm, use=use)("hi")

    if outcome == "finish":
        assert call() == "fine"
        assert ended == [("on_finish", None)]
    elif outcome == "error":
        with pytest.raises(Boom):
            call()
        assert ended == [("on_error", boom)]
    else:
        with pytest.raises(hw.Aborted):
            call()
        assert ended == [("on_abort", "stopped")]


# -- fault injection: every position, every call shape -----------------------------------------

SHAPES = ["sync", "async", "sync_stream", "async_stream"]
POSITIONS = ["before_model", "wrap_model", "on_chunk", "after_model", "on_usage"]
USAGE = hw.Usage(3, 4, 7)
FAULT_PRIORITY = 4321


class Tracker:
    """What the target did: calls, and inner streams started and closed."""

    def __init__(self) -> None:
        self.calls = 0
        self.started = 0
        self.closed = 0


def make_target(shape: str, tracker: Tracker) -> Callable[..., Any]:
    if shape == "sync":

        def llm(prompt: str) -> str:
            tracker.calls += 1
            return "hello world"

        return llm
    if shape == "async":

        async def allm(prompt: str) -> str:
            tracker.calls += 1
            return "hello world"

        return allm
    if shape == "sync_stream":

        def stream(prompt: str) -> Iterator[str]:
            tracker.calls += 1
            tracker.started += 1
            try:
                yield from ("hello", " ", "world")
            finally:
                tracker.closed += 1

        return stream

    async def astream(prompt: str) -> AsyncIterator[str]:
        tracker.calls += 1
        tracker.started += 1
        try:
            for piece in ("hello", " ", "world"):
                yield piece
        finally:
            tracker.closed += 1

    return astream


def _append_usage(stream: Iterator[hw.Chunk]) -> Iterator[hw.Chunk]:
    yield from stream
    yield hw.Chunk("usage", usage=USAGE)


async def _aappend_usage(stream: AsyncIterator[hw.Chunk]) -> AsyncIterator[hw.Chunk]:
    try:
        async for chunk in stream:
            yield chunk
        yield hw.Chunk("usage", usage=USAGE)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def usage_source(shape: str) -> Any:
    """The innermost wrap hook: reports usage, so that on_usage runs in every shape."""

    @hw.wrap_model(name="usage_source", priority=-1000)
    def source(request: hw.ModelRequest) -> Iterator[Any]:
        response = yield request
        if shape == "sync_stream":
            return _append_usage(response)
        if shape == "async_stream":
            return _aappend_usage(response)
        return response.replace(usage=USAGE)

    return source


def faulty_hook(position: str, shape: str, boom: Boom) -> Any:
    """A hook at `position` that raises `boom` (mid-stream where there is a stream)."""
    streamed = shape.endswith("stream")
    configure = {"name": "faulty", "priority": FAULT_PRIORITY}
    if position == "wrap_model":
        if shape.startswith("async"):

            async def awrap(request: hw.ModelRequest, call_next: Any) -> Any:
                response = await call_next(request)
                if streamed:
                    await response.__anext__()  # the inner stream is now open
                raise boom

            return hw.wrap_model(**configure)(awrap)

        def wrap(request: hw.ModelRequest, call_next: Any) -> Any:
            response = call_next(request)
            if streamed:
                next(response)  # the inner stream is now open
            raise boom

        return hw.wrap_model(**configure)(wrap)
    if position == "on_chunk":
        seen: list[hw.Chunk] = []

        def on_chunk(chunk: hw.Chunk) -> None:
            seen.append(chunk)
            if len(seen) == 2:
                raise boom

        return hw.on_chunk(**configure)(on_chunk)
    return getattr(hw, position)(**configure)(raiser(boom))


def drive(
    shape: str, chat: Callable[..., Any], tracker: Tracker
) -> tuple[list[Any], list[BaseException], int]:
    """Call as a user would, collecting what arrived and every error seen; after an error
    a stream is pulled again, to see that it stays finished. Also returns how many inner
    streams were still open when the caller was done (before any garbage collection or
    event-loop shutdown could close them)."""
    received: list[Any] = []
    errors: list[BaseException] = []
    still_open: list[int] = []
    if shape == "sync":
        try:
            received.append(chat("hi"))
        except Exception as exc:
            errors.append(exc)
    elif shape == "async":
        try:
            received.append(asyncio.run(chat("hi")))
        except Exception as exc:
            errors.append(exc)
    elif shape == "sync_stream":
        stream = chat("hi")
        for _ in range(10):
            try:
                received.append(next(stream))
            except StopIteration:
                break
            except Exception as exc:
                errors.append(exc)
        else:
            raise AssertionError("the stream never ended")
        still_open.append(tracker.started - tracker.closed)
    else:

        async def consume() -> None:
            stream = chat("hi")
            for _ in range(10):
                try:
                    received.append(await stream.__anext__())
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    errors.append(exc)
            else:
                raise AssertionError("the stream never ended")
            still_open.append(tracker.started - tracker.closed)

        asyncio.run(consume())
    return received, errors, still_open[0] if still_open else 0


FAULTS = [
    pytest.param(position, shape, id=f"{position}-{shape}")
    for position in POSITIONS
    for shape in SHAPES
    # on_chunk only runs where there are chunks: the streamed shapes.
    if not (position == "on_chunk" and not shape.endswith("stream"))
]


@pytest.mark.parametrize(("position", "shape"), FAULTS)
def test_a_fault_anywhere_propagates_once_closes_streams_and_ends_with_on_error(
    position: str, shape: str
) -> None:
    """Law: whatever hook raises, in whatever call shape, the caller sees that exception
    object exactly once (noted with the hook), every inner stream that was opened is closed,
    and the run ends with on_error only, given that same exception."""
    boom = Boom(f"fault at {position} in {shape}")
    tracker = Tracker()
    ended: list[tuple[str, Any]] = []
    use = [
        usage_source(shape),
        faulty_hook(position, shape, boom),
        *terminal_recorders(ended),
    ]
    chat = hw.model(make_target(shape, tracker), use=use)
    received, errors, still_open = drive(shape, chat, tracker)

    assert len(errors) == 1, errors
    assert errors[0] is boom
    assert_noted(boom, "faulty", position, FAULT_PRIORITY)
    assert still_open == 0
    assert tracker.closed == tracker.started
    assert ended == [("on_error", boom)]
    if position == "before_model":
        assert tracker.calls == 0
        assert received == []
    else:
        assert tracker.calls == 1
    if position == "on_chunk":
        assert received == ["hello"]


def terminal_recorders(ended: list[tuple[str, Any]]) -> list[Any]:
    """on_finish, on_error and on_abort hooks noting, in `ended`, which one ran and with what."""
    return [
        hw.on_finish(lambda info: ended.append(("on_finish", None))),
        hw.on_error(lambda info: ended.append(("on_error", info.error))),
        hw.on_abort(lambda info: ended.append(("on_abort", info.reason))),
    ]


def generator_fault(kind: str, boom: Boom, streamed: bool = False) -> Any:
    """A generator-form wrap hook that raises after the inner call returned."""

    def hook(request: Any) -> Iterator[Any]:
        response = yield request
        if streamed:  # pull one chunk, so the inner stream is open
            if hasattr(response, "__anext__"):
                raise boom  # an async stream cannot be pulled from a sync generator
            next(response)
        raise boom

    return getattr(hw, kind)(name="faulty", priority=FAULT_PRIORITY)(hook)


MORE_FAULTS = [
    pytest.param(position, shape, id=f"{position}-{shape}")
    for position in ("on_start", "wrap_model_generator")
    for shape in SHAPES
]


@pytest.mark.parametrize(("position", "shape"), MORE_FAULTS)
def test_a_fault_in_on_start_or_a_generator_form_hook_in_every_shape(
    position: str, shape: str
) -> None:
    boom = Boom(f"fault at {position} in {shape}")
    tracker = Tracker()
    ended: list[tuple[str, Any]] = []
    if position == "on_start":
        faulty = hw.on_start(name="faulty", priority=FAULT_PRIORITY)(raiser(boom))
    else:
        faulty = generator_fault("wrap_model", boom, shape.endswith("stream"))
    use = [
        faulty,
        *terminal_recorders(ended),
    ]
    chat = hw.model(make_target(shape, tracker), use=use)
    _, errors, still_open = drive(shape, chat, tracker)

    assert len(errors) == 1, errors
    assert errors[0] is boom
    kind = "on_start" if position == "on_start" else "wrap_model"
    assert_noted(boom, "faulty", kind, FAULT_PRIORITY)
    assert still_open == 0
    assert tracker.closed == tracker.started
    assert ended == [("on_error", boom)]
    # an async generator's body starts at its first pull, which a sync hook cannot make
    unpulled = position == "on_start" or shape == "async_stream"
    assert tracker.calls == (0 if unpulled else 1)


TOOL_POSITIONS = ["on_start", "before_tool", "wrap_tool", "wrap_tool_generator", "after_tool"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("position", TOOL_POSITIONS)
def test_a_fault_anywhere_in_a_tool_call_propagates_once_and_ends_with_on_error(
    position: str, is_async: bool
) -> None:
    boom = Boom(f"fault at {position}")
    calls: list[str] = []
    ended: list[tuple[str, Any]] = []
    configure = {"name": "faulty", "priority": FAULT_PRIORITY}
    faulty: Any
    if position == "wrap_tool":
        if is_async:

            async def awrap(call: hw.ToolCall, call_next: Any) -> Any:
                await call_next(call)
                raise boom

            faulty = hw.wrap_tool(**configure)(awrap)
        else:

            def wrap(call: hw.ToolCall, call_next: Any) -> Any:
                call_next(call)
                raise boom

            faulty = hw.wrap_tool(**configure)(wrap)
    elif position == "wrap_tool_generator":
        faulty = generator_fault("wrap_tool", boom)
    else:
        faulty = getattr(hw, position)(**configure)(raiser(boom))
    use = [
        faulty,
        *terminal_recorders(ended),
    ]

    def lookup(city: str) -> str:
        calls.append(city)
        return f"sunny in {city}"

    async def alookup(city: str) -> str:
        calls.append(city)
        return f"sunny in {city}"

    tool = hw.tool(alookup if is_async else lookup, use=use)
    with pytest.raises(Boom) as caught:
        result = tool("Oslo")
        if is_async:
            asyncio.run(result)
    assert caught.value is boom
    kind = "wrap_tool" if position.startswith("wrap_tool") else position
    assert_noted(boom, "faulty", kind, FAULT_PRIORITY)
    assert ended == [("on_error", boom)]
    assert calls == ([] if position in ("on_start", "before_tool") else ["Oslo"])


def _shaped(shape: str) -> Callable[..., Any]:
    """A model function of `shape` answering "answer" (in two chunks when streamed)."""
    if shape == "sync":
        return lambda prompt: "answer"
    if shape == "async":

        async def answer(prompt: str) -> str:
            return "answer"

        return answer
    if shape == "stream":

        def pieces(prompt: str) -> Iterator[str]:
            yield from ("ans", "wer")

        return pieces

    async def apieces(prompt: str) -> AsyncIterator[str]:
        for piece in ("ans", "wer"):
            yield piece

    return apieces


def _called(fn: Callable[..., Any], shape: str) -> str:
    if shape == "sync":
        return str(fn("hi"))
    if shape == "async":
        return str(asyncio.run(fn("hi")))
    if shape == "stream":
        return "".join(fn("hi"))

    async def pull() -> str:
        return "".join([piece async for piece in fn("hi")])

    return asyncio.run(pull())


SHAPES = ["sync", "async", "stream", "async stream"]


@pytest.mark.parametrize(
    ("kind", "shape"),
    [
        (kind, shape)
        for kind in ("before_model", "after_model", "on_chunk", "wrap_model")
        for shape in SHAPES
        if kind != "on_chunk" or "stream" in shape  # on_chunk hooks run in streams
        # in a stream after_model only observes: no answer of it is wrong (test_streams.py)
        if kind != "after_model" or "stream" not in shape
    ],
)
def test_a_fail_open_hook_answering_the_wrong_type_is_logged_and_skipped(
    kind: str, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`fail_open` covers what a hook returns too: an answer of the wrong type (say, the row
    id an audit insert returned) is logged and skipped, and the call goes on."""
    if kind == "wrap_model":
        if shape == "sync" or shape == "stream":

            def hook(request: hw.ModelRequest, call_next: Callable[..., Any]) -> Any:
                call_next(request)
                return 1

        else:

            async def hook(request: hw.ModelRequest, call_next: Callable[..., Any]) -> Any:  # type: ignore[misc]
                await call_next(request)
                return 1

    elif kind == "after_model":

        def hook(request: hw.ModelRequest, response: hw.ModelResponse) -> Any:  # type: ignore[misc]
            return 1

    else:

        def hook(value: Any) -> Any:  # type: ignore[misc]
            return 1

    made = getattr(hw, kind)(fail_open=True, name="audit")(hook)
    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        assert _called(hw.model(_shaped(shape), use=[made]), shape) == "answer"
    records = hookwrap_records(caplog)
    assert [r.levelno >= logging.WARNING for r in records] == [True] * len(records) != []
    assert "returned int (1)" in str(records[0].exc_info[1] if records[0].exc_info else "")


@pytest.mark.parametrize("shape", ["sync", "async"])
def test_an_inner_wrap_hooks_wrong_answer_is_noted_as_its_own(shape: str) -> None:
    """The outer hook only passed the error on: the note names the inner one alone."""

    @hw.wrap_model(name="outer")
    def outer(request: hw.ModelRequest) -> Any:  # the generator form
        return (yield request)

    if shape == "sync":

        @hw.wrap_model(name="inner")
        def inner(request: hw.ModelRequest, call_next: Callable[..., Any]) -> Any:
            call_next(request)

    else:

        @hw.wrap_model(name="inner")
        async def inner(request: hw.ModelRequest, call_next: Callable[..., Any]) -> Any:  # type: ignore[misc]
            await call_next(request)

    @hw.wrap_model(name="middle")
    def middle(request: hw.ModelRequest) -> Any:
        return (yield request)

    with pytest.raises(TypeError, match=r"wrap_model hook 'inner' .* returned NoneType") as err:
        _called(hw.model(_shaped(shape), use=[outer, middle, inner]), shape)
    assert [n.split(",")[0] for n in notes_of(err.value)] == [
        "raised by wrap_model hook 'inner' (priority 0)"
    ]


@pytest.mark.parametrize("shape", ["stream", "async stream"])
def test_continue_on_error_passes_an_expansion_through_the_later_hooks(shape: str) -> None:
    seen: list[str] = []
    boom = Boom("first")

    @hw.on_chunk
    def failing(chunk: hw.Chunk) -> None:
        raise boom

    @hw.on_chunk
    def expand(chunk: hw.Chunk) -> list[hw.Chunk]:
        return [chunk.replace(text=chunk.text + "1"), chunk.replace(text=chunk.text + "2")]

    @hw.on_chunk
    def observer(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    stack = hw.Stack(failing, expand, observer, continue_on_error=True)
    with pytest.raises(Boom) as err:
        _called(hw.model(_shaped(shape), use=[stack]), shape)
    assert err.value is boom
    assert seen == ["ans1", "ans2"]


def test_an_on_abort_failure_when_the_caller_closes_a_stream_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Closing is no error, so no error carries a note of it: the failure is logged."""
    boom = Boom("pager down")

    @hw.on_abort
    def alert(info: hw.FinishInfo) -> None:
        raise boom

    stream = hw.model(_shaped("stream"), use=[alert])("hi")
    next(stream)
    with caplog.at_level(logging.DEBUG, logger="hookwrap"):
        stream.close()
    records = hookwrap_records(caplog)
    assert [r.exc_info[1] if r.exc_info else None for r in records] == [boom]
    assert "closed by consumer" in records[0].getMessage()
