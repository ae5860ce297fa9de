"""`Fallback`: the label of the alternative that answered names the model it was called
with, and a model name as an alternative is refused for a function that cannot take one."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._fallback import Fallback
from hookwrap.testing import FakeProvider

USER: Any = [{"role": "user", "content": "hi"}]


class Down(Exception):
    """The first model is down."""


def _recorder(labels: list[Any]) -> Any:
    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        labels.append(ctx.call_state["fallback"])

    return record


# -- the label names the model sent --------------------------------------------------------


def test_a_client_given_without_a_model_is_labelled_with_the_model_sent() -> None:
    pytest.importorskip("openai")
    primary, other = FakeProvider([]), FakeProvider(["from the backup"])
    primary.fail(503)
    labels: list[Any] = []
    fallback = Fallback(models=[other.openai(max_retries=0)])
    client = hw.wrap(primary.openai(max_retries=0), use=[_recorder(labels), fallback])
    answer = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert answer.choices[0].message.content == "from the backup"
    assert other.requests[0].body["model"] == "gpt-4o"
    assert labels == ["OpenAI(gpt-4o)"]


def test_a_method_given_without_a_model_is_labelled_with_the_model_sent() -> None:
    pytest.importorskip("openai")
    primary, other = FakeProvider([]), FakeProvider(["from the backup"])
    primary.fail(503)
    labels: list[Any] = []
    fallback = Fallback(models=[other.openai(max_retries=0).chat.completions.create])
    client = hw.wrap(primary.openai(max_retries=0), use=[_recorder(labels), fallback])
    client.chat.completions.create(model="gpt-4o", messages=USER)
    assert labels == ["Completions.create(gpt-4o)"]


def test_the_label_is_made_per_call() -> None:
    """One `Fallback` serves calls for different models: each is labelled with its own."""
    pytest.importorskip("openai")
    primary, other = FakeProvider([]), FakeProvider(["one", "two"])
    primary.fail(503, times=2)
    labels: list[Any] = []
    fallback = Fallback(models=[other.openai(max_retries=0)])
    client = hw.wrap(primary.openai(max_retries=0), use=[_recorder(labels), fallback])
    client.chat.completions.create(model="gpt-4o", messages=USER)
    client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert labels == ["OpenAI(gpt-4o)", "OpenAI(gpt-4o-mini)"]


def last(messages: list[dict[str, Any]]) -> str:
    raise Down("the last one is down too")


def test_the_failure_notes_name_the_model_sent() -> None:
    pytest.importorskip("openai")
    primary, other = FakeProvider([]), FakeProvider([])
    primary.fail(503)
    other.fail(503)
    client = hw.wrap(
        primary.openai(max_retries=0),
        use=[Fallback(models=[other.openai(max_retries=0), last])],
    )
    with pytest.raises(Down) as excinfo:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    notes = getattr(excinfo.value, "__notes__", [])
    assert any(note.startswith("Fallback: OpenAI(gpt-4o) failed before:") for note in notes)


def test_a_client_given_with_a_model_keeps_its_own() -> None:
    pytest.importorskip("openai")
    primary, other = FakeProvider([]), FakeProvider(["ok"])
    primary.fail(503)
    labels: list[Any] = []
    fallback = Fallback(models=[(other.openai(max_retries=0), "gpt-backup")])
    client = hw.wrap(primary.openai(max_retries=0), use=[_recorder(labels), fallback])
    client.chat.completions.create(model="gpt-4o", messages=USER)
    assert other.requests[0].body["model"] == "gpt-backup"
    assert labels == ["OpenAI(gpt-backup)"]


# -- a model name needs a target that takes a model -----------------------------------------


def test_a_model_name_for_a_function_without_model_is_a_type_error() -> None:
    calls: list[int] = []
    first = Down("primary is down")

    def primary(messages: list[dict[str, Any]]) -> str:
        calls.append(1)
        raise first

    ask = hw.model(primary, use=[Fallback(models=["gpt-4o-mini"])])
    with pytest.raises(TypeError) as excinfo:
        ask(USER)
    message = str(excinfo.value)
    assert "'gpt-4o-mini'" in message
    assert "primary" in message
    assert "takes no `model` parameter (nor `**kwargs`)" in message
    assert excinfo.value.__cause__ is first
    assert calls == [1]  # never called again as it was


def test_the_model_name_is_refused_before_any_other_alternative_runs() -> None:
    tried: list[str] = []

    def primary(prompt: str) -> str:
        raise Down("primary is down")

    def backup(prompt: str) -> str:
        tried.append(prompt)
        return "backup"

    ask = hw.model(primary, use=[Fallback(models=[backup, "small"])])
    with pytest.raises(TypeError, match="'small' would call the same target"):
        ask("hi")
    assert tried == []


def test_a_model_name_for_an_async_function_without_model_is_a_type_error() -> None:
    async def primary(messages: list[dict[str, Any]]) -> str:
        raise Down("primary is down")

    ask = hw.model(primary, use=[Fallback(models=["gpt-4o-mini"])])
    with pytest.raises(TypeError, match="takes no `model` parameter"):
        asyncio.run(ask(USER))


def test_a_model_name_for_a_streaming_function_without_model_is_a_type_error() -> None:
    def primary(prompt: str) -> Any:
        raise Down("primary is down")
        yield "never"

    ask = hw.model(primary, use=[Fallback(models=["small"])])
    with pytest.raises(TypeError, match="takes no `model` parameter"):
        list(ask("hi"))


@pytest.mark.parametrize("form", ["model", "kwargs", "request", "partial"])
def test_a_model_name_reaches_a_function_that_can_take_it(form: str) -> None:
    seen: list[Any] = []

    def with_model(prompt: str, model: str = "big") -> str:
        seen.append(model)
        if model == "big":
            raise Down("big is down")
        return model

    def with_kwargs(prompt: str, **options: Any) -> str:
        seen.append(options.get("model"))
        if "model" not in options:
            raise Down("no model is down")
        return str(options["model"])

    def with_request(request: hw.ModelRequest) -> str:
        seen.append(request.model)
        if request.model is None:
            raise Down("no model is down")
        return request.model

    target: Any = {
        "model": with_model,
        "kwargs": with_kwargs,
        "request": with_request,
        "partial": functools.partial(with_model, model="big"),
    }[form]
    labels: list[Any] = []
    ask = hw.model(target, use=[_recorder(labels), Fallback(models=["small"])])
    argument: Any = "hi"
    if form == "request":
        argument = hw.ModelRequest(messages=[hw.Message.user("hi")])
    answer = ask(argument)
    assert getattr(answer, "text", answer) == "small"
    assert seen[-1] == "small"
    assert labels == ["small"]


def test_a_model_name_for_an_sdk_client_is_sent() -> None:
    pytest.importorskip("openai")
    primary = FakeProvider(["from the small model"])
    primary.fail(503)
    labels: list[Any] = []
    client = hw.wrap(
        primary.openai(max_retries=0), use=[_recorder(labels), Fallback(models=["gpt-small"])]
    )
    client.chat.completions.create(model="gpt-4o", messages=USER)
    assert [r.body["model"] for r in primary.requests][-1] == "gpt-small"
    assert labels == ["gpt-small"]
