"""The one cattrs converter: dicts in the common chat format <-> neutral types."""

from __future__ import annotations

import decimal
import json
import math
import re
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, cast, get_origin

import cattrs

from ._types import (
    CHUNK_KINDS,
    Chunk,
    ImagePart,
    Message,
    Part,
    TextPart,
    ToolCall,
    Usage,
    new_full_message,
)
from .stores._base import digit_count, digits_text, int_too_long

__all__ = ["answer_from", "converter", "message_from", "message_to_dict"]

converter = cattrs.Converter()

_ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})
_PLAIN_ROLES = frozenset({"system", "user", "assistant", "tool"})  # "developer" is renamed


def _mapping(value: Any) -> Mapping[str, Any] | None:
    """`value` as a str-keyed mapping, or None when it is not a mapping."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def part_from(item: Any) -> Part | None:
    """The part of a content item, or None for a dict part of a type hookwrap does not model
    (`input_audio`, `file`): as in the OpenAI adapters, hooks do not see it, and the
    plain-function adapter writes it back where it was."""
    if isinstance(item, (TextPart, ImagePart)):
        return item
    if isinstance(item, str):
        return TextPart(item)
    part = _mapping(item)
    if part is not None:
        kind = part.get("type", "text")
        if kind in ("text", "input_text", "output_text"):
            return TextPart(str(part.get("text", "")))
        if kind in ("image_url", "image", "input_image"):
            url: Any = part.get("image_url", part.get("url"))
            nested = _mapping(url)
            if nested is not None:
                url = nested.get("url")
            return ImagePart(str(url), part.get("media_type"))
        return None
    raise TypeError(
        f"a message part must be a str, a dict, a TextPart or an ImagePart (got {item!r})"
    )


class UnparsedArguments(dict[str, Any]):
    """A tool call's arguments that are not a JSON object (a model's slip): empty, as the
    OpenAI adapter reads them, but marked, so the tool stage answers the call with a
    `ToolArgumentError` instead of running the tool without its arguments. `text` is what
    the model sent; a message written back as a dict carries it again."""

    __slots__ = ("reason", "text")

    def __init__(self, text: str, reason: str) -> None:
        super().__init__()
        self.text = text
        self.reason = reason

    def __repr__(self) -> str:
        return f"UnparsedArguments({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (UnparsedArguments, (self.text, self.reason))


def _json_kind(value: Any) -> str:
    """What `value` is, in JSON's words: "null", "a boolean", "a string", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {type(value).__name__}"


def tool_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments: a mapping, or its JSON text (none at all reads as ``{}``); what
    is neither, `UnparsedArguments` keeping the text."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    mapping = _mapping(value)
    if mapping is not None:
        return dict(mapping)
    if not isinstance(value, str):
        text = json.dumps(value, default=repr)
        return UnparsedArguments(text, f"{_json_kind(value)}, not an object")
    try:
        decoded: Any = json.loads(value)
    except ValueError as exc:
        return UnparsedArguments(value, f"not valid JSON: {exc}")
    mapping = _mapping(decoded)
    if mapping is None:
        return UnparsedArguments(value, f"{_json_kind(decoded)}, not an object")
    return dict(mapping)


def tool_call_from(item: Any) -> ToolCall:
    if isinstance(item, ToolCall):
        return item
    data = _mapping(item)
    if data is None:
        raise TypeError(f"a tool call must be a dict or ToolCall (got {item!r})")
    source = _mapping(data.get("function")) or data
    arguments = tool_arguments(source.get("arguments", source.get("args")))
    return ToolCall(str(data.get("id", "")), str(source.get("name", "")), arguments, raw=item)


def result_text(value: Any) -> str:
    """A tool result as the model reads it: a str as is, anything else as JSON (through the
    converter; a set as an array), or its `repr` when it is no JSON data (one holding NaN
    or infinity, or itself). A str subclass reads as the plain str it holds, as an SDK
    sends it: for a `str` enum that is its value, where its `repr` would be the text.
    An int of more digits than `str` writes (see `_long_int`) is written out all the same."""
    if isinstance(value, str):
        return str.__str__(value)
    try:
        unstructured = converter.unstructure(value)
        try:
            return json.dumps(unstructured, ensure_ascii=False, allow_nan=False, default=_loose)
        except ValueError:  # NaN, or an int too long for `str`: try it written out
            return _LongInts().text(unstructured)
    except Exception:  # no JSON data, or a value whose `str` raises (from `_loose`)
        pass
    try:
        return repr(value)
    except Exception:  # a repr that raises: the model still gets a text, as docs promise
        return f"<{type(value).__name__} instance at {id(value):#x}>"


_MAX_WRITTEN = 50_000  # digits of an int written out; writing them takes quadratic time


def _long_int(number: int) -> str:
    """An int of more digits than `str` writes (`sys.get_int_max_str_digits()`), as its
    digits, through `Decimal`, which has no such limit and leaves the process-wide one as
    it is; one past `_MAX_WRITTEN` digits as a note of its size."""
    digits = digit_count(number)
    if digits <= _MAX_WRITTEN:
        try:
            return str(decimal.Decimal(number))
        except ValueError:  # the pure-Python decimal, which writes the int as text first
            pass
    sign = "a negative " if number < 0 else "an "
    return f"<{sign}int of {digits_text(number)}>"


class _LongInts:
    """JSON text in which an int too long for `json` is written out by `_long_int`: each
    is first swapped for a placeholder string, marked by a token of this writing only,
    which the text of that int then replaces."""

    def __init__(
        self, default: Callable[[Any], Any] | None = None, allow_nan: bool = False
    ) -> None:
        self.token = f"\x00{uuid.uuid4().hex}:"
        self.written: list[str] = []
        self.default = default or _loose
        self.allow_nan = allow_nan

    def text(self, unstructured: Any) -> str:
        swapped = self.swap(unstructured)
        text = json.dumps(
            swapped,
            ensure_ascii=False,
            allow_nan=self.allow_nan,
            default=lambda item: self.swap(self.default(item)),  # pyright: ignore[reportUnknownLambdaType]
        )
        # json writes the token's NUL as \u0000: the placeholder reads "\u0000<hex>:<i>"
        marked = re.escape(json.dumps(self.token)[:-1]) + r'(\d+)"'
        return re.sub(marked, lambda m: self.written[int(m.group(1))], text)

    def swap(self, item: Any) -> Any:
        if isinstance(item, int) and not isinstance(item, bool) and int_too_long(item):
            self.written.append(_long_int(item))
            return f"{self.token}{len(self.written) - 1}"
        if isinstance(item, dict):
            pairs: dict[Any, Any] = item  # pyright: ignore[reportUnknownVariableType]
            return {self.key(key): self.swap(value) for key, value in pairs.items()}
        if isinstance(item, (list, tuple)):
            items: list[Any] | tuple[Any, ...] = item  # pyright: ignore[reportUnknownVariableType]
            return [self.swap(value) for value in items]
        return item

    @staticmethod
    def key(key: Any) -> Any:
        """A dict key as JSON writes it: a long int's digits are its text."""
        if isinstance(key, int) and not isinstance(key, bool) and int_too_long(key):
            return _long_int(key)
        return key


def json_text(value: Any, default: Callable[[Any], Any]) -> str:
    """`json.dumps(value, ensure_ascii=False, default=default)`, in which an int of more
    digits than `str` writes is written out as `result_text` writes it."""
    try:
        return json.dumps(value, ensure_ascii=False, default=default)
    except ValueError as exc:  # an int too long for `str` (json writes NaN here)
        try:
            return _LongInts(default, allow_nan=True).text(value)
        except RecursionError:  # no: a value that contains itself, which has no JSON
            raise exc from None


def long_ints_written(value: Any) -> Any:
    """`value` (JSON data in dicts, lists and tuples) with each int of more digits than
    `str` writes, key or item, swapped for the text `result_text` writes for it: JSON
    has no other way to read one back."""
    if isinstance(value, int) and not isinstance(value, bool) and int_too_long(value):
        return _long_int(value)
    if isinstance(value, dict):
        pairs: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {long_ints_written(key): long_ints_written(item) for key, item in pairs.items()}
    if isinstance(value, (list, tuple)):
        items: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [long_ints_written(item) for item in items]
    return value


def _loose(value: Any) -> Any:
    """What JSON has for a value the converter left as it is: an array for a set (in a
    field typed `Collection`), else its `str` (a `datetime`, a `Decimal`, a `Path`)."""
    if isinstance(value, AbstractSet):
        return _array(cast("AbstractSet[object]", value))
    return str(value)


def arguments_text(arguments: Mapping[str, Any]) -> str:
    if isinstance(arguments, UnparsedArguments):
        return arguments.text
    return json.dumps(dict(arguments))


def answer_from(item: Mapping[str, Any]) -> Message:
    """The message of a chat dict given as an answer (a model function's, a hook's, a
    `Respond`ed one), its role `"assistant"` unless it says otherwise. A dict with none of a
    message's keys is no answer: read as one, its text would silently be empty."""
    if "content" not in item and "tool_calls" not in item and "role" not in item:
        keys = ", ".join(repr(k) for k in list(item)[:8])
        raise TypeError(
            "a dict answer is a chat message, {'role': 'assistant', 'content': ...} (or "
            f"with 'tool_calls'); got a dict with none of those keys ({keys or 'empty'})"
        )
    return message_from(item if "role" in item else {"role": "assistant", **item})


def message_from(value: Any, *, unmodelled: bool = False) -> Message:
    """A `Message` from a `Message`, a chat dict (`{"role": ..., "content": ...}`) or a str.

    A content part hookwrap does not model is refused (reading it, the message would lose
    it), or with `unmodelled`, left out, for a reader that writes it back where it was."""
    cls = value.__class__
    if cls is Message:
        return value  # type: ignore[no-any-return]
    if cls is dict:  # the usual chat dict: read without the checks of the general case
        plain_role = value.get("role")
        text = value.get("content")
        name = value.get("name")
        call_id = value.get("tool_call_id")
        if (
            plain_role in _PLAIN_ROLES
            and text.__class__ is str
            and not value.get("tool_calls")
            and (name is None or name.__class__ is str)
            and (call_id is None or call_id.__class__ is str)
        ):
            made: Message = new_full_message(plain_role, text, (), call_id, name)
            return made
    if isinstance(value, Message):
        return value
    if isinstance(value, str):
        return Message("user", value)
    data = _mapping(value)
    if data is None:
        raise TypeError(
            f"a message must be a dict with 'role' and 'content', a Message or a str "
            f"(got {type(value).__name__}: {value!r})"
        )
    role: Any = data.get("role")
    if role not in _ROLES:
        raise ValueError(
            f"a message's role must be one of {sorted(_ROLES)} (got {role!r} in {value!r})"
        )
    if role == "developer":
        role = "system"
    content: Any = data.get("content")
    if content is None:
        content = ""
    elif not isinstance(content, str):
        if isinstance(content, (bytes, Mapping)) or not isinstance(content, Iterable):
            # refused by name, not read as parts: a dict would give its keys, bytes numbers
            got = type(content).__name__  # pyright: ignore[reportUnknownArgumentType]
            raise TypeError(
                "a message's content must be a str or a list of parts (text or images) "
                f"(got {got}: {content!r:.60} in {value!r:.120})"
            )
        items = list(cast("Iterable[object]", content))
        parts = [part_from(p) for p in items]
        if not unmodelled and None in parts:
            item = items[parts.index(None)]
            raise TypeError(f"a message part must be text or an image (got {item!r})")
        content = tuple(p for p in parts if p is not None)
    calls: Any = data.get("tool_calls") or ()
    return Message(
        role,
        content,
        tuple(tool_call_from(c) for c in calls),
        data.get("tool_call_id"),
        data.get("name"),
    )


def _part_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    out: dict[str, Any] = {"type": "image_url", "image_url": {"url": part.url}}
    if part.media_type:
        out["media_type"] = part.media_type
    return out


def message_to_dict(message: Message) -> dict[str, Any]:
    """A chat dict with only the keys that carry something."""
    content = message.content
    out: dict[str, Any] = {
        "role": message.role,
        "content": content if isinstance(content, str) else [_part_dict(p) for p in content],
    }
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": arguments_text(c.arguments)},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def chunk_from_dict(value: Mapping[str, Any]) -> Chunk:
    kind = value.get("kind", value.get("type", "text"))
    if kind not in CHUNK_KINDS:
        raise ValueError(
            f"a chunk dict's kind must be one of {sorted(CHUNK_KINDS)} (got {value!r})"
        )
    usage = value.get("usage")
    if isinstance(usage, Mapping):
        usage = converter.structure(usage, Usage)
    text = value.get("text")
    if text is None:  # a chat-style delta, {"content": "..."}
        text = value.get("content")
    return Chunk(
        kind,
        text if isinstance(text, str) else "",
        value.get("tool_call_id"),
        value.get("tool_name"),
        usage,
        value.get("finish_reason"),
        value.get("name"),
        value.get("value"),
        raw=value,
    )


_CHUNK_KEYS = frozenset(
    {"kind", "type", "text", "content", "tool_call_id", "tool_name", "usage", "finish_reason"}
    | {"name", "value"}
)


def chunk_to_dict(chunk: Chunk, like: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A chunk as a dict; `like` (the dict it was read from) keeps its own shape: its other
    keys, `type` for `kind`, and `content` for the text of a chat-style delta."""
    out: dict[str, Any] = {}
    if like is not None:
        out.update((k, v) for k, v in like.items() if k not in _CHUNK_KEYS)
    kind_key = "type" if like is not None and "type" in like and "kind" not in like else "kind"
    chat = like is not None and "content" in like and "text" not in like
    if not (chat and chunk.kind == "text" and "kind" not in like and "type" not in like):  # type: ignore[operator]
        out[kind_key] = chunk.kind
    if chunk.text or chat:
        out["content" if chat else "text"] = chunk.text
    for key in ("tool_call_id", "tool_name", "finish_reason", "name", "value"):
        value = getattr(chunk, key)
        if value is not None:
            out[key] = value
    if chunk.usage is not None:
        out["usage"] = converter.unstructure(chunk.usage)
    return out


def _is_set(tp: Any) -> bool:
    origin = get_origin(tp) or tp
    return isinstance(origin, type) and issubclass(origin, AbstractSet)


def _array(value: AbstractSet[Any]) -> list[Any]:
    """A set as JSON has it: an array, sorted when its items sort (for the same text each
    time), else in its own order."""
    items = [converter.unstructure(item) for item in value]
    try:
        return sorted(items)
    except TypeError:  # items of kinds that do not compare
        return items


converter.register_unstructure_hook_func(_is_set, _array)
converter.register_structure_hook(Message, lambda value, _: message_from(value))  # pyright: ignore[reportUnknownLambdaType]
converter.register_unstructure_hook(Message, message_to_dict)
converter.register_structure_hook(ToolCall, lambda value, _: tool_call_from(value))  # pyright: ignore[reportUnknownLambdaType]
converter.register_structure_hook(Chunk, lambda value, _: chunk_from_dict(value))  # pyright: ignore[reportUnknownLambdaType]
converter.register_unstructure_hook(Chunk, chunk_to_dict)


_CONTAINERS: dict[str, type[Any]] = {c.__name__: c for c in (list, tuple, set, frozenset, dict)}


def typed_form(value: Any) -> tuple[Any, Any]:
    """A value that is no JSON data as a checkpoint keeps it: its kind and its JSON data.

    The kind of a value of a class is the path of its type (``"module:qualname"``), its
    data cattrs-unstructured. A list, tuple, set, frozenset or dict with str keys keeps the
    data of its items, and as its kind ``{"of": "list", "each": kind}`` (``"items"``, the
    kind of each, where they differ), so that each item comes back of its own class, as
    deep as they nest; the kind of JSON data is None. A `TypeError` says why a value, or
    which item of it, cannot be kept: its type is not found by that path (a class made in
    a function), cattrs cannot unstructure it to JSON data, or what comes back from that
    data is not equal to it."""
    try:
        return _form(value, "", set())
    except RecursionError:
        raise TypeError("it is nested too deep") from None


def _form(value: Any, where: str, parents: set[int]) -> tuple[Any, Any]:
    """`typed_form` of `value`, the item at `where` (``"[0]['a']"``) of the value kept, in
    the containers whose ids are `parents`."""
    cls: type[Any] = type(cast(object, value))
    if cls is int and int_too_long(value):
        raise TypeError(
            f"{'its item ' + where + ': ' if where else ''}it is an int of "
            f"{digits_text(value)}, more than Python writes as text and reads back "
            f"(sys.get_int_max_str_digits() is {sys.get_int_max_str_digits()})"
        )
    if cls is str or cls is int or cls is bool or value is None:
        return None, value
    if cls is float and math.isfinite(value):
        return None, value
    at = f"its item {where}: " if where else ""
    is_dict = cls is dict and all(type(key) is str for key in value)
    if not is_dict and cls not in (list, tuple, set, frozenset):
        return _class_form(value, cls, at)
    if id(value) in parents:
        raise TypeError(f"{at}it holds itself")
    parents.add(id(value))
    kinds: Any
    data: Any
    if is_dict:
        forms = {key: _form(item, f"{where}[{key!r}]", parents) for key, item in value.items()}
        kinds = {key: kind for key, (kind, _) in forms.items()}
        data = {key: item for key, (_, item) in forms.items()}
        each = list(kinds.values())
    else:
        pairs = [_form(item, f"{where}[{i}]", parents) for i, item in enumerate(value)]
        kinds = each = [kind for kind, _ in pairs]
        data = [item for _, item in pairs]
    parents.discard(id(value))
    if any(kind != each[0] for kind in each):
        return {"of": cls.__name__, "items": kinds}, data
    kind = each[0] if each else None
    if kind is None and cls in (list, dict):
        return None, data  # JSON data, as it is
    return {"of": cls.__name__, "each": kind}, data


def _class_form(value: Any, cls: type[Any], at: str) -> tuple[str, Any]:
    """`typed_form` of a value of a class; `at` starts an error's text."""
    path = f"{cls.__module__}:{cls.__qualname__}"
    if _type_at(path) is not cls:
        raise TypeError(f"{at}its type {cls.__qualname__} cannot be found by its name ({path})")
    try:
        text = json.dumps(converter.unstructure(value), allow_nan=False, default=_listed)
        data = json.loads(text)
        back: Any = converter.structure(data, cls)
    except Exception as exc:  # whatever cattrs or json refuse
        raise TypeError(f"{at}cattrs cannot make JSON data of it ({exc})") from None
    if back != value:
        raise TypeError(f"{at}it does not come back equal from its JSON data")
    return path, data


def _listed(value: Any) -> list[Any]:
    if isinstance(value, (set, frozenset)):
        return list(cast("set[Any]", value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def from_typed_form(kind: Any, data: Any) -> Any:
    """The value `typed_form` kept as (`kind`, `data`); a `TypeError` if no module imported
    has its type, or that of an item."""
    if kind is None:
        return data
    if isinstance(kind, str):
        cls = _type_at(kind)
        if cls is None:
            raise TypeError(f"its type {kind} is in no module imported here")
        return converter.structure(data, cls)
    of = _CONTAINERS[kind["of"]]
    if of is dict:
        kinds = kind["items"] if "items" in kind else dict.fromkeys(data, kind["each"])
        return {key: from_typed_form(kinds[key], item) for key, item in data.items()}
    kinds = kind["items"] if "items" in kind else [kind["each"]] * len(data)
    return of(from_typed_form(k, item) for k, item in zip(kinds, data, strict=True))


def _type_at(path: str) -> type[Any] | None:
    module_name, _, qualname = path.partition(":")
    if "<" in qualname:  # defined inside a function
        return None
    found: Any = sys.modules.get(module_name)  # imported, never imported here
    try:
        for name in qualname.split("."):
            found = getattr(found, name)
    except AttributeError:
        return None
    return found if isinstance(found, type) else None
