"""Bad input to the core refused by name: what a hook hands `call_next`, generator functions
as hooks of kinds that return, a chat message's content, and `ctx.abort`'s reason."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._hooks import KINDS

MSG = [{"role": "user", "content": "hi"}]


def llm(messages: Any) -> str:
    return "hello"


async def allm(messages: Any) -> str:
    return "hello"


@hw.tool
def search(q: str) -> str:
    """Search."""
    return q


@hw.tool
async def asearch(q: str) -> str:
    """Search."""
    return q


def _noted(exc: BaseException, hook: str) -> bool:
    """Whether `exc` carries the note naming the wrap hook `hook` (a local function)."""
    named = re.compile(rf"wrap_(model|tool) hook '([\w<>.]*\.)?{hook}'")
    return any(named.search(note) for note in getattr(exc, "__notes__", []))


# -- call_next given something other than the request ---------------------------------------


def the_messages(request: hw.ModelRequest) -> Any:
    return request.messages


def a_dict(request: hw.ModelRequest) -> Any:
    return {"messages": MSG}


def nothing(request: hw.ModelRequest) -> Any:
    return None


@pytest.mark.parametrize(
    ("given", "got"), [(the_messages, "tuple"), (a_dict, "dict"), (nothing, "NoneType")]
)
def test_call_next_given_no_request_names_what_it_takes_and_the_hook(
    given: Callable[[hw.ModelRequest], Any], got: str
) -> None:
    @hw.wrap_model
    def passes(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(given(request))

    @hw.wrap_model
    async def apasses(request: hw.ModelRequest, call_next: Any) -> Any:
        return await call_next(given(request))

    expected = re.escape(
        f"call_next takes the ModelRequest (request, or request.replace(...)); got {got}"
    )
    with pytest.raises(TypeError, match=expected) as sync:
        hw.model(llm, use=[passes])(MSG)
    assert _noted(sync.value, "passes")
    with pytest.raises(TypeError, match=expected) as async_:
        asyncio.run(hw.model(allm, use=[apasses])(MSG))
    assert _noted(async_.value, "apasses")


def test_call_next_given_no_request_is_noted_as_the_inner_hooks_only() -> None:
    @hw.wrap_model
    def outer(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    @hw.wrap_model
    def inner(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request.messages)

    with pytest.raises(TypeError, match="call_next takes the ModelRequest") as caught:
        hw.model(llm, use=[outer, inner])(MSG)
    assert _noted(caught.value, "inner")
    assert not _noted(caught.value, "outer")


def test_call_next_given_a_request_still_passes_the_models_error_unnoted() -> None:
    def broken(messages: Any) -> str:
        raise RuntimeError("model down")

    @hw.wrap_model
    def passes(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(RuntimeError, match="model down") as caught:
        hw.model(broken, use=[passes])(MSG)
    assert not _noted(caught.value, "passes")


def test_tool_call_next_given_the_arguments_names_what_it_takes_and_the_hook() -> None:
    @hw.wrap_tool
    def passes(call: hw.ToolCall, call_next: Any) -> Any:
        return call_next(call.arguments)

    @hw.wrap_tool
    async def apasses(call: hw.ToolCall, call_next: Any) -> Any:
        return await call_next(call.arguments)

    expected = re.escape("call_next takes the ToolCall (call, or call.replace(...)); got dict")
    with pytest.raises(TypeError, match=expected) as sync:
        hw.tool(search, use=[passes])("x")
    assert _noted(sync.value, "passes")
    with pytest.raises(TypeError, match=expected) as async_:
        asyncio.run(hw.tool(asearch, use=[apasses])("x"))
    assert _noted(async_.value, "apasses")


@hw.wrap_model
def pass_on(request: hw.ModelRequest, call_next: Any) -> Any:
    return call_next(request)


@hw.wrap_model
async def apass_on(request: hw.ModelRequest, call_next: Any) -> Any:
    return await call_next(request)


@pytest.mark.parametrize("outer", [False, True])
def test_call_next_called_without_the_request_says_so(outer: bool) -> None:
    """Python's own message, naming `call_next` (not an internal function) and what it
    takes; the note names the hook. With an outer hook, the inner layer is called so."""

    @hw.wrap_model
    def bare(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next()

    @hw.wrap_model
    async def abare(request: hw.ModelRequest, call_next: Any) -> Any:
        return await call_next()

    @hw.wrap_tool
    def tbare(call: hw.ToolCall, call_next: Any) -> Any:
        return call_next()

    before = ([pass_on], [apass_on]) if outer else ([], [])
    missing = re.escape("call_next() missing 1 required positional argument: ")
    with pytest.raises(TypeError, match=missing + "'request'") as sync:
        hw.model(llm, use=[*before[0], bare])(MSG)
    assert _noted(sync.value, "bare")
    with pytest.raises(TypeError, match=missing + "'request'") as async_:
        asyncio.run(hw.model(allm, use=[*before[1], abare])(MSG))
    assert _noted(async_.value, "abare")
    with pytest.raises(TypeError, match=missing) as tool:
        hw.tool(search, use=[tbare])("x")
    assert _noted(tool.value, "tbare")


def test_a_fail_open_hook_giving_call_next_no_request_is_skipped_and_the_model_called_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[Any] = []

    def counted(messages: Any) -> str:
        calls.append(messages)
        return "hello"

    async def acounted(messages: Any) -> str:
        calls.append(messages)
        return "hello"

    @hw.wrap_model(fail_open=True)
    def wrong(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request.messages)

    @hw.wrap_model(fail_open=True)
    def bare(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next()

    @hw.wrap_model(fail_open=True)
    def gives_none(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(None)

    @hw.wrap_model(fail_open=True)
    async def awrong(request: hw.ModelRequest, call_next: Any) -> Any:
        return await call_next({"messages": MSG})

    assert hw.model(counted, use=[wrong])(MSG) == "hello"
    assert hw.model(counted, use=[bare])(MSG) == "hello"
    assert asyncio.run(hw.model(acounted, use=[awrong])(MSG)) == "hello"
    # a hook inside, handed what the fail-open one gave, is not taken for the culprit
    assert hw.model(counted, use=[wrong, pass_on])(MSG) == "hello"
    assert hw.model(counted, use=[gives_none, pass_on])(MSG) == "hello"
    assert asyncio.run(hw.model(acounted, use=[awrong, apass_on])(MSG)) == "hello"
    assert calls == [MSG] * 6
    skipped = [r.getMessage() for r in caplog.records if "fail-open" in r.getMessage()]
    assert len(skipped) == 6, skipped
    bare_in_log = [r for r in caplog.records if "'request'" in str(r.exc_info and r.exc_info[1])]
    assert len(bare_in_log) == 1  # `call_next()`, said with the parameter's name


@pytest.mark.parametrize("given", [the_messages, nothing])
def test_a_wrong_request_handed_through_an_inner_hook_is_noted_as_the_outer_hooks(
    given: Callable[[hw.ModelRequest], Any],
) -> None:
    @hw.wrap_model
    def wrong(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(given(request))

    with pytest.raises(TypeError, match="call_next takes the ModelRequest") as caught:
        hw.model(llm, use=[wrong, pass_on])(MSG)
    assert _noted(caught.value, "wrong")
    assert not _noted(caught.value, "pass_on")


# -- generator functions as hooks of a kind that returns ------------------------------------

RETURNING = [kind for kind in KINDS if not kind.startswith("wrap_")]


def sync_gen(*args: Any) -> Iterator[None]:
    yield


async def async_gen(*args: Any) -> AsyncIterator[None]:
    yield


@pytest.mark.parametrize("kind", RETURNING)
@pytest.mark.parametrize("fn", [sync_gen, async_gen])
def test_a_generator_function_is_refused_at_decoration_for_a_returning_kind(
    kind: str, fn: Callable[..., Any]
) -> None:
    deco = getattr(hw, kind)
    expected = (
        rf"{kind} hook {fn.__name__} \(test_bad_input_core\.py:\d+\) is a generator "
        r"function: calling it runs none of its body; .* \(only wrap_model and wrap_tool"
    )
    with pytest.raises(TypeError, match=expected):
        deco(fn)
    with pytest.raises(TypeError, match=expected):
        deco(priority=1)(fn)
    assert getattr(fn, "__hookwrap__", None) is None


def test_a_generator_middleware_method_of_a_returning_kind_is_refused() -> None:
    with pytest.raises(TypeError, match=r"on_finish hook .*flush .* is a generator function"):

        class Audit(hw.Middleware):  # pyright: ignore[reportUnusedClass]
            @hw.on_finish
            def flush(self, info: Any) -> Iterator[None]:
                yield


def test_generator_forms_of_wrap_hooks_are_still_taken() -> None:
    @hw.wrap_model
    def timed(request: hw.ModelRequest) -> Generator[Any, Any, Any]:
        response = yield request
        return response

    @hw.wrap_tool
    async def logged(call: hw.ToolCall) -> AsyncIterator[Any]:
        yield call

    assert timed.__hookwrap__.form == "generator"  # type: ignore[attr-defined]
    assert logged.__hookwrap__.form == "generator"  # type: ignore[attr-defined]
    assert hw.model(llm, use=[timed])(MSG) == "hello"


# -- a chat message's content ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "got"),
    [(5, "int: 5"), ({"type": "text", "text": "hi"}, "dict: {'type'"), (b"hi", "bytes: b'hi'")],
)
def test_chat_content_neither_str_nor_parts_is_refused_by_name(content: Any, got: str) -> None:
    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        len(request.messages)

    message = {"role": "user", "content": content}
    expected = r"a message's content must be a str or a list of parts \(text or images\) \(got "
    with pytest.raises(TypeError, match=expected + re.escape(got)):
        hw.model(llm, use=[count])([message])
    with pytest.raises(TypeError, match=expected + re.escape(got)):
        asyncio.run(hw.model(allm, use=[count])([message]))


def test_chat_content_of_parts_is_still_taken() -> None:
    seen: list[str] = []

    @hw.before_model
    def read(request: hw.ModelRequest) -> None:
        seen.extend(m.text for m in request.messages)

    parts = [{"type": "text", "text": "a"}, "b"]
    hw.model(llm, use=[read])([{"role": "user", "content": parts}])
    hw.model(llm, use=[read])([{"role": "user", "content": tuple(parts)}])
    hw.model(llm, use=[read])([{"role": "user", "content": None}])
    assert seen == ["ab", "ab", ""]


# -- ctx.abort ------------------------------------------------------------------------------


def test_ctx_abort_refuses_a_reason_that_is_no_str_as_abort_does() -> None:
    with pytest.raises(TypeError) as by_marker:
        hw.Abort(5)  # type: ignore[arg-type]

    @hw.before_model
    def stop(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
        ctx.abort(5)  # type: ignore[arg-type]

    @hw.before_model
    async def astop(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
        ctx.abort(5)  # type: ignore[arg-type]

    with pytest.raises(TypeError, match=re.escape(str(by_marker.value))) as sync:
        hw.model(llm, use=[stop])(MSG)
    note = getattr(sync.value, "__notes__", [""])[0]
    assert "before_model hook" in note
    assert ".stop' (priority 0)" in note
    with pytest.raises(TypeError, match=re.escape(str(by_marker.value))):
        asyncio.run(hw.model(allm, use=[astop])(MSG))


def test_ctx_abort_with_a_str_still_aborts() -> None:
    @hw.before_model
    def stop(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
        ctx.abort("enough")

    with pytest.raises(hw.Aborted) as caught:
        hw.model(llm, use=[stop])(MSG)
    assert caught.value.reason == "enough"


def test_a_call_next_wrap_tool_hook_of_the_wrong_shape_is_shown_the_tool_generator_form() -> None:
    """The hint names what a tool's wrap hook takes and yields (the call, its result), not
    a model hook's request and response."""

    @hw.wrap_tool
    async def slow(call: hw.ToolCall, call_next: Any) -> Any:
        return await call_next(call)

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    with pytest.raises(TypeError) as err:
        hw.tool(add, use=[slow])
    assert "def hook(call):\n        result = yield call\n        return result" in str(err.value)
