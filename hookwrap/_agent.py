"""The agent loop: model → tools → model as one run, with streaming events, interrupts and
resume from a checkpoint.

The loop is written once, as a generator of steps (`_program`); a sync and an async
driver carry the steps out and turn them into events.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
from collections.abc import (
    AsyncGenerator,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from typing import Any, Literal, cast

import attrs

from ._caller import ModelCaller
from ._convert import (
    UnparsedArguments,
    arguments_text,
    from_typed_form,
    message_from,
    message_to_dict,
    result_text,
    tool_call_from,
    typed_form,
)
from ._engine import ToolEngine
from ._errors import Aborted, Interrupt, Stopped, add_note, check_int, stopless
from ._hooks import HookSpec, Middleware, describe
from ._run import (
    RunContext,
    RunState,
    asked,
    current_var,
    finish_async,
    finish_sync,
    start_async,
    start_sync,
)
from ._stack import MODEL_KINDS, TOOL_KINDS, Chain, Hook, Stack, flatten
from ._stages import call_all, call_all_async, failed, from_tool, refused
from ._types import (
    AgentSetup,
    Chunk,
    IterationInfo,
    Message,
    ModelRequest,
    ModelResponse,
    RunResult,
    ToolCall,
    Usage,
)
from ._wrap import Tool, Wrapped, fresh_hooks
from ._wrap import tool as make_tool
from .stores import MemoryStore, Store
from .stores._base import check_store, dump

__all__ = ["Agent", "AgentEvent", "interrupt"]

log = logging.getLogger("hookwrap")

_KEY = "hookwrap:agent:"  # store keys of checkpoints: this prefix and the run id
_FORMAT = 1
_AGENT_KINDS = ("before_agent", "on_iteration", "after_agent")
_CLOSED = "closed by consumer"
_DEFAULT_STORE_PATH = "hookwrap-checkpoints.sqlite3"
_fallback_store: Store | None = None


def interrupt(payload: Any = None, *, key: str | None = None) -> Any:
    """Pause the run for a decision; return the decision once the run is resumed with one.

    Called in a tool (or a tool hook) of an `Agent` run: when the run was resumed with a
    decision for the current tool call's id, that decision is returned; otherwise this
    raises `hw.Interrupt(payload)` and the agent saves a checkpoint. `key` names the
    decision instead: resumed with ``decisions={key: ...}``, the call returns it. Outside a
    tool call (a model or iteration hook) there is no call id to key it by; in a tool, a
    key keeps its question apart from the call's approval (`ToolApproval` decides by the
    call id).
    """
    if key is not None and not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"hw.interrupt(key=...) expects a str or None (got {type(key).__name__}: {key!r:.60})"
        )
    ctx = current_var.get()
    if ctx is not None:
        decisions = ctx.decisions
        wanted = asked(ctx) if key is None else key
        if wanted in decisions:
            return decisions[wanted]
    raise Interrupt(payload)


EventKind = Literal["chunk", "tool_call", "tool_result", "custom", "interrupt", "result"]


@attrs.frozen(slots=True, weakref_slot=False)
class AgentEvent:
    """One event of `Agent.stream()`; `kind` says which fields are set.

    - ``chunk``: `chunk` (a streamed `Chunk`), `text` (its text, for ``text`` chunks)
    - ``tool_call``: `call`, before the tool runs
    - ``tool_result``: `call`, `ok`, `text` (what the model is sent), `value` (the result)
    - ``custom``: `name`, `value` (from `ctx.emit(name, value)`)
    - ``interrupt``: `call` (None outside a tool call), `value` (the payload)
    - ``result``: `result`, the `RunResult`; always the last event
    """

    kind: EventKind
    text: str = ""
    chunk: Chunk | None = None
    call: ToolCall | None = None
    ok: bool = True
    name: str | None = None
    value: Any = None
    result: RunResult | None = None


@attrs.define(slots=True)
class _Done:
    """How one tool call of a turn ended: a text for the model, an interrupt, or the abort
    that ends the run."""

    call: ToolCall
    ok: bool = True
    text: str = ""
    value: Any = None
    paused: bool = False
    payload: Any = None
    aborted: Aborted | None = None


class _Session:
    """One agent run in progress: its context, conversation and place in the loop."""

    __slots__ = (
        "base_usage",
        "ctx",
        "done",
        "forget",
        "fresh",
        "instructions",
        "iteration",
        "messages",
        "payload",
        "seen_events",
        "specs",
        "tools",
        "turn",
    )

    def __init__(self, ctx: RunContext[Any], messages: list[Message]) -> None:
        self.ctx = ctx
        self.messages = messages
        self.iteration = 0
        self.instructions = ""
        self.tools: dict[str, _Runner] = {}
        self.specs: tuple[Any, ...] = ()
        self.turn: list[ToolCall] = []  # the tool calls of an unfinished turn
        self.done: dict[str, _Done] = {}  # those of them that ended
        self.base_usage = Usage()
        self.payload: Any = None  # of the interrupt that paused the run
        # resumed from a checkpoint, which any end but a new pause deletes (its pending
        # calls may have run since: resumed again, they would run again)
        self.forget = False
        self.fresh: list[Hook] = []
        self.seen_events = 0

    def result(self, status: Any, text: str = "", payload: Any = None) -> RunResult:
        if not text:
            text = next((m.text for m in reversed(self.messages) if m.role == "assistant"), "")
        return RunResult(
            status,
            text,
            tuple(self.messages),
            self.base_usage + self.ctx.run.usage,
            self.iteration,
            self.ctx.run_id,
            payload,
        )


class _Runner:
    """One tool as the agent runs it: the tool's own hooks, inside the agent's tool hooks."""

    __slots__ = ("engine", "fn", "is_async", "tool")

    def __init__(self, tool: Tool[..., Any], hooks: Stack | None) -> None:
        self.tool = tool
        self.fn = tool  # what the agent's tool hooks run around (`ToolEngine.instance`)
        engine: ToolEngine = tool._self_engine  # pyright: ignore[reportPrivateUsage]
        self.is_async = engine.is_async
        self.engine: ToolEngine | None = None
        # a hook the tool has already runs once, where it is (as when wrapping again)
        fresh = fresh_hooks(tool, hooks.hooks) if hooks else []
        if fresh:
            self.engine = ToolEngine(self, Chain(fresh), self.is_async, tool.name)

    def invoke(self, call: ToolCall) -> Any:
        """What the agent's onion calls: the tool's own `invoke` (keeps `call.id`)."""
        return self.tool.ainvoke(call) if self.is_async else self.tool.invoke(call)

    def run(self, call: ToolCall) -> Any:
        return self.engine.run(call) if self.engine is not None else self.tool.invoke(call)

    async def arun(self, call: ToolCall) -> Any:
        if self.engine is not None:
            return await self.engine.arun(call)
        return await self.tool.ainvoke(call)


def _stack(hooks: Sequence[Hook]) -> Stack:
    """A stack holding these hooks as they are (each keeps its own stack's switches)."""
    stack = Stack()
    stack.hooks = tuple(hooks)
    return stack


def _as_tool(item: Any, where: str) -> Tool[..., Any]:
    if isinstance(item, Tool):
        return item  # pyright: ignore[reportUnknownVariableType]
    spec = getattr(item, "__hookwrap__", None)
    if isinstance(spec, HookSpec):
        raise TypeError(
            f"{where} got the {spec.kind} hook {describe(item)}: hooks go in use=, tools in tools="
        )
    if isinstance(item, Wrapped):
        raise TypeError(
            f"{where} got the model {describe(cast(Any, item))} (made with hw.model): an agent's "
            "model is its first argument"
        )
    if callable(item) and not isinstance(item, type):
        made: Tool[..., Any] = make_tool(item)
        made._self_by_agent = True  # pyright: ignore[reportPrivateUsage]
        return made
    raise TypeError(
        f"{where} takes tools (hw.tool functions or plain functions); got "
        f"{type(item).__name__}: {item!r:.80}"
    )


def _agent_tool(item: Any, where: str) -> Tool[..., Any]:
    """`_as_tool`, a function `hw.tool` refuses (a lambda, a partial: no tool name) refused
    in words naming `where`, which the agent was given. (A middleware's argument of tools
    words that refusal its own way.)"""
    try:
        return _as_tool(item, where)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(where):
            raise
        error = TypeError if isinstance(exc, TypeError) else ValueError
        raise error(f"{where} got a callable hw.tool makes no tool of: {exc}") from None


def _error_text(exc: BaseException) -> str:
    return f"Error: {type(exc).__name__}: {exc}"


def _messages_of(value: Any) -> list[Message]:
    if isinstance(value, str):
        return [Message.user(value)]
    if isinstance(value, (list, tuple)):
        try:
            return [message_from(m) for m in value]  # pyright: ignore[reportUnknownVariableType]
        except (TypeError, ValueError, KeyError) as exc:
            raise TypeError(f"agent input: a message could not be read ({exc})") from exc
    raise TypeError(
        "agent input must be a str (a user message) or a list of messages (dicts or "
        f"hw.Message); got {type(value).__name__}: {value!r:.80}"
    )


def _default_store() -> Store:
    """The store used when none was given: a `SQLiteStore` in the working directory, or,
    where that backend is not available, one in-memory store shared by the process."""
    global _fallback_store
    stores: Any = importlib.import_module("hookwrap.stores")
    sqlite = getattr(stores, "SQLiteStore", None)
    if sqlite is not None:
        made: Store = sqlite(_DEFAULT_STORE_PATH)
        return made
    if _fallback_store is None:
        log.info("no SQLiteStore available: agent checkpoints are kept in memory")
        _fallback_store = MemoryStore()
    return _fallback_store


@contextmanager
def _current(ctx: RunContext[Any]) -> Generator[None, None, None]:
    """The run is current while a step runs, never while the caller holds an event."""
    token = current_var.set(ctx)
    try:
        yield
    finally:
        current_var.reset(token)


Step = tuple[str, Any]


class Agent:
    """A small agent loop: the model is called with the conversation and the tools; the
    tool calls it makes are run and their results sent back; until an answer without tool
    calls. The whole loop is one run: every hook of `use` sees the same `RunContext`.

    `model` is a model function (taking a `ModelRequest`, or `messages`/`prompt`), or an
    SDK client with its model name as `(client, "model-name")`. `tools` are `hw.tool`
    functions or plain functions; `Middleware` in `use` add their `tools`. `store` keeps
    checkpoints of interrupted runs (default: a `SQLiteStore`, made when first needed).
    """

    def __init__(
        self,
        model: Any,
        *,
        tools: Sequence[Any] = (),
        instructions: str = "",
        use: Any = (),
        max_iterations: int = 10,
        store: Store | None = None,
    ) -> None:
        if not isinstance(instructions, str):
            raise TypeError(
                f"Agent(instructions=...) must be a str (got {type(instructions).__name__}: "
                f"{instructions!r:.80})"
            )
        check_int("Agent(max_iterations=...)", max_iterations, 1)
        check_store("Agent(store=...)", store)
        if isinstance(tools, (str, bytes)) or not isinstance(tools, (list, tuple)):
            raise TypeError(
                f"Agent(tools=...) must be a list of tools (got {type(tools).__name__}: "
                f"{tools!r:.80})"
            )
        hooks = flatten(use)
        given = [_agent_tool(t, "Agent(tools=...)") for t in tools]
        _unique(given, "Agent(tools=...)")
        self.tools: tuple[Tool[..., Any], ...] = (*given, *_provided(use))
        _unique(self.tools, "Agent(tools=...) with the Middleware tools of use=")
        self.instructions = instructions
        self.max_iterations = max_iterations
        self._store = store
        self._chain = Chain(hooks)
        model_hooks = [h for h in hooks if h.spec.kind in MODEL_KINDS]
        tool_hooks = [h for h in hooks if h.spec.kind in TOOL_KINDS]
        self._tool_hooks = _stack(tool_hooks) if tool_hooks else None
        self._runners: dict[int, tuple[Tool[..., Any], _Runner]] = {}
        self._caller = _caller(model, _stack(model_hooks))
        for t in self.tools:
            self._runner(t)  # a tool hook that cannot run on a tool fails here, not mid-run

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.tools)
        return f"<Agent {self._caller.label} tools=[{names}]>"

    # -- public -------------------------------------------------------------------------

    def run(self, input: Any) -> RunResult:
        """Run the loop to its end (sync)."""
        return _last(self._drive(self._start(input, False), False))

    async def arun(self, input: Any) -> RunResult:
        """Run the loop to its end (async); async tool calls of one turn run concurrently."""
        return _last([e async for e in self._adrive(self._start(input, True), False)])

    def stream(self, input: Any) -> Generator[AgentEvent, None, None]:
        """Run the loop, yielding `AgentEvent`s as they happen; the last is the result.
        Bad input is refused here, before the first event is asked for."""
        return self._drive(self._start(input, False), True)

    def astream(self, input: Any) -> AsyncGenerator[AgentEvent, None]:
        """`stream` for async callers."""
        return _closing(self._adrive(self._start(input, True), True))

    def resume(self, run_id: str, decisions: dict[str, Any] | None = None) -> RunResult:
        """Continue an interrupted run from its checkpoint; `decisions` maps tool call ids
        to what `hw.interrupt` returns in those calls."""
        return _last(self._drive(self._load(run_id, decisions), False))

    async def aresume(self, run_id: str, decisions: dict[str, Any] | None = None) -> RunResult:
        """`resume` for async callers."""
        session = await self._aload(run_id, decisions)
        return _last([e async for e in self._adrive(session, False)])

    def resume_stream(
        self, run_id: str, decisions: dict[str, Any] | None = None
    ) -> Generator[AgentEvent, None, None]:
        """`resume`, yielding `AgentEvent`s as they happen, as `stream` does."""
        return self._drive(self._load(run_id, decisions), True)

    def aresume_stream(
        self, run_id: str, decisions: dict[str, Any] | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """`resume_stream` for async callers (the checkpoint is read at the first event)."""
        self._key(run_id)
        _check_decisions(decisions)

        async def resumed() -> AsyncGenerator[AgentEvent, None]:
            session = await self._aload(run_id, decisions)
            async for event in _closing(self._adrive(session, True)):
                yield event

        return resumed()

    @property
    def store(self) -> Store:
        """Where checkpoints go: the `store` given, or the default, made on first use."""
        if self._store is None:
            self._store = _default_store()
        return self._store

    # -- setting up a run ---------------------------------------------------------------

    def _key(self, run_id: str) -> str:
        """The store key of a run's checkpoint. Resuming checks the run id with this first,
        so a bad one fails the same way whether or not a store exists yet."""
        if isinstance(run_id, RunResult):  # the common slip: the result, not its run id
            raise TypeError("resume takes the run id, a str, not a RunResult: pass result.run_id")
        if not isinstance(run_id, str):
            raise TypeError(f"resume takes the run id, a str (got {run_id!r})")
        if not run_id:
            raise ValueError(
                "resume takes the run id of an interrupted run, a non-empty str (got '')"
            )
        return _KEY + run_id

    def _session(self, messages: list[Message], is_async: bool, run_id: str | None) -> _Session:
        if not is_async:
            if self._caller.is_async:  # refused before the run starts, as an async hook is
                raise TypeError(
                    f"{self._caller.label} is async: run this agent with "
                    "`await agent.arun(...)` (or give it a sync model)"
                )
            for hook in self._chain.hooks:
                if hook.is_async:
                    raise TypeError(
                        f"{hook.label} is async: run this agent with `await agent.arun(...)` "
                        "(or make the hook a plain `def`)"
                    )
            for t in self.tools:  # one a before_agent hook adds is refused in `_bind`
                if self._runner(t).is_async:
                    raise TypeError(
                        f"tool {t.name!r} is async: run this agent with `await agent.arun(...)` "
                        "(or make the tool a plain `def`)"
                    )
        # a run of its own, with the `context` of a run it is in (`with hw.run(context=...)`):
        # an agent takes none of its own, so its hooks and tools read it from there
        outer = current_var.get()
        within = None if outer is None else outer._run  # pyright: ignore[reportPrivateUsage]
        run = RunState(None if within is None else within.context, is_async, run_id)
        run.agent = True
        ctx: RunContext[Any] = RunContext(run, "init")
        session = _Session(ctx, messages)
        session.fresh = ctx.run.join(self._chain)
        return session

    def _start(self, input: Any, is_async: bool) -> _Session:
        return self._session(_messages_of(input), is_async, None)

    def _reading_store(self) -> Store | None:
        """The store to read a checkpoint from; None when the default store was never made
        (reading does not make it: no file appears where nothing was saved)."""
        made = self._store is not None or _fallback_store is not None
        return self.store if made or os.path.exists(_DEFAULT_STORE_PATH) else None

    def _load(self, run_id: str, decisions: dict[str, Any] | None) -> _Session:
        key = self._key(run_id)
        _check_decisions(decisions)
        store = self._reading_store()
        saved = None if store is None else store.get(key)
        return self._restore(run_id, saved, decisions, False)

    async def _aload(self, run_id: str, decisions: dict[str, Any] | None) -> _Session:
        key = self._key(run_id)
        _check_decisions(decisions)
        store = self._reading_store()
        saved = None if store is None else await store.aget(key)
        return self._restore(run_id, saved, decisions, True)

    def _restore(
        self, run_id: str, saved: Any, decisions: dict[str, Any] | None, is_async: bool
    ) -> _Session:
        data: Mapping[str, Any] = cast(Any, saved) if isinstance(saved, dict) else {}
        if data.get("format") != _FORMAT:
            made = self._store
            where = f"SQLiteStore({_DEFAULT_STORE_PATH!r})" if made is None else repr(made)
            raise LookupError(
                f"no checkpoint of an interrupted run {run_id!r} in {where}: it ended "
                "(finished or aborted), was never interrupted, or was saved in another store"
            )
        session = self._session([_restored_message(m) for m in data["messages"]], is_async, run_id)
        run = session.ctx.run
        run.decisions.update(_restored(data["decisions"], "the decision", run_id))
        run.decisions.update(decisions or {})
        for key, value in _restored(data["state"], "ctx.state", run_id).items():
            run.state.set(key, value)
        session.iteration = run.iteration = data["iteration"]
        session.turn = [tool_call_from(c) for c in data["turn"]]
        session.done = {
            k: _Done(next(c for c in session.turn if c.id == k), v["ok"], v["text"])
            for k, v in data["done"].items()
        }
        session.base_usage = Usage(*data["usage"])
        session.forget = True
        return session

    def _runner(self, t: Tool[..., Any]) -> _Runner:
        found = self._runners.get(id(t))
        if found is None:
            found = (t, _Runner(t, self._tool_hooks))
            self._runners[id(t)] = found
        return found[1]

    def _bind(self, session: _Session, setup: AgentSetup) -> None:
        where = "AgentSetup.tools (from a before_agent hook)"
        tools = [_agent_tool(t, where) for t in setup.tools]
        _unique(tools, where)
        session.instructions = setup.instructions
        session.tools = {t.name: self._runner(t) for t in tools}
        session.specs = tuple(t.spec for t in tools)
        if not session.ctx.run.is_async:
            for name, runner in session.tools.items():
                if runner.is_async:
                    raise TypeError(
                        f"tool {name!r} is async: run this agent with `await agent.arun(...)`"
                    )

    # -- the loop, once ---------------------------------------------------------------------

    def _program(self, s: _Session) -> Generator[Step, Any, RunResult]:
        """The loop as steps: what to do next is yielded, its outcome sent back."""
        try:
            result: RunResult | None = None
            try:
                setup = yield ("setup", AgentSetup(self.instructions, self.tools))
                self._bind(s, setup)
                yield ("start", None)
            except Interrupt as exc:  # from before_agent or on_start: resumed, it starts over
                result = yield from self._pause(s, exc.payload)
            if result is None and s.turn:  # resumed in the middle of a turn
                result = yield from self._finish_turn(s)
            while result is None:
                if s.iteration >= self.max_iterations:
                    raise Aborted(f"max_iterations ({self.max_iterations}) reached")
                s.iteration += 1
                s.ctx.run.iteration = s.iteration
                try:
                    yield ("iteration", IterationInfo(s.iteration, s.messages))
                    response: ModelResponse = yield ("model", self._request(s))
                except Interrupt as exc:  # from a model or iteration hook: redo this turn
                    s.iteration -= 1
                    result = yield from self._pause(s, exc.payload)
                    break
                except Aborted:  # no answer came (a CallLimit refused the call): not counted
                    s.iteration -= 1
                    raise
                message = _named_calls(response.message, s.iteration)
                s.messages.append(message)
                if not message.tool_calls:
                    result = s.result("finished", response.text)
                    break
                s.turn = list(message.tool_calls)
                s.done = {}
                result = yield from self._finish_turn(s)
        except Aborted as exc:
            s.ctx.run.iteration = s.iteration
            result = s.result("aborted")
            yield ("aborted", exc)
        if s.forget:
            yield ("forget", None)
        yield ("after_agent", result)
        return result

    def _request(self, s: _Session) -> ModelRequest:
        system = (Message.system(s.instructions),) if s.instructions else ()
        return ModelRequest((*system, *s.messages), s.specs)

    def _finish_turn(self, s: _Session) -> Generator[Step, Any, RunResult | None]:
        todo = [c for c in s.turn if c.id not in s.done]
        outcomes: list[_Done] = yield ("tools", todo)
        aborted = next((d.aborted for d in outcomes if d.aborted is not None), None)
        paused = [d for d in outcomes if d.paused]
        s.done.update((d.call.id, d) for d in outcomes if not d.paused and d.aborted is None)
        if aborted is not None:
            # The results kept, every other call answered: a history with a call left
            # unanswered is refused by providers (OpenAI), should it be sent again.
            cut = _aborted_text(aborted)
            s.messages.extend(
                Message.tool(s.done[c.id].text if c.id in s.done else cut, c.id, c.name)
                for c in s.turn
            )
            s.turn = []
            s.done = {}
            try:
                raise aborted
            finally:  # its traceback holds this frame: no cycle left with it
                aborted, outcomes = None, []
        if paused:
            return (yield from self._pause(s, paused[0].payload))
        s.messages.extend(Message.tool(s.done[c.id].text, c.id, c.name) for c in s.turn)
        s.turn = []
        s.done = {}
        return None

    def _pause(self, s: _Session, payload: Any) -> Generator[Step, Any, RunResult]:
        state = s.ctx.run.state.snapshot()
        usage = s.base_usage + s.ctx.run.usage
        history = {
            "format": _FORMAT,
            "run_id": s.ctx.run_id,
            "messages": [_saved_message(m) for m in s.messages],
            "iteration": s.iteration,
            "turn": [
                {"id": c.id, "name": c.name, "arguments": _saved(c.arguments)} for c in s.turn
            ],
            "done": {k: {"ok": d.ok, "text": d.text} for k, d in s.done.items()},
            "usage": [usage.input_tokens, usage.output_tokens, usage.total_tokens],
        }
        checkpoint = {
            **_plain(history),
            "state": _kept(state, "ctx.state", s.ctx.run_id),
            "decisions": _kept(s.ctx.decisions, "the decision", s.ctx.run_id),
            "payload": payload if _is_json(payload) else None,
        }
        s.payload = payload
        s.forget = False  # the new checkpoint replaces the old one, and is kept
        yield ("save", checkpoint)
        return s.result("interrupted", payload=payload)

    # -- sync driver --------------------------------------------------------------------

    def _drive(self, s: _Session, streaming: bool) -> Generator[AgentEvent, None, None]:
        ctx = s.ctx
        program = self._program(s)
        value: Any = None
        error: BaseException | None = None
        aborted: Aborted | None = None
        outcome: _Done | None = None
        paused: list[AgentEvent] = []  # interrupt events, held until the checkpoint is saved
        try:
            while True:
                with _current(ctx):
                    step = _advance(program, value, error)
                if isinstance(step, RunResult):
                    break
                kind, arg = step
                value = error = None
                try:
                    if kind == "model" and streaming:
                        streamed = False
                        pulled = self._pulled(ctx, self._caller.stream(arg))
                        try:
                            for item in pulled:
                                yield from self._custom(s)  # emitted while it came
                                if isinstance(item, ModelResponse):
                                    value = item
                                    if not streamed and item.text:
                                        yield _chunk_event(Chunk("text", item.text))
                                else:
                                    streamed = True
                                    yield _chunk_event(item)
                        finally:
                            with _current(ctx):
                                pulled.close()
                    elif kind == "tools":
                        done: list[_Done] = []
                        for call in arg:
                            yield AgentEvent("tool_call", call=call)
                            with _current(ctx):
                                outcome = self._call_tool(s, call)
                            done.append(outcome)
                            yield from self._custom(s)
                            if outcome.aborted is not None:  # the calls after it never run
                                break
                            if outcome.paused:
                                paused.append(_tool_event(outcome))
                            else:
                                yield _tool_event(outcome)
                        value = done
                    else:
                        with _current(ctx):
                            value = self._step_sync(s, kind, arg)
                except Exception as exc:  # the program decides: an abort or interrupt ends well
                    error = exc
                if kind == "aborted":
                    aborted = arg
                yield from self._custom(s)
                if kind == "save":
                    yield from _interrupts(s, paused)
        except GeneratorExit:  # an aborted run: a resumed one deletes its checkpoint
            with _current(ctx):
                try:
                    if s.forget:
                        self._step_sync(s, "forget", None)
                finally:
                    finish_sync(ctx.run, ctx.run.terminal, ctx, Aborted(_CLOSED))
            raise
        except BaseException as exc:
            with _current(ctx):
                finish_sync(ctx.run, ctx.run.terminal, ctx, exc)
            raise
        with _current(ctx):
            finish_sync(ctx.run, ctx.run.terminal, ctx, aborted)
        # they hold errors whose tracebacks hold this frame: no cycle left with them
        aborted = error = value = outcome = None
        done = []
        yield from self._custom(s)
        yield AgentEvent("result", result=step)

    def _pulled(
        self, ctx: RunContext[Any], items: Generator[Chunk | ModelResponse, None, None]
    ) -> Generator[Chunk | ModelResponse, None, None]:
        """Pull `items` with the run current, hand each out with it not."""
        try:
            while True:
                with _current(ctx):
                    item = next(items, None)
                if item is None:
                    return
                yield item
        finally:
            items.close()

    def _step_sync(self, s: _Session, kind: str, arg: Any) -> Any:
        ctx = s.ctx
        if kind == "setup":
            return _setup(self._chain["before_agent"], arg, ctx)
        if kind == "start":
            start_sync(s.fresh, ctx)
        elif kind == "iteration":
            call_all(self._chain["on_iteration"], (arg,), ctx)
        elif kind == "model":
            return self._caller.call(arg)
        elif kind == "save":
            self.store.set(_KEY + ctx.run_id, arg)
        elif kind == "forget":
            self.store.delete(_KEY + ctx.run_id)
        elif kind == "after_agent":
            ctx.phase = "finished"  # the loop is over: its result is all there is
            call_all(self._chain["after_agent"], (arg,), ctx)
        return None

    def _call_tool(self, s: _Session, call: ToolCall) -> _Done:
        runner = s.tools.get(call.name)
        if runner is None:
            return _unknown(s, call)
        try:
            value = runner.run(call)
        except Interrupt as exc:
            return _Done(call, paused=True, payload=exc.payload)
        except Aborted as exc:  # the turn is cut here; the program ends the run
            return _Done(call, ok=False, aborted=exc)
        except Exception as exc:
            if not from_tool(exc):  # a hook's error ends the run, as outside an agent
                raise
            return _Done(call, ok=False, text=_error_text(exc))
        return _Done(call, text=result_text(value), value=value)

    def _custom(self, s: _Session) -> Iterator[AgentEvent]:
        events = s.ctx.run.events
        while s.seen_events < len(events):
            name, value = events[s.seen_events]
            s.seen_events += 1
            yield AgentEvent("custom", name=name, value=value)

    # -- async driver -------------------------------------------------------------------

    async def _adrive(self, s: _Session, streaming: bool) -> AsyncGenerator[AgentEvent, None]:
        ctx = s.ctx
        program = self._program(s)
        value: Any = None
        error: BaseException | None = None
        aborted: Aborted | None = None
        outcome: _Done | None = None
        batch: list[_Done] = []
        tasks: list[asyncio.Future[_Done]] = []
        paused: list[AgentEvent] = []  # interrupt events, held until the checkpoint is saved
        try:
            while True:
                with _current(ctx):
                    step = _advance(program, value, error)
                if isinstance(step, RunResult):
                    break
                kind, arg = step
                value = error = None
                try:
                    if kind == "model" and streaming:
                        items = self._caller.astream(arg)
                        streamed = False
                        try:
                            while True:
                                with _current(ctx):
                                    item = await anext(items, None)
                                if item is None:
                                    break
                                for event in self._custom(s):  # emitted while it came
                                    yield event
                                if isinstance(item, ModelResponse):
                                    value = item
                                    if not streamed and item.text:
                                        yield _chunk_event(Chunk("text", item.text))
                                else:
                                    streamed = True
                                    yield _chunk_event(item)
                        finally:
                            with _current(ctx):
                                await items.aclose()
                    elif kind == "tools":
                        for call in arg:
                            yield AgentEvent("tool_call", call=call)
                        with _current(ctx):  # each task runs in a copy of the run's context
                            tasks = [asyncio.ensure_future(self._acall_tool(s, c)) for c in arg]
                        finishing = _finishing(tasks)
                        try:
                            async for batch in finishing:  # each result as its call ends
                                for event in self._custom(s):
                                    yield event
                                for outcome in batch:
                                    if outcome.paused:
                                        paused.append(_tool_event(outcome))
                                    elif outcome.aborted is None:
                                        yield _tool_event(outcome)
                                if any(outcome.aborted is not None for outcome in batch):
                                    break  # closing `finishing` cancels the calls still running
                        finally:
                            await finishing.aclose()
                        # after an abort, only the calls that ended (others were cancelled)
                        value = [t.result() for t in tasks if _ended(t)]
                    else:
                        with _current(ctx):
                            value = await self._step_async(s, kind, arg)
                except Exception as exc:
                    error = exc
                if kind == "aborted":
                    aborted = arg
                for event in self._custom(s):
                    yield event
                if kind == "save":
                    for event in _interrupts(s, paused):
                        yield event
        except BaseException as exc:
            reported = exc
            if isinstance(exc, GeneratorExit):  # a stream closed early
                reported = Aborted(_CLOSED)
            elif isinstance(exc, asyncio.CancelledError):  # a stream's consumer stops early
                reported = Aborted(_CLOSED if streaming else "cancelled")
            with _current(ctx):
                try:  # an aborted run: a resumed one deletes its checkpoint
                    if s.forget and reported is not exc:
                        await self._step_async(s, "forget", None)
                finally:
                    await finish_async(ctx.run, ctx.run.terminal, ctx, reported)
            raise
        with _current(ctx):
            await finish_async(ctx.run, ctx.run.terminal, ctx, aborted)
        # they hold errors whose tracebacks hold this frame: no cycle left with them
        aborted = error = value = outcome = None
        batch, tasks = [], []
        for event in self._custom(s):
            yield event
        yield AgentEvent("result", result=step)

    async def _step_async(self, s: _Session, kind: str, arg: Any) -> Any:
        ctx = s.ctx
        if kind == "setup":
            return await _asetup(self._chain["before_agent"], arg, ctx)
        if kind == "start":
            await start_async(s.fresh, ctx)
        elif kind == "iteration":
            await call_all_async(self._chain["on_iteration"], (arg,), ctx)
        elif kind == "model":
            return await self._caller.acall(arg)
        elif kind == "save":
            await self.store.aset(_KEY + ctx.run_id, arg)
        elif kind == "forget":
            await self.store.adelete(_KEY + ctx.run_id)
        elif kind == "after_agent":
            ctx.phase = "finished"
            await call_all_async(self._chain["after_agent"], (arg,), ctx)
        return None

    async def _acall_tool(self, s: _Session, call: ToolCall) -> _Done:
        runner = s.tools.get(call.name)
        if runner is None:
            return _unknown(s, call)
        try:
            if runner.is_async:
                value = await runner.arun(call)
            else:  # a sync tool runs in a thread, beside the async ones of its turn
                value = await asyncio.to_thread(stopless, runner.run, call)
        except Interrupt as exc:
            return _Done(call, paused=True, payload=exc.payload)
        except Aborted as exc:  # the turn is cut here; the program ends the run
            return _Done(call, ok=False, aborted=exc)
        except Exception as exc:
            # (no local holds it past this block: its traceback holds this frame)
            if not from_tool(exc.error if isinstance(exc, Stopped) else exc):
                raise  # a hook's error ends the run, as outside an agent
            return _Done(
                call, ok=False, text=_error_text(exc.error if isinstance(exc, Stopped) else exc)
            )
        return _Done(call, text=result_text(value), value=value)


# -- helpers ----------------------------------------------------------------------------------


async def _finishing(
    tasks: Sequence[asyncio.Future[_Done]],
) -> AsyncGenerator[list[_Done], None]:
    """The outcomes of one turn's tool calls, run concurrently, as they end (those that end
    together in call order). When one raises, or the reader stops (at an abort), the
    others are cancelled and awaited before it goes on, so none outlives its run."""
    pending: set[asyncio.Future[_Done]] = set(tasks)
    try:
        while pending:
            ended, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            yield [task.result() for task in tasks if task in ended]
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for task in tasks:  # calls that failed beside the one raised: their errors are seen
            if task.done() and not task.cancelled():
                task.exception()


def _ended(task: asyncio.Future[_Done]) -> bool:
    return task.done() and not task.cancelled() and task.exception() is None


def _items(use: Any) -> Iterator[Any]:
    """The objects of a `use=` value (for the tools their middleware provide)."""
    if isinstance(use, (list, tuple)):
        for item in use:  # pyright: ignore[reportUnknownVariableType]
            yield from _items(item)
    elif isinstance(use, Stack):
        yield from _items(use.items)
    elif isinstance(use, Middleware):
        yield use


def _provided(use: Any) -> Iterator[Tool[..., Any]]:
    """The tools the middleware of `use` provide. A middleware's `tools` is a list of
    them: one tool set there alone would be iterated (a str by its characters)."""
    for item in _items(use):
        where = f"Middleware {type(item).__name__}.tools"
        tools = item.tools
        if not isinstance(tools, (list, tuple)):
            got = (
                f"the one callable {describe(tools)}"
                if callable(tools)
                else f"{type(tools).__name__}: {tools!r:.80}"
            )
            raise TypeError(
                f"{where} must be a list or tuple of tools, even for one tool: "
                f"tools = (my_tool,) (got {got})"
            )
        for t in tools:  # pyright: ignore[reportUnknownVariableType]
            yield _agent_tool(t, where)


def _unique(tools: Sequence[Tool[..., Any]], where: str) -> None:
    """Refuses two tools of one name: the model could not say which one it calls."""
    seen: dict[str, Tool[..., Any]] = {}
    for t in tools:
        if t.name in seen:
            same = " (the same tool twice)" if seen[t.name] is t else ""
            raise ValueError(
                f"{where} expects tools of distinct names: two tools are named {t.name!r}{same}; "
                "give one another name with hw.tool(name=...)"
            )
        seen[t.name] = t


def _saved(arguments: Mapping[str, Any]) -> Any:
    """A call's arguments as a checkpoint keeps them: as JSON data, as the history keeps
    them (a tuple is a list), or the model's own text when it was no JSON object, which is
    read back (and refused again) on resume."""
    if isinstance(arguments, UnparsedArguments):
        return arguments.text
    try:
        return json.loads(arguments_text(arguments))
    except ValueError:  # an int of more digits than `str` writes: kept as that text
        return json.loads(arguments_text(_digits_written(arguments)))


def _digits_written(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` with each int of more digits than `str` writes (which JSON could not
    read back) as the text a tool result gives for it."""
    from ._convert import long_ints_written  # here: the rest of this module has no use

    if isinstance(arguments, UnparsedArguments):  # text, kept as it is
        return arguments
    written: dict[str, Any] = long_ints_written(dict(arguments))
    return written


_RAW = "hookwrap.raw"  # a saved message's key for its `raw` record


def _saved_message(message: Message) -> dict[str, Any]:
    """A history message as a checkpoint keeps it: its chat dict, with its `raw` record
    when that is JSON data (an answer's thinking blocks, reasoning items and signatures,
    which its provider wants back in the next request); other records are left out."""
    try:
        out = message_to_dict(message)
    except ValueError:  # an int too long for `str` in a call's arguments (see `_saved`)
        calls = [c.replace(arguments=_digits_written(c.arguments)) for c in message.tool_calls]
        out = message_to_dict(message.replace(tool_calls=calls))
    raw = message.raw
    if raw is not None:
        try:
            json.dumps(raw, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return out
        out[_RAW] = raw
    return out


def _restored_message(saved: Mapping[str, Any]) -> Message:
    """A message `_saved_message` saved, its `raw` record given back (as JSON reads it:
    a tuple is a list)."""
    message = message_from(saved)
    raw = saved.get(_RAW)
    return message if raw is None else message.replace(raw=raw)


def _plain(history: dict[str, Any]) -> dict[str, Any]:
    """The run's history as JSON reads it back: plain `str`, `int` and `float` for their
    subclasses (a `str` enum given as the input or as a model's text is the text it holds,
    as the model was sent it), which a store keeps, where it refuses a subclass."""
    plain: dict[str, Any] = json.loads(json.dumps(history))
    return plain


def _kept(values: Mapping[str, Any], what: str, run_id: str) -> dict[str, Any]:
    """`values` as a checkpoint keeps them: JSON data as it is, other values cattrs brings
    back equal as ``{"typed": [kind, data]}`` (see `typed_form`); the rest left out, each
    with a warning."""
    kept: dict[str, Any] = {}
    for key, value in values.items():
        if _is_json(value) and not (isinstance(value, dict) and "typed" in value):
            kept[key] = value
            continue
        try:
            kept[key] = {"typed": list(typed_form(value))}
        except TypeError as exc:
            log.warning(
                "%s[%r] (of type %s) is left out of the checkpoint of run %s: %s",
                what,
                key,
                type(cast(object, value)).__name__,
                run_id,
                exc,
            )
    return kept


def _restored(saved: Mapping[str, Any], what: str, run_id: str) -> dict[str, Any]:
    """The values `_kept` saved, each as it was."""
    values: dict[str, Any] = {}
    for key, value in saved.items():
        if isinstance(value, dict) and "typed" in value:
            try:
                value = from_typed_form(*cast("list[Any]", value["typed"]))
            except Exception as exc:  # whatever cattrs refuses
                log.warning("%s[%r] of run %s is left out: %s", what, key, run_id, exc)
                continue
        values[key] = value
    return values


def _caller(model: Any, hooks: Stack) -> ModelCaller:
    name: str | None = None
    if isinstance(model, tuple):
        pair: tuple[Any, ...] = model  # pyright: ignore[reportUnknownVariableType]
        if len(pair) != 2 or not isinstance(pair[1], str):
            raise TypeError(
                f'Agent(model=...) as a tuple must be (client, "model-name") (got {model!r:.80})'
            )
        model, name = pair[0], pair[1]
    try:
        caller = ModelCaller(model, name, use=hooks, argument="Agent(model=...)")
    except TypeError as exc:
        # the model function's own shape is refused in `hw.model`'s words: said of the argument
        shape = str(exc).removeprefix("hw.model: ")
        if shape != str(exc):
            raise TypeError(
                f"Agent(model=...) expects a model function or an SDK client: {shape}"
            ) from None
        add_note(exc, "in Agent(model=...)")
        raise
    if caller.sdk is not None and caller.model is None:
        method = _MODEL_METHODS.get(caller.api or "", "client.chat.completions.create")
        raise TypeError(
            f"Agent(model=...) got an SDK client or method ({caller.sdk}) without a model "
            f'name; pass (client, "model-name") or '
            f'functools.partial({method}, model="model-name")'
        )
    return caller


# the method to bind a model to, named in the error for a client or method without one
_MODEL_METHODS = {
    "openai.chat": "client.chat.completions.create",
    "openai.responses": "client.responses.create",
    "anthropic.messages": "client.messages.create",
    "google.models": "client.models.generate_content",
}


async def _closing(driver: AsyncGenerator[AgentEvent, None]) -> AsyncGenerator[AgentEvent, None]:
    """`driver`'s events; leaving early closes the run now, not when the loop collects it."""
    try:
        async for event in driver:
            yield event
    finally:
        await driver.aclose()


def _check_decisions(decisions: object) -> None:
    if decisions is None:
        return
    if not isinstance(decisions, dict):
        raise TypeError(f"resume(decisions=...) must be a dict (got {decisions!r:.80})")
    for key in cast("dict[object, object]", decisions):
        if not isinstance(key, str):
            raise TypeError(
                "resume(decisions=...) maps tool call ids (or a hook's own keys), which are "
                f"str, to decisions (got the key {key!r} of type {type(key).__name__})"
            )


def _advance(
    program: Generator[Step, Any, RunResult], value: Any, error: BaseException | None
) -> Step | RunResult:
    """The program's next step, or its result when it ends."""
    try:
        return program.throw(error) if error is not None else program.send(value)
    except StopIteration as stop:
        result: RunResult = stop.value
        return result


def _is_json(value: Any) -> bool:
    """Whether a store keeps `value` as it is (stores refuse tuples, `int` keys, ...)."""
    try:
        dump("value", value)
    except (TypeError, ValueError):
        return False
    return True


def _last(events: Any) -> RunResult:
    result: RunResult | None = None
    for event in events:
        if event.kind == "result":
            result = event.result
    assert result is not None
    return result


def _named_calls(message: Message, iteration: int) -> Message:
    """The model's message as the history keeps it: an assistant's, every tool call with an
    id (decisions and tool results are matched by it; not every provider sends one)."""
    if message.role != "assistant":
        message = message.replace(role="assistant")
    if all(c.id for c in message.tool_calls):
        return message
    named = [
        c if c.id else c.replace(id=f"call_{iteration}_{i}")
        for i, c in enumerate(message.tool_calls)
    ]
    return message.replace(tool_calls=tuple(named))


def _chunk_event(chunk: Chunk) -> AgentEvent:
    return AgentEvent("chunk", chunk.text if chunk.kind == "text" else "", chunk)


def _interrupts(s: _Session, paused: list[AgentEvent]) -> list[AgentEvent]:
    """The `interrupt` events of a run that just saved its checkpoint: those of the tool
    calls that paused it, held back until then (a stream left at one keeps the checkpoint:
    the run can be resumed), or one for a hook's interrupt outside tool calls."""
    events = list(paused) or [AgentEvent("interrupt", value=s.payload)]
    paused.clear()
    return events


def _tool_event(done: _Done) -> AgentEvent:
    if done.paused:
        return AgentEvent("interrupt", call=done.call, value=done.payload)
    return AgentEvent("tool_result", done.text, call=done.call, ok=done.ok, value=done.value)


def _aborted_text(exc: Aborted) -> str:
    """The tool message of a call the run's abort left without a result."""
    return f"Error: the run was aborted before this call returned ({exc.reason})"


def _unknown(s: _Session, call: ToolCall) -> _Done:
    known = ", ".join(sorted(s.tools)) or "none"
    return _Done(call, ok=False, text=f"Error: there is no tool {call.name!r} (tools: {known})")


def _setup(hooks: tuple[Hook, ...], setup: AgentSetup, ctx: Any) -> AgentSetup:
    """`before_agent` hooks, piped in order."""
    first: BaseException | None = None
    for hook in hooks:
        try:
            setup = _setup_result(hook, hook.call(setup), setup)
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first
    return setup


async def _asetup(hooks: tuple[Hook, ...], setup: AgentSetup, ctx: Any) -> AgentSetup:
    first: BaseException | None = None
    for hook in hooks:
        try:
            result = hook.call(setup)
            if hook.is_async:
                result = await result
            setup = _setup_result(hook, result, setup)
        except BaseException as exc:
            first = failed(hook, exc, first)
    if first is not None:
        raise first
    return setup


def _setup_result(hook: Hook, result: Any, setup: AgentSetup) -> AgentSetup:
    if result is None:
        return setup
    if not isinstance(result, AgentSetup):
        raise refused(hook, result, "an AgentSetup, hw.Abort(reason) or None")
    return result
