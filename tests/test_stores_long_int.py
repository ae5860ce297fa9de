"""Every store refuses an int of more digits than Python writes as text and reads back
with the documented `TypeError`, naming the key and the spot, and takes a `ttl` past the
largest float as no expiry in effect; messages never spell out hundreds of digits."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookwrap.middleware import Retry, Timeout, ToolCache
from hookwrap.stores import MemoryStore, SQLiteStore, Store

LONG = 10**5000  # 5001 digits, past the default limit of 4300
HUGE = 10**400  # past the largest float


def _redis_store() -> Store:
    pytest.importorskip("redis")
    from hookwrap.stores import RedisStore

    return RedisStore("redis://127.0.0.1:1/0", prefix="t:")  # never connects here


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest) -> Store:
    return MemoryStore() if request.param == "memory" else SQLiteStore(":memory:")


@pytest.mark.parametrize(
    ("value", "spot"),
    [
        (LONG, "the value is"),
        ({"n": [1, -LONG]}, "the value['n'][1] is"),
        ({"k": {"x": LONG}}, "['x']"),
    ],
    ids=["int", "nested", "deep"],
)
def test_long_int_is_a_type_error_naming_key_and_spot(
    store: Store, value: object, spot: str
) -> None:
    with pytest.raises(TypeError, match="cannot store 'k'") as caught:
        store.set("k", value)
    assert spot in str(caught.value)
    assert "5001 digits" in str(caught.value)
    assert store.get("k") is None


def test_redis_refuses_a_long_int_before_sending() -> None:
    store = _redis_store()
    with pytest.raises(TypeError, match=r"cannot store 'k': the value\['n'\] is an int of 5001"):
        store._entry("k", {"n": LONG}, None)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]


def test_int_at_the_limit_is_kept(store: Store) -> None:
    value = 10**4299  # 4300 digits
    store.set("k", {"n": value})
    assert store.get("k") == {"n": value}


def test_huge_float_ttl_is_kept(store: Store) -> None:
    store.set("k", 1, ttl=1e306)
    assert store.get("k") == 1


@pytest.mark.parametrize("ttl", [1e306, 1e300], ids=["1e306", "1e300"])
def test_redis_huge_ttl_is_no_expiry(ttl: float) -> None:
    store = _redis_store()
    entry = store._entry("k", 1, ttl)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    assert entry == ("t:k", "1", None)


MAKERS: list[tuple[str, Callable[[int], object]]] = [
    ("ttl must be", lambda n: MemoryStore().set("k", 1, ttl=n)),
    ("ttl must be", lambda n: SQLiteStore(":memory:").set("k", 1, ttl=n)),
    ("ToolCache(ttl=...)", lambda n: ToolCache(ttl=n)),
    ("Timeout(model=...)", lambda n: Timeout(model=n)),
    ("Timeout(tool=...)", lambda n: Timeout(tool=n)),
    ("Retry(max_delay=...)", lambda n: Retry(max_delay=n)),
    ("Retry(initial_delay=...)", lambda n: Retry(initial_delay=n)),
    ("Retry(backoff=...)", lambda n: Retry(backoff=n)),
]


@pytest.mark.parametrize(("value", "digits"), [(HUGE, 401), (LONG, 5001)], ids=["huge", "long"])
@pytest.mark.parametrize(("named", "make"), MAKERS, ids=[m[0] for m in MAKERS])
def test_huge_int_is_too_large_shown_cut(
    value: int, digits: int, named: str, make: Callable[[int], object]
) -> None:
    with pytest.raises(ValueError) as caught:
        make(value)
    message = str(caught.value)
    assert named in message
    assert f"an int of {digits} digits, too large for a float" in message
    assert len(message) < 250


@pytest.mark.parametrize("value", [-HUGE, -LONG], ids=["huge", "long"])
def test_negative_huge_int_is_shown_cut(value: int) -> None:
    with pytest.raises(ValueError, match=r"an int of \d+ digits\)") as caught:
        Timeout(model=value)
    assert len(str(caught.value)) < 250


def test_shown_and_digit_count() -> None:
    from hookwrap.stores._base import digit_count, shown

    assert [digit_count(n) for n in (0, 9, 10, -99, 10**4299, 10**4300 - 1, LONG)] == [
        1,
        1,
        2,
        2,
        4300,
        4300,
        5001,
    ]
    assert shown(HUGE) == "10000000000000000000..., an int of 401 digits"
    assert shown(LONG) == "an int of 5001 digits"
    assert shown(12) == "12"
