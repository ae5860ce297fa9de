"""A value refused for another reason (a tuple, a set, an IntEnum, a Fraction) that holds an
int of more digits than Python writes as text still gets the documented error naming the
key and spot, or the constructor's own error; counting the digits of a huge int costs no
more than its size."""

from __future__ import annotations

import enum
import fractions
import time

import pytest

from hookwrap.middleware import Retry, Timeout
from hookwrap.stores import MemoryStore
from hookwrap.stores._base import dump, shown

LONG = 10**5000  # 5001 digits, past the default limit of 4300
CHEAP = 1 << 16_000_000  # about 4.8 million digits, made in no time


class Big(enum.IntEnum):
    B = LONG


@pytest.mark.parametrize(
    ("value", "spot"),
    [
        ((LONG,), "the value is of type tuple"),
        ({"a": (1, LONG)}, "the value['a'] is of type tuple"),
        ({LONG}, "the value is of type set"),
        (Big.B, "the value is of type Big"),
        (fractions.Fraction(LONG, 3), "the value is of type Fraction"),
    ],
    ids=["tuple", "tuple-in-dict", "set", "intenum", "fraction"],
)
def test_store_refuses_with_type_error_naming_key_and_spot(value: object, spot: str) -> None:
    with pytest.raises(TypeError, match="cannot store 'k'") as caught:
        MemoryStore().set("k", value)
    assert spot in str(caught.value)


def test_long_int_in_a_list_is_still_named() -> None:
    with pytest.raises(TypeError) as caught:
        dump("k", {"rows": [1, [2, LONG]]})
    assert "the value['rows'][1][1] is an int of 5001 digits" in str(caught.value)


def test_shown_never_raises() -> None:
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert shown(Bad()).startswith("<Bad instance at 0x")
    assert shown((LONG,)).startswith("<tuple instance at 0x")
    assert shown(Big.B) == "a Big of 5001 digits"


def test_retry_list_with_long_int_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"Retry\(max_delay=...\)"):
        Retry(max_delay=[LONG])  # type: ignore[arg-type]


def test_intenum_too_large_for_a_float_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"Retry\(initial_delay=...\).*too large for a float"):
        Retry(initial_delay=Big.B)
    with pytest.raises(ValueError, match=r"Timeout\(tool=...\).*too large for a float"):
        Timeout(tool=Big.B)


def test_huge_cheap_int_is_counted_in_linear_time() -> None:
    # counting exactly (powers of 10) takes several seconds for this int, the estimate
    # from its bit length microseconds: a generous bound that a slow machine still meets
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"an int of about 4816480 digits, too large for a float"):
        Timeout(model=CHEAP)
    assert time.perf_counter() - start < 1.0
