"""The run's usage (`FinishInfo.usage`) sums each model call once: a layer of the same call
and a `Fallback`'s alternative answer for the call they run in, while a model called from
inside the model (a judge) is a call of its own and counts too."""

from __future__ import annotations

from typing import Any

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


def answer(total: int) -> hw.ModelResponse:
    half = total // 2
    return hw.ModelResponse(hw.Message.assistant("ok"), usage=hw.Usage(half, half, total))


def run_usage(call: Any) -> int:
    """The total tokens of the run around `call()`."""
    totals: list[int] = []

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        totals.append(info.usage.total_tokens)

    with hw.run(use=[finished]):
        call()
    [total] = totals
    return total


@hw.after_model
def seen(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    return None


def test_a_judge_inside_the_model_counts_too() -> None:
    judge = hw.model(lambda messages: answer(10), use=[seen])

    def llm(messages: list[dict[str, Any]]) -> hw.ModelResponse:
        judge(messages)
        return answer(100)

    assert run_usage(lambda: hw.model(llm, use=[seen])(USER)) == 110


def test_a_model_wrapped_twice_counts_once() -> None:
    inner = hw.model(lambda messages: answer(100), use=[seen])

    @hw.after_model
    def outer_seen(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        return None

    assert run_usage(lambda: hw.model(inner, use=[outer_seen])(USER)) == 100


def test_a_fallback_alternative_counts_once() -> None:
    def down(messages: list[dict[str, Any]]) -> str:
        raise ConnectionError("down")

    backup = hw.model(lambda messages: answer(100), use=[seen])
    ask = hw.model(down, use=[seen, Fallback(models=[backup])])
    assert run_usage(lambda: ask(USER)) == 100


def test_a_client_wrapped_twice_counts_once() -> None:
    provider = FakeProvider("hello there")

    @hw.after_model
    def outer_seen(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        return None

    client = hw.wrap(hw.wrap(provider.openai(), use=[seen]), use=[outer_seen])
    once = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    usage = once.usage
    assert usage is not None
    twice = run_usage(lambda: client.chat.completions.create(model="m", messages=USER))  # type: ignore[arg-type]
    assert twice == usage.total_tokens
