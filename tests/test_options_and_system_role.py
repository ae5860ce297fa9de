"""Changed requests written back where the target reads them: a plain function's
positional-only option or model goes by position, and a Gemini `systemInstruction` a hook changed or
added keeps the `role` the SDK sends with it."""

# google-genai's signatures name `PIL.Image.Image`; without Pillow installed pyright sees
# Unknown in every `generate_content`, so only that report is off here.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

MESSAGES = [{"role": "user", "content": "hi"}]


def set_options(**changes: Any) -> Any:
    """A before_model hook setting `changes` in the options (None: removing the option)."""

    @hw.before_model
    def change(request: hw.ModelRequest) -> hw.ModelRequest:
        options = {**request.options, **changes}
        return request.replace(options={k: v for k, v in options.items() if v is not None})

    return change


# -- a plain function's positional-only options ------------------------------------------------


def test_a_positional_only_option_the_caller_left_out_is_set_by_position() -> None:
    def strict(messages: Any, temperature: float = 0.5, /) -> str:
        return f"temperature={temperature}"

    def loose(messages: Any, temperature: float = 0.5, /, **kwargs: Any) -> str:
        return f"temperature={temperature} kwargs={kwargs}"

    warmer = set_options(temperature=0.9)
    assert hw.model(strict, use=[warmer])(MESSAGES) == "temperature=0.9"
    assert hw.model(loose, use=[warmer])(MESSAGES) == "temperature=0.9 kwargs={}"
    assert hw.model(loose, use=[warmer])(MESSAGES, 0.3) == "temperature=0.9 kwargs={}"
    # given by keyword it is a `**kwargs` item, and is read and written back as one
    assert (
        hw.model(loose, use=[warmer])(MESSAGES, temperature=0.3)
        == "temperature=0.5 kwargs={'temperature': 0.9}"
    )


def test_the_places_before_a_positional_only_option_take_their_defaults_or_what_was_given() -> None:
    def llm(messages: Any, top_p: float = 1.0, temperature: float = 0.5, /) -> str:
        return f"top_p={top_p} temperature={temperature}"

    warmer = set_options(temperature=0.9)
    assert hw.model(llm, use=[warmer])(MESSAGES) == "top_p=1.0 temperature=0.9"
    assert hw.model(llm, use=[warmer])(MESSAGES, 0.2) == "top_p=0.2 temperature=0.9"
    # a removed one takes its default, as any option given by position
    swap = set_options(top_p=None, temperature=0.9)
    assert hw.model(llm, use=[swap])(MESSAGES, 0.2) == "top_p=1.0 temperature=0.9"


def test_a_positional_only_model_the_caller_left_out_is_set_by_position() -> None:
    def llm(messages: Any, model: str = "small", temperature: float = 0.5, /) -> str:
        return f"model={model} temperature={temperature}"

    @hw.before_model
    def bigger(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(model="large")

    assert hw.model(llm, use=[bigger])(MESSAGES) == "model=large temperature=0.5"
    assert hw.model(llm, use=[bigger])(MESSAGES, "tiny", 0.1) == "model=large temperature=0.1"
    both = [bigger, set_options(temperature=0.9)]
    assert hw.model(llm, use=both)(MESSAGES) == "model=large temperature=0.9"


# -- google-genai: the system instruction's role ------------------------------------------------


def test_a_changed_gemini_system_instruction_keeps_its_role() -> None:
    pytest.importorskip("google.genai")

    @hw.before_model
    def stricter(request: hw.ModelRequest) -> hw.ModelRequest:
        first, *rest = request.messages
        return request.replace(messages=(first.replace(content=first.text + " Always."), *rest))

    provider = FakeProvider()
    client = hw.wrap(provider.genai(), use=[stricter])
    client.models.generate_content(
        model="gemini-2.0-flash", contents="hi", config={"system_instruction": "Be terse."}
    )
    assert provider.requests[-1].body["systemInstruction"] == {
        "parts": [{"text": "Be terse. Always."}],
        "role": "user",
    }


def test_a_gemini_system_instruction_a_hook_adds_is_written_as_the_sdk_writes_one() -> None:
    pytest.importorskip("google.genai")

    @hw.before_model
    def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.system("Be terse."), *request.messages))

    provider = FakeProvider()
    plain = provider.genai()  # held: a client closes its transport when collected
    plain.models.generate_content(
        model="gemini-2.0-flash", contents="hi", config={"system_instruction": "Be terse."}
    )
    sent = provider.requests[-1].body["systemInstruction"]
    wrapped = hw.wrap(provider.genai(), use=[add_system])
    wrapped.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert provider.requests[-1].body["systemInstruction"] == sent
