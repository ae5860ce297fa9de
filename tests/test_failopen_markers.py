"""A hook's wrong answer in every form (fail-open: logged and skipped; else noted), an
`hw.Abort` returned from every stage, and the errors that say where a hook belongs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

M = [{"role": "user", "content": "hi"}]


def notes_of(exc: BaseException) -> list[str]:
    return list(getattr(exc, "__notes__", []))


def answer(messages: list[dict[str, str]]) -> str:
    return "model answer"


async def aanswer(messages: list[dict[str, str]]) -> str:
    return "model answer"


def stream(messages: list[dict[str, str]]) -> Iterator[str]:
    yield "a"
    yield "b"


async def astream(messages: list[dict[str, str]]) -> AsyncIterator[str]:
    yield "a"
    yield "b"


async def collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


def call_in(shape: str, use: list[Any]) -> Any:
    """Call a model of this shape through `use`: its answer, or its chunks."""
    if shape == "sync":
        return hw.model(answer, use=use)(M)
    if shape == "async":
        return asyncio.run(hw.model(aanswer, use=use)(M))
    if shape == "stream":
        return list(hw.model(stream, use=use)(M))
    return asyncio.run(collect(hw.model(astream, use=use)(M)))


KEPT = {
    "sync": "model answer",
    "async": "model answer",
    "stream": ["a", "b"],
    "async stream": ["a", "b"],
}
SHAPES = list(KEPT)


# -- fail-open: a wrong answer is skipped ------------------------------------------------------


@hw.wrap_model(fail_open=True)
def returns_wrong(request: hw.ModelRequest) -> Any:
    yield request
    return 42


@hw.wrap_model(fail_open=True)
def yields_wrong(request: hw.ModelRequest) -> Iterator[Any]:
    yield "not a request"


@hw.wrap_model(fail_open=True)
def responds_wrong(request: hw.ModelRequest) -> Any:
    yield hw.Respond(42)


@hw.wrap_model(fail_open=True)
def responds_wrong_later(request: hw.ModelRequest) -> Any:
    yield request
    yield hw.Respond(42)


@hw.wrap_model(fail_open=True)
async def async_yields_wrong(request: hw.ModelRequest) -> Any:
    yield "not a request"


@hw.wrap_model(fail_open=True)
async def async_responds_wrong(request: hw.ModelRequest) -> Any:
    yield request
    yield hw.Respond(42)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "hook", [returns_wrong, yields_wrong, responds_wrong, responds_wrong_later]
)
def test_fail_open_generator_hook_answering_wrongly_is_skipped(
    shape: str, hook: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert call_in(shape, [hook]) == KEPT[shape]
    assert any("fail-open" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("shape", ["async", "async stream"])
@pytest.mark.parametrize("hook", [async_yields_wrong, async_responds_wrong])
def test_fail_open_async_generator_hook_answering_wrongly_is_skipped(
    shape: str, hook: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert call_in(shape, [hook]) == KEPT[shape]
    assert any("fail-open" in r.getMessage() for r in caplog.records)


def test_fail_open_hook_answering_wrongly_calls_the_model_once() -> None:
    calls: list[str] = []

    def counted(messages: list[dict[str, str]]) -> str:
        calls.append("model")
        return "model answer"

    assert hw.model(counted, use=[returns_wrong])(M) == "model answer"
    assert calls == ["model"]


@pytest.mark.parametrize("shape", SHAPES)
def test_fail_open_before_model_responding_with_no_answer_is_skipped(
    shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    @hw.before_model(fail_open=True)
    def bad(request: hw.ModelRequest) -> Any:
        return hw.Respond(42)

    @hw.before_model
    def later(request: hw.ModelRequest) -> None:
        seen.append("later")

    assert call_in(shape, [bad, later]) == KEPT[shape]
    assert seen == ["later"]  # the skipped hook's Respond ended nothing
    assert any("fail-open" in r.getMessage() for r in caplog.records)


# -- fail-fast: the wrong answer is noted as the hook's ----------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_generator_hook_answering_wrongly_is_noted(shape: str) -> None:
    @hw.wrap_model(name="wrong", priority=3)
    def wrong(request: hw.ModelRequest) -> Any:
        yield request
        return 42

    with pytest.raises(TypeError, match="returned int") as info:
        call_in(shape, [wrong])
    [note] = notes_of(info.value)
    assert "raised by wrap_model hook 'wrong' (priority 3)" in note


@pytest.mark.parametrize("shape", ["async", "async stream"])
def test_async_generator_hook_ending_without_yielding_is_noted(shape: str) -> None:
    @hw.wrap_model(name="never")
    async def never(request: hw.ModelRequest) -> Any:
        return
        yield

    with pytest.raises(TypeError, match="returned NoneType") as info:
        call_in(shape, [never])
    assert any("wrap_model hook 'never'" in n for n in notes_of(info.value))


@pytest.mark.parametrize("shape", SHAPES)
def test_before_model_responding_with_no_answer_is_noted(shape: str) -> None:
    @hw.before_model(name="bad", priority=2)
    def bad(request: hw.ModelRequest) -> Any:
        return hw.Respond(42)

    with pytest.raises(TypeError, match=r"answered hw\.Respond\(42\)") as info:
        call_in(shape, [bad])
    assert any("before_model hook 'bad' (priority 2)" in n for n in notes_of(info.value))


def test_continuing_stack_runs_on_after_a_respond_with_no_answer() -> None:
    seen: list[str] = []

    @hw.before_model
    def bad(request: hw.ModelRequest) -> Any:
        return hw.Respond(42)

    @hw.before_model
    def later(request: hw.ModelRequest) -> None:
        seen.append("later")

    with pytest.raises(TypeError, match="no answer"):
        hw.model(answer, use=[hw.Stack(bad, later, continue_on_error=True)])(M)
    assert seen == ["later"]


def test_generator_hook_swallowing_the_inner_error_keeps_an_earlier_response() -> None:
    tries: list[int] = []

    def flaky(messages: list[dict[str, str]]) -> str:
        tries.append(1)
        if len(tries) > 1:
            raise ValueError("second call")
        return "first"

    @hw.wrap_model
    def twice(request: hw.ModelRequest) -> Any:
        yield request
        try:
            yield request
        except ValueError:
            return None

    assert hw.model(flaky, use=[twice])(M) == "first"


# -- hw.Abort, returned from every stage -------------------------------------------------------


def _aborting(kind: Callable[..., Any]) -> Any:
    """A hook of this kind that returns `hw.Abort("stop")`."""

    def stop(*given: Any) -> hw.Abort:
        return hw.Abort("stop")

    return kind(name="stop")(stop)


@hw.tool
def double(x: int) -> int:
    """Double x."""
    return 2 * x


@hw.tool
async def adouble(x: int) -> int:
    """Double x."""
    return 2 * x


def _wrap_gen() -> Callable[..., Any]:
    def stop(request: Any) -> Any:
        yield hw.Abort("stop")

    return stop


def _wrap_respond() -> Callable[..., Any]:
    def stop(request: Any) -> Any:
        yield request
        yield hw.Respond(hw.Abort("stop"))

    return stop


def _wrap_next() -> Callable[..., Any]:
    def stop(request: Any, call_next: Any) -> Any:
        call_next(request)
        return hw.Abort("stop")

    return stop


def _awrap_next() -> Callable[..., Any]:
    async def stop(request: Any, call_next: Any) -> Any:
        await call_next(request)
        return hw.Abort("stop")

    return stop


MODEL_STAGES = [
    hw.on_start,
    hw.before_model,
    hw.on_chunk,
    hw.on_usage,
    hw.after_model,
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", MODEL_STAGES, ids=lambda k: k.__name__)
def test_abort_returned_from_a_model_stage_ends_the_run(shape: str, kind: Any) -> None:
    if kind is hw.on_usage:

        def usage_of(messages: list[dict[str, str]]) -> hw.ModelResponse:
            return hw.ModelResponse(hw.Message.assistant("x"), usage=hw.Usage(1, 1, 2))

        hook = _aborting(kind)
        with pytest.raises(hw.Aborted, match="stop") as info:
            hw.model(usage_of, use=[hook])(M)
    else:
        if kind is hw.on_chunk and shape in ("sync", "async"):
            pytest.skip("no chunks")
        aborted: list[str] = []

        @hw.on_abort
        def seen(info: hw.FinishInfo) -> None:
            aborted.append(str(info.reason))

        with pytest.raises(hw.Aborted, match="stop") as info:
            call_in(shape, [_aborting(kind), seen])
        assert aborted == ["stop"]
    assert any(f"{kind.__name__} hook 'stop'" in n for n in notes_of(info.value))


@pytest.mark.parametrize("fail_open", [False, True])
@pytest.mark.parametrize(
    ("shape", "fn"),
    [
        ("sync", _wrap_gen),
        ("sync", _wrap_respond),
        ("sync", _wrap_next),
        ("async", _wrap_gen),
        ("async", _wrap_respond),
        ("async", _awrap_next),
        ("stream", _wrap_gen),
        ("stream", _wrap_next),
    ],
)
def test_abort_from_a_wrap_model_hook_ends_the_run(shape: str, fn: Any, fail_open: bool) -> None:
    hook = hw.wrap_model(name="stop", fail_open=fail_open)(fn())
    with pytest.raises(hw.Aborted, match="stop") as info:
        call_in(shape, [hook])
    assert any("wrap_model hook 'stop'" in n for n in notes_of(info.value))


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("kind", [hw.on_start, hw.before_tool, hw.after_tool, "wrap_tool"], ids=str)
def test_abort_returned_from_a_tool_stage_ends_the_run(kind: Any, is_async: bool) -> None:
    if kind == "wrap_tool":
        hook = hw.wrap_tool(name="stop")(_wrap_gen())
        label = "wrap_tool"
    else:
        hook = _aborting(kind)
        label = kind.__name__
    with pytest.raises(hw.Aborted, match="stop") as info:
        if is_async:
            asyncio.run(hw.tool(adouble, use=[hook])(x=1))
        else:
            hw.tool(double, use=[hook])(x=1)
    assert any(f"{label} hook 'stop'" in n for n in notes_of(info.value))


def test_abort_returned_from_a_call_next_wrap_tool_hook_ends_the_run() -> None:
    tool = hw.tool(double, use=[hw.wrap_tool(name="stop")(_wrap_next())])
    with pytest.raises(hw.Aborted, match="stop") as info:
        tool(x=1)
    assert any("wrap_tool hook 'stop'" in n for n in notes_of(info.value))


def test_abort_returned_from_on_finish_is_raised_as_ctx_abort_is() -> None:
    with pytest.raises(hw.Aborted, match="stop") as info:
        hw.model(answer, use=[_aborting(hw.on_finish)])(M)
    assert any("on_finish hook 'stop'" in n for n in notes_of(info.value))


@pytest.mark.parametrize("is_async", [False, True], ids=["run", "arun"])
@pytest.mark.parametrize("kind", [hw.before_agent, hw.on_iteration], ids=str)
def test_abort_returned_from_an_agent_stage_ends_the_run_as_aborted(
    kind: Any, is_async: bool
) -> None:
    agent = hw.Agent(lambda request: "never asked", use=[_aborting(kind)])
    result = asyncio.run(agent.arun("hi")) if is_async else agent.run("hi")
    assert result.status == "aborted"


def test_abort_returned_from_a_fail_open_after_model_hook_still_aborts() -> None:
    @hw.after_model(fail_open=True)
    def stop(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.Abort:
        return hw.Abort("stop")

    with pytest.raises(hw.Aborted, match="stop"):
        hw.model(answer, use=[stop])(M)


def test_abort_wins_over_an_earlier_error_of_a_continuing_stack() -> None:
    @hw.after_model
    def boom(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        raise ValueError("boom")

    @hw.after_model(priority=1)  # after_model runs in reverse: this one runs second
    def stop(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.Abort:
        return hw.Abort("stop")

    with pytest.raises(hw.Aborted) as info:
        hw.model(answer, use=[hw.Stack(stop, boom, continue_on_error=True)])(M)
    assert isinstance(info.value.__context__, ValueError)


# -- hw.run(use=...) says where a hook belongs -------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "advice"),
    [
        (hw.before_model, "hw.model(fn"),
        (hw.after_model, "hw.model(fn"),
        (hw.before_tool, "hw.tool(fn"),
        (hw.after_tool, "hw.tool(fn"),
        (hw.on_iteration, "hw.Agent("),
        (hw.before_agent, "hw.Agent("),
    ],
    ids=lambda k: getattr(k, "__name__", k),
)
def test_run_names_where_a_hook_belongs(kind: Any, advice: str) -> None:
    def misplaced(*args: Any) -> None:
        pass

    hook = kind(name="misplaced")(misplaced)
    with pytest.raises(TypeError, match="misplaced") as info:
        hw.run(use=[hook])
    assert advice in str(info.value)


# -- a request made anew, not with replace -----------------------------------------------------


@hw.before_model
def fresh(request: hw.ModelRequest) -> hw.ModelRequest:
    return hw.ModelRequest(messages=(hw.Message.user("fresh"),), model=request.model)


LOST = "lost its `raw` call record"


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_sdk_request_made_anew_is_refused_clearly(api: str, is_async: bool) -> None:
    provider = FakeProvider()
    made = provider.anthropic(is_async) if api == "anthropic" else provider.openai(is_async)
    client: Any = hw.wrap(made, use=[fresh])

    def call() -> Any:
        if api == "anthropic":
            return client.messages.create(model="m", max_tokens=10, messages=M)
        if api == "chat":
            return client.chat.completions.create(model="m", messages=M)
        return client.responses.create(model="m", input="hi")

    async def acall() -> Any:
        return await call()

    with pytest.raises(TypeError, match=LOST):
        asyncio.run(acall()) if is_async else call()
    assert provider.requests == []  # nothing was sent


def test_logging_of_skipped_hook_names_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        hw.model(answer, use=[returns_wrong])(M)
    assert any("returns_wrong" in r.getMessage() for r in caplog.records)
