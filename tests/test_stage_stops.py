"""What ends a stage at once whatever the switches: cancellation, Ctrl-C and an exit are
no hook's failure, so `continue_on_error` does not run the rest of the stage after them
and no note blames a hook; an `Abort` after an expansion keeps the earlier error as its
`__context__`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_ctrl_c_in_a_continuing_stack_ends_the_stage(stop: type[BaseException]) -> None:
    ran: list[str] = []

    @hw.before_model
    def first(request: hw.ModelRequest) -> None:
        ran.append("first")
        raise stop

    @hw.before_model
    def second(request: hw.ModelRequest) -> None:
        ran.append("second")

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        ran.append("after")
        raise stop

    @hw.after_tool
    def after_too(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        ran.append("after_too")

    chat = hw.model(lambda messages: "x", use=[hw.Stack(first, second, continue_on_error=True)])
    with pytest.raises(stop) as caught:
        chat(USER)
    assert ran == ["first"]
    assert getattr(caught.value, "__notes__", None) is None  # no hook's failure

    ran.clear()

    @hw.tool(use=[hw.Stack(after_too, after, continue_on_error=True)])  # `after` runs first
    def tool(x: int) -> int:
        """t"""
        return x

    with pytest.raises(stop):
        tool(1)
    assert ran == ["after"]


def test_cancellation_in_a_continuing_stack_ends_the_stage_at_once() -> None:
    ran: list[str] = []
    started = asyncio.Event()

    @hw.before_model
    async def first(request: hw.ModelRequest) -> None:
        ran.append("first")
        started.set()
        await asyncio.sleep(10)

    @hw.before_model
    async def second(request: hw.ModelRequest) -> None:
        ran.append("second")
        await asyncio.sleep(10)

    async def llm(messages: Any) -> str:
        return "x"

    chat = hw.model(llm, use=[hw.Stack(first, second, continue_on_error=True)])

    async def main() -> BaseException:
        task = asyncio.ensure_future(chat(USER))
        await started.wait()
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=5)
        assert done, "the call went on after it was cancelled"
        with pytest.raises(asyncio.CancelledError) as caught:
            task.result()
        return caught.value

    cancelled = asyncio.run(main())
    assert ran == ["first"]
    assert getattr(cancelled, "__notes__", None) is None


def _expanding_stack() -> hw.Stack:
    @hw.on_chunk
    def failing(chunk: hw.Chunk) -> None:
        raise ValueError("earlier")

    @hw.on_chunk
    def expand(chunk: hw.Chunk) -> list[hw.Chunk]:
        return [chunk, chunk.replace(text="more")]

    @hw.on_chunk
    def stop(chunk: hw.Chunk) -> hw.Abort:
        return hw.Abort("stop")

    return hw.Stack(failing, expand, stop, continue_on_error=True)


def test_an_abort_after_an_expansion_keeps_the_earlier_error() -> None:
    @hw.model(use=[_expanding_stack()])
    def stream(messages: Any) -> Any:
        yield "a"

    with pytest.raises(hw.Aborted) as caught:
        list(stream(USER))
    assert isinstance(caught.value.__context__, ValueError)
    assert str(caught.value.__context__) == "earlier"


def test_an_abort_after_an_expansion_keeps_the_earlier_error_async() -> None:
    @hw.model(use=[_expanding_stack()])
    async def stream(messages: Any) -> Any:
        yield "a"

    async def main() -> None:
        async for _ in stream(USER):
            pass

    with pytest.raises(hw.Aborted) as caught:
        asyncio.run(main())
    assert isinstance(caught.value.__context__, ValueError)
