"""Tool arguments from a model, structured strictly.

A model writes a tool call's arguments as JSON. A value of the wrong kind (`null` for a
`str`, `"false"` for a `bool`, `2.7` for an `int`, a string for a list) is a bad argument
the model is told about, never coerced as cattrs' default converter would; a key that a
dataclass or attrs class has no field for is refused, as an unknown argument is. A value
for a union is read as the first member, by these same rules, that takes it.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import math
import sys
import types
import typing
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Literal, Union, cast

import attrs
import cattrs
from cattrs.disambiguators import is_supported_union
from cattrs.errors import BaseValidationError, IterableValidationError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, override
from cattrs.v import format_exception, transform_error

from ._convert import converter
from ._errors import add_note

__all__ = ["is_union", "json_text", "strict", "why_not"]


class _Mismatch(TypeError):
    """A JSON value of the wrong kind for a type; the message says what was expected."""


class _NotOneOf(_Mismatch):
    """A value that is not among those a type allows (which the message lists)."""


class _Inexact(_Mismatch):
    """A number a type cannot hold as the model wrote it (the message says why)."""


def json_text(value: Any) -> str:
    """`value` as the model wrote it (JSON), cut short."""
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _got(expected: str, value: Any, error: type[_Mismatch] = _Mismatch) -> _Mismatch:
    return error(f"expected {expected}, got {json_text(value)}")


def _strict(check: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """The hook of a primitive type from `check`; its subclasses (an `IntEnum`, a `str`
    enum), which cattrs gives the same hook, are read as themselves."""
    plain = frozenset((str, int, float, bool))

    def hook(value: Any, tp: Any) -> Any:
        if tp in plain:
            return check(value)
        if issubclass(tp, enum.Enum):
            return _strict_enum(value, tp)
        return tp(check(value))

    return hook


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _got("a string", value)


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _got("true or false", value)


_EXACT = 2**53  # a float below this in size is an integer exactly when it looks like one


def _int(value: Any) -> int:
    """An int from a JSON integer, or from a number with a fraction or an exponent that is
    an integer (`2.0`, `1e3`), as JSON Schema's `integer` takes; a float that large (`1e100`)
    is rounded already, so it is refused rather than passed on as digits never written."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():  # JSON has one kind of number
        if abs(value) < _EXACT:
            return int(value)
        raise _Inexact(
            "a number with a fraction or an exponent is an exact integer only below 2**53: "
            "write a larger one in digits"
        )
    raise _got("an integer", value)


def _float(value: Any) -> float:
    """A finite float: NaN and Infinity, which Python's JSON reader takes, are no JSON
    numbers, and a number too large for a float (`1e400`) is read as Infinity."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)  # an int beyond a float: an OverflowError, its message given
        if math.isfinite(number):
            return number
        raise _Inexact(
            "JSON has no NaN or Infinity, and a number beyond a float's range (1e400) is read "
            "as Infinity"
        )
    raise _got("a number", value)


def _equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: in Python `True == 1` (in arrays and objects too), and a tuple
    (an enum member's value, a `Literal`'s) is written as an array, which JSON reads back
    as a list."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        x = cast("Sequence[Any]", a)
        y = cast("Sequence[Any]", b)
        return len(x) == len(y) and all(map(_equal, x, y))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        p: Mapping[Any, Any] = a  # pyright: ignore[reportUnknownVariableType]
        q: Mapping[Any, Any] = b  # pyright: ignore[reportUnknownVariableType]
        return p.keys() == q.keys() and all(_equal(p[k], q[k]) for k in p)
    return bool(a == b) and isinstance(a, bool) is isinstance(b, bool)


def _strict_literal(value: Any, tp: Any) -> Any:
    options = typing.get_args(tp)
    plain = [o.value if isinstance(o, enum.Enum) else o for o in options]
    for option, json_value in zip(options, plain, strict=True):
        if _equal(json_value, value):
            return option
    raise _got(f"one of {json.dumps(plain, default=repr)}", value)  # as its name says


def _strict_enum(value: Any, tp: Any) -> Any:
    members: list[enum.Enum] = list(tp)
    for member in members:
        if _equal(member.value, value):
            return member
    raise _got(f"one of {json.dumps([m.value for m in members], default=repr)}", value, _NotOneOf)


_ARRAYS: dict[Any, Callable[[list[Any]], Any]] = {
    list: list,
    tuple: tuple,
    set: set,
    frozenset: frozenset,
}


def _strict_array(value: Any, tp: Any) -> Any:
    """A list, tuple or set from a JSON array only: a string or an object is not read as
    the sequence of its characters or keys."""
    if not isinstance(value, (list, tuple)):
        raise _got("an array", value)
    items: list[Any] = list(cast("Iterable[Any]", value))
    origin = typing.get_origin(tp) or tp
    args = typing.get_args(tp)
    if origin is tuple and args and args[-1] is not Ellipsis:
        kinds = [] if args == ((),) else list(args)  # tuple[()] has no items
        if len(items) != len(kinds):
            raise _got(f"an array of {len(kinds)} items", value, _NotOneOf)
    else:
        kinds = [args[0] if args else Any] * len(items)
    return _ARRAYS[origin](_each(tp, zip(range(len(items)), items, kinds, strict=True)))


def _strict_mapping(value: Any, tp: Any) -> dict[Any, Any]:
    """A dict from a JSON object. JSON writes every key as a string: a key of another type
    (`dict[int, str]`) is read from it as cattrs reads it."""
    if not isinstance(value, Mapping):
        raise _got("an object", value)
    args = typing.get_args(tp)
    key_type, value_type = args if len(args) == 2 else (Any, Any)
    pairs = list(cast("Mapping[Hashable, Any]", value).items())
    keys = [_key(k, key_type) for k, _ in pairs]
    return dict(zip(keys, _each(tp, ((k, v, value_type) for k, v in pairs)), strict=True))


def _key(key: Hashable, tp: Any) -> Any:
    """A JSON object's key, always a string, read as `tp` as cattrs reads it (`"2"` for an
    `int`); a float key must be finite, as a JSON number is (`"NaN"` is not one)."""
    if tp in (str, Any):
        return key
    value: Any = converter.structure(key, tp)
    return _float(value) if isinstance(value, float) else value


def _each(tp: Any, items: Iterable[tuple[Any, Any, Any]]) -> list[Any]:
    """Each `(index, value, type)` structured, the failures gathered as cattrs gathers
    them, so that the error message gives the path to each (`ids[2]`)."""
    out: list[Any] = []
    errors: list[Exception] = []
    for index, item, kind in items:
        try:
            out.append(strict.structure(item, kind))
        except Exception as exc:
            add_note(
                exc, IterableValidationNote(f"Structuring {tp!r} @ index {index!r}", index, kind)
            )
            errors.append(exc)
    if errors:
        # on 3.11+ cattrs builds it on ExceptionGroup, whose `__new__` pyright reads
        raise IterableValidationError(f"While structuring {tp!r}", errors, tp)  # pyright: ignore[reportCallIssue]
    return out


_NONE: Any = type(None)
_KINDS: dict[Any, tuple[type, ...]] = {  # the Python types of the JSON values each reads
    _NONE: (_NONE,),
    bool: (bool,),
    int: (int, float),  # an integral float is an int
    float: (float, int),
    str: (str,),
}


def _kinds(tp: Any) -> tuple[type, ...] | None:
    """The Python types of the JSON values `tp` may be read from, the one that is exactly
    its own first; None for a type that says nothing of them (`Any`, ...)."""
    if tp in _KINDS:
        return _KINDS[tp]
    if _is_literal(tp) or _is_enum(tp):
        found: list[type] = []
        for option in _options(tp):
            value: object = option.value if isinstance(option, enum.Enum) else option
            array = isinstance(value, (tuple, list))  # read from a JSON array
            found.extend(_KINDS.get(type(value), (list, tuple) if array else (type(value),)))
        return tuple(found)
    if _is_array(tp):
        return (list, tuple)
    origin = typing.get_origin(tp) or tp
    if _is_mapping(tp) or attrs.has(origin) or dataclasses.is_dataclass(origin):
        return (Mapping,)
    return None


def _options(tp: Any) -> list[Any]:
    return list(tp) if _is_enum(tp) else list(typing.get_args(tp))


def _takes(kinds: tuple[type, ...], value: Any) -> bool:
    """`value` is of one of `kinds`, a bool only where `bool` is named: not an int in JSON."""
    return isinstance(value, kinds) and (not isinstance(value, bool) or bool in kinds)


def _name(tp: Any) -> str:
    """`tp` as written in a signature, for a message: `list[str]`, `None`."""
    if tp is _NONE:
        return "None"
    if _is_literal(tp):
        return f"Literal[{', '.join(map(repr, typing.get_args(tp)))}]"
    args = typing.get_args(tp)
    if is_union(tp):
        return " | ".join(map(_name, args))
    if args:
        inner = ", ".join("..." if a is Ellipsis else _name(a) for a in args)
        return f"{_name(typing.get_origin(tp))}[{inner}]"
    return str(getattr(tp, "__name__", tp))


def _strict_union(tp: Any) -> Callable[[Any, Any], Any]:
    """The hook of a union of plain types (`int | str`, `str | list[str]`, with dataclasses
    or None): a value goes to the members that read its JSON kind, a Literal or an enum
    first, then the member whose own kind it is (an int to `int` before `float`), each as
    that member alone reads it; the first that takes it wins. When none does, the error is
    that of the only member of its kind, which says what inside was wrong, or else one
    naming every member."""
    members = [(m, _kinds(m)) for m in typing.get_args(tp)]
    expected = _name(tp)

    def rank(member: tuple[Any, tuple[type, ...] | None], value: Any) -> int:
        option, kinds = member
        if _is_literal(option) or _is_enum(option):
            return 0
        return 1 if kinds is not None and _takes(kinds[:1], value) else 2

    def hook(value: Any, _tp: Any) -> Any:
        fitting = [(m, k) for m, k in members if k is None or _takes(k, value)]
        fitting.sort(key=lambda m: rank(m, value))  # stable: else in the union's order
        errors: list[Exception] = []
        for member, _ in fitting:
            if member is _NONE:
                return None
            try:
                return strict.structure(value, member)
            except Exception as exc:
                errors.append(exc)
        if len(errors) == 1 and type(errors[0]) is not _Mismatch:
            raise errors[0]
        raise _got(expected, value)

    return hook


def is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _is_plain_union(tp: Any) -> bool:
    """A union cattrs does not read itself: it reads `X | None` and unions of dataclasses
    and attrs classes (telling them apart by their fields)."""
    args = typing.get_args(tp)
    optional = len(args) == 2 and _NONE in args
    return is_union(tp) and not optional and not is_supported_union(tp)


def _is_literal(tp: Any) -> bool:
    return typing.get_origin(tp) is Literal


def _is_enum(tp: Any) -> bool:
    return inspect.isclass(tp) and issubclass(tp, enum.Enum)


def _is_array(tp: Any) -> bool:
    return (typing.get_origin(tp) or tp) in _ARRAYS


def _is_mapping(tp: Any) -> bool:
    return (typing.get_origin(tp) or tp) in (dict, Mapping)


def _names_a_class(tp: Any) -> bool:
    """Whether a field's type names a class by a string (`list["Node"]` in a class that
    contains itself), which cattrs does not look up."""
    return isinstance(tp, (str, typing.ForwardRef)) or any(
        _names_a_class(arg) for arg in typing.get_args(tp)
    )


def _field_types(cls: Any) -> list[tuple[str, Any]]:
    if attrs.has(cls):
        return [(a.name, a.type) for a in attrs.fields(cls)]
    return [(f.name, f.type) for f in dataclasses.fields(cls)]


def _is_class_with_names(tp: Any) -> bool:
    return (
        inspect.isclass(tp)
        and (dataclasses.is_dataclass(tp) or attrs.has(tp))
        and any(_names_a_class(t) for _, t in _field_types(tp))
    )


def class_hints(cls: Any) -> dict[str, Any]:
    """The type hints of a dataclass or attrs class, a class named by a string inside a
    generic (`list["Node"]`) resolved too, as `typing.get_type_hints` does from Python 3.11
    (3.10 leaves the string)."""
    hints = typing.get_type_hints(cls)
    if not any(_names_a_class(tp) for tp in hints.values()):
        return hints
    names = {**vars(sys.modules.get(cls.__module__, types)), cls.__name__: cls}
    return {name: _resolved(tp, names) for name, tp in hints.items()}


def _resolved(tp: Any, names: dict[str, Any]) -> Any:
    if isinstance(tp, typing.ForwardRef):
        tp = tp.__forward_arg__
    if isinstance(tp, str):
        return _resolved(eval(tp, names), names)  # as get_type_hints reads a string
    args = typing.get_args(tp)
    if not any(_names_a_class(arg) for arg in args) or typing.get_origin(tp) is Literal:
        return tp
    fresh = tuple(_resolved(arg, names) for arg in args)
    if is_union(tp):
        return Union[fresh]  # (the members given as a tuple)
    if isinstance(tp, types.GenericAlias):
        return types.GenericAlias(typing.get_origin(tp), fresh)
    return tp.copy_with(fresh)


def _class_with_names(cls: Any) -> Callable[[Any, Any], Any]:
    """A dataclass or attrs class whose fields name classes by strings: those fields are
    structured as their resolved types (as the tool's schema shows them)."""
    try:
        hints = class_hints(cls)
    except Exception:  # a name that resolves nowhere: cattrs says which
        hints = {}
    fields: dict[str, Any] = {  # (typed loosely: the keywords are field names)
        name: override(struct_hook=_as(hints[name]))
        for name, tp in _field_types(cls)
        if _names_a_class(tp) and name in hints
    }
    return make_dict_structure_fn(cls, strict, **fields)


def _as(tp: Any) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        return strict.structure(value, tp)

    return structure


strict = cattrs.Converter(forbid_extra_keys=True)
strict.register_structure_hook(str, _strict(_str))
strict.register_structure_hook(bool, _strict(_bool))
strict.register_structure_hook(int, _strict(_int))
strict.register_structure_hook(float, _strict(_float))
strict.register_structure_hook_func(_is_literal, _strict_literal)
strict.register_structure_hook_func(_is_enum, _strict_enum)
# (older cattrs dispatch enums by class, calling the class with the value, before the hook
# functions above; a hook on the class itself is found first in every release)
strict.register_structure_hook(enum.Enum, _strict_enum)
strict.register_structure_hook_func(_is_array, _strict_array)
strict.register_structure_hook_func(_is_mapping, _strict_mapping)
strict.register_structure_hook_factory(_is_plain_union, _strict_union)
strict.register_structure_hook_factory(_is_class_with_names, _class_with_names)


def why_not(exc: BaseException, key: str) -> str:
    """What is wrong with argument `key` beyond its type and value: the values a Literal or
    an enum allows, the path to each bad value inside it, ..."""
    if isinstance(exc, BaseValidationError):
        return "; ".join(transform_error(exc, key, _format))
    if isinstance(exc, _Mismatch) and not isinstance(exc, (_NotOneOf, _Inexact)):
        return ""
    return str(exc)


def _format(exc: BaseException, tp: type | None) -> str:
    return str(exc) if isinstance(exc, _Mismatch) else format_exception(exc, tp)
