"""What several built-in middleware share: which errors they act on, and streams read up
to their first chunk, so that a failure before it can still be handled."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

__all__ = ["aprimed", "error_matcher", "primed"]


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
    elif inspect.iscoroutinefunction(value):  # its coroutine would be truthy: every error
        raise TypeError(
            f"{argument} must be a plain function returning a bool, not an async one: it "
            f"is called without being awaited (got {value!r:.80})"
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
