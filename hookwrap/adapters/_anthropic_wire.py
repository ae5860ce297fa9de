"""Anthropic's Messages API (`POST /v1/messages`, `?beta=true` included) as plain dicts.

Hook changes are written back into the body the SDK built, reusing every original dict
that did not change, so what hookwrap does not model (`cache_control`, citations, thinking
blocks, documents, server tools, `is_error`) reaches the API as the caller wrote it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import uuid
from collections.abc import Hashable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, cast

from .._engine import ANSWER_READERS
from .._types import (
    Chunk,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    TextPart,
    ToolCall,
    ToolSpec,
    Usage,
    maker,
    new_chunk,
    new_full_message,
    new_message,
    new_request,
    new_response,
    new_usage,
)
from ._wire import (
    ARRAY_CLASSES,
    NOTE,
    Event,
    Framer,
    Made,
    Wire,
    array_of,
    diff_runs,
    dumped,
    finish_in,
    json_int,
    recorded,
    split_text,
    streamed,
)
from .function import _pairs as _message_pairs  # pyright: ignore[reportPrivateUsage]
from .function import _role  # pyright: ignore[reportPrivateUsage]

__all__ = ["MessagesWire"]

# Body keys with a neutral field; every other key is an option.
_MODELED = frozenset({"system", "messages", "tools", "model", "stream"})
_TOP = -1  # the source of the message read from the top-level `system`
_ABSENT: Any = object()
_ROLES = frozenset({"user", "assistant", "system"})
_API = "anthropic.messages"  # the tag of an answer's record in `Message.raw`


def _map(value: Any) -> Mapping[str, Any]:
    """A dict as it is; one of the SDK's own objects (a content block of an answer, sent
    back as `{"role": "assistant", "content": response.content}`) as the SDK sends it; {}
    for anything else. An unchanged block is still written back as the object it was."""
    # what JSON gives, a dict, needs no ABC check; annotations rather than `cast` (a call)
    if value.__class__ is dict or isinstance(value, Mapping):
        found: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return found
    return dumped(value) or {}


def _seq(value: Any) -> list[Any]:
    return list(cast("Iterable[Any]", value)) if isinstance(value, (list, tuple)) else []


def _arrays(body: Mapping[str, Any], deep: bool = True) -> dict[str, Any]:
    """The keys of `body` whose iterables the SDK sends as arrays but a wire does not read
    as they are (a generator of messages, of tools, of a message's blocks, of a tool
    result's blocks), with them read into lists: the SDK's parameters are `Iterable`s.
    Containers the caller owns are copied, never changed. Usually empty. Not `deep`: the
    top-level ones only (every call reads those; the blocks, a hook that reads the view)."""
    out: dict[str, Any] = {}
    for key in ("system", "tools"):
        items = array_of(body.get(key))
        if items is not None:
            out[key] = items
    given = body.get("messages")
    read = array_of(given)
    if read is not None:
        out["messages"] = read
    messages: Any = read if read is not None else given
    if not deep or (messages.__class__ is not list and not isinstance(messages, tuple)):
        return out
    items = read
    for k, item in enumerate(cast("Sequence[Any]", messages)):
        if item.__class__ is dict:
            kind = item.get("content").__class__
            if kind is str or (kind is list and item.get("role") != "user"):
                continue  # the usual message: no blocks to read, or no tool results
        settled = _settled_message(item)
        if settled is not item:
            if items is None:
                items = list(cast("Sequence[Any]", messages))
            items[k] = settled
    if items is not None:
        out["messages"] = items
    return out


def _settled_message(item: Any) -> Any:
    """`item` with its blocks read into lists (see `_arrays`), or `item` itself."""
    given: Any = item
    if item.__class__ is not dict and not isinstance(item, Mapping):
        return given
    message: Mapping[str, Any] = item  # pyright: ignore[reportUnknownVariableType]
    content = message.get("content")
    read = array_of(content)
    blocks: Any = read if read is not None else content
    if blocks.__class__ is not list and not isinstance(blocks, tuple):
        return given
    out: list[Any] | None = read
    if message.get("role") == "user":  # where tool results are
        for k, block in enumerate(cast("Sequence[Any]", blocks)):
            if block.__class__ is dict and block.get("type") == "tool_result":
                inner = array_of(block.get("content"))
                if inner is not None:
                    if out is None:
                        out = list(cast("Sequence[Any]", blocks))
                    out[k] = {**block, "content": inner}
    return given if out is None else {**message, "content": out}


def _settled(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """`body`, or a copy of it with its iterables read into lists (see `_arrays`)."""
    arrays = _arrays(body)
    return {**body, **arrays} if arrays else body


def _given(value: Any) -> bool:
    """False for the SDKs' `omit` and `NOT_GIVEN` placeholders, which their encoders drop:
    the SDK's own `messages.stream()` leaves them in the body for every unset parameter.
    Told by the class's name, once per class."""
    cls = value.__class__
    found = _GIVEN.get(cls)
    if found is None:
        found = _GIVEN[cls] = cls.__name__ not in ("Omit", "NotGiven")
    return found


# class -> whether its values are real ones (False: a placeholder), learned as they come
_GIVEN: dict[type, bool] = dict.fromkeys((str, int, float, bool, dict, list, type(None)), True)


def _options(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body's parameters hookwrap does not model, placeholders left out. The SDK's body
    holds every parameter, most of them placeholders, so it is filtered in C: by class."""
    keep: list[bool | None] = list(map(_GIVEN.get, map(type, body.values())))
    if None in keep:  # a class not seen before
        keep = list(map(_given, body.values()))
    options = dict(itertools.compress(body.items(), keep))
    for key in _MODELED.intersection(options):
        del options[key]
    return options


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


# -- blocks -----------------------------------------------------------------------------------


def _part(block: Any) -> Part | None:
    """The neutral part of a text or image block; None for a block hookwrap does not model."""
    b = _map(block)
    kind = b.get("type")
    if kind == "text":
        return TextPart(str(b.get("text", "")))
    if kind == "image":
        source = _map(b.get("source"))
        if source.get("type") == "base64":
            media = source.get("media_type")
            return ImagePart(f"data:{media};base64,{source.get('data', '')}", media)
        if source.get("type") == "url":
            return ImagePart(str(source.get("url", "")))
    return None  # file images, documents, thinking, search results: kept, not modeled


def _parts(value: Any) -> tuple[Part, ...]:
    return tuple(p for b in _seq(value) if (p := _part(b)) is not None)


def _content(value: Any) -> str | tuple[Part, ...]:
    """A body's content (str, blocks or absent) as a message's content, keeping its form."""
    if value is None:
        return ""
    return value if isinstance(value, str) else _parts(value)


def _as_parts(content: str | tuple[Part, ...]) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (TextPart(content),) if content else ()
    return content


def _image_source(part: ImagePart) -> dict[str, Any]:
    url = part.url
    if url.startswith("data:"):
        head, _, data = url.partition(",")
        media = part.media_type or head[5:].partition(";")[0]
        return {"type": "base64", "media_type": media, "data": data}
    return {"type": "url", "url": url}


def _part_block(part: Part, base: Any) -> Any:
    """`part` as a block; `base`, the block it replaces, lends it its other keys."""
    b = _map(base)
    if b and b.get("type") == part.type:
        if isinstance(part, TextPart):
            return _changed_text(b, part.text)
        return {**b, "source": _image_source(part)}
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return {"type": "image", "source": _image_source(part)}


def _changed_text(block: Mapping[str, Any], text: str) -> dict[str, Any]:
    """A text block with a new text, keeping its other keys but its citations: they quote
    what the old text drew on, which a hook that changed it (a redaction) may have taken
    out. (A stream's citations are chunks of their own, for hooks to keep or drop.)"""
    out = {k: v for k, v in block.items() if k != "citations"}
    out["text"] = text
    return out


def _retext(blocks: list[Any], text: str) -> tuple[list[Any], tuple[Part, ...]]:
    """`text`, a message's new text, written over `blocks` for `_merge`: the blocks, and the
    parts standing for the text. Where several text blocks held the old text, the new one is
    split across them (`split_text`), each keeping its place and its keys
    (`cache_control`; citations where its text is unchanged), as a stream's deltas do; an
    empty one goes, as the API refuses empty text blocks (and callers send an answer's
    blocks back in the next request)."""
    slots = [i for i, b in enumerate(blocks) if _map(b).get("type") == "text"]
    if len(slots) < 2:
        return blocks, _as_parts(text)
    old = [str(_map(blocks[i]).get("text", "")) for i in slots]
    out: list[Any] = list(blocks)
    for i, was, now in zip(slots, old, split_text(old, text), strict=True):
        if not now:
            out[i] = None
        elif now != was:
            out[i] = _changed_text(_map(blocks[i]), now)
    out = [b for b in out if b is not None]
    return out, tuple(p for b in out if isinstance(p := _part(b), TextPart))


def _call(block: Any) -> ToolCall:
    b = _map(block)
    return ToolCall(str(b.get("id", "")), str(b.get("name", "")), dict(_map(b.get("input"))), block)


def _call_block(call: ToolCall, base: Any) -> Any:
    if base is not None:
        if _call(base) == call:
            return base
        return {**_map(base), "id": call.id, "name": call.name, "input": dict(call.arguments)}
    return {
        "type": "tool_use",
        "id": call.id or _new_id("toolu_"),
        "name": call.name,
        "input": dict(call.arguments),
    }


def _pairs(old: Sequence[Hashable], new: Sequence[Hashable]) -> list[tuple[int | None, bool]]:
    """For each new part, the old one it stands for (None: it is new) and whether it is
    unchanged; a replaced run pairs with the old run in order, the rest is new or gone
    (`diff_runs` settles which of two equal items is which)."""
    runs = diff_runs(old, new)
    same: list[int | None] = [None] * len(new)
    for tag, i1, i2, j1, j2 in runs:
        if tag == "equal":
            same[j1:j2] = range(i1, i2)
    taken = {i for i in same if i is not None}
    found: list[tuple[int | None, bool]] = [(i, i is not None) for i in same]
    for tag, i1, i2, j1, j2 in runs:
        if tag == "replace":
            for t in range(min(i2 - i1, j2 - j1)):
                if i1 + t not in taken and found[j1 + t][0] is None:
                    found[j1 + t] = (i1 + t, False)
    return found


def _merge(blocks: Sequence[Any], parts: Sequence[Part], calls: Sequence[ToolCall]) -> list[Any]:
    """`blocks` with their text and image blocks replaced by `parts` and their tool_use
    blocks by `calls`; other blocks (thinking, documents, server tools) stay in place.

    Unchanged parts keep their original block; a changed one takes the keys of the block
    it replaces (so a `cache_control` breakpoint stays where it was); a new one goes after
    the part before it, or before the first kept one. Without any text or image block, new
    parts go before the first tool_use (or last). Calls fill the tool_use slots in order,
    each taking the keys of the original block with its id; surplus calls go last.
    """
    slots = [b for b in blocks if _part(b) is not None]
    placed: dict[int, list[Any]] = {}
    anchor = -1  # new parts before every kept one go "after slot -1"
    for j, (i, same) in enumerate(_pairs([_part(b) for b in slots], parts)):
        if i is not None:
            anchor = i
            block = slots[i] if same else _part_block(parts[j], slots[i])
        else:
            block = _part_block(parts[j], None)
        placed.setdefault(anchor, []).append(block)
    by_id = {_map(b).get("id"): b for b in blocks if _map(b).get("type") == "tool_use"}
    head = placed.pop(-1, [])
    out: list[Any] = []
    slot = c = 0
    for block in blocks:
        if _part(block) is not None:
            out += head
            head = []
            out += placed.get(slot, ())
            slot += 1
        elif _map(block).get("type") == "tool_use":
            if not slots:
                out += head
                head = []
            if c < len(calls):
                out.append(_call_block(calls[c], by_id.get(calls[c].id)))
                c += 1
        else:
            out.append(block)
    out += head
    out += (_call_block(call, by_id.get(call.id)) for call in calls[c:])
    return out


# -- requests ---------------------------------------------------------------------------------


class _Unit:
    """One neutral message read from a body, and what it was read from."""

    __slots__ = ("blocks", "content", "item", "message", "source")

    def __init__(
        self, message: Message, source: int, item: Any, content: Any, blocks: list[Any] | None
    ) -> None:
        self.message = message
        self.source = source  # index into `messages`, or _TOP
        self.item = item  # the message dict, the `system` value or the tool_result block
        self.content = content  # its original content value
        self.blocks = blocks  # the blocks it owns; None when the content was a str


def _messages(body: Mapping[str, Any]) -> tuple[Message, ...]:
    """The messages of `body`, as `_units` reads them. The usual body (no system prompt,
    each message a role and a str) is read without the units writing back needs."""
    items: Any = body.get("messages")
    system = body.get("system")
    if items.__class__ is list and (system is None or not _given(system)):
        messages: list[Message] = []
        for item in items:
            if item.__class__ is not dict or len(item) != 2:
                break
            role, content = item.get("role"), item.get("content")
            if content.__class__ is not str or role not in _ROLES:
                break
            messages.append(new_message(role, content))
        else:
            return tuple(messages)
    return tuple(u.message for u in _units(body))


def _units(body: Mapping[str, Any]) -> list[_Unit]:
    units: list[_Unit] = []
    system = body.get("system")
    if system is not None and _given(system):
        blocks = None if isinstance(system, str) else _seq(system)
        units.append(_Unit(Message("system", _content(system)), _TOP, system, system, blocks))
    names: dict[str, str] = {}  # tool_use id -> name, so tool results carry the tool's name
    for k, item in enumerate(_seq(body.get("messages"))):
        m = _map(item)
        role: Any = m.get("role")
        if role not in _ROLES:
            raise ValueError(
                f"a Messages API message has role 'user', 'assistant' or 'system' "
                f"(got {role!r} in {item!r})"
            )
        content = m.get("content")
        if content is None or isinstance(content, str):
            units.append(_Unit(new_message(role, content or ""), k, item, content, None))
            continue
        blocks = _seq(content)
        if role == "assistant":
            calls = [_call(b) for b in blocks if _map(b).get("type") == "tool_use"]
            names.update((c.id, c.name) for c in calls)
            units.append(_Unit(Message(role, _parts(blocks), calls), k, item, content, blocks))
            continue
        run: list[Any] = []
        start = len(units)
        for b in blocks:
            block = _map(b)
            if block.get("type") != "tool_result" or role != "user":
                run.append(b)
                continue
            if run:
                units.append(_Unit(Message(role, _parts(run)), k, item, run, run))
                run = []
            inner = block.get("content")
            call_id = str(block.get("tool_use_id", ""))
            tool = Message("tool", _content(inner), (), call_id, names.get(call_id))
            inner_blocks = _seq(inner) if isinstance(inner, (list, tuple)) else None
            units.append(_Unit(tool, k, b, inner, inner_blocks))
        if run or len(units) == start:
            units.append(_Unit(Message(role, _parts(run)), k, item, run, run))
    return units


def _recorded(message: Message) -> _Unit | None:
    """A unit for an answer's message sent back (one no message of the body stands for):
    the content blocks its `raw` records, which it is written over as over the message it
    was read from, so that its thinking blocks and their signatures go back in place (the
    API wants them before a tool_use) and a hook's change to its text is still written."""
    blocks = recorded(message.raw, _API) if message.role == "assistant" else None
    if blocks.__class__ is not list:
        return None
    return _Unit(message, _TOP, None, blocks, blocks)


def _unit_blocks(message: Message, unit: _Unit | None, same: bool) -> list[Any]:
    """A message's content as blocks, to join other blocks in one content list."""
    if same and unit is not None and unit.blocks is not None:
        return unit.blocks
    blocks = unit.blocks if unit is not None and unit.blocks is not None else []
    parts = message.content
    if isinstance(parts, str):  # a text over blocks: split across their text blocks
        blocks, parts = _retext(blocks, parts)
    return _merge(blocks, parts, message.tool_calls)


def _unit_content(message: Message, unit: _Unit | None, same: bool) -> Any:
    """A message's content value: a str stays a str, blocks stay blocks."""
    if same and unit is not None:
        return unit.content if unit.content is not None else ""
    content = message.content
    if (
        isinstance(content, str)
        and not message.tool_calls
        and (unit is None or unit.blocks is None)
    ):
        return content
    return _unit_blocks(message, unit, False)


def _tool_result(message: Message, unit: _Unit | None) -> Any:
    out: dict[str, Any] = dict(_map(unit.item)) if unit is not None else {}
    out["type"] = "tool_result"
    out["tool_use_id"] = message.tool_call_id or ""
    content = _unit_content(message.replace(tool_calls=()), unit, False)
    if content != "" or "content" in out:
        out["content"] = content
    return out


def _write_messages(
    units: list[_Unit], new: Sequence[Message], body: Mapping[str, Any]
) -> tuple[Any, list[Any]]:
    """The `system` value (or _ABSENT) and the `messages` list standing for `new`. Each
    message is written over the one it stands for, paired as the model function's are (by
    role, the most alike first where a hook added or removed one beside a changed one), so
    that a redacted message keeps its thinking blocks and `cache_control`, and one a hook
    added takes nothing of its neighbours."""
    old = [u.message for u in units]
    found = _message_pairs(old, new, _role)
    pairs = [(k, k is not None and old[k] == m) for m, k in zip(new, found, strict=True)]
    originals = _seq(body.get("messages"))
    ranges: dict[int, tuple[int, int]] = {}
    for k, read in enumerate(units):
        a, _ = ranges.get(read.source, (k, k))
        ranges[read.source] = (a, k + 1)

    # Leading system messages are the top-level `system`, unless read from `messages`.
    j = 0
    while j < len(new) and new[j].role == "system":
        i = pairs[j][0]
        if i is not None and units[i].source != _TOP:
            break
        j += 1
    top = range(j)
    old_system = body.get("system")
    if old_system is None or not _given(old_system):
        old_system = _ABSENT
    system: Any
    if not top:
        system = _ABSENT
    elif j == 1 and pairs[0] == (0, True) and units[0].source == _TOP:
        system = old_system
    elif isinstance(old_system, str) or (
        old_system is _ABSENT and all(isinstance(new[t].content, str) for t in top)
    ):
        system = "\n\n".join(new[t].text for t in top)
    else:
        system = []
        for t in top:
            i, same = pairs[t]
            content = new[t].content
            if not isinstance(content, str):
                content = tuple(p for p in content if isinstance(p, TextPart))
            system += _unit_blocks(
                Message("system", content), units[i] if i is not None else None, same
            )

    items: list[Any] = []
    results: list[Any] | None = None  # content of the user message collecting tool results
    results_source: int | None = None
    while j < len(new):
        message = new[j]
        i, same = pairs[j]
        unit = units[i] if i is not None else _recorded(message)
        if same and unit is not None and unit.source >= 0:
            a, b = ranges[unit.source]
            if i == a and all(
                j + t < len(new) and pairs[j + t] == (a + t, True) for t in range(b - a)
            ):
                items.append(originals[unit.source])  # the whole message, unchanged
                results = None
                j += b - a
                continue
        source = unit.source if unit is not None and unit.source >= 0 else None
        # the rest of the user message the tool results came from rejoins them; a new one not
        rejoins = source is not None and source == results_source
        if message.role == "tool":
            block = unit.item if same and unit is not None else _tool_result(message, unit)
            if results is None:
                results, results_source = [], source
                base = _map(originals[source] if source is not None else None)
                items.append({**base, "role": "user", "content": results})
            results.append(block)
        elif message.role == "user" and results is not None and rejoins:
            results += _unit_blocks(message, unit, same)
            results = None
        else:
            results = None
            base = _map(originals[source] if source is not None else None)
            content = _unit_content(message, unit, same)
            items.append({**base, "role": message.role, "content": content})
        j += 1
    return system, items


def _is_custom(tool: Any) -> bool:
    return _map(tool).get("type") in (None, "custom")


def _spec(tool: Any) -> ToolSpec:
    t = _map(tool)
    schema = t.get("input_schema")
    return ToolSpec(
        str(t.get("name", "")),
        str(t.get("description", "")),
        _map(schema) if isinstance(schema, Mapping) else {"type": "object", "properties": {}},
    )


def _tool_dict(spec: ToolSpec, base: Any) -> Any:
    if base is not None and _spec(base) == spec:
        return base
    out: dict[str, Any] = {**_map(base), "name": spec.name, "input_schema": dict(spec.parameters)}
    if spec.description:
        out["description"] = spec.description
    else:
        out.pop("description", None)
    return out


def _write_tools(specs: Sequence[ToolSpec], tools: list[Any]) -> list[Any]:
    """`tools` with the custom ones replaced by `specs` in order; server tools stay put."""
    by_name = {_map(t).get("name"): t for t in tools if _is_custom(t)}
    out: list[Any] = []
    rest = iter(specs)
    for tool in tools:
        if not _is_custom(tool):
            out.append(tool)
        elif (spec := next(rest, None)) is not None:
            out.append(_tool_dict(spec, by_name.get(spec.name)))
    out += (_tool_dict(spec, by_name.get(spec.name)) for spec in rest)
    return out


# -- responses and streams --------------------------------------------------------------------


def _usage(value: Any) -> Usage | None:
    u = _map(value)
    if not u:
        return None
    # the input read from and written to the prompt cache is input too, as OpenAI and
    # Gemini count it (Anthropic's `input_tokens` counts only what came after the cache)
    inp = json_int(u.get("input_tokens")) + _cached(u)
    out = json_int(u.get("output_tokens"))
    made: Usage = new_usage(inp, out, inp + out)
    return made


def _cached(counts: Mapping[str, Any]) -> int:
    return sum(json_int(counts.get(key)) for key in _CACHE_KEYS)


_CACHE_KEYS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def _counts(usage: Usage, native: Any) -> dict[str, int]:
    """`usage` as Anthropic counts it beside the cache counts of `native` (which stay):
    its `input_tokens` leave out the cached input the neutral count holds."""
    cached = _cached(_map(native))
    return {
        "input_tokens": max(0, usage.input_tokens - cached),
        "output_tokens": usage.output_tokens,
    }


def _started(template: Event | None) -> Mapping[str, Any]:
    """The usage of a stream's `message_start` (its template), where its cache counts are."""
    if template is None or template.event != "message_start":
        return {}
    return _map(_map(_map(template.data).get("message")).get("usage"))


def _closing_usage(
    started: Mapping[str, Any], counts: Mapping[str, Any], noted: Mapping[str, Any]
) -> dict[str, Any]:
    """The closing `message_delta`'s `counts` with the `noted` (neutral) ones, so that the
    message the SDK builds has the highest of each count reported, as the response
    `after_model` sees: the SDK takes each count the delta has over the `started` one (of
    `message_start`), so both counts are set, the input less the cached input it keeps."""
    said = [u for u in (_usage(started), _usage(counts)) if u is not None]
    inp = max([json_int(noted.get("input_tokens")), *(u.input_tokens for u in said)])
    out = max([json_int(noted.get("output_tokens")), *(u.output_tokens for u in said)])
    kept = {**started, **{k: v for k, v in counts.items() if v is not None}}
    return {**counts, "input_tokens": max(0, inp - _cached(kept)), "output_tokens": out}


def _index(chunk: Chunk, template: Event | None) -> int:
    """The content block index for a written chunk: its raw event's, else its `value` when
    an int, else the template event's, else 0."""
    for source in (chunk.raw, chunk.value, template):
        found = _map(source.data).get("index") if isinstance(source, Event) else source
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return 0


def _event(data: dict[str, Any]) -> Event:
    return Event(str(data["type"]), data)


def _block_event(kind: str, index: int, **fields: Any) -> Event:
    return _event({"type": kind, "index": index, **fields})


def _made(kind: str, index: int, **fields: Any) -> Made:
    """The event of a new chunk: `index` is only a guess (see `Made`)."""
    return Made(kind, {"type": kind, "index": index, **fields})


_DELTAS = {
    "text": ("text_delta", "text"),
    "reasoning": ("thinking_delta", "thinking"),
    "tool_call_args": ("input_json_delta", "partial_json"),
}
_STARTS = {"text": "text", "reasoning": "thinking"}  # chunk kind -> block type with text


# delta type -> the type of block it belongs in, and a fresh block of that type
_BLOCKS: dict[Any, tuple[str, dict[str, Any]]] = {
    "text_delta": ("text", {"type": "text", "text": ""}),
    "citations_delta": ("text", {"type": "text", "text": ""}),
    "thinking_delta": ("thinking", {"type": "thinking", "thinking": "", "signature": ""}),
    "signature_delta": ("thinking", {"type": "thinking", "thinking": "", "signature": ""}),
    "input_json_delta": ("tool_use", {"type": "tool_use", "id": "", "name": "", "input": {}}),
}


class _Framer(Framer):
    """Frames a Messages stream made of new chunks: `message_start` first, every delta in a
    content block of its kind (blocks numbered in the order they open, one open at a time),
    `message_delta` and `message_stop` last. The SDK's `messages.stream()` needs all that.

    The stop of a text block waits for the next block or the stream's end: text a hook held
    back and releases before then (at the `finish` chunk, which comes after the stop) goes
    into that block, as the API would have sent it, rather than into another one (or
    leaving it empty, which the API refuses when sent back).

    For the same reason a text block opens with the first delta that goes in it: where a
    hook turned its text into thinking (or dropped it), no empty text block is left behind.
    """

    __slots__ = (
        "api_block",
        "begun",
        "block",
        "cited",
        "count",
        "delta",
        "model",
        "opened",
        "replaying",
        "sent_delta",
        "started",
        "started_usage",
        "stopped",
        "tools",
        "unopened",
        "waiting",
    )

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model if isinstance(model, str) else ""
        self.started = self.tools = self.sent_delta = False
        self.started_usage: Mapping[str, Any] = {}  # `message_start`'s, for `_closing_delta`
        self.block: tuple[Any, str] | None = None  # the open block: its given index, its type
        self.api_block = False  # whether the API opened it (not a `Made` event)
        self.stopped = False  # whether its stop came (then it goes out when the block closes)
        self.unopened: dict[str, Any] | None = None  # its start, while nothing went in it
        self.cited: list[Mapping[str, Any]] = []  # citations for its text, while unopened
        self.replaying = False  # reading events that went out already (see `replay`)
        self.count = 0  # blocks opened so far
        self.delta: Event | None = None  # the closing `message_delta`, sent just before the end
        self.waiting: list[Event] = []  # made deltas for after the API's open tool call
        self.begun: list[Any] = []  # the indices of the API's blocks whose start came
        self.opened = False  # whether the API opened the stream (its own `message_start`)

    def _one(self, event: Event, out: list[Event]) -> None:
        data = _map(event.data)
        kind = data.get("type", event.event)
        if not self.started:
            self.started = True
            if kind == "message_start":
                self.opened = True
                self.started_usage = _map(_map(data.get("message")).get("usage"))
                out.append(event)
                return
            message: dict[str, Any] = {
                "id": _new_id("msg_"),
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
            out.append(_event({"type": "message_start", "message": message}))
        made = event.__class__ is Made  # its index is a guess: it goes where it fits
        if kind == "content_block_start":
            block = _map(data.get("content_block"))
            given = data.get("index")
            index = self._claims(given) if made else given
            api = index is given  # the API's block, or one whose start a hook replaced
            if api:
                self.begun.append(index)
            self._open(index, str(block.get("type", "")), dict(block), out, api)
        elif kind == "content_block_delta":
            dtype = _map(data.get("delta")).get("type")
            if dtype == "input_json_delta" and not made and data.get("index") not in self.begun:
                return  # its block's start, a hook dropped: alone, it would be a nameless call
            btype, fresh = _BLOCKS.get(dtype, _BLOCKS["text_delta"])
            held = self.block
            if made:
                if held is not None and not held[1].endswith(btype):
                    if self.api_block and held[1].endswith("tool_use"):
                        self.waiting.append(event)  # not inside the API's call: after it
                        return
                    held = None
                if held is None:
                    self._open(object(), btype, dict(fresh), out, False)
            elif held is None or held[0] != data.get("index") or not held[1].endswith(btype):
                self._open(data.get("index"), btype, dict(fresh), out, True)
            if self.unopened is not None:
                delta = _map(data.get("delta"))
                if delta.get("type") == "citations_delta":
                    self.cited.append(data)  # it goes in with the block's first text
                    return
                if delta.get("type") == "text_delta" and not delta.get("text"):
                    return  # no text yet: an empty text block would go out (the API refuses one)
                self._start(out)
                for cited in self.cited:
                    out.append(_event({**cited, "index": self.count - 1}))
                self.cited = []
            out.append(_event({**data, "index": self.count - 1}))
        elif kind == "content_block_stop":
            if self.block is not None and (made or self.block[0] == data.get("index")):
                if self.block[1] == "text":
                    self.stopped = True  # for the text a hook held back (see above)
                else:
                    self._close_block(out)
        elif kind == "message_delta":
            self._close_block(out)
            self.delta = event  # held: usage may still come
            self.sent_delta = False
        elif kind == "message_stop":
            self._close(out)
        elif kind != "message_start":
            if self.stopped and kind != "ping":  # an event after the block: its stop first
                self._close_block(out)
            out.append(event)

    def _claims(self, index: Any) -> Any:
        """The index a new call's start (a hook's `tool_call_start`) takes: that of an
        API's block whose start a hook replaced with it (its `value`, the block index, or
        the event it came in place of), so that the input the API streams for that block
        goes in it, as `after_model` sees it; else one of its own, which no API event has
        (a stream the hooks made, a fallback's, has no API blocks to take over).
        """
        if self.opened and isinstance(index, int) and index not in self.begun:
            return index
        return object()

    def replay(self, batch: Sequence[Event]) -> None:
        self.replaying = True  # a text block's start went out as it came: it opened then
        super().replay(batch)
        self.replaying = False
        self.sent_delta = self.delta is not None  # out already: sent again only with usage
        if self.stopped:  # its stop is out already: the block is closed
            self.block = None
            self.stopped = False

    def flush(self) -> list[Event]:
        """`Framer.flush`: what waits for the events after it, as the API sent it: a text
        block's start and citations (for its first text), its stop (for text a hook held
        back), the `message_delta` (for counts still to come, which it shows so far)."""
        out: list[Event] = []
        if self.unopened is not None:
            self._start(out)
            for cited in self.cited:
                out.append(_event({**cited, "index": self.count - 1}))
            self.cited = []
        if self.stopped:
            self._close_block(out)
        if self.delta is not None and not self.sent_delta:
            out.append(self._closing_delta())
            self.sent_delta = True
        return out

    def _open(
        self, index: Any, btype: str, block: dict[str, Any], out: list[Event], api: bool
    ) -> None:
        self._close_block(out)
        if btype == "tool_use":  # not a server tool's: the API ran it, the turn may end
            self.tools = True
            block["id"] = block.get("id") or _new_id("toolu_")
        self.block = (index, btype)
        self.api_block = api
        self.unopened = block
        if btype != "text" or block.get("text") or self.replaying:
            self._start(out)

    def _start(self, out: list[Event]) -> None:
        """Send the open block's start (a text block's waits for its first delta)."""
        out.append(_block_event("content_block_start", self.count, content_block=self.unopened))
        self.count += 1
        self.unopened = None

    def _close_block(self, out: list[Event]) -> None:
        if self.block is not None:
            if self.unopened is None:  # else nothing went in it, and nothing of it went out
                out.append(_block_event("content_block_stop", self.count - 1))
            self.block = None
            self.unopened = None
            self.cited = []  # of a text block nothing went in: with it
            self.stopped = False
        waiting, self.waiting = self.waiting, []
        for event in waiting:
            self._one(event, out)

    def _close(self, out: list[Event]) -> None:
        if not self.started:
            self._one(_event({"type": "message_stop"}), out)
            return
        while self.block is not None or self.waiting:
            self._close_block(out)
        if self.noted or not self.sent_delta:  # not out yet, or out without the usage
            out.append(self._closing_delta())
        out.append(_event({"type": "message_stop"}))
        self.closed = True

    def _closing_delta(self) -> Event:
        """The stream's `message_delta` (or one made here) with the counts notes gave; a
        made one saying `end_turn` after tool calls says `tool_use` (see `_stop_reason`: a
        chunk alone does not tell whether the answer called tools)."""
        event = self.delta
        if event is None:
            delta = {"stop_reason": "tool_use" if self.tools else "end_turn", "stop_sequence": None}
            event = _event({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 0}})
        data = _map(event.data)
        said = _map(data.get("delta"))
        if self.tools and event.raw is None and said.get("stop_reason") == "end_turn":
            data = {**data, "delta": {**said, "stop_reason": "tool_use"}}
        elif not self.noted:
            return event
        usage = _closing_usage(self.started_usage, _map(data.get("usage")), self.noted)
        return _event({**data, "usage": usage})


_custom_chunk = maker(Chunk, "kind", "name", "value", "raw")


_STOP_WORDS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


def _stop_reason(reason: str | None, calls: bool = False) -> str | None:
    """A finish reason in Anthropic's words (one from another provider mapped). Another
    provider's end of turn is "tool_use" when the answer `calls` tools: Gemini's `STOP`
    and a Responses `completed` say it whether or not the answer calls any."""
    if reason == "stop_sequence":  # Anthropic's own, though it means "stop" elsewhere
        return reason
    mapped = finish_in(reason, _STOP_WORDS)
    return "tool_use" if calls and mapped == "end_turn" and reason != mapped else mapped


class MessagesWire(Wire):
    """The Messages API.

    Requests: the top-level `system` (a str or text blocks) is a leading system message;
    a user message's `tool_result` blocks are each a ``tool`` message (named after the
    tool_use they answer); custom `tools` are `ToolSpec`s while server tools (web search,
    bash, …) pass through unseen; every key but `system`, `messages`, `tools`, `model` and
    `stream` is an option. Leading system messages are written back into `system` (joined
    by a blank line when it is a str), later ones as ``{"role": "system"}`` messages;
    consecutive tool messages become one user message.

    Responses: the text blocks joined are the message's content, `tool_use` blocks its
    tool calls; thinking and server tool blocks stay in `raw` only. `finish_reason` is
    the `stop_reason` as is.

    Stream events, one chunk each: `text_delta` → ``text``; `thinking_delta` →
    ``reasoning``; a `tool_use` block start → ``tool_call_start``, with its input as text
    if it has one; `input_json_delta` → ``tool_call_args`` (the delta has no id: both carry
    the block index in `value`, by which the adapter fills the id in from the start; one
    in a server tool's block, whose start opened no call, belongs to none); `message_start` →
    ``usage`` (input tokens); `message_delta` → ``finish`` (`stop_reason` and cumulative
    usage); anything else, `content_block_stop` included (its event does not say the block
    was a tool call), → ``custom`` named ``anthropic.<type>`` with the event's data as
    `value`: a server tool's blocks (`server_tool_use`, `web_search_tool_result`, …) too,
    which stay out of the tool calls as in a whole answer.
    """

    __slots__ = ()

    path = "/messages"
    frames = True
    reframes = True
    waits = "content_block_start"
    notes = True
    made = True

    def joins(self, opening: Event, event: Event) -> bool:
        """`Wire.joins`: for a text block's start, the `ping` the API sends right after the
        first block's start, and a citation before its text. So a text block's start goes
        out with its first text, or the framer a hook's change to that text brings in holds
        it (and leaves out a block left empty): the `ping` then goes first, a citation with
        the block. The framer leaves out no other block: its start waits for no `ping`."""
        data: Any = event.data
        if data.__class__ is not dict:
            return False
        kind = data.get("type")
        if kind != "ping":
            delta: Any = data.get("delta")
            if not (
                kind == "content_block_delta"
                and delta.__class__ is dict
                and delta.get("type") == "citations_delta"
            ):
                return False
        return _map(_map(opening.data).get("content_block")).get("type") == "text"

    def opens(self, event: Event) -> bool:
        return event.event == "message_start" or _map(event.data).get("type") == "message_start"

    def framer(self, body: Mapping[str, Any]) -> _Framer:
        return _Framer(body.get("model"))

    # -- requests -------------------------------------------------------------------------

    def settle(self, body: Mapping[str, Any]) -> None:
        """`Wire.settle`. The iterables the SDK sends as arrays that are not lists or tuples
        (generators) are read into lists at once, in `body` itself, the SDK's own body,
        which it sends as it is when no hook changes anything: the SDK reads a generator as
        it sends it, which would leave nothing for a hook that looks later (`after_model`),
        and a generator the view was read from would leave the SDK nothing to send."""
        arrays = _arrays(body)  # (deep: the view is then read from a copy, see `request`)
        if arrays and isinstance(body, MutableMapping):
            body.update(arrays)

    def view(self, body: Mapping[str, Any], raw: Any) -> ModelRequest:
        """`Wire.view`, of `body` settled: its top-level iterables read (see `settle`; a
        message's blocks are read with the view, in `request`)."""
        get = body.get  # every call's view passes here: classes told before, told at once
        told = ARRAY_CLASSES.get
        if not (
            told(get("messages").__class__) is False
            and told(get("tools").__class__) is False
            and told(get("system").__class__) is False
        ):
            arrays = _arrays(body, False)
            if arrays and isinstance(body, MutableMapping):
                body.update(arrays)
        return Wire.view(self, body, raw)

    def request(self, body: Mapping[str, Any]) -> ModelRequest:
        """Iterables that are not lists or tuples are read (see `_arrays`), a generator
        once: the top-level ones as the call starts (`view`), a message's blocks here, as
        a hook first reads the view, put back in the body the SDK sends too."""
        arrays = _arrays(body)
        if arrays:
            if isinstance(body, MutableMapping):
                body.update(arrays)
            else:
                body = {**body, **arrays}
        model = body.get("model")
        made: ModelRequest = new_request(
            _messages(body),
            tuple(_spec(t) for t in _seq(body.get("tools")) if _is_custom(t)),
            model if isinstance(model, str) else None,
            _options(body),
            bool(body.get("stream", False)),
            None,
        )
        return made

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        """Options hookwrap models (`system`, …) are ignored in `request.options`; a None
        model leaves the body's model."""
        body = _settled(body)
        out = dict(body)
        units = _units(body)
        if request.messages != tuple(u.message for u in units):
            system, out["messages"] = _write_messages(units, request.messages, body)
            if system is _ABSENT:
                out.pop("system", None)
            else:
                out["system"] = system
        tools = _seq(body.get("tools"))
        if request.tools != tuple(_spec(t) for t in tools if _is_custom(t)):
            written = _write_tools(request.tools, tools)
            if written or "tools" in body:
                out["tools"] = written
        options = _options(body)
        if request.options != options:
            for key in options:
                if key not in request.options:
                    del out[key]
            out.update((k, v) for k, v in request.options.items() if k not in _MODELED)
        if request.model is not None and request.model != body.get("model"):
            out["model"] = request.model
        if request.stream != bool(body.get("stream", False)):
            out["stream"] = request.stream
        return out

    # -- responses ------------------------------------------------------------------------

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        blocks = _seq(data.get("content"))
        text: Any = None
        calls: tuple[ToolCall, ...] = ()
        if len(blocks) == 1:  # the usual answer, one text block, read without a call
            block = blocks[0]
            if block.__class__ is dict and block.get("type") == "text":
                text = block.get("text")
        if text.__class__ is not str:
            text = "".join(self.texts(data))
            calls = tuple(_call(b) for b in blocks if _map(b).get("type") == "tool_use")
        model = data.get("model")
        raw = (_API, data.get("content"))  # its thinking blocks, for the next request
        message = new_full_message("assistant", text, calls, None, None, raw=raw)
        made: ModelResponse = new_response(
            message,
            _usage(data.get("usage")),
            data.get("stop_reason"),
            model if isinstance(model, str) else None,
            data,
        )
        return made

    def answers(self, data: Mapping[str, Any]) -> bool:
        return data.get("type") == "message"

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        blocks = _seq(data.get("content"))
        return [str(_map(b).get("text", "")) for b in blocks if _map(b).get("type") == "text"]

    def with_texts(self, data: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        given = iter(texts)
        blocks = [
            {**_map(b), "text": next(given)} if _map(b).get("type") == "text" else b
            for b in _seq(data.get("content"))
        ]
        return {**data, "content": blocks}

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """Into `data`: a None usage, finish reason or model leaves the original. Anew: stop
        reason ``tool_use`` or ``end_turn`` unless given, and a fresh ``msg_`` id."""
        message = response.message
        texts: tuple[Part, ...]
        texts = tuple(p for p in _as_parts(message.content) if isinstance(p, TextPart))
        usage = response.usage
        if data is None:
            return {
                "id": _new_id("msg_"),
                "type": "message",
                "role": "assistant",
                "model": response.model or "",
                "content": _merge((), texts, message.tool_calls),
                "stop_reason": _stop_reason(response.finish_reason, bool(message.tool_calls))
                or ("tool_use" if message.tool_calls else "end_turn"),
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage.input_tokens if usage else 0,
                    "output_tokens": usage.output_tokens if usage else 0,
                },
            }
        out = dict(data)
        old = self.response(data)
        if message != old.message:
            blocks = _seq(data.get("content"))
            content = message.content
            if content == old.message.content:  # keep the text split as it was
                texts = tuple(
                    TextPart(_map(b)["text"]) for b in blocks if _map(b).get("type") == "text"
                )
            elif isinstance(content, str):
                blocks, texts = _retext(blocks, content)
            out["content"] = _merge(blocks, texts, message.tool_calls)
        if usage is not None and usage != old.usage:
            native = data.get("usage")
            out["usage"] = {**_map(native), **_counts(usage, native)}
        if response.finish_reason is not None and response.finish_reason != old.finish_reason:
            out["stop_reason"] = _stop_reason(response.finish_reason, bool(message.tool_calls))
        if response.model is not None and response.model != old.model:
            out["model"] = response.model
        return out

    # -- streams --------------------------------------------------------------------------

    def chunk(self, event: Event) -> Chunk:
        data: Any = event.data
        if data.__class__ is dict:  # the usual event, a text delta, read without a call
            delta: Any = data.get("delta")
            if delta.__class__ is dict and delta.get("type") == "text_delta":
                text = delta.get("text")
                if text.__class__ is str and data.get("type") == "content_block_delta":
                    made: Chunk = new_chunk("text", text, event)
                    return made
        data = _map(data)
        kind = data.get("type") or event.event
        if kind == "content_block_delta":
            delta = _map(data.get("delta"))
            dtype = delta.get("type")
            if dtype == "text_delta":
                made = new_chunk("text", str(delta.get("text", "")), event)
                return made
            if dtype == "thinking_delta":
                made = new_chunk("reasoning", str(delta.get("thinking", "")), event)
                return made
            if dtype == "input_json_delta":
                text = str(delta.get("partial_json", ""))
                return Chunk("tool_call_args", text, value=data.get("index"), raw=event)
        elif kind == "content_block_start":
            block = _map(data.get("content_block"))
            btype = block.get("type")
            if btype == "tool_use":  # a server tool's block is no call: a custom chunk
                call_id, name, args = block.get("id"), block.get("name"), block.get("input")
                return Chunk(
                    "tool_call_start",
                    json.dumps(args) if args else "",  # the API streams it in deltas instead
                    tool_call_id=call_id if isinstance(call_id, str) else None,
                    tool_name=name if isinstance(name, str) else None,
                    value=data.get("index"),
                    raw=event,
                )
            if btype == "text" and block.get("text"):
                return Chunk("text", str(block["text"]), raw=event)
            if btype == "thinking" and block.get("thinking"):
                return Chunk("reasoning", str(block["thinking"]), raw=event)
        elif kind == "message_start":
            usage = _usage(_map(data.get("message")).get("usage"))
            if usage is not None:
                made = new_chunk("usage", "", usage=usage, raw=event)
                return made
        elif kind == "message_delta":
            reason = _map(data.get("delta")).get("stop_reason")
            made = new_chunk(
                "finish",
                "",
                usage=_usage(data.get("usage")) or Usage(),
                finish_reason=reason if isinstance(reason, str) else None,
                raw=event,
            )
            return made
        made = _custom_chunk("custom", f"anthropic.{kind}", event.data, event)
        return made

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        """A chunk read from an event rewrites that event. A new one becomes a `Made` event
        at the block index of `_index`, a guess: the framer puts it in the open block of
        its kind, or a new one. A new ``usage`` chunk has no event of its own: it becomes a `NOTE`,
        which a framer puts in the stream's closing `message_delta` (a stream the API
        framed is framed from a note on); a ``custom`` chunk not named after its Anthropic
        event is left out."""
        raw = chunk.raw
        data: dict[str, Any] = dict(_map(raw.data)) if isinstance(raw, Event) else {}
        kind = chunk.kind
        etype = data.get("type")
        if kind in _DELTAS:
            dtype, key = _DELTAS[kind]
            delta = _map(data.get("delta"))
            if etype == "content_block_delta" and delta.get("type") == dtype:
                return [_event({**data, "delta": {**delta, key: chunk.text}})]
            block: Mapping[str, Any] = _map(data.get("content_block"))
            if etype == "content_block_start" and _STARTS.get(kind) == block.get("type"):
                return [_event({**data, "content_block": {**block, key: chunk.text}})]
            delta = {"type": dtype, key: chunk.text}
            return [_made("content_block_delta", _index(chunk, template), delta=delta)]
        if kind == "tool_call_start":
            block = _map(data.get("content_block"))
            is_call = str(block.get("type")).endswith("tool_use")
            fresh = etype != "content_block_start" or not is_call
            if fresh:
                block = {"type": "tool_use", "id": _new_id("toolu_"), "name": "", "input": {}}
            try:
                args: Any = json.loads(chunk.text) if chunk.text else {}
            except ValueError:  # a fragment: the block's input stays
                args = block.get("input", {})
            block = {
                **block,
                "id": chunk.tool_call_id or block.get("id"),
                "name": chunk.tool_name or block.get("name"),
                "input": args,
            }
            at = _index(chunk, template)
            if fresh:
                return [_made("content_block_start", at, content_block=block)]
            return [_block_event("content_block_start", at, content_block=block)]
        if kind == "tool_call_end":
            if etype == "content_block_stop":
                return [_block_event("content_block_stop", _index(chunk, template))]
            return [_made("content_block_stop", _index(chunk, template))]
        usage = chunk.usage
        if kind == "finish":
            reason = _stop_reason(chunk.finish_reason)
            delta = {"stop_reason": reason, "stop_sequence": None}
            if etype == "message_delta":
                delta = {**_map(data.get("delta")), "stop_reason": reason}
            counts: dict[str, Any] = dict(_map(data.get("usage")))
            if usage is not None:
                # the cached input the stream counts: this delta's, or its `message_start`'s
                cached = counts if any(k in counts for k in _CACHE_KEYS) else _started(template)
                native = _counts(usage, cached)
                counts["output_tokens"] = usage.output_tokens
                if usage.input_tokens or "input_tokens" in counts:
                    counts["input_tokens"] = native["input_tokens"]
            counts.setdefault("output_tokens", 0)
            return [_event({"type": "message_delta", "delta": delta, "usage": counts})]
        if kind == "usage":
            if usage is None:
                return []
            if etype != "message_start":  # no event of its own: for the closing delta
                # neutral counts: `_closing_usage` takes the cached input off
                counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
                return [Event(NOTE, {"type": NOTE, "usage": counts})]
            message = _map(data.get("message"))
            before = message.get("usage")
            counts = {**_map(before), **_counts(usage, before)}
            return [_event({**data, "message": {**message, "usage": counts}})]
        value = _map(chunk.value)
        vtype = value.get("type")
        if isinstance(vtype, str) and chunk.name == f"anthropic.{vtype}":
            return [Event(vtype, dict(value))]
        return []

    def stream_events(self, response: ModelResponse) -> list[Event]:
        """The events of `write_response`'s message (with the thinking and server tool
        blocks of a `raw` response JSON), one delta per block."""
        raw = response.raw
        message = self.write_response(
            response, cast("Mapping[str, Any]", raw) if isinstance(raw, Mapping) else None
        )
        usage = _map(message.get("usage"))
        start: dict[str, Any] = {
            **message,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 0},
        }
        events = [_event({"type": "message_start", "message": start})]
        for index, item in enumerate(_seq(message.get("content"))):
            block: Mapping[str, Any] = _map(item)
            btype = block.get("type")
            deltas: list[dict[str, Any]] = []
            if btype == "text":
                if block.get("text"):
                    deltas.append({"type": "text_delta", "text": block["text"]})
                block = {**block, "text": ""}
            elif btype == "thinking":
                if block.get("thinking"):
                    deltas.append({"type": "thinking_delta", "thinking": block["thinking"]})
                if block.get("signature"):
                    deltas.append({"type": "signature_delta", "signature": block["signature"]})
                block = {**block, "thinking": "", "signature": ""}
            elif isinstance(btype, str) and btype.endswith("tool_use"):
                if block.get("input"):
                    args = json.dumps(block["input"])
                    deltas.append({"type": "input_json_delta", "partial_json": args})
                block = {**block, "input": {}}
            events.append(_block_event("content_block_start", index, content_block=block))
            events += (_block_event("content_block_delta", index, delta=d) for d in deltas)
            events.append(_block_event("content_block_stop", index))
        delta = {
            "stop_reason": message.get("stop_reason"),
            "stop_sequence": message.get("stop_sequence"),
        }
        counts = {"output_tokens": json_int(usage.get("output_tokens"))}
        events.append(_event({"type": "message_delta", "delta": delta, "usage": counts}))
        events.append(_event({"type": "message_stop"}))
        return events


_STREAM_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop"}
    | {"message_delta", "message_stop", "ping"}
)
# a delta that adds to its block: its type -> (its key, the block's key)
_ADDS = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("partial_json", "input"),
}


def _streamed_answer(raws: list[Any]) -> tuple[str, list[Any]] | None:
    """The record of a streamed answer (see `MessagesWire.response`): its content blocks
    put together from its events as the SDK's accumulator does, each as its
    `content_block_start` opened it (a `redacted_thinking` block whole), its deltas added:
    text, thinking, the signature, citations, a tool call's input JSON."""
    first = raws[0]
    if not isinstance(first, Event) or _map(first.data).get("type") not in _STREAM_EVENTS:
        return None
    blocks: dict[Any, dict[str, Any]] = {}  # by the index the events give
    adds: dict[tuple[Any, str], list[str]] = {}  # the pieces of a block's text or input
    for data in streamed(raws):
        kind = data.get("type")
        if kind == "content_block_delta" and (index := data.get("index")) in blocks:
            delta = _map(data.get("delta"))
            dtype = delta.get("type")
            if dtype in _ADDS:
                given, key = _ADDS[dtype]
                adds.setdefault((index, key), []).append(str(delta.get(given) or ""))
            elif dtype == "signature_delta":
                blocks[index]["signature"] = delta.get("signature")
            elif dtype == "citations_delta":
                block = blocks[index]
                block["citations"] = [*_seq(block.get("citations")), delta.get("citation")]
        elif kind == "content_block_start":
            blocks[data.get("index")] = dict(_map(data.get("content_block")))
        elif kind == "message_start":  # a stream begun anew (a retry's): its blocks alone
            blocks, adds = {}, {}
    for (index, key), pieces in adds.items():
        block, added = blocks[index], "".join(pieces)
        if key != "input":
            block[key] = str(block.get(key) or "") + added
        elif added:
            with contextlib.suppress(ValueError):  # a fragment: the call's own input stays
                block["input"] = json.loads(added)
    return _API, list(blocks.values())


ANSWER_READERS.append(_streamed_answer)
