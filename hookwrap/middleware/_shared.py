"""What several built-in middleware share: which errors they act on, streams read up to
their first chunk, so that a failure before it can still be handled, and the check of the
tool names they are given."""

from __future__ import annotations

import difflib
import enum
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from typing import Any, cast

from .._agent import _as_tool  # pyright: ignore[reportPrivateUsage]
from .._types import AgentSetup
from .._wrap import Tool, _BoundTool  # pyright: ignore[reportPrivateUsage]

__all__ = [
    "AFTER_OTHERS",
    "agent_tool",
    "aprimed",
    "check_tool_names",
    "error_matcher",
    "given_name",
    "is_async_callable",
    "primed",
    "tool_name",
]

#: The priority of the `before_agent` hooks that check tool names: after every other
#: `before_agent` hook, since those may still add or remove tools.
AFTER_OTHERS = -(1 << 62)


def check_tool_names(argument: str, names: Collection[str], setup: AgentSetup) -> None:
    """Refuse `names` (given as `argument`, e.g. ``"CallLimit(per_tool=...)"``) that are
    none of the agent's tools: what the middleware does for them would never happen, and
    nothing else would say so. Every tool the agent can run is in `setup.tools`, those a
    middleware provides (`ToolSearch`'s hidden ones too) included."""
    tools = sorted({tool_name(t) for t in setup.tools})
    unknown = sorted(set(names).difference(tools))
    if not unknown:
        return
    guesses: list[str] = []
    for name in unknown:
        close = difflib.get_close_matches(name, tools, n=1)
        guesses.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    owner = argument.partition("(")[0]
    raise ValueError(
        f"{argument} names {'a tool' if len(unknown) == 1 else 'tools'} this agent does not "
        f"have: {', '.join(guesses)}; expected names of its tools: {', '.join(tools) or 'none'}"
        f" (a {owner} serving several agents may only name tools each of them has)"
    )


def agent_tool(item: object, argument: str, expected: str, at: str = "") -> Tool[..., Any]:
    """The tool `hw.Agent(tools=...)` makes of `item`, given in `argument`; else a
    `TypeError` in the words of `expected`, naming the item (`at`: where it is) and why the
    agent makes none. The agent's own refusals (of a hook, a class) name the argument and
    the item already, and pass as they are."""
    try:
        return _as_tool(item, argument)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(argument):
            raise
        raise TypeError(
            f"{expected} (got {type(item).__name__}: {item!r:.80}{at}, which "
            f"hw.Agent(tools=...) cannot make a tool: {exc})"
        ) from None


def given_name(item: object) -> object:
    """An item given as a tool name: an `Enum` member stands for its value (names kept in
    an Enum class)."""
    return item.value if isinstance(item, enum.Enum) else item


def tool_name(item: object) -> str:
    """The name the agent gives `item` of `setup.tools`, without making it a tool: a tool's
    own (one read from an instance, `Bot().look`, too), else its function's `__name__`."""
    if isinstance(item, (Tool, _BoundTool)):
        return item.name
    return str(getattr(item, "__name__", ""))


def is_async_callable(value: object) -> bool:
    """Whether calling `value` gives a coroutine or an async generator rather than a result:
    an `async def` function or method, an object whose class's `__call__` is one, or a
    `functools.partial` of any of these. A middleware that calls what it is given without
    awaiting it refuses these when it is made: their coroutine, taken for the result,
    would be truthy (a predicate true for everything) or of the wrong type."""
    while isinstance(value, functools.partial):
        value = value.func
    if _async_function(value):
        return True
    if inspect.isroutine(value) or isinstance(value, type):  # calling a class makes an object
        return False
    return _async_function(getattr(type(value), "__call__", None))  # noqa: B004 - its class's


def _async_function(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def error_matcher(
    argument: str, value: object, default: Callable[[BaseException], bool]
) -> Callable[[BaseException], bool]:
    """`value` (an exception type, a tuple or list of them, a plain predicate, or None for
    `default`) as a predicate; anything else is a TypeError naming `argument`."""
    if value is None:
        return default
    kinds: tuple[object, ...] = ()
    if isinstance(value, type):
        kinds = (value,)
    elif isinstance(value, (tuple, list)):
        kinds = tuple(cast("Sequence[object]", value))
    elif is_async_callable(value):  # its coroutine would be truthy: every error
        raise TypeError(
            f"{argument} must be a plain function returning a bool, not an async one (an "
            f"async def, or an object whose __call__ is one): it is called without being "
            f"awaited (got {value!r:.80})"
        )
    elif callable(value):
        return cast("Callable[[BaseException], bool]", value)
    if not kinds or not all(isinstance(k, type) and issubclass(k, BaseException) for k in kinds):
        raise TypeError(
            f"{argument} must be an exception type, a tuple of them, or a predicate taking "
            f"the exception (got {value!r})"
        )
    types = cast("tuple[type[BaseException], ...]", kinds)
    return lambda exc: isinstance(exc, types)


_EMPTY: Any = object()


def primed(stream: Iterator[Any]) -> Iterator[Any]:
    """`stream` with its first chunk read now, so that a failure before any chunk reached
    the caller is raised here, where it can be retried."""
    try:
        first = next(stream)
    except StopIteration:
        first = _EMPTY
    except BaseException:
        _close(stream)
        raise
    return _rest(first, stream)


def _rest(first: Any, stream: Iterator[Any]) -> Iterator[Any]:
    try:
        if first is not _EMPTY:
            yield first
            yield from stream
    finally:
        _close(stream)


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        close()


async def aprimed(stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        first = await stream.__anext__()
    except StopAsyncIteration:
        first = _EMPTY
    except BaseException:
        await _aclose(stream)
        raise
    return _arest(first, stream)


async def _arest(first: Any, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        if first is not _EMPTY:
            yield first
            async for chunk in stream:
                yield chunk
    finally:
        await _aclose(stream)


async def _aclose(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
