"""Requests whose iterable parameters come in a given shape (a list, a tuple, a generator),
and a redacting hook, for the tests of how SDK requests are read."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import hookwrap as hw

Shape = Callable[[list[Any]], Iterable[Any]]
SHAPES: dict[str, Shape] = {"tuple": tuple, "generator": lambda items: (x for x in items)}

TOOLS = [{"name": "calc", "input_schema": {"type": "object"}}]
SYSTEM = [{"type": "text", "text": "Be brief."}]
CALL = {"type": "tool_use", "id": "t1", "name": "calc", "input": {"q": "2+2"}}
RESULT_BLOCKS = [{"type": "text", "text": "4"}]


def anthropic_kwargs(shape: Shape, **more: Any) -> dict[str, Any]:
    """An Anthropic request whose every iterable parameter is given in `shape` (a list for
    `list`), with the keyword arguments `more` (an `extra_body`)."""
    result = {"type": "tool_result", "tool_use_id": "t1", "content": shape(RESULT_BLOCKS)}
    messages = [
        {"role": "user", "content": shape([{"type": "text", "text": "What is 2+2?"}])},
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": [result]},
    ]
    return {
        "model": "m",
        "max_tokens": 5,
        "system": shape(SYSTEM),
        "messages": shape(messages),
        "tools": shape(TOOLS),
        **more,
    }


def redactor(seen: list[tuple[hw.Message, ...]]) -> Any:
    """A hook that records the messages it sees and masks "secret" in the assistant's."""

    @hw.before_model
    def redact(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(request.messages)
        return request.replace(
            messages=tuple(
                m.replace(content=m.text.replace("secret", "XXX")) if m.role == "assistant" else m
                for m in request.messages
            )
        )

    return redact
