"""A Gemini `systemInstruction` a `before_model` hook changes is written into the parts it
was read from, as a changed content is: a new text is split across its text parts, each
keeping its place and keys, and a system message the hook adds has parts of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("google.genai")

INSTRUCTION = {"parts": [{"text": "Be brief. "}, {"text": "Be kind."}]}


def _sent(hook: Callable[..., Any], instruction: Any = INSTRUCTION) -> Any:
    """The `systemInstruction` sent for a call with `instruction`, through `hook`."""
    fake = FakeProvider(["ok"])
    client: Any = hw.wrap(fake.genai(), use=[hook])
    config: Any = {"system_instruction": instruction}
    client.models.generate_content(model="g", contents="x", config=config)
    return fake.requests[0].body["systemInstruction"]


@hw.before_model
def nicer(request: hw.ModelRequest) -> hw.ModelRequest:
    """Gives the system message a new text, as a `str`."""
    first, *rest = request.messages
    kind = first.replace(content=first.text.replace("kind", "nice"))
    return request.replace(messages=(kind, *rest))


def test_new_system_text_is_split_across_its_parts() -> None:
    sent = _sent(nicer)
    assert sent["parts"] == [{"text": "Be brief. "}, {"text": "Be nice."}]


def test_a_str_instruction_is_written_as_a_str_was() -> None:
    sent = _sent(nicer, "Be kind.")
    assert sent["parts"] == [{"text": "Be nice."}]


def test_added_system_message_has_parts_of_its_own() -> None:
    @hw.before_model
    def added(request: hw.ModelRequest) -> hw.ModelRequest:
        first, *rest = request.messages
        new = (first.replace(content=first.text.upper()), hw.Message("system", "Be fast."))
        return request.replace(messages=(*new, *rest))

    sent = _sent(added)
    assert sent["parts"] == [{"text": "BE BRIEF. "}, {"text": "BE KIND."}, {"text": "Be fast."}]
