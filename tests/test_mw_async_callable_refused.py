"""What Retry, Fallback and ContentGuard call without awaiting (`retry_on`, `on`, a rule, a
replacement, `on_filtered`) is refused when made if it is async in any form: an object
whose `__call__` is an `async def`, a bound async method, a `functools.partial` of either,
not only an `async def` function. Its coroutine, taken for the result, would be truthy."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from hookwrap.middleware import ContentGuard, Fallback, Retry


class AsyncCall:
    async def __call__(self, value: Any) -> Any:
        return value


class AsyncGenCall:
    async def __call__(self, value: Any) -> AsyncIterator[Any]:
        yield value


class Owner:
    async def method(self, value: Any) -> Any:
        return value

    def plain(self, value: Any) -> bool:
        return True


ASYNC_CALLABLES = {
    "object with async __call__": AsyncCall(),
    "object with async generator __call__": AsyncGenCall(),
    "partial of such an object": functools.partial(AsyncCall()),
    "partial of a partial": functools.partial(functools.partial(AsyncCall())),
    "bound async method": Owner().method,
    "partial of a bound async method": functools.partial(Owner().method),
}

MAKERS: dict[str, tuple[Callable[[Any], object], str]] = {
    "Retry(retry_on)": (lambda fn: Retry(retry_on=fn), r"Retry\(retry_on=\.\.\.\).*async"),
    "Fallback(on)": (lambda fn: Fallback(models=["m"], on=fn), r"Fallback\(on=\.\.\.\).*async"),
    "ContentGuard rule": (lambda fn: ContentGuard(rules=[fn]), r"rules.*plain str -> str"),
    "ContentGuard replacement": (
        lambda fn: ContentGuard(rules=[("x", fn)]),
        r"replacement must be a str or a plain function",
    ),
    "ContentGuard(on_filtered)": (
        lambda fn: ContentGuard(rules=[("x", "y")], on_filtered=fn),
        r"on_filtered=\.\.\.\) expects a plain function",
    ),
}


@pytest.mark.parametrize("given", ASYNC_CALLABLES.values(), ids=ASYNC_CALLABLES.keys())
@pytest.mark.parametrize("maker", MAKERS.values(), ids=MAKERS.keys())
def test_an_async_callable_is_refused_when_made(
    maker: tuple[Callable[[Any], object], str], given: Any
) -> None:
    make, message = maker
    with pytest.raises(TypeError, match=message):
        make(given)


def test_plain_callables_of_the_same_shapes_are_taken() -> None:
    class Call:
        def __call__(self, value: Any) -> Any:
            return value

    shapes: list[Any] = [
        Call(),
        functools.partial(Call()),
        Owner().plain,
        functools.partial(Owner().plain),
    ]
    for fn in shapes:
        Retry(retry_on=fn)
        Fallback(models=["m"], on=fn)
        ContentGuard(rules=[fn], on_filtered=fn)
    guard = ContentGuard(rules=[(re.compile("x"), Call())])
    assert len(guard.rules) == 1
