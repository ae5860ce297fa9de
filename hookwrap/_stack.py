"""Stacks: flatten `use=` into hooks, and sort each stage once, when a target is wrapped."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import attrs

from ._errors import Aborted, Interrupt
from ._hooks import KINDS, HookSpec, Middleware, describe

__all__ = ["Chain", "Hook", "Stack", "flatten", "tell", "watched"]

log = logging.getLogger("hookwrap")

# what a middleware that watches every hook (`Debug`) is told, through its method
# `__hookwrap_trace__(hook, event, value, ctx)`: "received" (the hook's arguments, a
# tuple), then "returned" (its answer) or "raised" (its error)
Trace = Callable[["Hook", str, Any, Any], None]

MODEL_KINDS = ("before_model", "wrap_model", "on_chunk", "on_usage", "after_model")
TOOL_KINDS = ("before_tool", "wrap_tool", "after_tool")
TERMINAL_KINDS = ("on_finish", "on_error", "on_abort")
RUN_KINDS = ("on_start", *TERMINAL_KINDS)
REVERSED = frozenset({"after_model", "after_tool"})


class Hook:
    """One hook as it sits in a stack: the callable, its spec, and its stack's switches."""

    __slots__ = (
        "call",
        "continue_on_error",
        "continue_on_response",
        "fn",
        "is_async",
        "origin",
        "priority",
        "spec",
        "takes_ctx",
        "target",
        "trace",
    )

    def __init__(
        self,
        target: Callable[..., Any],
        spec: HookSpec,
        priority: int,
        origin: str,
        continue_on_error: bool = False,
        continue_on_response: bool = False,
        trace: tuple[Trace, ...] = (),
    ) -> None:
        self.target = target  # the function or bound method the user wrote
        self.spec = spec
        self.takes_ctx = spec.takes_ctx  # copied from the spec: read on every call
        self.is_async = spec.is_async
        self.priority = priority
        self.origin = origin
        self.continue_on_error = continue_on_error
        self.continue_on_response = continue_on_response
        # watchers of its stack are told of each call (a `wrap_*` hook's, by its onion layer)
        self.trace = trace
        fn = _traced(target, self) if trace and spec.form == "plain" else target
        self.fn = _fail_open(fn, self) if spec.fail_open and spec.form == "plain" else fn
        # what the stages call: the stage's arguments only, `ctx` added when the hook takes it
        self.call = _with_ctx(self.fn) if spec.takes_ctx else self.fn

    def traced(self, trace: tuple[Trace, ...]) -> Hook:
        """This hook, telling `trace` what each of its calls received and returned."""
        return Hook(
            self.target,
            self.spec,
            self.priority,
            self.origin,
            self.continue_on_error,
            self.continue_on_response,
            trace,
        )

    def async_twin(self) -> Hook | None:
        """This hook as its `async def` twin (see `_hooks.async_twin`), if it has one."""
        fn = getattr(self.target, "__func__", self.target)
        twin = getattr(fn, "__hookwrap_async__", None)
        if twin is None or self.spec.form != "call_next" or self.spec.is_async:
            return None
        owner = getattr(self.target, "__self__", None)
        bound = twin if owner is None else twin.__get__(owner)
        return Hook(
            bound,
            attrs.evolve(self.spec, is_async=True),
            self.priority,
            self.origin,
            self.continue_on_error,
            self.continue_on_response,
            self.trace,
        )

    @property
    def label(self) -> str:
        """How errors and `explain` name the hook."""
        return f"{self.spec.kind} hook {self.spec.name!r} (priority {self.priority})"

    def note(self) -> str:
        return f"raised by {self.label}, {describe(self.target)}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hook) and _same(self.target, other.target)

    def __hash__(self) -> int:
        return hash(_identity(self.target))

    def __repr__(self) -> str:
        return f"<Hook {self.label} from {self.origin}>"


def _identity(fn: Any) -> Any:
    self = getattr(fn, "__self__", None)
    return (id(self), getattr(fn, "__func__", fn)) if self is not None else fn


def _same(a: Any, b: Any) -> bool:
    return bool(_identity(a) == _identity(b))


def _with_ctx(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` called with the current run's context as `ctx` (stages run inside the run)."""
    from ._run import current_var

    get = current_var.get

    def with_ctx(*args: Any) -> Any:
        return fn(*args, ctx=get())

    return with_ctx


def tell(hook: Hook, event: str, value: Any, ctx: Any = None) -> None:
    """Tell the hook's watchers `event` (see `Trace`); a watcher's failure never breaks the
    call."""
    for trace in hook.trace:
        try:
            trace(hook, event, value, ctx)
        except Exception:
            log.exception("tracing %s failed; skipped", hook.label)


def _traced(fn: Callable[..., Any], hook: Hook) -> Callable[..., Any]:
    """`fn`, its arguments and its answer or error told to the hook's watchers."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def traced_async(*args: Any, **kwargs: Any) -> Any:
            ctx = kwargs.get("ctx")
            tell(hook, "received", args, ctx)
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                tell(hook, "raised", exc, ctx)
                raise
            tell(hook, "returned", result, ctx)
            return result

        return traced_async

    @functools.wraps(fn)
    def traced(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs.get("ctx")
        tell(hook, "received", args, ctx)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            tell(hook, "raised", exc, ctx)
            raise
        tell(hook, "returned", result, ctx)
        return result

    return traced


def _fail_open(fn: Callable[..., Any], hook: Hook) -> Callable[..., Any]:
    """A hook that logs and returns None instead of raising."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except (Aborted, Interrupt):
                raise
            except Exception:
                log.exception("fail-open %s failed; skipped", hook.label)
                return None

        return guarded_async

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (Aborted, Interrupt):
            raise
        except Exception:
            log.exception("fail-open %s failed; skipped", hook.label)
            return None

    return guarded


def _origin_of(obj: Any) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    return type(obj).__name__


def _module_of(fn: Any) -> str:
    """Where a hook function was defined: its module, or its file and line in a script."""
    module = getattr(fn, "__module__", None)
    if isinstance(module, str) and module and module != "__main__":
        return module
    code = getattr(fn, "__code__", None)
    if code is not None:
        return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return module or "?"


def _methods(obj: Any) -> Iterator[tuple[str, HookSpec]]:
    """Hook methods of `obj`'s class, in definition order (base classes first)."""
    seen: dict[str, HookSpec] = {}
    for klass in reversed(type(obj).__mro__):
        for attr, value in vars(klass).items():
            func: Any = value
            spec = getattr(value, "__hookwrap__", None)  # a hook decorator above @staticmethod
            if spec is None and isinstance(value, (staticmethod, classmethod)):
                func = cast(Any, value).__func__
                spec = getattr(func, "__hookwrap__", None)
            if isinstance(spec, HookSpec):
                seen[attr] = spec  # an override keeps the place of what it replaces
            elif attr in seen:
                del seen[attr]  # overridden by a plain method: no longer a hook
    yield from seen.items()


def flatten(
    items: Any, continue_on_error: bool = False, continue_on_response: bool = False
) -> list[Hook]:
    """Turn a `use=` value into hooks in registration order.

    Hooks of a nested `Stack` keep that stack's switches; the others get these.
    """
    out: list[Hook] = []
    if items is None:
        return out
    if isinstance(items, Stack):
        return list(items.hooks)
    if isinstance(items, (list, tuple)):
        for item in items:  # pyright: ignore[reportUnknownVariableType]
            if item is None:  # only `use=None` itself means no hooks
                raise TypeError(
                    "use= got None among its items; it takes hooks, Middleware objects, "
                    "Stacks and lists of them (use=None alone means no hooks)"
                )
            out.extend(flatten(item, continue_on_error, continue_on_response))
        return out
    spec = getattr(items, "__hookwrap__", None)
    if isinstance(spec, HookSpec) and callable(items):
        origin = _module_of(items)
        self = getattr(items, "__self__", None)
        priority = spec.priority
        if self is None:
            _refuse_unbound(items)
        else:
            origin = _origin_of(self)
            if not spec.priority_set:
                priority = _priority_of(self)
        out.append(Hook(items, spec, priority, origin, continue_on_error, continue_on_response))
        return out
    if isinstance(items, type):
        raise TypeError(
            f"use= got the class {items.__qualname__}; pass an instance "
            f"(use=[{items.__qualname__}(...)])"
        )
    if callable(items) and not any(True for _ in _methods(items)):
        raise TypeError(
            f"use= got {describe(items)}, which is not a hook: decorate it with one of "
            f"@hw.{', @hw.'.join(KINDS)}"
        )
    found = False
    default = _priority_of(items)
    origin = _origin_of(items)
    for attr, spec in _methods(items):
        found = True
        if attr in getattr(items, "__dict__", ()):
            raise TypeError(
                f"{type(items).__name__}.{attr} is a hook, but the object's own attribute "
                f"{attr!r} ({getattr(items, attr)!r:.60}) hides it; rename one of them"
            )
        bound = getattr(items, attr)
        priority = spec.priority if spec.priority_set else default
        out.append(Hook(bound, spec, priority, origin, continue_on_error, continue_on_response))
    if not found:
        if isinstance(items, Middleware) and items.tools:
            return out  # it only provides tools, for an agent
        raise TypeError(
            f"use= takes hooks, Middleware objects, Stacks and lists of them; "
            f"got {items!r} ({type(items).__name__}), which has no hook methods"
        )
    return out


def _refuse_unbound(fn: Any) -> None:
    """A hook method taken from its class (`Audit.log`) has no instance for its `self`:
    each call would pass the stage's first argument as `self`."""
    if not inspect.isfunction(fn):
        return
    first = next(iter(inspect.signature(fn).parameters.values()), None)
    if first is None or first.name not in ("self", "cls") or first.kind not in _POSITIONAL:
        return
    owner = fn.__qualname__.rpartition(".")[0].rpartition(".")[2]
    if owner and owner != "<locals>":
        raise TypeError(
            f"use= got {describe(fn)}, a hook method of the class {owner} taking "
            f"{first.name}: it needs an instance (use=[{owner}()])"
        )
    raise TypeError(
        f"use= got {describe(fn)}, whose first parameter is {first.name}: only a method's "
        f"{first.name} is left out of a hook's parameters; drop it, or make the hook a "
        "method of an hw.Middleware and pass an instance"
    )


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def refuse_idle(owner: Any, name: str, kinds: tuple[str, ...], target: str) -> None:
    """Refuse a middleware object none of whose hooks is for a stage in `kinds` (those of
    `target`): it would be dropped without a word. One with hooks for several targets
    keeps those that run here and leaves the others for the targets they are for."""
    own = tuple(dict.fromkeys(spec.kind for _, spec in _methods(owner)))
    if not own or any(kind in kinds for kind in own):
        return
    elsewhere = ""
    if any(kind in TOOL_KINDS for kind in own):
        elsewhere = " or hw.tool(use=...)"
    elif any(kind in MODEL_KINDS for kind in own):
        elsewhere = " or hw.model(use=...)"
    raise TypeError(
        f"{name} has hooks only for {', '.join(own)}, which {target} never has; give it "
        f"to an hw.Agent(use=...){elsewhere}"
        + ("; its tools are for an hw.Agent too" if getattr(owner, "tools", ()) else "")
    )


def refuse_tools_only(use: Any, what: str) -> None:
    """Refuse a middleware in `use` that has no hooks, only tools: only an agent gives
    tools to a model, so anywhere else they would be dropped without a word."""
    items: list[Any] = [use]
    while items:
        item = items.pop()
        if isinstance(item, (list, tuple)):
            items.extend(item)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, Stack):
            items.extend(item.items)
        elif isinstance(item, Middleware) and item.tools and not any(True for _ in _methods(item)):
            names = ", ".join(str(getattr(t, "name", t)) for t in item.tools)
            raise TypeError(
                f"{what}(use=...) got {item!r}, which has no hooks, only tools ({names:.80}); "
                f"tools are for an hw.Agent: give it to hw.Agent(use=...)"
            )


def _priority_of(obj: Any) -> int:
    priority = getattr(obj, "priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise TypeError(f"{type(obj).__name__}.priority must be an int (got {priority!r})")
    return priority


class Stack:
    """An ordered group of hooks with its own fail-fast switches.

    `continue_on_error=True`: every hook of a piped or "all" stage runs even after one
    raised; the first error is raised when the stage ends. `continue_on_response=True`:
    `before_model` hooks keep running after a `Respond`; the last one wins. Hooks from a
    nested stack keep the switches of the stack they came from.
    """

    __slots__ = ("continue_on_error", "continue_on_response", "hooks", "items")

    def __init__(
        self, *items: Any, continue_on_error: bool = False, continue_on_response: bool = False
    ) -> None:
        for switch, value in (
            ("continue_on_error", continue_on_error),
            ("continue_on_response", continue_on_response),
        ):
            if not isinstance(value, bool):
                raise TypeError(f"Stack({switch}=...) must be True or False (got {value!r})")
        self.continue_on_error = continue_on_error
        self.continue_on_response = continue_on_response
        self.items = items  # as given: a Middleware among them may provide tools too
        self.hooks: tuple[Hook, ...] = tuple(
            flatten(list(items), self.continue_on_error, self.continue_on_response)
        )

    def __iter__(self) -> Iterator[Hook]:
        return iter(self.hooks)

    def __len__(self) -> int:
        return len(self.hooks)

    def __add__(self, other: Any) -> Stack:
        return Stack(self, other)

    def __radd__(self, other: Any) -> Stack:
        # `hook + stack`, `[hook] + stack`: whichever side the stack is on
        return Stack(other, self)

    def __repr__(self) -> str:
        names = ", ".join(h.spec.name for h in self.hooks)
        return f"Stack({names})"


def _watcher_of(hook: Hook) -> Trace | None:
    """The `__hookwrap_trace__` of the middleware whose hook this is, if it has one."""
    owner: object = getattr(hook.target, "__self__", None)
    trace = getattr(type(owner), "__hookwrap_trace__", None)
    return None if trace is None else cast("Trace", trace.__get__(owner))


def watched(hooks: list[Hook], among: Iterable[Hook]) -> list[Hook]:
    """`hooks`, each telling the watchers among the middleware of `among` (`Debug`) of its
    calls; a watcher's own hooks, hookwrap's own and hooks told already stay as they are.
    `among` holds them all where a layer runs only some (those an inner layer has not)."""
    trace = _watchers(among)
    if not trace:
        return hooks
    return [
        h if h.trace or _watcher_of(h) or h.spec.name.startswith("hookwrap.") else h.traced(trace)
        for h in hooks
    ]


def _watchers(hooks: Iterable[Hook]) -> tuple[Trace, ...]:
    """The watchers among the middleware of `hooks` (`Debug`), each once."""
    found: dict[int, Trace] = {}
    for hook in hooks:
        trace = _watcher_of(hook)
        if trace is not None:
            found.setdefault(id(getattr(hook.target, "__self__", None)), trace)
    return tuple(found.values())


class Chain:
    """Every stage's hooks in execution order, computed once."""

    __slots__ = ("hooks", "stages")

    def __init__(self, hooks: Iterable[Hook]) -> None:
        unique: list[Hook] = []
        for hook in hooks:
            if hook not in unique:  # the same hook listed twice runs once
                unique.append(hook)
        unique = watched(unique, unique)
        self.hooks = tuple(unique)
        stages: dict[str, tuple[Hook, ...]] = {}
        for kind in KINDS:
            ordered = sorted((h for h in unique if h.spec.kind == kind), key=lambda h: -h.priority)
            if kind in REVERSED:
                ordered.reverse()
            stages[kind] = tuple(ordered)
        self.stages = stages

    def __getitem__(self, kind: str) -> tuple[Hook, ...]:
        return self.stages[kind]

    def shaped(self, is_async: bool) -> Chain:
        """The chain for one call shape: in async calls, hooks with an `async def` twin
        run as that twin (decided when a target is wrapped, never per call)."""
        if not is_async:
            return self
        twins = [hook.async_twin() for hook in self.hooks]
        if not any(twins):
            return self
        return Chain(twin or hook for twin, hook in zip(twins, self.hooks, strict=True))

    def any(self, kinds: Iterable[str]) -> bool:
        return any(self.stages[k] for k in kinds)
