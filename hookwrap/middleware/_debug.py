"""Debug: print one line per stage of every call it sees, without touching the call."""

from __future__ import annotations

import io
import itertools
import reprlib
import sys
import threading
from typing import Any, TextIO

import attrs

from .._adapter import is_stream
from .._hooks import (
    Middleware,
    after_agent,
    after_model,
    after_tool,
    before_agent,
    before_model,
    before_tool,
    on_abort,
    on_chunk,
    on_error,
    on_finish,
    on_iteration,
    on_start,
    on_usage,
)
from .._run import RunContext, current_var
from .._stack import Hook
from .._types import (
    AgentSetup,
    Chunk,
    FinishInfo,
    IterationInfo,
    ModelRequest,
    ModelResponse,
    RunResult,
    ToolCall,
    ToolOutcome,
    Usage,
)

__all__ = ["Debug"]

MAX_LINE = 600


class _Short(reprlib.Repr):
    """`reprlib` with attrs values (the neutral types) shown by their non-empty fields, and
    dicts by their first items in insertion order."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 5
        self.maxstring = 120
        self.maxother = 120
        self.maxtuple = self.maxlist = self.maxset = 8
        self.maxdict = 10

    def repr_float(self, x: float, level: int) -> str:
        return f"{x:.6g}"

    def repr_int(self, x: int, level: int) -> str:
        # an int of more digits than Python writes as text has a repr that raises, which
        # reprlib lets through for an int, where it catches it for other values
        try:
            return super().repr_int(x, level)
        except ValueError:
            return f"<int instance at {id(x):#x}>"

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        # reprlib sorts the keys first: it would show other items than the first ones, and
        # in another order than the dict's.
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
            for key, value in itertools.islice(x.items(), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"

    def repr1(self, x: object, level: int) -> str:
        cls = type(x)
        if not attrs.has(cls):
            return super().repr1(x, level)
        if level <= 0:
            return f"{cls.__name__}(...)"
        shown: list[str] = []
        for field in attrs.fields(cls):
            value = getattr(x, field.name)
            if field.repr and value is not None and not (_sized(value) and not value):
                shown.append(f"{field.name}={self.repr1(value, level - 1)}")
        return f"{cls.__name__}({', '.join(shown)})"


def _sized(value: Any) -> bool:
    return isinstance(value, (str, tuple, list, dict))


_short = _Short().repr

# what each kind of hook is called with, by name; None: not shown (an `after_model` hook's
# request is the one the `before_model` lines ended with)
_ARGUMENTS: dict[str, tuple[str | None, ...]] = {
    "before_agent": ("agent",),
    "before_model": ("request",),
    "wrap_model": ("request",),
    "on_chunk": ("chunk",),
    "on_usage": ("usage",),
    "after_model": (None, "response"),
    "before_tool": ("call",),
    "wrap_tool": ("call",),
    "after_tool": ("call", "outcome"),
    "on_iteration": ("info",),
    "after_agent": ("result",),
}


def _received(kind: str, args: tuple[Any, ...]) -> str:
    names = _ARGUMENTS.get(kind, ("info",) * len(args))
    shown = [
        f"{name}: {_short(arg.replace(run_id='') if isinstance(arg, FinishInfo) else arg)}"
        for name, arg in zip(names, args, strict=False)
        if name is not None
    ]
    return ", ".join(shown) or "nothing"


def _answer(value: Any) -> str:
    """A hook's answer as a line shows it: a stream as such, not as the object reading it."""
    return "a stream" if is_stream(value) else _short(value)


def _binary(out: object) -> bool:
    """Whether `out` is a stream of bytes, whose write() would refuse each line: a binary
    io object, or a file object opened in binary mode (a NamedTemporaryFile, say)."""
    mode = getattr(out, "mode", None)
    return isinstance(out, (io.BufferedIOBase, io.RawIOBase)) or (
        isinstance(mode, str) and "b" in mode
    )


def _check_out(out: object) -> None:
    """Refuse now what `out` would fail on at every line, where it is only logged."""
    if out is None:
        return
    if isinstance(out, type):  # a stream class has write() too, unbound
        raise TypeError(
            f"Debug(out=...) expects a text stream, not the class {out.__name__}; pass an "
            f"instance: {out.__name__}()"
        )
    if not callable(getattr(out, "write", None)):
        raise TypeError(
            "Debug(out=...) expects a text stream with a write() method, or None for "
            f"sys.stderr (got {type(out).__name__}: {out!r})"
        )
    if _binary(out):
        raise TypeError(
            "Debug(out=...) expects a text stream, not a binary one, which refuses str "
            f"(got {type(out).__name__}: {out!r:.80}); open a file in text mode: "
            'open(path, "a")'
        )


class Debug(Middleware):
    """Print what every hook stage received: requests, chunks, usage, responses, tool
    calls and outcomes, and how each run started and ended.

    One line per stage, prefixed with the run's id, long values shortened. Each hook
    returns `None`, so the call is never changed, and every hook is fail-open: a broken
    `out` is logged through the `hookwrap` logger and never breaks the call.

    Args:
        out: a text stream to write to; `None` means `sys.stderr` as it is at each call.
    """

    def __init__(self, *, out: TextIO | None = None) -> None:
        _check_out(out)
        self.out = out
        self._lock = threading.Lock()  # whole lines, even from threads of one run

    def __repr__(self) -> str:
        return f"Debug(out={self.out!r})"

    def __hookwrap_trace__(
        self, hook: Hook, event: str, value: Any, ctx: RunContext[Any] | None
    ) -> None:
        """Print what another hook of the stacks wrapped with this one received, and what
        it returned or raised."""
        # no stage name first: the stage lines stay one per stage, as documented
        head = f"hook {hook.spec.name!r}"
        if event == "received":
            text = f"{head} received {_received(hook.spec.kind, value)}"
        else:
            text = f"{head} {event} {_answer(value) if event == 'returned' else _short(value)}"
        self._print(ctx if ctx is not None else current_var.get(), text)

    def _print(self, ctx: RunContext[Any] | None, text: str) -> None:
        prefix = "[hookwrap]" if ctx is None else f"[hookwrap {ctx.run_id[:8]}]"
        line = f"{prefix} {text}"
        if len(line) > MAX_LINE:
            line = f"{line[: MAX_LINE - 20]}... (+{len(line) - MAX_LINE + 20} chars)"
        out = sys.stderr if self.out is None else self.out
        with self._lock:
            out.write(line + "\n")
            flush = getattr(out, "flush", None)
            if flush is not None:
                flush()

    # -- model calls ------------------------------------------------------------------------

    @before_model(fail_open=True)
    def show_request(self, request: ModelRequest, ctx: RunContext[Any] | None = None) -> None:
        """Print the request as it reaches this hook."""
        self._print(ctx, f"before_model request: {_short(request)}")

    @on_chunk(fail_open=True)
    def show_chunk(self, chunk: Chunk, ctx: RunContext[Any] | None = None) -> None:
        """Print each chunk of a stream, with its index."""
        index = "" if ctx is None else f" #{ctx.chunk_index}"
        self._print(ctx, f"on_chunk{index} chunk: {_short(chunk)}")

    @on_usage(fail_open=True)
    def show_usage(self, usage: Usage, ctx: RunContext[Any] | None = None) -> None:
        """Print the token usage a model call reported."""
        self._print(ctx, f"on_usage usage: {_short(usage)}")

    @after_model(fail_open=True)
    def show_response(
        self,
        request: ModelRequest,
        response: ModelResponse,
        ctx: RunContext[Any] | None = None,
    ) -> None:
        """Print the response (in a stream: assembled from the chunks delivered)."""
        self._print(ctx, f"after_model response: {_short(response)}")

    # -- tool calls -------------------------------------------------------------------------

    @before_tool(fail_open=True)
    def show_call(self, call: ToolCall, ctx: RunContext[Any] | None = None) -> None:
        """Print the tool call: id, name and arguments."""
        self._print(ctx, f"before_tool call: {_short(call)}")

    @after_tool(fail_open=True)
    def show_outcome(
        self, call: ToolCall, outcome: ToolOutcome, ctx: RunContext[Any] | None = None
    ) -> None:
        """Print how the tool call ended: its result, or its error."""
        self._print(ctx, f"after_tool {call.name} outcome: {_short(outcome)}")

    # -- runs and agents --------------------------------------------------------------------

    @on_start(fail_open=True)
    def show_start(self, ctx: RunContext[Any] | None = None) -> None:
        """Print that a run started."""
        self._print(ctx, "on_start run started")

    @on_finish(fail_open=True)
    def show_finish(self, info: FinishInfo, ctx: RunContext[Any] | None = None) -> None:
        """Print that a run finished, with its duration and usage."""
        self._print(ctx, f"on_finish info: {_short(info.replace(run_id=''))}")

    @on_error(fail_open=True)
    def show_error(self, info: FinishInfo, ctx: RunContext[Any] | None = None) -> None:
        """Print the error a run ended with."""
        self._print(ctx, f"on_error info: {_short(info.replace(run_id=''))}")

    @on_abort(fail_open=True)
    def show_abort(self, info: FinishInfo, ctx: RunContext[Any] | None = None) -> None:
        """Print why a run was aborted."""
        self._print(ctx, f"on_abort info: {_short(info.replace(run_id=''))}")

    @before_agent(fail_open=True)
    def show_agent(self, agent: AgentSetup, ctx: RunContext[Any] | None = None) -> None:
        """Print what an agent starts with."""
        self._print(ctx, f"before_agent agent: {_short(agent)}")

    @on_iteration(fail_open=True)
    def show_iteration(self, info: IterationInfo, ctx: RunContext[Any] | None = None) -> None:
        """Print the start of an agent's turn."""
        self._print(ctx, f"on_iteration info: {_short(info)}")

    @after_agent(fail_open=True)
    def show_result(self, result: RunResult, ctx: RunContext[Any] | None = None) -> None:
        """Print what an agent run ended with."""
        self._print(ctx, f"after_agent result: {_short(result)}")
