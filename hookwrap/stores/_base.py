"""The `Store` protocol every `hookwrap.stores` backend follows, and the checks they share."""

from __future__ import annotations

import json
import math
import re
import sys
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from typing_extensions import Self

__all__ = [
    "Closing",
    "Store",
    "check_key",
    "check_ttl",
    "digit_count",
    "digits_text",
    "dump",
    "finite",
    "int_too_long",
    "shown",
    "shown_number",
]


class Closing:
    """`with store:` closes a store that holds a connection when the block ends."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@runtime_checkable
class Store(Protocol):
    """Key/value storage for JSON-compatible data, with optional expiry.

    Values are JSON data: `dict` (with `str` keys), `list`, `str`, `int`, `float` (finite),
    `bool` and `None`, nested freely; exactly those types, not subclasses of them. A store
    keeps a copy: mutating a value after `set`, or the value `get` returned, does not
    change what is stored. Keys are `str` without lone surrogates (a `ValueError`); text in
    a value may hold them. A stored `None` reads the same as a missing key.
    Implementations are safe to share between threads; the `a*` methods are for async
    callers.
    """

    def get(self, key: str) -> Any | None:
        """The value stored under `key`, or `None` if there is none or it expired."""
        ...

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store a copy of `value` under `key`, for `ttl` seconds (`None`: no expiry).

        A value that is not JSON data is a `TypeError` naming the key.
        """
        ...

    def delete(self, key: str) -> None:
        """Forget `key`; a missing key is not an error."""
        ...

    async def aget(self, key: str) -> Any | None:
        """`get` for async callers."""
        ...

    async def aset(self, key: str, value: Any, ttl: float | None = None) -> None:
        """`set` for async callers."""
        ...

    async def adelete(self, key: str) -> None:
        """`delete` for async callers."""
        ...


def check_store(argument: str, store: object) -> Store | None:
    """`store` if it is a store (an instance, not a class) or None; else a TypeError naming
    `argument`, which reads like ``"Agent(store=...)"``."""
    if store is None or (isinstance(store, Store) and not isinstance(store, type)):
        return store
    if isinstance(store, type):
        got = f"the class {store.__name__}; make one, as in {store.__name__}(...)"
    else:
        got = f"{type(store).__name__}: {store!r:.80}"
    raise TypeError(
        f"{argument} expects a hookwrap.stores store (get, set, delete and their async "
        f"twins) or None (got {got})"
    )


def check_key(key: object) -> str:
    """`key` if it is a `str` of Unicode text, else a `TypeError`, or a `ValueError` for a
    lone surrogate: a file or a server keeps a key as UTF-8, which cannot hold one, and
    unlike a value's text a key has no escaped form that reads back as itself."""
    if not isinstance(key, str):
        raise TypeError(f"store keys must be str (got {type(key).__name__}: {key!r})")
    index = _lone_surrogate(key)
    if index is not None:
        raise ValueError(
            f"store keys must be Unicode text: {key!r} holds the lone surrogate "
            f"{key[index]!r} at index {index}"
        )
    return key


def finite(number: float) -> bool:
    """Whether `number` is finite as a float (an int past the largest float is not)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def int_too_long(number: int) -> bool:
    """Whether `number` has more digits than Python turns into text or reads back from it
    (`sys.get_int_max_str_digits()`, 4300 by default): `str`, `repr` and `json` raise a
    `ValueError` for it."""
    limit = sys.get_int_max_str_digits()
    # below 8**limit (at least 3 bits a digit) a number has no more than `limit` digits
    if not limit or number.bit_length() <= 3 * limit:
        return False
    try:
        int.__repr__(number)
    except ValueError:
        return True
    return False


# An int up to this many bits (about 60,000 digits) has its digits counted exactly, with
# powers of 10 whose making costs more than linear time (seconds for millions of digits):
# past it, the count is estimated.
_COUNTED_BITS = 200_000
_LOG10_2 = 0.30102999566398120


def digit_count(number: int) -> int:
    """How many decimal digits `number` has (its sign aside), found without writing them:
    exactly up to `_COUNTED_BITS` bits, past that from its bit length alone (in linear
    time), which gives the count or one too few."""
    size = abs(number)
    if size < 10:
        return 1
    # log10(2) per bit gives the count, or one too few
    exponent = int((size.bit_length() - 1) * _LOG10_2)
    if size.bit_length() > _COUNTED_BITS:
        return exponent + 1
    # the float product may be off by one either way: powers of 10 settle it
    while 10**exponent > size:
        exponent -= 1
    while 10 ** (exponent + 1) <= size:
        exponent += 1
    return exponent + 1


def digits_text(number: int) -> str:
    """``"5001 digits"``, or ``"about 2408240 digits"`` where `digit_count` estimates."""
    about = "about " if abs(number).bit_length() > _COUNTED_BITS else ""
    return f"{about}{digit_count(number)} digits"


def shown(value: object, width: int = 80) -> str:
    """`repr(value)` for a message, cut to about `width` characters. Never raises: an int
    that has more digits than that says how many (its `repr` may not even be made), and a
    value whose `repr` raises (a container holding such an int) is shown by its type."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * width:
        if type(value) is not int:  # an IntEnum member: named by its type, as no int
            return f"a {type(value).__name__} of {digits_text(value)}"
        head = "" if int_too_long(value) else f"{int.__repr__(value)[:20]}..., "
        return f"{head}an int of {digits_text(value)}"
    try:
        text = repr(value)
    except Exception:  # a message about a value must not fail on the value itself
        return f"<{type(value).__name__} instance at {id(value):#x}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def shown_number(number: float) -> str:
    """`shown(number)` for a number out of range: an int past the largest float says so
    (a negative one is out of range for its sign)."""
    if isinstance(number, int) and number > 0 and not finite(number):
        return f"{shown(number)}, too large for a float"
    return shown(number)


def check_ttl(ttl: object) -> float | None:
    """`ttl` as seconds: `None` or a finite number above 0."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise TypeError(
            f"ttl must be a number of seconds or None (got {type(ttl).__name__}: {shown(ttl)})"
        )
    if not finite(ttl) or ttl <= 0:
        raise ValueError(
            f"ttl must be a finite number of seconds above 0, or None (got {shown_number(ttl)})"
        )
    return float(ttl)


_PAIRED = re.compile("[\ud800-\udbff][\udc00-\udfff]")  # a high surrogate, then a low one


def dump(key: str, value: object) -> str:
    """`value` as JSON text, or a `TypeError` naming `key` and the part that is not JSON.

    Text with a lone surrogate (a file name decoded with ``surrogateescape``) is written
    as `\\udXXX` escapes, which UTF-8 can hold and `json.loads` reads back as the same
    `str`; any other text is written as it is.
    """
    problem = _not_json(value, "the value", set())
    if problem is not None:
        raise TypeError(f"cannot store {key!r}: {problem}; a store keeps JSON data only")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:  # an int too long for `str`: only now is it worth finding
        spot = _long_int_spot(value, "the value")
        if spot is None:
            raise
        raise TypeError(f"cannot store {key!r}: {spot}; a store keeps JSON data only") from None
    if text.isascii() or _lone_surrogate(text) is None:
        return text
    paired = _PAIRED.search(text)
    if paired is not None:  # escaped, the two would read back as the one character
        raise TypeError(
            f"cannot store {key!r}: the value holds the surrogates {paired.group()!r} as two "
            "code points, which JSON reads back as the one character they encode; a store "
            "keeps JSON data only"
        )
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


def _not_json(value: object, where: str, parents: set[int]) -> str | None:
    """What in `value` is not JSON data (`where` names the spot), or None if it all is.

    Stricter than `json.dumps`, which would quietly turn tuples into lists, `int` keys
    into `str` and an `IntEnum` into an `int`, so that what a store gives back is what it
    was given: the types must be exactly the built-in ones.
    """
    # an int too long for `str` passes here, so that each int costs no more than a type
    # check: `dump` finds it once `json.dumps` refuses it
    if value is None or type(value) in (bool, int, str):
        return None
    if type(value) is float:
        return None if math.isfinite(value) else f"{where} is {value!r} (not JSON)"
    container: list[Any] | dict[Any, Any]
    if type(value) is list or type(value) is dict:
        container = value  # pyright: ignore[reportUnknownVariableType]
    else:
        return f"{where} is of type {type(value).__name__} ({_short(value)}){_plain(value)}"
    if id(container) in parents:
        return f"{where} contains itself"
    parents.add(id(container))
    try:
        if isinstance(container, list):
            for i, item in enumerate(container):
                problem = _not_json(item, f"{where}[{i}]", parents)
                if problem is not None:
                    return problem
            return None
        for name, item in container.items():
            if type(name) is not str:
                return (
                    f"{where} has the key {shown(name)} of type {type(name).__name__} "
                    f"(JSON keys are str){_plain(name)}"
                )
            problem = _not_json(item, f"{where}[{name!r}]", parents)
            if problem is not None:
                return problem
        return None
    finally:
        parents.discard(id(container))


def _long_int_spot(value: object, where: str) -> str | None:
    """Where in `value` (JSON data, as `_not_json` found it) an int too long for `str`
    is, said as `_not_json` says what is not JSON data; None if it holds none."""
    if type(value) is int and int_too_long(value):
        return (
            f"{where} is an int of {digits_text(value)}, more than Python writes as text and "
            f"reads back (sys.get_int_max_str_digits() is {sys.get_int_max_str_digits()})"
        )
    items: Any = ()
    if type(value) is list:
        items = ((f"{where}[{i}]", item) for i, item in enumerate(value))  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    elif type(value) is dict:
        items = ((f"{where}[{name!r}]", item) for name, item in value.items())  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
    for spot, item in items:
        found = _long_int_spot(item, spot)
        if found is not None:
            return found
    return None


def _lone_surrogate(text: str) -> int | None:
    """Where the first lone surrogate in `text` is (UTF-8 cannot encode one), or None."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _plain(value: object) -> str:
    """For a subclass of a JSON type (an `IntEnum`, an `OrderedDict`), what it would come
    back as; else nothing."""
    base = next((t for t in (str, int, float, list, dict) if isinstance(value, t)), None)
    return "" if base is None else f", which would come back as a plain {base.__name__}"


def _short(value: object) -> str:
    return shown(value, 60)
