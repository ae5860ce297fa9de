"""The public surface: `hookwrap.__all__` is sorted and complete, the SPEC names are there,
and the neutral types of SPEC §6 are frozen, slotted attrs classes with `.replace`."""

from __future__ import annotations

import re
import types
from typing import Any

import attrs
import pytest

import hookwrap as hw

HOOK_DECORATORS = [
    "before_agent",
    "before_model",
    "wrap_model",
    "on_chunk",
    "on_usage",
    "after_model",
    "before_tool",
    "wrap_tool",
    "after_tool",
    "on_start",
    "on_iteration",
    "after_agent",
    "on_finish",
    "on_error",
    "on_abort",
]
MARKERS = ["Respond", "Skip", "Abort", "DROP", "Aborted"]
API = [
    "Stack",
    "Middleware",
    "model",
    "tool",
    "wrap",
    "run",
    "current",
    "explain",
    "RunContext",
    "HookSpec",
]
NEUTRAL_TYPES = [
    "Message",
    "ToolSpec",
    "ModelRequest",
    "ModelResponse",
    "Chunk",
    "Usage",
    "ToolCall",
    "ToolOutcome",
]


def isort_key(name: str) -> tuple[int, list[Any]]:
    """The "isort-style" order ruff's RUF022 keeps `__all__` in: SCREAMING_CASE, then
    CamelCase, then the rest; a natural sort within each group."""
    if name.isupper():
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return group, natural


def test_all_is_sorted() -> None:
    """`__all__` is in the isort-style order (as httpx checks its own, with ruff's rule)."""
    assert hw.__all__ == sorted(hw.__all__, key=isort_key)


def test_all_has_no_duplicates_and_every_entry_exists() -> None:
    """Every name in `__all__` is listed once and is an attribute of the package."""
    assert len(set(hw.__all__)) == len(hw.__all__)
    missing = [name for name in hw.__all__ if not hasattr(hw, name)]
    assert missing == []


def test_all_is_complete() -> None:
    """Every public name of the package namespace (not `_`-prefixed, not a submodule) is
    exported in `__all__`: nothing public leaks by accident."""
    public = {
        name
        for name, value in vars(hw).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert sorted(public - set(hw.__all__)) == []


@pytest.mark.parametrize("name", HOOK_DECORATORS + MARKERS + API + NEUTRAL_TYPES)
def test_spec_names_are_exported(name: str) -> None:
    """Each name the SPEC promises is importable from `hookwrap` and listed in `__all__`."""
    namespace: dict[str, Any] = {}
    exec(f"from hookwrap import {name}", namespace)
    assert namespace[name] is getattr(hw, name)
    assert name in hw.__all__


def test_aborted_is_an_exception_carrying_its_reason() -> None:
    """`hw.Aborted(reason)` is an Exception with `.reason`."""
    exc = hw.Aborted("limit reached")
    assert isinstance(exc, Exception)
    assert exc.reason == "limit reached"


# -- neutral types -------------------------------------------------------------------------------

FIELDS: dict[str, list[str]] = {
    "Message": ["role", "content", "tool_calls", "tool_call_id", "name", "raw"],
    "ToolSpec": ["name", "description", "parameters"],
    "ModelRequest": ["messages", "tools", "model", "options", "stream", "raw"],
    "ModelResponse": ["message", "usage", "finish_reason", "model", "raw"],
    "Chunk": [
        "kind",
        "text",
        "tool_call_id",
        "tool_name",
        "usage",
        "finish_reason",
        "name",
        "value",
        "raw",
    ],
    "Usage": ["input_tokens", "output_tokens", "total_tokens"],
    "ToolCall": ["id", "name", "arguments", "raw"],
    "ToolOutcome": ["ok", "result", "error", "duration"],
}


def sample(name: str) -> Any:
    """One instance of each neutral type, built with its documented fields."""
    return {
        "Message": lambda: hw.Message("user", "hello"),
        "ToolSpec": lambda: hw.ToolSpec("get_weather", "Weather of a city", {"type": "object"}),
        "ModelRequest": lambda: hw.ModelRequest(messages=(hw.Message.user("hi"),), model="m"),
        "ModelResponse": lambda: hw.ModelResponse(hw.Message.assistant("hi"), hw.Usage(1, 2, 3)),
        "Chunk": lambda: hw.Chunk("text", "piece"),
        "Usage": lambda: hw.Usage(1, 2, 3),
        "ToolCall": lambda: hw.ToolCall("call_1", "get_weather", {"city": "Paris"}),
        "ToolOutcome": lambda: hw.ToolOutcome(True, "sunny", None, 0.5),
    }[name]()


# A change of one field per type, for `.replace`.
CHANGES: dict[str, dict[str, Any]] = {
    "Message": {"content": "changed"},
    "ToolSpec": {"description": "changed"},
    "ModelRequest": {"model": "other"},
    "ModelResponse": {"finish_reason": "stop"},
    "Chunk": {"text": "changed"},
    "Usage": {"output_tokens": 20},
    "ToolCall": {"name": "other_tool"},
    "ToolOutcome": {"result": "rainy"},
}


@pytest.mark.parametrize("name", NEUTRAL_TYPES)
def test_neutral_type_has_the_documented_fields_in_order(name: str) -> None:
    """The attrs fields are those of SPEC §6, in that order (positional construction)."""
    cls = getattr(hw, name)
    assert attrs.has(cls)
    assert [a.name for a in attrs.fields(cls)] == FIELDS[name]


@pytest.mark.parametrize("name", NEUTRAL_TYPES)
def test_neutral_type_is_frozen(name: str) -> None:
    """Assigning to a field raises attrs' FrozenInstanceError."""
    value = sample(name)
    first = FIELDS[name][0]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(value, first, getattr(value, first))


@pytest.mark.parametrize("name", NEUTRAL_TYPES)
def test_neutral_type_is_slotted(name: str) -> None:
    """Slotted: instances have no `__dict__`, so even bypassing the frozen `__setattr__` no
    stray attribute can be stored."""
    cls = getattr(hw, name)
    value = sample(name)
    assert "__slots__" in vars(cls)
    assert not hasattr(value, "__dict__")
    with pytest.raises(AttributeError):
        object.__setattr__(value, "not_a_field", 1)


@pytest.mark.parametrize("name", NEUTRAL_TYPES)
def test_neutral_type_replace_returns_a_changed_copy(name: str) -> None:
    """`x.replace(**changes)` returns a new instance with the changes; `x` is unchanged."""
    value = sample(name)
    before = attrs.asdict(value, recurse=False)
    changed = value.replace(**CHANGES[name])
    assert type(changed) is type(value)
    assert changed is not value
    for field, new in CHANGES[name].items():
        assert getattr(changed, field) == new
    untouched = {k: v for k, v in before.items() if k not in CHANGES[name]}
    assert {k: getattr(changed, k) for k in untouched} == untouched
    assert attrs.asdict(value, recurse=False) == before


def test_replace_rejects_unknown_fields() -> None:
    """`.replace` with a name that is not a field is an error, not a silent no-op."""
    with pytest.raises(TypeError):
        hw.Usage(1, 2, 3).replace(tokens=5)


# -- Message ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "system", "assistant"])
def test_message_constructors_set_role_and_content(role: str) -> None:
    """`Message.user/system/assistant(text)` build a message of that role."""
    message = getattr(hw.Message, role)("some text")
    assert isinstance(message, hw.Message)
    assert (message.role, message.content, message.text) == (role, "some text", "some text")
    assert message.tool_calls == ()
    assert message.tool_call_id is None
    assert message.name is None


def test_message_defaults() -> None:
    """Only role and content are needed; the rest defaults as SPEC §6 shows."""
    message = hw.Message("assistant", "ok")
    assert (message.tool_calls, message.tool_call_id, message.name) == ((), None, None)


def test_message_text_joins_the_text_parts() -> None:
    """With a tuple of parts, `.text` joins the text parts and skips the others."""
    parts = (
        hw.TextPart("Look at "),
        hw.ImagePart("https://example.com/cat.png", "image/png"),
        hw.TextPart("this cat."),
    )
    message = hw.Message.user(parts)
    assert message.content == parts
    assert message.text == "Look at this cat."


def test_message_text_of_a_str_content_is_the_content() -> None:
    """With `str` content, `.text` is that string."""
    assert hw.Message("user", "plain").text == "plain"


def test_model_response_text_is_its_message_text() -> None:
    """`ModelResponse.text` is the text of its message."""
    message = hw.Message.assistant((hw.TextPart("a"), hw.TextPart("b")))
    assert hw.ModelResponse(message).text == "ab"
