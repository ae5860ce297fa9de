"""`Retry`: calls again after a transient failure, waiting longer each time."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from .._errors import Aborted, Interrupt, add_note, check_int
from .._hooks import Middleware, async_twin, wrap_model, wrap_tool
from .._types import ModelRequest, ToolCall
from ..stores._base import shown, shown_number
from ._shared import aprimed, error_matcher, primed
from ._timeout import gave_up, given_up

__all__ = ["Retry", "is_transient"]

log = logging.getLogger("hookwrap")

RetryOn = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]

# Names of the SDKs' connection and timeout errors (openai, anthropic), matched by name so
# that no SDK is imported; httpx's own transport errors reach callers of plain functions.
_TRANSIENT_NAMES = frozenset(
    {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException"}
)
_SDK_MODULES = ("openai", "anthropic", "google.genai", "httpx", "httpx2")
# The error types and codes an API names in an error it sends inside a stream it answered
# with 200 (so no status tells): Anthropic's `overloaded_error` (a `type`), OpenAI's
# `server_error` (a `type`) and `rate_limit_exceeded` (a `code`; its `type` is then
# "tokens" or "requests"), ...
_TRANSIENT_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "server_error", "rate_limit_exceeded"}
)


def _status(exc: BaseException) -> int | None:
    """The HTTP status an error reports: `status_code` (openai, anthropic, and anyone's
    own), or `code` on google-genai's `APIError`."""
    status = getattr(exc, "status_code", None)
    if status is None and type(exc).__module__.startswith("google.genai"):
        status = getattr(exc, "code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _error_names(exc: BaseException) -> set[str]:
    """The error type and code an SDK error's body names (`{"error": {"type": ..., "code":
    ...}}`), those that are strings: OpenAI names a rate limit by its `code`."""
    body: Any = getattr(exc, "body", None)
    inner: Any = (
        cast("Mapping[str, Any]", body).get("error", body) if isinstance(body, Mapping) else None
    )
    if not isinstance(inner, Mapping):
        return set()
    fields = cast("Mapping[str, Any]", inner)
    return {name for name in (fields.get("type"), fields.get("code")) if isinstance(name, str)}


def is_transient(exc: BaseException) -> bool:
    """`Retry`'s default `retry_on`: connection errors and timeouts (Python's, httpx's and the
    SDKs'), HTTP 408, 429 and 5xx answers of the SDKs (or any error with such a
    `status_code`), and the error an API sends inside a stream it answered with 200 when
    it names a transient type or code (overloaded, rate limited, a server error)."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    status = _status(exc)
    if (
        status in (None, 200)
        and type(exc).__module__.startswith(_SDK_MODULES)
        and not _error_names(exc).isdisjoint(_TRANSIENT_TYPES)
    ):
        return True
    if status is not None:
        return status in (408, 429) or 500 <= status < 600
    return any(
        klass.__name__ in _TRANSIENT_NAMES and klass.__module__.startswith(_SDK_MODULES)
        for klass in type(exc).__mro__
    )


def _seconds(text: Any, unit: float) -> float | None:
    """`text`, a number of `unit`s, in seconds; None if it is no number, or a negative or
    non-finite one (no wait a server can mean: the backoff decides, as in the SDKs)."""
    try:
        seconds = float(text) / unit
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds < math.inf else None


def retry_after(exc: BaseException) -> float | None:
    """The wait, in seconds, an error's HTTP response asks for (`retry-after-ms`, else
    `Retry-After` in seconds or as an HTTP date), or None."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not isinstance(headers, Mapping):
        return None
    found: Mapping[str, Any] = headers  # pyright: ignore[reportUnknownVariableType]
    value = found.get("retry-after")
    seconds = _seconds(found.get("retry-after-ms"), 1000)
    if seconds is None:
        seconds = _seconds(value, 1)
    if seconds is not None or value is None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())  # a date in the past asks for no wait


def _slept(seconds: float) -> bool:
    """Wait `seconds` before the next attempt of a sync call; False, at once, when the
    `Timeout` around the call gives up on it (its caller has gone: no attempt follows)."""
    gone = given_up()
    if gone is None:
        time.sleep(seconds)
        return True
    return not gone.wait(seconds)


def _number(name: str, value: object, expected: str, minimum: float) -> float:
    """`value` if it is a finite int or float of at least `minimum`; else a TypeError
    (another type, a bool) or a ValueError (a value out of range) naming `Retry(name=...)`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"Retry({name}=...) expects {expected} (got {type(value).__name__}: {shown(value)})"
        )
    try:
        number = float(value)
    except OverflowError:  # an int past the largest float
        number = math.inf
    if not math.isfinite(number) or number < minimum:
        raise ValueError(f"Retry({name}=...) expects {expected} (got {shown_number(value)})")
    return number


class Retry(Middleware):
    """Call the model (and, with `tools=True`, each tool) again after a transient failure.

    The wait before retry `n` (from 0) is up to ``min(max_delay, initial_delay * backoff**n)``,
    drawn uniformly from zero to that cap when `jitter` is on ("full jitter"). A wait the
    error's HTTP response asks for (``Retry-After``, ``retry-after-ms``) is used instead
    when it is no longer than `max_delay` (a negative one is ignored). A stream is retried
    only while no chunk has reached the caller: Retry reads the first chunk itself before
    handing the stream on. When every attempt failed, the last error propagates, with a
    note saying so.
    """

    name = "Retry"

    def __init__(
        self,
        *,
        max_retries: int = 3,
        initial_delay: float = 1.0,
        max_delay: float = 60.0,
        backoff: float = 2.0,
        jitter: bool = True,
        retry_on: RetryOn | None = None,
        tools: bool = False,
    ) -> None:
        check_int("Retry(max_retries=...)", max_retries, 0)
        for flag, value in (("jitter", jitter), ("tools", tools)):
            if not isinstance(value, bool):
                raise TypeError(f"Retry({flag}=...) must be True or False (got {value!r})")
        self.max_retries = max_retries
        seconds = "a finite number of seconds >= 0"
        self.initial_delay = _number("initial_delay", initial_delay, seconds, 0)
        self.max_delay = _number("max_delay", max_delay, seconds, 0)
        self.backoff = _number("backoff", backoff, "a finite number >= 1", 1)
        self.jitter = jitter
        self.retry_on = error_matcher("Retry(retry_on=...)", retry_on, is_transient)
        self.retry_tools = tools  # `tools` is what a Middleware provides to an agent

    def __repr__(self) -> str:
        return (
            f"Retry(max_retries={self.max_retries}, initial_delay={self.initial_delay}, "
            f"max_delay={self.max_delay}, backoff={self.backoff}, jitter={self.jitter}, "
            f"tools={self.retry_tools})"
        )

    def delay(self, retry: int, error: BaseException) -> float:
        """Seconds to wait before retry number `retry` (0 for the first) after `error`."""
        asked = retry_after(error)
        if asked is not None and asked <= self.max_delay:
            return asked
        cap = self.initial_delay
        if cap:
            try:
                cap *= self.backoff**retry
            except OverflowError:  # a float power past 1e308: long past max_delay
                cap = self.max_delay
        cap = min(self.max_delay, cap)
        return random.uniform(0, cap) if self.jitter else cap

    def _should_retry(self, retry: int, error: BaseException) -> bool:
        if retry >= self.max_retries or isinstance(error, (Aborted, Interrupt)):
            return False
        if not isinstance(error, Exception):  # KeyboardInterrupt, cancellation, exits
            return False
        if gave_up():  # a sync call its Timeout gave up on
            return False
        return bool(self.retry_on(error))

    def _wait(self, retry: int, error: BaseException, what: str) -> float:
        wait = self.delay(retry, error)
        log.warning(
            "Retry: %s failed (%s: %s); retry %d of %d in %.2fs",
            what,
            type(error).__name__,
            error,
            retry + 1,
            self.max_retries,
            wait,
        )
        return wait

    def _gave_up(self, error: BaseException, retries: int) -> None:
        if retries:
            add_note(error, f"Retry gave up after {retries} retr{'y' if retries == 1 else 'ies'}")

    # -- model calls --------------------------------------------------------------------------

    async def _amodel(self, request: ModelRequest, call_next: Any) -> Any:
        retry = 0
        while True:
            try:
                response = await call_next(request)
                if hasattr(response, "__anext__"):
                    return await aprimed(response)
                return response
            except BaseException as error:
                if not self._should_retry(retry, error):
                    self._gave_up(error, retry)
                    raise
                await asyncio.sleep(self._wait(retry, error, "model call"))
            retry += 1

    @wrap_model
    @async_twin(_amodel)
    def model(self, request: ModelRequest, call_next: Any) -> Any:
        retry = 0
        while True:
            try:
                response = call_next(request)
                if hasattr(response, "__next__"):
                    return primed(response)
                return response
            except BaseException as error:
                if not (
                    self._should_retry(retry, error)
                    and _slept(self._wait(retry, error, "model call"))
                ):
                    self._gave_up(error, retry)
                    raise
            retry += 1

    # -- tool calls ---------------------------------------------------------------------------

    async def _atool(self, call: ToolCall, call_next: Any) -> Any:
        retry = 0
        while True:
            try:
                return await call_next(call)
            except BaseException as error:
                if not self.retry_tools or not self._should_retry(retry, error):
                    self._gave_up(error, retry)
                    raise
                await asyncio.sleep(self._wait(retry, error, f"tool {call.name!r}"))
            retry += 1

    @wrap_tool
    @async_twin(_atool)
    def tool(self, call: ToolCall, call_next: Any) -> Any:
        retry = 0
        while True:
            try:
                return call_next(call)
            except BaseException as error:
                if not (
                    self.retry_tools
                    and self._should_retry(retry, error)
                    and _slept(self._wait(retry, error, f"tool {call.name!r}"))
                ):
                    self._gave_up(error, retry)
                    raise
            retry += 1
