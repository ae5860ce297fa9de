"""Run isolation (SPEC §5): runs in different threads and asyncio tasks never see each other's
state; calls inside one run share `state` but keep their own `call_id` and `call_state`."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import hookwrap as hw

CALLS = 2000


class Probe:
    """Records, per call, what each stage read back; mismatches are collected, not raised,
    so a failure in a worker thread cannot be swallowed."""

    def __init__(self) -> None:
        self.mismatches: list[str] = []
        self.run_ids: dict[str, str] = {}

    def check(self, where: str, ctx: hw.RunContext, value: str) -> None:
        if ctx.state.get("value") != value:
            self.mismatches.append(f"{where} state {ctx.state.get('value')!r} != {value!r}")
        if ctx.call_state.get("value") != value:
            self.mismatches.append(f"{where} call_state {ctx.call_state.get('value')!r}")


def prompt_of(request: hw.ModelRequest) -> str:
    return request.messages[-1].text


def sync_hooks(probe: Probe) -> list[Callable[..., Any]]:
    @hw.before_model
    def write(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        value = prompt_of(request)
        if "value" in ctx.state or ctx.call_state:
            probe.mismatches.append(f"{value}: a fresh run was not empty")
        ctx.state.set("value", value)
        ctx.call_state["value"] = value

    @hw.after_model
    def read(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        value = prompt_of(request)
        probe.check("after_model", ctx, value)
        probe.run_ids[value] = ctx.run_id

    return [write, read]


def test_one_call_runs_in_threads_are_isolated() -> None:
    """2000 one-call runs on 8 threads: each reads back, in `after_model` and in the target,
    exactly what its own `before_model` wrote into `state` and `call_state`; all run ids are
    distinct."""
    probe = Probe()

    def llm(prompt: str) -> str:
        probe.check("target", hw.current(), prompt)
        return f"answer {prompt}"

    chat = hw.model(llm, use=sync_hooks(probe))
    values = [f"v{i}" for i in range(CALLS)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(chat, values))
    assert answers == [f"answer {v}" for v in values]
    assert probe.mismatches == []
    assert sorted(probe.run_ids) == sorted(values)
    assert len(set(probe.run_ids.values())) == CALLS


def test_one_call_runs_in_asyncio_tasks_are_isolated() -> None:
    """2000 gathered one-call runs, each suspending in an async hook and in the target: each
    reads back only its own values; all run ids are distinct."""
    probe = Probe()

    @hw.before_model
    async def write(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        value = prompt_of(request)
        if "value" in ctx.state or ctx.call_state:
            probe.mismatches.append(f"{value}: a fresh run was not empty")
        ctx.state.set("value", value)
        await asyncio.sleep(0)
        ctx.call_state["value"] = value
        await asyncio.sleep(0)
        probe.check("before_model", ctx, value)

    @hw.after_model
    async def read(
        request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext
    ) -> None:
        await asyncio.sleep(0)
        value = prompt_of(request)
        probe.check("after_model", ctx, value)
        probe.run_ids[value] = ctx.run_id

    async def llm(prompt: str) -> str:
        probe.check("target before await", hw.current(), prompt)
        await asyncio.sleep(0)
        probe.check("target after await", hw.current(), prompt)
        return f"answer {prompt}"

    chat = hw.model(llm, use=[write, read])
    values = [f"v{i}" for i in range(CALLS)]

    async def main() -> list[str]:
        return await asyncio.gather(*(chat(v) for v in values))

    answers = asyncio.run(main())
    assert answers == [f"answer {v}" for v in values]
    assert probe.mismatches == []
    assert sorted(probe.run_ids) == sorted(values)
    assert len(set(probe.run_ids.values())) == CALLS


def test_explicit_runs_in_threads_are_isolated() -> None:
    """Many `with hw.run()` blocks on 8 threads, each making several calls: every run sees
    only its own state, and each run's calls share it."""
    mismatches: list[str] = []

    @hw.before_model
    def count(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.state.set("calls", ctx.state.get("calls", 0) + 1)
        if ctx.state.get("owner") != prompt_of(request):
            mismatches.append(f"{prompt_of(request)} saw owner {ctx.state.get('owner')!r}")

    chat = hw.model(lambda prompt: "ok", use=[count])

    def one_run(n: int) -> tuple[int, str]:
        owner = f"run{n}"
        with hw.run() as run:
            run.state.set("owner", owner)
            for _ in range(5):
                chat(owner)
            return run.state.get("calls"), run.run_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(one_run, range(400)))
    assert mismatches == []
    assert [calls for calls, _ in outcomes] == [5] * 400
    assert len({run_id for _, run_id in outcomes}) == 400


def test_calls_inside_one_async_run_share_state_but_not_call_state() -> None:
    """Gathered calls inside one `async with hw.run()` all see the run's state (and each
    other's writes to it), while each keeps its own `call_id` and `call_state` across
    suspensions."""
    n = 500
    mismatches: list[str] = []
    call_ids: dict[str, set[str]] = {}
    run_ids: set[str] = set()

    @hw.before_model
    async def write(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        value = prompt_of(request)
        if ctx.call_state:
            mismatches.append(f"{value}: call_state not empty at start")
        ctx.call_state["value"] = value
        call_ids.setdefault(value, set()).add(ctx.call_id)
        await asyncio.sleep(0)
        ctx.state.set(value, ctx.call_id)

    @hw.after_model
    async def read(
        request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext
    ) -> None:
        await asyncio.sleep(0)
        value = prompt_of(request)
        if ctx.call_state.get("value") != value:
            mismatches.append(f"{value}: after_model call_state {ctx.call_state!r}")
        call_ids[value].add(ctx.call_id)
        run_ids.add(ctx.run_id)

    async def llm(prompt: str) -> str:
        ctx = hw.current()
        await asyncio.sleep(0)
        if ctx.call_state.get("value") != prompt or hw.current() is not ctx:
            mismatches.append(f"{prompt}: target saw {ctx.call_state!r}")
        call_ids[prompt].add(hw.current().call_id)
        return prompt

    chat = hw.model(llm, use=[write, read])
    values = [f"c{i}" for i in range(n)]

    async def main() -> tuple[str, dict[str, Any]]:
        async with hw.run() as run:
            await asyncio.gather(*(chat(v) for v in values))
            return run.run_id, {v: run.state.get(v) for v in values}

    run_id, stored = asyncio.run(main())
    assert mismatches == []
    assert run_ids == {run_id}
    assert all(len(ids) == 1 for ids in call_ids.values()), "one call_id per call"
    per_call = {v: next(iter(ids)) for v, ids in call_ids.items()}
    assert len(set(per_call.values())) == n
    assert stored == per_call  # every call's write to the shared state landed


def test_calls_inside_one_threaded_run_share_state_but_not_call_state() -> None:
    """The thread twin: calls made from 8 threads inside one `with hw.run()` (each thread
    running in a copy of the run's context) share the run but not their call state."""
    mismatches: list[str] = []
    run_ids: set[str] = set()

    @hw.before_model
    def write(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        value = prompt_of(request)
        if ctx.call_state:
            mismatches.append(f"{value}: call_state not empty at start")
        ctx.call_state["value"] = value
        ctx.state.set(value, True)

    @hw.after_model
    def read(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        if ctx.call_state.get("value") != prompt_of(request):
            mismatches.append(f"{prompt_of(request)}: after_model {ctx.call_state!r}")
        run_ids.add(ctx.run_id)

    chat = hw.model(lambda prompt: prompt, use=[write, read])
    values = [f"t{i}" for i in range(CALLS)]

    with hw.run() as run:
        with ThreadPoolExecutor(max_workers=8) as pool:
            # one copy of the run's context per call, taken here, where the run is current
            futures = [pool.submit(contextvars.copy_context().run, chat, v) for v in values]
            answers = [f.result() for f in futures]
        assert all(v in run.state for v in values)
        expected_run = run.run_id
    assert answers == values
    assert mismatches == []
    assert run_ids == {expected_run}
