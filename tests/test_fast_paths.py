"""The shortcuts hot paths take must give what the plain way gives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import pytest

from hookwrap import _adapter
from hookwrap._adapter import is_stream
from hookwrap._types import (
    Chunk,
    Message,
    TextPart,
    Usage,
    maker,
    new_chunk,
    new_full_message,
    new_text_part,
)

# -- fast constructors -----------------------------------------------------------------------


def test_a_made_chunk_equals_the_constructed_one_for_every_field_given_by_keyword() -> None:
    usage = Usage(3, 2, 5)
    made = new_chunk(
        "finish",
        "",
        tool_call_id="c1",
        tool_name="t",
        usage=usage,
        finish_reason="stop",
        name="n",
        value=7,
        raw="r",
    )
    built = Chunk("finish", "", "c1", "t", usage, "stop", "n", 7, "r")
    assert made == built
    assert type(made) is Chunk
    assert attrs.asdict(made, recurse=False) == attrs.asdict(built, recurse=False)
    assert made.raw == "r"  # not compared by `==`


def test_a_made_object_takes_the_defaults_of_the_fields_not_given() -> None:
    assert new_chunk("text", "hi", None) == Chunk("text", "hi")
    assert new_text_part("x") == TextPart("x")
    message = new_full_message("assistant", "a", (), None, None)
    assert message == Message("assistant", "a")


def test_a_made_object_is_frozen_like_a_constructed_one() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        new_chunk("text", "hi", None).text = "changed"


def test_a_maker_refuses_a_field_it_does_not_know_and_one_given_twice() -> None:
    with pytest.raises(TypeError):
        new_chunk("text", "hi", None, colour="red")
    with pytest.raises(TypeError):
        new_chunk("text", "hi", None, text="again")


def test_a_field_whose_default_is_a_factory_gets_a_fresh_value_each_time() -> None:
    @attrs.frozen(slots=True, weakref_slot=False)  # as hookwrap's own types
    class Holder:
        name: str
        items: list[int] = attrs.field(factory=list[int])

    make = maker(Holder, "name")
    first, second = make("a"), make("b")
    assert first == Holder("a")
    assert second == Holder("b")
    assert first.items is not second.items


# -- is_stream ----------------------------------------------------------------------------------


class _Counting(type):
    """A metaclass that counts the attributes looked up on its classes and not found (as
    pydantic's does, in Python)."""

    misses = 0

    def __getattr__(cls, name: str) -> Any:
        _Counting.misses += 1
        raise AttributeError(name)


class _Answer(metaclass=_Counting):
    pass


class _Chunks:
    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        raise StopIteration


class _AsyncChunks:
    def __aiter__(self) -> AsyncIterator[int]:
        return self

    async def __anext__(self) -> int:
        raise StopAsyncIteration


def _gen() -> Iterator[int]:
    yield 1


async def _agen() -> AsyncIterator[int]:
    yield 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", False),
        (b"bytes", False),
        (bytearray(b"x"), False),
        ({"a": 1}, False),
        ([1, 2], False),
        (Message("user", "x"), False),
        (iter([1]), True),
        (_gen(), True),
        (_agen(), True),
        (_Chunks(), True),
        (_AsyncChunks(), True),
    ],
)
def test_is_stream_answers_the_same_the_first_time_and_after(value: Any, expected: bool) -> None:
    assert is_stream(value) is expected
    assert is_stream(value) is expected


def test_is_stream_asks_a_class_once() -> None:
    _Counting.misses = 0
    assert is_stream(_Answer()) is False
    asked = _Counting.misses
    assert asked > 0  # `__next__` and `__anext__` were looked up, and missed
    for _ in range(5):
        assert is_stream(_Answer()) is False
    assert _Counting.misses == asked


def test_is_stream_answers_right_for_more_classes_than_it_remembers() -> None:
    classes = [
        type(f"Stream{i}", (_Chunks,), {}) if i % 2 else type(f"Value{i}", (), {})
        for i in range(_adapter._LEARNED + 10)  # pyright: ignore[reportPrivateUsage]
    ]
    for i, cls in enumerate(classes):
        assert is_stream(cls()) is bool(i % 2)
    assert len(_adapter._STREAMY) <= _adapter._LEARNED  # pyright: ignore[reportPrivateUsage]
