"""Exceptions hookwrap raises on purpose.

    BaseException
     └── Exception
          ├── Aborted      a hook ended the run (`Abort(reason)`, `ctx.abort(reason)`)
          └── Interrupt    a tool or hook paused the run for a decision (`hw.interrupt`)

Everything else a hook or the target raises propagates as the same object, with a
PEP 678 note naming the hook that raised it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

__all__ = ["Aborted", "Interrupt", "Stopped", "add_note", "check_int", "stopless"]


class Aborted(Exception):
    """The run was aborted by a hook; `reason` says why."""

    def __init__(self, reason: str = "aborted") -> None:
        super().__init__(reason)
        self.reason = reason


class Interrupt(Exception):
    """Raised (or sent by `hw.interrupt`) to pause a run until a decision comes."""

    def __init__(self, payload: Any = None) -> None:
        super().__init__(payload)
        self.payload = payload


def add_note(exc: BaseException, note: str) -> None:
    """`exc.add_note(note)`, also on Python 3.10."""
    notes = getattr(exc, "__notes__", None)
    if notes is None:
        try:
            setattr(exc, "__notes__", [note])  # noqa: B010 - not declared before 3.11
        except (AttributeError, TypeError):  # exceptions without a __dict__
            pass
    elif note not in notes:
        notes.append(note)


def check_int(argument: str, value: object, minimum: int) -> int:
    """`value` if it is an int of at least `minimum` (a bool is not one); else a TypeError
    (another type) or a ValueError (a smaller int) naming `argument`, which reads like
    ``"Retry(max_retries=...)"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value >= minimum:
            return value
        raise ValueError(f"{argument} expects an int >= {minimum} (got {value!r})")
    raise TypeError(
        f"{argument} expects an int >= {minimum} (got {type(value).__name__}: {value!r})"
    )


class Stopped(RuntimeError):
    """A `StopIteration` raised in a worker thread, carried out of it as `error` (a
    `RuntimeError`, as PEP 479 makes it of one out of a generator): asyncio cannot set a
    `StopIteration` on the future a task awaits, which would then never complete."""

    def __init__(self, error: StopIteration) -> None:
        super().__init__(f"{error!r} raised in a worker thread")
        self.error = error


def stopless(fn: Callable[..., _T], /, *args: Any) -> _T:
    """`fn(*args)`, for `asyncio.to_thread`: a `StopIteration` comes out as `Stopped`."""
    try:
        return fn(*args)
    except StopIteration as exc:
        raise Stopped(exc) from exc
