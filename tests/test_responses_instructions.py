"""What a caller gave outside the messages is sent where the caller put it, through the real
`openai` SDK: a Responses call's `instructions` stay `instructions` when a hook adds a
system prompt (an input item would be stored with the conversation, and pile up turn after
turn), and a legacy completion's prompt list is never replaced by a hook's messages."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

seen: list[tuple[hw.Message, ...]] = []


@hw.before_model
def system_prompt(request: hw.ModelRequest) -> hw.ModelRequest:
    seen.append(request.messages)
    return request.replace(messages=(hw.Message.system("Answer briefly."), *request.messages))


@hw.before_model
def no_instructions(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=request.messages[1:])


@hw.before_model
def look(request: hw.ModelRequest) -> None:
    seen.append(request.messages)


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    seen.clear()
    mode: str = request.param
    return mode == "async"


def sent(provider: FakeProvider, hook: Any, is_async: bool, api: str, **kwargs: Any) -> Any:
    """The body the provider got for one call through `hook`."""
    client = hw.wrap(provider.openai(async_=is_async), use=[hook])
    made = getattr(client, api).create(**kwargs)
    if inspect.isawaitable(made):
        asyncio.run(made)  # type: ignore[arg-type]
    return provider.requests[-1].body


def test_a_system_prompt_hook_joins_the_callers_instructions(is_async: bool) -> None:
    provider = FakeProvider()
    body = sent(
        provider,
        system_prompt,
        is_async,
        "responses",
        model="gpt-5",
        instructions="Be terse.",
        input="hi",
        previous_response_id="resp_1",
        store=True,
    )
    assert body["instructions"] == "Answer briefly.\n\nBe terse."
    assert body["input"] == "hi"
    assert (body["previous_response_id"], body["store"]) == ("resp_1", True)


def test_system_items_of_the_input_stay_in_the_input(is_async: bool) -> None:
    items = [{"role": "developer", "content": "Cite."}, {"role": "user", "content": "hi"}]
    provider = FakeProvider()
    with_instructions = sent(
        provider,
        system_prompt,
        is_async,
        "responses",
        model="m",
        instructions="Be terse.",
        input=items,
    )
    assert with_instructions["instructions"] == "Answer briefly.\n\nBe terse."
    assert with_instructions["input"] == items
    # without instructions, a hook's system prompt becomes them: it goes with no item
    without = sent(provider, system_prompt, is_async, "responses", model="m", input=items)
    assert without["instructions"] == "Answer briefly."
    assert without["input"] == items
    # instructions a hook removed are not made of the input's own system item
    removed = sent(
        provider,
        no_instructions,
        is_async,
        "responses",
        model="m",
        instructions="Be terse.",
        input=items,
    )
    assert "instructions" not in removed
    assert removed["input"] == items


def test_a_completion_prompt_of_one_str_is_a_message_and_stays_a_list(is_async: bool) -> None:
    provider = FakeProvider()
    body = sent(provider, system_prompt, is_async, "completions", model="m", prompt=["Say A"])
    assert seen == [(hw.Message.user("Say A"),)]
    assert body["prompt"] == ["Answer briefly.\n\nSay A"]


@pytest.mark.parametrize(
    ("prompt", "what"),
    [
        (["Say A", "Say B"], "a batch of 2 prompts"),
        ([1, 2, 3], "token ids"),
        ([[1, 2], [3]], "a batch of 2 token-id prompts"),
    ],
)
def test_a_hook_cannot_replace_a_batch_or_token_ids(
    is_async: bool, prompt: list[Any], what: str
) -> None:
    provider = FakeProvider()
    body = sent(provider, look, is_async, "completions", model="m", prompt=prompt)
    assert seen == [()]
    assert body["prompt"] == prompt  # hooks that leave the messages alone change nothing
    with pytest.raises(TypeError, match=f"prompt is {what}, which hookwrap cannot show"):
        sent(provider, system_prompt, is_async, "completions", model="m", prompt=prompt)
    assert len(provider.requests) == 1  # nothing was sent in its place
