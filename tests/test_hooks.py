"""Hook decorators (SPEC §1): marking, signature checks, forms, Middleware, return types."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw

# The parameters each kind is called with, from the table of SPEC §1.
PARAMS: dict[str, tuple[str, ...]] = {
    "before_agent": ("agent",),
    "before_model": ("request",),
    "wrap_model": ("request", "call_next"),
    "on_chunk": ("chunk",),
    "on_usage": ("usage",),
    "after_model": ("request", "response"),
    "before_tool": ("call",),
    "wrap_tool": ("call", "call_next"),
    "after_tool": ("call", "outcome"),
    "on_start": (),
    "on_iteration": ("info",),
    "after_agent": ("result",),
    "on_finish": ("info",),
    "on_error": ("info",),
    "on_abort": ("info",),
}
KINDS = list(PARAMS)


def decorator(kind: str) -> Any:
    return getattr(hw, kind)


def make_function(
    name: str, params: list[str], *, is_async: bool = False, body: str = "return None"
) -> Callable[..., Any]:
    """A fresh function with exactly these parameters (a decorated function is marked for
    good, so every test needs its own)."""
    source = f"{'async ' if is_async else ''}def {name}({', '.join(params)}):\n    {body}\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<hook {name}>", "exec"), namespace)
    return namespace[name]  # type: ignore[no-any-return]


def valid_hook(kind: str, *, is_async: bool = False, ctx: bool = False) -> Callable[..., Any]:
    params = [*PARAMS[kind], *(["ctx"] if ctx else [])]
    return make_function(f"my_{kind}", params, is_async=is_async)


def llm(prompt: str) -> str:
    return f"echo: {prompt}"


# -- marking ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_bare_decorator_returns_the_same_function_marked(kind: str) -> None:
    """`@kind` returns the function itself, with a default HookSpec."""
    fn = valid_hook(kind)
    assert decorator(kind)(fn) is fn
    spec = fn.__hookwrap__  # type: ignore[attr-defined]
    assert isinstance(spec, hw.HookSpec)
    assert (spec.kind, spec.priority, spec.name) == (kind, 0, fn.__name__)
    assert (spec.is_async, spec.fail_open, spec.takes_ctx) == (False, False, False)


@pytest.mark.parametrize("kind", KINDS)
def test_configured_decorator_records_priority_name_and_fail_open(kind: str) -> None:
    """`@kind(priority=..., name=..., fail_open=...)` returns the function itself, marked so."""
    fn = valid_hook(kind)
    assert decorator(kind)(priority=10, name="auth", fail_open=True)(fn) is fn
    spec = fn.__hookwrap__  # type: ignore[attr-defined]
    assert isinstance(spec, hw.HookSpec)
    assert (spec.kind, spec.priority, spec.name) == (kind, 10, "auth")
    assert (spec.is_async, spec.fail_open, spec.takes_ctx) == (False, True, False)


@pytest.mark.parametrize("kind", KINDS)
def test_async_hook_is_marked_async_and_ctx_is_detected(kind: str) -> None:
    """`async def` sets `is_async`; a parameter named `ctx` sets `takes_ctx`."""
    fn = valid_hook(kind, is_async=True, ctx=True)
    assert decorator(kind)(fn) is fn
    spec = fn.__hookwrap__  # type: ignore[attr-defined]
    assert (spec.kind, spec.is_async, spec.takes_ctx) == (kind, True, True)


def test_ctx_may_be_keyword_only() -> None:
    """A keyword-only `ctx` counts as taking the context."""

    @hw.before_model
    def hook(request: hw.ModelRequest, *, ctx: hw.RunContext | None = None) -> None:
        return None

    assert hook.__hookwrap__.takes_ctx is True  # type: ignore[attr-defined]


def test_decorated_function_stays_directly_callable() -> None:
    """The marked function is the plain function: calling it needs no hookwrap machinery."""

    @hw.before_model(priority=3)
    def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

    @hw.after_model
    async def shout(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.upper()))

    out = add_system(hw.ModelRequest(messages=(hw.Message.user("hi"),)))
    assert [(m.role, m.text) for m in out.messages] == [("system", "Be brief."), ("user", "hi")]
    request = hw.ModelRequest()
    response = hw.ModelResponse(hw.Message.assistant("quiet"))
    assert asyncio.run(shout(request, response)).text == "QUIET"


def test_ctx_hook_receives_the_current_run_context() -> None:
    """A hook declaring `ctx` is called with the RunContext of the call, `hw.current()`."""
    seen: list[tuple[Any, Any]] = []

    @hw.before_model
    def with_ctx(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen.append((ctx, hw.current()))

    @hw.after_model
    def without_ctx(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(("no ctx", None))

    assert hw.model(llm, use=[with_ctx, without_ctx])("hi") == "echo: hi"
    assert len(seen) == 2
    ctx, current = seen[0]
    assert isinstance(ctx, hw.RunContext)
    assert ctx is current
    assert seen[1] == ("no ctx", None)


# -- signature checks ------------------------------------------------------------------------


def _wrong_signatures() -> list[Any]:
    cases: list[Any] = []
    for kind, params in PARAMS.items():
        n = len(params)
        cases.append(pytest.param(kind, [f"x{i}" for i in range(n + 1)], id=f"{kind}-extra"))
        if n:
            cases.append(pytest.param(kind, [], id=f"{kind}-none"))
        cases.append(
            pytest.param(kind, [*(f"x{i}" for i in range(n)), "*", "flag"], id=f"{kind}-kwonly")
        )
    return cases


@pytest.mark.parametrize(("kind", "params"), _wrong_signatures())
def test_wrong_signature_is_a_type_error_naming_function_stage_and_parameters(
    kind: str, params: list[str]
) -> None:
    """A function that cannot take the stage's arguments fails at decoration time, and the
    message names the function, the stage and every expected parameter."""
    fn = make_function("broken", params)
    with pytest.raises(TypeError) as excinfo:
        decorator(kind)(fn)
    message = str(excinfo.value)
    assert "broken" in message
    assert kind in message
    for expected in PARAMS[kind]:
        assert re.search(rf"\b{expected}\b", message), (expected, message)
    assert getattr(fn, "__hookwrap__", None) is None


@pytest.mark.parametrize("kind", ["before_model", "wrap_model", "after_tool", "on_start"])
def test_wrong_signature_configured_form_is_checked_too(kind: str) -> None:
    """The configured decorator checks the signature just as the bare one does."""
    fn = make_function("broken", [f"x{i}" for i in range(len(PARAMS[kind]) + 1)])
    with pytest.raises(TypeError, match="broken"):
        decorator(kind)(priority=1, name="named")(fn)


def test_optional_extra_parameters_are_accepted() -> None:
    """Parameters with defaults beyond the stage's arguments do not make a signature wrong."""

    @hw.before_model
    def hook(request: hw.ModelRequest, extra: int = 1, *, flag: bool = False) -> None:
        return None

    assert hook.__hookwrap__.kind == "before_model"  # type: ignore[attr-defined]


def test_self_of_a_middleware_method_does_not_count() -> None:
    """`self` comes before the stage's arguments on a method and is not one of them."""
    calls: list[str] = []

    class Guard(hw.Middleware):
        @hw.before_model
        def check(self, request: hw.ModelRequest) -> None:
            calls.append(f"check {request.messages[-1].text}")

        @hw.after_model(priority=2)
        def seen(self, request: hw.ModelRequest, response: hw.ModelResponse, ctx: Any) -> None:
            calls.append(f"seen {response.text} ctx={type(ctx).__name__}")

    assert Guard.check.__hookwrap__.takes_ctx is False  # type: ignore[attr-defined]
    assert Guard.seen.__hookwrap__.takes_ctx is True  # type: ignore[attr-defined]
    assert hw.model(llm, use=[Guard()])("hi") == "echo: hi"
    assert calls == ["check hi", "seen echo: hi ctx=RunContext"]


def test_a_method_missing_the_stage_argument_is_still_wrong() -> None:
    """`def check(self)` cannot take a request: `self` does not stand in for it."""
    with pytest.raises(TypeError) as excinfo:

        class Guard(hw.Middleware):
            @hw.before_model
            def check(self) -> None:
                return None

    message = str(excinfo.value)
    assert "check" in message
    assert "before_model" in message
    assert "request" in message


# -- wrap hooks: call_next form and generator form --------------------------------------------


def test_generator_taking_only_request_is_the_generator_form() -> None:
    """`response = yield request` calls the inside; the returned response replaces it."""
    seen: list[str] = []

    @hw.wrap_model
    def bang(request: hw.ModelRequest) -> Iterator[Any]:
        seen.append("before")
        response = yield request
        seen.append(f"after {response.text}")
        return response.replace(message=hw.Message.assistant(response.text + "!"))

    assert hw.model(llm, use=[bang])("hi") == "echo: hi!"
    assert seen == ["before", "after echo: hi"]


def test_generator_taking_request_and_ctx_is_the_generator_form() -> None:
    """An extra `ctx` parameter keeps a generator in the generator form."""
    seen: list[Any] = []

    @hw.wrap_model
    def timed(request: hw.ModelRequest, ctx: hw.RunContext) -> Iterator[Any]:
        seen.append(type(ctx).__name__)
        response = yield request
        seen.append(response.text)

    assert timed.__hookwrap__.takes_ctx is True  # type: ignore[attr-defined]
    assert hw.model(llm, use=[timed])("hi") == "echo: hi"
    assert seen == ["RunContext", "echo: hi"]


def test_generator_form_of_wrap_tool_takes_call() -> None:
    """`result = yield call` for tools; the returned value replaces the result."""

    @hw.wrap_tool
    def tenfold(call: hw.ToolCall) -> Iterator[Any]:
        result = yield call
        return result * 10

    @hw.tool(use=[tenfold])
    def add(a: int, b: int) -> int:
        return a + b

    assert add(2, 3) == 50


def test_generator_taking_call_next_is_the_call_next_form_returning_a_stream() -> None:
    """A generator function that also takes `call_next` is an ordinary wrap hook: it is
    called with `call_next`, and the generator it returns is the stream."""
    pulled: list[str] = []

    @hw.wrap_model
    def tagged(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            pulled.append(chunk.text)
            yield chunk
        yield hw.Chunk("text", "<end>")

    def stream(prompt: str) -> Iterator[str]:
        yield "ab"
        yield "cd"

    assert list(hw.model(stream, use=[tagged])("hi")) == ["ab", "cd", "<end>"]
    assert pulled == ["ab", "cd"]


def test_chunks_a_call_next_stream_hook_replaces_reach_the_caller() -> None:
    """A chunk the hook changed with `.replace(text=...)` is what the caller receives."""

    @hw.wrap_model
    def upper(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            yield chunk.replace(text=chunk.text.upper())

    def stream(prompt: str) -> Iterator[str]:
        yield "ab"
        yield "cd"

    assert list(hw.model(stream, use=[upper])("hi")) == ["AB", "CD"]


def test_async_generator_form_is_marked_async() -> None:
    """An async generator taking only the request is the (async) generator form."""

    @hw.wrap_model
    async def timed(request: hw.ModelRequest) -> Any:
        yield request

    assert timed.__hookwrap__.is_async is True  # type: ignore[attr-defined]

    async def allm(prompt: str) -> str:
        return f"async: {prompt}"

    assert asyncio.run(hw.model(allm, use=[timed])("hi")) == "async: hi"


# -- one function, one hook --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [("before_model", "before_model"), ("before_model", "after_tool"), ("on_start", "on_finish")],
)
def test_decorating_one_function_twice_is_an_error(first: str, second: str) -> None:
    """A function is one hook; marking it again (same or other stage) is a TypeError."""
    fn = make_function("twice", ["*args", "**kwargs"])  # fits every stage
    decorator(first)(priority=4)(fn)
    with pytest.raises(TypeError, match="twice"):
        decorator(second)(fn)
    assert fn.__hookwrap__.kind == first  # type: ignore[attr-defined]
    assert fn.__hookwrap__.priority == 4  # type: ignore[attr-defined]


# -- Middleware objects in use= ------------------------------------------------------------------


def test_middleware_priority_is_the_default_of_its_hooks() -> None:
    """A Middleware's `priority` applies to its hooks that set none; an explicit one wins."""
    order: list[str] = []

    class Mw(hw.Middleware):
        priority = 5

        @hw.before_model
        def first(self, request: hw.ModelRequest) -> None:
            order.append("mw.first(5)")

        @hw.before_model(priority=1)
        def low(self, request: hw.ModelRequest) -> None:
            order.append("mw.low(1)")

    @hw.before_model(priority=10)
    def high(request: hw.ModelRequest) -> None:
        order.append("high(10)")

    @hw.before_model(priority=3)
    def mid(request: hw.ModelRequest) -> None:
        order.append("mid(3)")

    @hw.before_model
    def zero(request: hw.ModelRequest) -> None:
        order.append("zero(0)")

    assert hw.model(llm, use=[zero, Mw(), mid, high])("hi") == "echo: hi"
    assert order == ["high(10)", "mw.first(5)", "mid(3)", "mw.low(1)", "zero(0)"]


def test_plain_object_with_hook_methods_is_middleware() -> None:
    """Any object whose methods are hooks works in use=, without subclassing Middleware."""
    events: list[str] = []

    class Audit:
        def __init__(self, label: str) -> None:
            self.label = label

        @hw.before_model
        def before(self, request: hw.ModelRequest) -> None:
            events.append(f"{self.label} before")

        @hw.after_model
        def after(self, request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            events.append(f"{self.label} after {response.text}")

        def helper(self) -> str:  # not a hook: ignored
            return "helper"

    assert hw.model(llm, use=[Audit("audit")])("x") == "echo: x"
    assert events == ["audit before", "audit after echo: x"]


def test_a_subclass_hook_replaces_the_base_hook_in_its_place() -> None:
    """Hook methods come in definition order, base classes first; an override takes the
    place of the method it replaces (as a dataclass field does), a plain method removes it."""
    events: list[str] = []

    class Base(hw.Middleware):
        @hw.before_model
        def first(self, request: hw.ModelRequest) -> None:
            events.append("Base.first")

        @hw.before_model
        def second(self, request: hw.ModelRequest) -> None:
            events.append("Base.second")

        @hw.before_model
        def third(self, request: hw.ModelRequest) -> None:
            events.append("Base.third")

    class Sub(Base):
        @hw.before_model
        def own(self, request: hw.ModelRequest) -> None:
            events.append("Sub.own")

        @hw.before_model
        def first(self, request: hw.ModelRequest) -> None:
            events.append("Sub.first")

        def third(self, request: hw.ModelRequest) -> None:  # no longer a hook
            events.append("Sub.third")

    hw.model(llm, use=[Sub()])("x")
    assert events == ["Sub.first", "Base.second", "Sub.own"]


@pytest.mark.parametrize("how", ["model", "stack", "list"])
def test_a_class_instead_of_an_instance_is_a_clear_type_error(how: str) -> None:
    """Passing the Middleware class (not an instance) names the class and asks for one."""

    class Guard(hw.Middleware):
        @hw.before_model
        def check(self, request: hw.ModelRequest) -> None:
            return None

    with pytest.raises(TypeError) as excinfo:
        if how == "model":
            hw.model(llm, use=Guard)
        elif how == "stack":
            hw.Stack(Guard)
        else:
            hw.model(llm, use=[hw.Stack(), [Guard]])
    message = str(excinfo.value)
    assert "Guard" in message
    assert "instance" in message


def _undecorated(request: hw.ModelRequest) -> None:
    return None


class _NoHooks:
    def method(self) -> None:
        return None


@pytest.mark.parametrize(
    ("item", "named"),
    [(_undecorated, "_undecorated"), (42, "42"), (_NoHooks(), "_NoHooks"), ("text", "text")],
    ids=["plain-function", "int", "object-without-hooks", "str"],
)
def test_a_non_hook_in_use_is_a_clear_type_error(item: Any, named: str) -> None:
    """Something that is neither a hook, a Middleware, a Stack nor a list is refused at wrap
    time, and the message names it."""
    with pytest.raises(TypeError, match=re.escape(named)):
        hw.model(llm, use=[item])
    with pytest.raises(TypeError, match=re.escape(named)):
        hw.Stack(item)


# -- wrong return values ------------------------------------------------------------------------


def test_before_model_returning_an_int_is_a_type_error() -> None:
    """before_model may return a ModelRequest, Respond or None: the error says so."""
    called: list[str] = []

    @hw.before_model(name="returns_int")
    def returns_int(request: hw.ModelRequest) -> Any:
        return 42

    def target(prompt: str) -> str:
        called.append(prompt)
        return "never"

    with pytest.raises(TypeError) as excinfo:
        hw.model(target, use=[returns_int])("hi")
    message = str(excinfo.value)
    assert "returns_int" in message
    assert "before_model" in message
    assert "ModelRequest" in message
    assert called == []


def test_on_chunk_returning_a_str_is_a_type_error() -> None:
    """on_chunk may return a Chunk, a list of Chunks, DROP or None: the error says so."""

    @hw.on_chunk(name="returns_str")
    def returns_str(chunk: hw.Chunk) -> Any:
        return chunk.text.upper()

    def stream(prompt: str) -> Iterator[str]:
        yield "a"
        yield "b"

    with pytest.raises(TypeError) as excinfo:
        list(hw.model(stream, use=[returns_str])("hi"))
    message = str(excinfo.value)
    assert "returns_str" in message
    assert "on_chunk" in message
    assert "Chunk" in message


def test_before_tool_returning_a_str_is_a_type_error() -> None:
    """before_tool may return a ToolCall, Skip, Abort or None: the error says so."""
    called: list[int] = []

    @hw.before_tool(name="returns_str")
    def returns_str(call: hw.ToolCall) -> Any:
        return "no"

    @hw.tool(use=[returns_str])
    def add(a: int, b: int) -> int:
        called.append(a)
        return a + b

    with pytest.raises(TypeError) as excinfo:
        add(1, 2)
    message = str(excinfo.value)
    assert "returns_str" in message
    assert "before_tool" in message
    assert "ToolCall" in message
    assert called == []


def test_after_model_returning_a_str_is_a_type_error() -> None:
    """after_model may return a ModelResponse or None: the error says so."""

    @hw.after_model(name="returns_str")
    def returns_str(request: hw.ModelRequest, response: hw.ModelResponse) -> Any:
        return "replaced"

    with pytest.raises(TypeError) as excinfo:
        hw.model(llm, use=[returns_str])("hi")
    message = str(excinfo.value)
    assert "returns_str" in message
    assert "after_model" in message
    assert "ModelResponse" in message
