"""The least a hooked call can cost in CPython: a hand-written minimum, for scale.

`python -m bench` times these next to hookwrap, so the targets can be read against what
any engine pays before it does anything hookwrap promises. A minimum engine here does only
the work no reading of the contract can skip, and nothing else:

- the run is current while the hooks and the model run (`hw.current()` must find it from
  any hook, and from the model for nested calls): one context variable set and reset, and
  one small run record;
- hooks get views, not the caller's arguments: one request object and one response
  object (three slots each, built eagerly, nothing read from the call);
- `before` hooks and `after` hooks are called in a loop, each result checked for `None`;
  a `call_next` wrap hook is called through one layer that checks its answer's type;
- per chunk: one chunk view (three slots), the hooks in a loop, the text handed on.

It has no error notes, no `Respond`, no fail-open, no write-back, no usage, no terminal
hooks: hookwrap's own figures can only be higher. It is no engine to use.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_current: contextvars.ContextVar[Any] = contextvars.ContextVar("floor", default=None)


class _Run:
    __slots__ = ("call_state", "parent", "phase")

    def __init__(self, parent: Any, phase: str) -> None:
        self.parent = parent
        self.phase = phase
        self.call_state = None


class _View:
    __slots__ = ("a", "b", "c")

    def __init__(self, a: Any, b: Any, c: Any) -> None:
        self.a = a
        self.b = b
        self.c = c


def model(
    target: Callable[[str], str],
    before: Sequence[Callable[[Any], Any]],
    wraps: Sequence[Callable[[Any, Any], Any]],
    after: Sequence[Callable[[Any, Any], Any]],
) -> Callable[[str], str]:
    """`target` with the hooks around it, in the fewest steps (see the module's text)."""
    befores, afters = tuple(before), tuple(reversed(after))

    def inner(request: _View) -> _View:
        answer = target(request.a)
        return _View(answer, None, None)

    onion: Callable[[Any], Any] = inner
    for hook in reversed(wraps):

        def layer(request: Any, hook: Any = hook, next_: Any = onion) -> Any:
            response = hook(request, next_)
            if response.__class__ is not _View:
                raise TypeError("a wrap hook answered no response")
            return response

        onion = layer

    def call(prompt: str) -> str:
        token = _current.set(_Run(_current.get(), "before_model"))
        try:
            request = _View(prompt, None, None)
            for hook in befores:
                if hook(request) is not None:
                    raise TypeError("a before hook returned a value")
            response = onion(request)
            for hook in afters:
                if hook(request, response) is not None:
                    raise TypeError("an after hook returned a value")
            return response.a  # type: ignore[no-any-return]
        finally:
            _current.reset(token)

    return call


def stream(
    target: Callable[[str], Iterator[str]], hooks: Sequence[Callable[[Any], Any]]
) -> Callable[[str], Iterator[str]]:
    """A streaming `target` whose chunks pass `hooks` (see the module's text)."""
    on_chunk = tuple(hooks)

    def call(prompt: str) -> Iterator[str]:
        for text in target(prompt):
            chunk = _View(text, None, None)
            for hook in on_chunk:
                if hook(chunk) is not None:
                    raise TypeError("an on_chunk hook returned a value")
            yield chunk.a

    return call


def noop_before(request: Any) -> None:
    return None


def noop_wrap(request: Any, call_next: Callable[[Any], Any]) -> Any:
    return call_next(request)


def noop_after(request: Any, response: Any) -> None:
    return None


def noop_chunk(chunk: Any) -> None:
    return None


def hooks(before: int, after: int, wraps: int) -> dict[str, list[Any]]:
    """Distinct no-op functions (a loop calling one function again and again is faster
    than one calling different ones, which is what a stack of hooks is)."""

    def copies(fn: Callable[..., Any], n: int) -> list[Any]:
        return [type(fn)(fn.__code__, fn.__globals__, f"{fn.__name__}_{i}") for i in range(n)]

    return {
        "before": copies(noop_before, before),
        "wraps": copies(noop_wrap, wraps),
        "after": copies(noop_after, after),
    }


def chunk_hooks(n: int) -> list[Any]:
    return [type(noop_chunk)(noop_chunk.__code__, noop_chunk.__globals__) for _ in range(n)]
