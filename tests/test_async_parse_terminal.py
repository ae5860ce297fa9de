"""An async SDK call parses its answer (`.parse`, the SDK's response processing) inside the
call: a parse that fails ends the run with `on_error`, as in a sync call, and a run that
ends badly leaves no parsing coroutine unawaited."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pydantic
import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

MESSAGES: Any = [{"role": "user", "content": "hi"}]


class Answer(pydantic.BaseModel):
    value: int


def terminal(log: list[Any]) -> list[Any]:
    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    @hw.on_error
    def failed(info: hw.FinishInfo) -> None:
        log.append(("on_error", type(info.error).__name__))

    return [finished, failed]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_parse_that_fails_ends_the_run_with_on_error(sdk: str, is_async: bool) -> None:
    log: list[Any] = []
    provider = FakeProvider(["not json at all"])
    if sdk == "openai":
        client: Any = hw.wrap(provider.openai(is_async, max_retries=0), use=terminal(log))
        call = lambda: client.chat.completions.parse(  # noqa: E731
            model="gpt-4o", messages=MESSAGES, response_format=Answer
        )
    else:
        client = hw.wrap(provider.anthropic(is_async, max_retries=0), use=terminal(log))
        call = lambda: client.messages.parse(  # noqa: E731
            model="claude", max_tokens=50, messages=MESSAGES, output_format=Answer
        )

    async def awaited() -> Any:
        return await call()

    with pytest.raises(pydantic.ValidationError):
        asyncio.run(awaited()) if is_async else call()
    assert log == [("on_error", "ValidationError")]


def test_an_on_finish_error_leaves_no_parsing_unawaited() -> None:
    @hw.on_finish
    def broken(info: hw.FinishInfo) -> None:
        raise RuntimeError("log sink closed")

    client = hw.wrap(FakeProvider(["x"]).openai(True, max_retries=0), use=[broken])

    async def main() -> None:
        await client.chat.completions.create(model="m", messages=MESSAGES)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="log sink closed"):
            asyncio.run(main())
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
