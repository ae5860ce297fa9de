"""Hook decorators: mark a plain function as a hook and check its signature once."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, overload

import attrs

__all__ = [
    "KINDS",
    "HookSpec",
    "Middleware",
    "after_agent",
    "after_model",
    "after_tool",
    "before_agent",
    "before_model",
    "before_tool",
    "describe",
    "on_abort",
    "on_chunk",
    "on_error",
    "on_finish",
    "on_iteration",
    "on_start",
    "on_usage",
    "wrap_model",
    "wrap_tool",
]

HookKind = Literal[
    "before_agent",
    "before_model",
    "wrap_model",
    "on_chunk",
    "on_usage",
    "after_model",
    "before_tool",
    "wrap_tool",
    "after_tool",
    "on_start",
    "on_iteration",
    "after_agent",
    "on_finish",
    "on_error",
    "on_abort",
]

#: The positional parameters each kind of hook is called with (`ctx` is by keyword).
KINDS: dict[str, tuple[str, ...]] = {
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

F = TypeVar("F", bound=Callable[..., Any])


@attrs.frozen(slots=True, weakref_slot=False)
class HookSpec:
    """What a decorator recorded about a hook, as `fn.__hookwrap__`.

    `form` is ``"call_next"`` or ``"generator"`` for `wrap_*` hooks, ``"plain"`` otherwise.
    `priority_set` tells whether `priority` was given (a `Middleware` supplies the default).
    """

    kind: HookKind
    priority: int = 0
    name: str = ""
    is_async: bool = False
    fail_open: bool = False
    takes_ctx: bool = False
    form: Literal["plain", "call_next", "generator"] = "plain"
    priority_set: bool = False


def describe(fn: Callable[..., Any]) -> str:
    """`qualified.name (file:line)` of a function, for error messages."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    name = getattr(fn, "__qualname__", None) or repr(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return name
    return f"{name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _accepts(params: list[inspect.Parameter], n: int) -> bool:
    """Whether these parameters accept exactly `n` positional arguments and nothing else."""
    positional = [p for p in params if p.kind in _POSITIONAL]
    required = [p for p in positional if p.default is p.empty]
    var = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    kw_required = [
        p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty
    ]
    return not kw_required and len(required) <= n and (len(positional) >= n or var)


def _inspect(fn: Callable[..., Any], kind: str) -> tuple[bool, str]:
    """Check `fn` can be called as a `kind` hook; return (takes_ctx, form)."""
    if isinstance(fn, classmethod):
        raise TypeError(
            f"@{kind} expects a function, got {fn!r}: put @{kind} below @classmethod (a "
            "hook of a class is a method, or a @staticmethod)"
        )
    if not callable(fn):
        raise TypeError(f"@{kind} expects a function, got {fn!r}")
    is_gen = inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)
    if is_gen and not kind.startswith("wrap_"):
        # calling it only makes a generator: a stage that ignores what it returns would never
        # run the body, another would get a generator for an answer, at call time
        raise TypeError(
            f"{kind} hook {describe(fn)} is a generator function: calling it runs none of "
            "its body; write it as a plain function (or `async def`) that returns (only "
            "wrap_model and wrap_tool hooks may be generators, in their generator form)"
        )
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:  # builtins without a signature
        raise TypeError(f"@{kind}: cannot read the signature of {fn!r}") from exc
    shown_params = params
    if params and params[0].name in ("self", "cls") and params[0].kind in _POSITIONAL:
        params = params[1:]
    ctx = next((p for p in params if p.name == "ctx"), None)
    if ctx is not None and ctx.kind is inspect.Parameter.POSITIONAL_ONLY:
        raise TypeError(
            f"{kind} hook {describe(fn)}: `ctx` must be passable by keyword, not positional-only"
        )
    others = [p for p in params if p.name != "ctx"]
    expected = KINDS[kind]
    form = "plain"
    given = len(expected)  # the arguments the stage passes by position (ctx by keyword)
    if kind.startswith("wrap_"):
        if is_gen and _accepts(others, 1) and not _accepts(others, 2):
            form, given = "generator", 1
        else:
            form = "call_next"
    positional = [p for p in params if p.kind in _POSITIONAL]
    if ctx is not None and ctx in positional[:given]:
        raise TypeError(
            f"{kind} hook {describe(fn)}: `ctx` comes before the stage's arguments, which "
            f"are passed by position; put it last: ({', '.join((*expected[:given], 'ctx'))})"
        )
    if form == "generator":
        return ctx is not None, form
    if not _accepts(others, len(expected)):
        shown = ", ".join((*expected, "ctx=None")) if expected else "ctx=None"
        found = inspect.Signature(shown_params)  # shows `*` and `/` where they are
        extra = ""
        if kind.startswith("wrap_"):
            arg = expected[0]
            extra = (
                f"\n  or, the generator form: a generator taking ({arg}) that does "
                f"`result = yield {arg}`"
            )
        hint = ""
        if expected and any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in others):
            hint = f"\n  (the stage passes {', '.join(expected)} by position, not by keyword)"
        raise TypeError(
            f"{kind} hook {describe(fn)} has the wrong parameters\n"
            f"  expected: ({shown})  (ctx is optional){extra}\n"
            f"  found:    {found}{hint}"
        )
    return ctx is not None, form


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def _mark(kind: str, fn: F, priority: int | None, name: str | None, fail_open: bool) -> F:
    if getattr(fn, "__hookwrap__", None) is not None:
        raise TypeError(
            f"@{kind}: {describe(fn)} is already a {fn.__hookwrap__.kind} hook; "  # type: ignore[attr-defined]
            "a function is one hook (write a second function for a second stage)"
        )
    if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool)):
        raise TypeError(f"@{kind}(priority=...) must be an int (got {priority!r})")
    if not isinstance(fail_open, bool):
        raise TypeError(f"@{kind}(fail_open=...) must be True or False (got {fail_open!r})")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"@{kind}(name=...) must be a str (got {name!r})")
    # a staticmethod (the decorator above it) is read as the function inside it, which is
    # what the class gives and is marked too
    given: Any = fn
    inside: Any = given.__func__ if isinstance(given, staticmethod) else given
    takes_ctx, form = _inspect(inside, kind)
    spec = HookSpec(
        kind=kind,  # type: ignore[arg-type]
        priority=0 if priority is None else priority,
        name=name or getattr(fn, "__qualname__", None) or repr(fn),
        is_async=_is_async(inside),
        fail_open=fail_open,
        takes_ctx=takes_ctx,
        form=form,  # type: ignore[arg-type]
        priority_set=priority is not None,
    )
    try:
        fn.__hookwrap__ = spec  # type: ignore[attr-defined]
        if inside is not given:
            inside.__hookwrap__ = spec
    except AttributeError:
        raise TypeError(f"@{kind}: cannot mark {fn!r} (it takes no attributes)") from None
    return fn


def async_twin(twin: Callable[..., Any]) -> Callable[[F], F]:
    """Give a sync `call_next` hook the `async def` that stands in for it in async calls.

    For hookwrap's own middleware, which wants real `await`s (timeouts, backoff) in async
    calls and plain calls in sync ones, and serves both shapes from one object.
    """
    if not inspect.iscoroutinefunction(twin):
        raise TypeError(f"async_twin: {describe(twin)} must be an `async def`")

    def mark(fn: F) -> F:
        fn.__hookwrap_async__ = twin  # type: ignore[attr-defined]
        return fn

    return mark


def _decorator(kind: str) -> Any:
    @overload
    def deco(fn: F, /) -> F: ...
    @overload
    def deco(
        *, priority: int | None = None, name: str | None = None, fail_open: bool = False
    ) -> Callable[[F], F]: ...
    def deco(
        fn: F | None = None,
        /,
        *,
        priority: int | None = None,
        name: str | None = None,
        fail_open: bool = False,
    ) -> F | Callable[[F], F]:
        if fn is None:
            return lambda f: _mark(kind, f, priority, name, fail_open)
        return _mark(kind, fn, priority, name, fail_open)

    deco.__name__ = deco.__qualname__ = kind
    params = ", ".join(KINDS[kind]) or "no arguments"
    deco.__doc__ = (
        f"Mark a function as a `{kind}` hook; it is called with ({params}) "
        "and may declare `ctx` to receive the `RunContext`.\n\n"
        "Use bare (`@" + kind + "`) or configured "
        "(`@" + kind + "(priority=10, name='x', fail_open=True)`); "
        "returns the same function."
    )
    return deco


class _HookDecorator:
    """Typing shape shared by every hook decorator (bare and configured use)."""

    @overload
    def __call__(self, fn: F, /) -> F: ...
    @overload
    def __call__(
        self, *, priority: int | None = None, name: str | None = None, fail_open: bool = False
    ) -> Callable[[F], F]: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - typing only
        raise NotImplementedError


before_agent: _HookDecorator = _decorator("before_agent")
before_model: _HookDecorator = _decorator("before_model")
wrap_model: _HookDecorator = _decorator("wrap_model")
on_chunk: _HookDecorator = _decorator("on_chunk")
on_usage: _HookDecorator = _decorator("on_usage")
after_model: _HookDecorator = _decorator("after_model")
before_tool: _HookDecorator = _decorator("before_tool")
wrap_tool: _HookDecorator = _decorator("wrap_tool")
after_tool: _HookDecorator = _decorator("after_tool")
on_start: _HookDecorator = _decorator("on_start")
on_iteration: _HookDecorator = _decorator("on_iteration")
after_agent: _HookDecorator = _decorator("after_agent")
on_finish: _HookDecorator = _decorator("on_finish")
on_error: _HookDecorator = _decorator("on_error")
on_abort: _HookDecorator = _decorator("on_abort")


class Middleware:
    """Base class for objects whose methods are hooks.

    Subclass it to give the hooks a shared `name` (shown by `explain`), a default
    `priority` (for hooks that do not set one) and `tools` the middleware provides.
    Any object with hook methods works in ``use=``; this class only adds the defaults.
    """

    name: str | None = None
    priority: int = 0
    tools: Sequence[Any] = ()  # a list or tuple of tools

    def __repr__(self) -> str:
        return f"<{self.name or type(self).__name__} middleware>"
