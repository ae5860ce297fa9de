"""A dict a hook gives as an answer (a `Respond`ed one, a wrap hook's) is a chat message:
one with none of a message's keys is refused by name, never read as an empty answer. A
model function's own dict answer is its answer as it gave it, a record with none of a
message's keys included."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


@hw.before_model
def cached(request: hw.ModelRequest) -> Any:
    return hw.Respond({"text": "cached answer"})


def model(messages: Any) -> str:
    return "from the model"


def _openai() -> Any:
    client = hw.wrap(FakeProvider(["from the model"]).openai(), use=[cached])
    return client.chat.completions.create(model="m", messages=USER)


def _anthropic() -> Any:
    client = hw.wrap(FakeProvider(["from the model"]).anthropic(), use=[cached])
    return client.messages.create(model="m", max_tokens=10, messages=USER)


def _google() -> Any:
    pytest.importorskip("google.genai")
    client = hw.wrap(FakeProvider(["from the model"]).genai(), use=[cached])
    return client.models.generate_content(model="m", contents="hi")


@pytest.mark.parametrize(
    "call",
    [lambda: hw.model(model, use=[cached])(USER), _openai, _anthropic, _google],
    ids=["function", "openai", "anthropic", "google"],
)
def test_a_respond_of_a_dict_that_is_no_message_names_the_hook_and_the_keys(call: Any) -> None:
    with pytest.raises(TypeError) as caught:
        call()
    text = str(caught.value)
    assert "before_model hook 'cached'" in text
    assert "hw.Respond({'text': 'cached answer'})" in text
    assert "none of those keys ('text')" in text


def test_a_wrap_hooks_dict_with_no_message_keys_is_refused_naming_the_keys() -> None:
    @hw.wrap_model
    def cached(request: hw.ModelRequest, call_next: Any) -> Any:
        return {"text": "cached"}

    with pytest.raises(TypeError) as caught:
        hw.model(model, use=[cached])(USER)
    text = str(caught.value)
    assert "wrap_model hook '" in text
    assert ".cached' (priority 0)" in text
    assert "str or chat dict" in text
    assert "none of those keys ('text')" in text


def test_a_model_functions_own_dict_of_other_keys_is_still_its_answer() -> None:
    """A function whose answer is a record, not a message (a classifier's), answers it as
    it gave it, hooks or not: hooks that never read the answer (a Retry, a run) must not
    break it, and one that reads it sees no text."""
    seen: list[str] = []

    def classify(messages: Any) -> dict[str, Any]:
        return {"label": "spam", "score": 0.93}

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    assert hw.model(classify, use=[look])(USER) == {"label": "spam", "score": 0.93}
    assert seen == [""]
    with hw.run():
        assert hw.model(classify, use=[look])(USER) == {"label": "spam", "score": 0.93}


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"content": "cached"}, "cached"),
        ({"role": "assistant", "content": "cached"}, "cached"),
        ({"role": "assistant"}, ""),
        (
            {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
            "",
        ),
    ],
)
def test_chat_dicts_are_still_answers(answer: dict[str, Any], text: str) -> None:
    """(These held before too: the check refuses only dicts with none of the keys.)"""
    seen: list[hw.ModelResponse] = []

    @hw.before_model
    def respond(request: hw.ModelRequest) -> Any:
        return hw.Respond(answer)

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response)

    assert hw.model(model, use=[respond, look])(USER) == text
    assert seen[0].message.role == "assistant"
