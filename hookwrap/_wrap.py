"""Wrapping: one `wrapt` proxy per target, its engine chosen and built once."""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Generic, TypeVar, cast, overload

from typing_extensions import ParamSpec

from ._engine import ModelEngine, ToolEngine
from ._explain import layers
from ._hooks import describe
from ._proxy import ObjectProxy
from ._stack import Chain, Hook, flatten, refuse_tools_only, watched
from ._tool import OnInstance, ToolBinding
from ._types import ToolCall, ToolSpec
from .adapters.function import FunctionAdapter

__all__ = ["Tool", "Wrapped", "fresh_hooks", "model", "tool", "wrap"]

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
S = TypeVar("S")
F = TypeVar("F", bound=Callable[..., Any])
Use = Any


def _direct(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
    return wrapped(*args, **kwargs)


def _caller(runner: Callable[..., Any], target: Any) -> Callable[..., Any]:
    """The proxy's `__call__`: the runner and target in closure cells, not looked up on the
    proxy (an attribute of a wrapt proxy costs more than the rest of an unhooked call)."""
    if runner is _direct:

        def direct(self: Any, *args: Any, **kwargs: Any) -> Any:
            return target(*args, **kwargs)

        return direct

    def hooked(self: Any, *args: Any, **kwargs: Any) -> Any:
        return runner(target, None, args, kwargs)

    return hooked


class _Proxy(ObjectProxy):
    """One proxy per target: calls go to the runner chosen at wrap time; the rest passes
    through to the target (`__name__`, `__doc__`, signature, `isinstance`).

    Each proxy gets a class of its own, whose `__call__` holds its runner and target.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        own: Any = type(cls.__name__, (cls,), {"__slots__": (), "__module__": cls.__module__})
        own.__qualname__ = cls.__qualname__
        return super().__new__(own)

    def __init__(
        self, target: Any, runner: Callable[..., Any], chain: Chain, engine: Any, kind: str
    ) -> None:
        super().__init__(target)
        self._self_runner = runner
        self._self_chain = chain
        self._self_engine = engine
        self._self_hw_kind = kind
        self._self_get = _binding(target)  # how it binds to an instance: found once
        type(self).__call__ = _caller(runner, target)  # type: ignore[method-assign]

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        get = self._self_get
        if instance is None or get is None:  # (a partial, a callable object: no method)
            return self
        return self._bound(get(instance, owner))

    def _bound(self, method: Any) -> Any:
        """What reading it from an instance gives, `method` being the target bound there."""
        return _Bound(method, self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # by reference, as pickle takes functions: what its module holds under its name
        name: str = self.__qualname__
        found: Any = sys.modules.get(self.__module__)
        for part in name.split("."):
            found = getattr(found, part, None)
        if found is not self:
            raise TypeError(
                f"a hookwrap proxy of {self.__wrapped__!r} cannot be pickled: pickle finds "
                f"it by its module and name, and {self.__module__}.{name} is not this proxy "
                f"(decorate the module-level function itself to pickle it)"
            )
        return name

    # as `copy.copy` and `copy.deepcopy` of a function give the function itself
    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    def __repr__(self) -> str:
        return f"<hookwrap {self._self_hw_kind} {self.__wrapped__!r}>"


class _Bound(ObjectProxy):
    """A wrapped function looked up on an instance: a method with the same hooks.

    The target is called as the plain function with the instance first, so that the
    adapter finds arguments where the function's signature puts them.
    """

    def __init__(self, bound: Any, parent: _Proxy) -> None:
        super().__init__(bound)
        self._self_runner = parent._self_runner  # pyright: ignore[reportPrivateUsage]
        self._self_chain = parent._self_chain  # pyright: ignore[reportPrivateUsage]
        self._self_func = getattr(bound, "__func__", None)
        self._self_instance = getattr(bound, "__self__", None)
        if self._self_func is not None and isinstance(bound, _Bound):
            self._self_func = _instance_first(bound)  # wrapped twice: the inner hooks run too

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        func = self._self_func
        if func is None:
            return self._self_runner(self.__wrapped__, None, args, kwargs)
        return self._self_runner(func, None, (self._self_instance, *args), kwargs)

    # as a bound method: copied as itself, pickled as its instance's attribute
    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        instance = self._self_instance
        if instance is None:
            raise TypeError(f"a hookwrap proxy of {self.__wrapped__!r} cannot be pickled")
        return getattr, (instance, self.__wrapped__.__name__)


def _binding(target: Any) -> Callable[[Any, Any], Any] | None:
    """How `target` binds to an instance when read from it (a function's `__get__`); None
    for one that does not: a callable object, a `functools.partial` (which Python 3.13
    warns will bind in later releases: it stays unbound here, as it was)."""
    if isinstance(target, functools.partial) or inspect.ismethod(target):
        return None  # (a bound method is bound already, to its own object)
    # as Python looks it up: on the type (a proxy's `__class__` is what it wraps)
    get: Any = getattr(type(cast(object, target)), "__get__", None)
    if get is None:
        return None
    return lambda instance, owner: get(target, instance, owner)


def _instance_first(bound: _Bound) -> Callable[..., Any]:
    """An inner wrapper's method called as its plain function is, with the instance first
    (where the outer wrapper's adapter finds the arguments), running the inner hooks."""

    def call(instance: Any, /, *args: Any, **kwargs: Any) -> Any:
        return bound(*args, **kwargs)

    return call


class _BoundTool(_Bound, Generic[P, R]):
    """A tool looked up on an instance: the method, with the tool's hooks, `spec` and `name`.

    `hw.tool`, `hw.wrap` and `hw.Agent(tools=...)` take it as the tool it is (its name,
    description and hooks kept), not as a new function; `invoke` runs a model's call on
    this instance.
    """

    def __init__(self, bound: Any, parent: Tool[Any, Any]) -> None:
        super().__init__(bound, parent)
        self._self_tool = parent

    if TYPE_CHECKING:

        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    @property
    def spec(self) -> ToolSpec:
        """What the model is told about this tool (the instance is no argument)."""
        return self._self_tool.spec

    @property
    def name(self) -> str:
        """The tool's name, as the model sees it."""
        return self._self_tool.name

    def invoke(self, call: ToolCall) -> Any:
        """`Tool.invoke`, on this instance."""
        return _invoke(*self._on_instance(call, "invoke"))

    async def ainvoke(self, call: ToolCall) -> Any:
        """`Tool.ainvoke`, on this instance."""
        return await _ainvoke(*self._on_instance(call, "ainvoke"))

    def _on_instance(self, call: ToolCall, method: str) -> tuple[ToolEngine, ToolCall]:
        """The engine of the tool's calls on an instance, and `call` made on this one."""
        parent = self._self_tool
        parent._check_call(call, method)  # pyright: ignore[reportPrivateUsage]
        engine = parent._instance_engine(self)  # pyright: ignore[reportPrivateUsage]
        return engine, call.replace(raw=OnInstance(self))


class Wrapped(_Proxy):
    """A model callable with hooks around it; behaves as the original otherwise."""

    def __init__(self, target: Callable[..., Any], hooks: list[Hook]) -> None:
        chain = Chain(hooks)
        engine: ModelEngine | None = None
        runner: Callable[..., Any] = _direct
        if not chain.hooks:
            FunctionAdapter(target)  # refuses a target hooks could not be put around
        else:
            call: Any = target
            while isinstance(call, functools.partial):  # the function it binds arguments of
                call = call.func  # pyright: ignore[reportUnknownMemberType]
            if not inspect.isroutine(call):  # an object's `async def __call__` is async too
                call = type(call).__call__
            is_async = inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)
            engine = ModelEngine(FunctionAdapter(target), chain, is_async, describe(target))
            if inspect.isasyncgenfunction(call):
                runner = engine.agenerator
            elif is_async:
                runner = engine.acall
            elif inspect.isgeneratorfunction(call):
                runner = engine.generator
            else:
                runner = engine.call
        super().__init__(target, runner, chain, engine, "model")


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _tool_name(fn: Callable[..., Any], name: str | None) -> str:
    """The tool's name: `name`, or the function's; one every provider takes (letters,
    digits, `_` and `-`, at most 64), or a `TypeError`/`ValueError` saying what to pass."""
    if name is not None and not isinstance(name, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"hw.tool(name=...) expects a str or None (got {type(name).__name__}: {name!r:.60})"
        )
    chosen = name if name is not None else getattr(fn, "__name__", None)
    if not isinstance(chosen, str):
        raise TypeError(f"{describe(fn)} has no __name__: give the tool one with hw.tool(name=...)")
    if not _TOOL_NAME.fullmatch(chosen):
        given = "hw.tool(name=...)" if name is not None else f"the name of {describe(fn)}"
        raise ValueError(
            f"{given} is {chosen!r}: a tool name is 1 to 64 letters, digits, '_' or '-', "
            "as every provider requires"
            + ("" if name is not None else "; give the tool one with hw.tool(name=...)")
        )
    return chosen


class Tool(_Proxy, Generic[P, R]):
    """A tool: the function, still callable as before, with hooks and a `spec`."""

    # made by `hw.Agent` of what it was given (a layer without hooks, which `hw.explain`
    # of the agent leaves out)
    _self_by_agent = False

    def __init__(
        self,
        fn: Callable[P, R],
        hooks: list[Hook],
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        tool_name = _tool_name(fn, name)
        if description is not None and not isinstance(description, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"hw.tool(description=...) expects a str or None (got "
                f"{type(description).__name__}: {description!r:.60})"
            )
        binding = ToolBinding(fn, tool_name, description)
        chain = Chain(hooks)
        is_async = inspect.iscoroutinefunction(fn)
        engine = ToolEngine(binding, chain, is_async, tool_name)
        runner: Callable[..., Any] = _direct
        if chain.hooks or binding.takes_ctx:  # `ctx` needs the run a hooked call opens
            runner = engine.acall if is_async else engine.call
        super().__init__(fn, runner, chain, engine, "tool")
        self._self_on_instance: ToolEngine | None = None  # see `_instance_engine`

    if TYPE_CHECKING:

        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    # a tool made of a method: the tool itself on the class; on an instance, a callable
    # taking the parameters after `self`, with the tool's `spec` and `name`
    @overload
    def __get__(self, instance: None, owner: Any = None) -> Tool[P, R]: ...
    @overload
    def __get__(
        self: Tool[Concatenate[S, P2], R], instance: S, owner: Any = None
    ) -> _BoundTool[P2, R]: ...
    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return super().__get__(instance, owner)

    def _bound(self, method: Any) -> Any:
        bound: _BoundTool[..., Any] = _BoundTool(method, self)
        return bound

    @property
    def spec(self) -> ToolSpec:
        """What the model is told about this tool."""
        return self._self_engine.binding.spec  # type: ignore[no-any-return]

    @property
    def name(self) -> str:
        """The tool's name, as the model sees it."""
        return self.spec.name

    def invoke(self, call: ToolCall) -> Any:
        """Run a call the model made (JSON arguments are structured into the parameter types).
        Of an `async def` tool, it gives the whole call to await, as calling the tool does."""
        self._check_call(call, "invoke")
        self._check_bound("invoke")
        return _invoke(self._self_engine, call)

    async def ainvoke(self, call: ToolCall) -> Any:
        """`invoke` for async callers; a sync tool runs inline."""
        self._check_call(call, "ainvoke")
        self._check_bound("ainvoke")
        return await _ainvoke(self._self_engine, call)

    def _instance_engine(self, bound: _BoundTool[..., Any]) -> ToolEngine:
        """What `invoke` of this tool read from an instance runs (`bound` is one such read):
        a layer without hooks that structures a model's JSON for the parameters after the
        instance and passes them to the method on it (in `call.raw`), which runs this tool's
        hooks. Read from `bound` once, it serves every instance and keeps none alive."""
        engine: ToolEngine | None = self._self_on_instance
        if engine is None:
            binding = ToolBinding(bound, self.name, self.spec.description)
            binding.fn = self  # (not `bound`, which holds its instance)
            is_async: bool = self._self_engine.is_async
            engine = ToolEngine(binding, Chain([]), is_async, self.name)
            self._self_on_instance = engine
        return engine

    def _check_bound(self, method: str) -> None:
        """Refuse a model's call of a method tool read from its class, before its hooks run:
        there is no instance to run it on (nor, for a classmethod's tool on Python 3.13 and
        later, whose `@classmethod` no longer hands the class on, the class)."""
        binding: ToolBinding = self._self_engine.binding
        if not binding.method:
            return
        where = ".".join(getattr(self, "__qualname__", self.name).split(".")[-2:])  # `Bot.look`
        if binding.names[0] == "cls":
            raise TypeError(
                f"{where}.{method}(call) has no class for the first parameter, cls, of a "
                f"function defined in a class body, taken for a classmethod's (Python 3.13 "
                f"and later no longer pass it through @classmethod): call "
                f"hw.tool({where}).{method}(call); if cls is an argument, rename it, or put "
                f"@hw.tool above @staticmethod"
            )
        owner, _, attribute = where.rpartition(".")
        example = f" ({owner}().{attribute}.{method}(call))" if owner else ""
        raise TypeError(
            f"{where}.{method}(call) has no instance for the first parameter, self, of a "
            f"method tool: read the tool from one{example}"
        )

    def _check_call(self, call: object, method: str) -> None:
        """Refuse anything but a `ToolCall`, before the engine reads its `id`."""
        if isinstance(call, ToolCall):
            return
        got = f"{type(call).__name__}: {call!r:.60}"
        arguments = f"{call!r:.60}" if isinstance(call, dict) else "{...}"
        raise TypeError(
            f"Tool.{method} expects an hw.ToolCall, made as hw.ToolCall(id, name, arguments) "
            f"(got {got}); call {self.name}.{method}(hw.ToolCall('call_1', {self.name!r}, "
            f"{arguments}))"
        )


def _invoke(engine: ToolEngine, call: ToolCall) -> Any:
    """`engine`'s run of a model's call: for an async tool, an awaitable of the whole call
    (its hooks run when it is awaited, in the caller's event loop)."""
    return engine.arun(call) if engine.is_async else engine.run(call)


async def _ainvoke(engine: ToolEngine, call: ToolCall) -> Any:
    """`_invoke` for async callers; a sync tool runs inline."""
    return await engine.arun(call) if engine.is_async else engine.run(call)


def fresh_hooks(target: Any, hooks: Sequence[Hook]) -> list[Hook]:
    """`hooks` but those `target` has already, when it is wrapped: wrapping again with the
    same hook (the same stack twice, say) does not run it twice. (One that `hw.patch` put
    on the SDK of a client runs once while patched: see `_patch.lend`.)"""
    # a layer that lends hooks to a patch (`_patch.Lent`) has them all the same
    found = [hook for chain in layers(target) for hook in getattr(chain, "full", chain).hooks]
    # a `Debug` given to both layers watches this one's hooks too, though it runs inside
    return watched([hook for hook in hooks if hook not in found], hooks)


def _patched_hooks(target: Any) -> tuple[Hook, ...]:
    """The hooks `hw.patch` put on the SDK of `target` (a method of an SDK object neither
    a client nor a resource, which runs them when called): left out of its `Wrapped`."""
    patch = sys.modules.get("hookwrap._patch")  # not imported: nothing patched
    found: tuple[str, Chain] | None = None if patch is None else patch.patch_of(target)
    return () if found is None else found[1].hooks


def _check_target(fn: Any, what: str) -> None:
    _refuse_sdk_class(fn, what)
    if not callable(fn):
        raise TypeError(f"{what} expects a callable (got {type(fn).__name__}: {fn!r})")


_DECORATOR: Any = object()  # no function given: `@hw.model(use=...)`, `@hw.tool(...)`


# `F` -> `F` rather than `Callable[P, R]`: an overloaded SDK method keeps every overload
@overload
def model(fn: F, /, *, use: Use = ()) -> F: ...
@overload
def model(*, use: Use = ()) -> Callable[[F], F]: ...
def model(fn: Any = _DECORATOR, /, *, use: Use = ()) -> Any:
    """Wrap a model callable (a function, an SDK method) with the hooks in `use`.

    `hw.model(fn, use=[...])` or, as a decorator, `@hw.model(use=[...])`.
    """
    refuse_tools_only(use, "hw.model")
    hooks = flatten(use)

    def apply(target: Any) -> Any:
        _check_target(target, "hw.model")
        fresh = fresh_hooks(target, hooks)
        member = _sdk_member(target, Chain(fresh))
        if member is not None:
            return member
        if type(target) is functools.partial and not target.args:
            # an SDK method with keywords bound (`model=...`): the method hooked, bound alike
            member = _sdk_member(target.func, Chain(fresh_hooks(target.func, hooks)))
            if member is not None:
                return functools.partial(member, **target.keywords)
        patched = _patched_hooks(target)
        return Wrapped(target, [hook for hook in fresh if hook not in patched])

    return apply if fn is _DECORATOR else apply(fn)


@overload
def tool(
    fn: Callable[P, R], /, *, use: Use = (), name: str | None = None, description: str | None = None
) -> Tool[P, R]: ...
@overload
def tool(
    *, use: Use = (), name: str | None = None, description: str | None = None
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(
    fn: Any = _DECORATOR,
    /,
    *,
    use: Use = (),
    name: str | None = None,
    description: str | None = None,
) -> Any:
    """Make a `Tool` from a function: `@hw.tool`, `@hw.tool(use=[guard])`, `hw.tool(fn)`.

    Its `spec` carries a JSON schema built from the type hints and the docstring.
    """
    refuse_tools_only(use, "hw.tool")
    hooks = flatten(use)

    def apply(target: Callable[P, R]) -> Tool[P, R]:
        _check_target(target, "hw.tool")
        if isinstance(target, (Tool, _BoundTool)):
            inner = cast("Tool[P, R] | _BoundTool[P, R]", target)
            fresh = fresh_hooks(inner, hooks)
            given = inner.spec.description if description is None else description
            return Tool(inner, fresh, inner.name if name is None else name, given)
        return Tool(target, hooks, name, description)

    return apply if fn is _DECORATOR else apply(fn)


T = TypeVar("T")

# SDK module -> hookwrap adapter that wraps its clients (imported only if the SDK is)
_CLIENT_ADAPTERS = (("openai", "openai"), ("anthropic", "anthropic"), ("google.genai", "google"))


def _client_classes() -> tuple[type, ...]:
    """The base classes of the clients of the SDKs imported so far (Azure, Bedrock and
    Vertex clients among them)."""
    names = {
        "openai._base_client": ("BaseClient",),
        "anthropic._base_client": ("BaseClient",),
        "google.genai.client": ("Client", "AsyncClient"),
    }
    found = (getattr(sys.modules.get(m), n, None) for m, all_ in names.items() for n in all_)
    return tuple(cls for cls in found if isinstance(cls, type))


def _refuse_sdk_class(target: Any, what: str) -> None:
    """A class of an SDK (`OpenAI` for `OpenAI()`) is callable, but calling it makes a
    client, not a model call: say so rather than list its constructor's parameters."""
    if not isinstance(target, type):
        return
    module = target.__module__
    own = any(module == sdk or module.startswith(f"{sdk}.") for sdk, _ in _CLIENT_ADAPTERS)
    if own or issubclass(target, _client_classes()):  # a user's subclass of a client too
        name = target.__qualname__
        raise TypeError(f"{what}: got the class {name}; pass a client ({name}(...))")


def _client_adapter(target: Any, test: str = "is_client") -> Any:
    for sdk, name in _CLIENT_ADAPTERS:
        if sdk in sys.modules:
            adapter = importlib.import_module(f"hookwrap.adapters.{name}")
            if getattr(adapter, test)(target):
                return adapter
    return None


class _SdkMember(ObjectProxy):
    """One resource or method of an SDK client, wrapped on its own: the original object as
    far as anyone can tell, whose calls go to its twin on a hooked copy of the client."""

    def __init__(self, original: Any, hooked: Any, chain: Chain) -> None:
        super().__init__(original)
        self._self_hooked = hooked
        self._self_given = chain

    @property
    def _self_chain(self) -> Chain:
        """For `hw.explain`: the hooks its layer, the outermost of the twin's, runs now
        (some may be lent to a patch of the SDK: see `_patch.lend`)."""
        given: Chain = self._self_given
        return layers(self._self_hooked)[0] if given.hooks else given

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._self_hooked(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_self_"):
            raise AttributeError(name)
        return getattr(self._self_hooked, name)

    def __repr__(self) -> str:
        return f"<hookwrap model {self.__wrapped__!r}>"


def _sdk_member(target: Any, chain: Chain) -> Any:
    """`target` hooked if it is an SDK resource or one of its methods, else None; one
    wrapped already gets the new hooks outside its own."""
    original = target
    if isinstance(target, _SdkMember):
        target = target._self_hooked  # pyright: ignore[reportPrivateUsage]
    method = target
    if not inspect.ismethod(target) and inspect.ismethod(getattr(target, "__wrapped__", None)):
        method = target.__wrapped__  # `resource.with_raw_response.create`, say
    resource = getattr(method, "__self__", None) if inspect.ismethod(method) else target
    if resource is None or isinstance(resource, type):
        return None
    adapter = _client_adapter(resource, "is_resource")
    if adapter is None:
        return None
    hooked = adapter.hook_resource(resource, chain)
    if method is not target:  # the same response wrapper, of the hooked resource
        name = method.__name__
        kind = next(
            (
                k
                for k in _RESPONSE_WRAPPERS
                if getattr(getattr(resource, k, None), name, None) is target
            ),
            None,
        )
        if kind is None:
            return None
        hooked = getattr(getattr(hooked, kind), name)
    elif resource is not target:
        hooked = getattr(hooked, target.__name__)
    return _SdkMember(original, hooked, chain)


# a resource's views that hand out raw or streaming HTTP responses of its methods
_RESPONSE_WRAPPERS = ("with_raw_response", "with_streaming_response")


def wrap(target: T, /, *, use: Use = ()) -> T:
    """Wrap any supported target: an SDK client (OpenAI, Anthropic, Google GenAI), one of its
    resources or methods (`client.chat.completions.create`), a tool, or a model function.

    A client comes back as a proxy of a hooked copy: the original is left untouched,
    `isinstance` holds and every call, streamed or not, goes through the hooks. Wrapping
    an already wrapped target adds the new hooks outside the old ones.
    """
    if isinstance(target, (Tool, _BoundTool)):  # a tool method read from an instance too
        return cast("T", tool(cast("Tool[..., Any]", target), use=use))
    _refuse_sdk_class(target, "hw.wrap")
    refuse_tools_only(use, "hw.wrap")
    adapter = _client_adapter(target)
    if adapter is not None:
        return cast("T", adapter.wrap(target, Chain(fresh_hooks(target, flatten(use)))))
    member = _sdk_member(target, Chain(fresh_hooks(target, flatten(use))))
    if member is not None:
        return cast("T", member)
    if not callable(target):
        raise TypeError(
            "hw.wrap expects an SDK client (OpenAI, Anthropic, Google GenAI), a tool or a "
            f"model callable (got {type(target).__name__}: {target!r})"
        )
    return cast("T", model(target, use=use))
