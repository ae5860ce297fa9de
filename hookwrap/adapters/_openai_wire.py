"""OpenAI's HTTP APIs as `Wire`s: Chat Completions, Responses and legacy Completions.

Pure dict logic, no import of `openai`: the SDK builds the JSON and parses what comes back.
What hookwrap does not model (unknown keys, content parts, input items, tools) is kept: a
message read unchanged is written back as the very dict it came from, and a changed one is
written over the dict it replaced, so only the modelled fields move.
"""

from __future__ import annotations

import itertools
import json
import operator
import time
import uuid
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Literal, cast

from .._convert import arguments_text, tool_arguments
from .._engine import ANSWER_READERS, CALL_READERS
from .._types import (
    Chunk,
    ChunkKind,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    TextPart,
    ToolCall,
    ToolSpec,
    Usage,
    new_chunk,
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
    dumped,
    finish_in,
    highest,
    json_int,
    recorded,
    split_text,
    streamed,
)
from .function import _pairs  # pyright: ignore[reportPrivateUsage]

__all__ = ["ChatCompletionsWire", "CompletionsWire", "ResponsesWire"]

_J = dict[str, Any]
Role = Literal["system", "user", "assistant", "tool"]
_Group = tuple[Message, list[Any]]  # a neutral message and the native items it was read from
_Render = Callable[[Message, list[Any]], list[Any]]
_MESSAGE = operator.itemgetter(0)  # of a group
_ROLE = operator.attrgetter("role")  # of a message


# -- small readers ------------------------------------------------------------------------------


def _obj(value: Any) -> Mapping[str, Any] | None:
    """A dict as it is; one of the SDK's own objects (an answer's output item sent back in
    a Responses `input` tuple, which the SDK dumps only as it sends it) as the SDK sends
    it; None for anything else."""
    if value.__class__ is dict:  # what JSON gives: no ABC check
        return cast("Mapping[str, Any]", value)
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else dumped(value)


def _list(value: Any) -> list[Any]:
    """A list as it is, a tuple (which the SDK sends as a JSON array) as a list, else []."""
    if isinstance(value, list):
        return value  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, tuple):
        items: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return list(items)
    return []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _pieces(text: str, n: int = 3) -> list[str]:
    """`text` cut in up to `n` pieces, so a built stream is split like a real one. An
    answer's text goes in one piece (`n=1`): hooks on chunks then see the whole of an
    answer a hook made up, and a rule matching across pieces cannot miss it."""
    if not text:
        return []
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _args_in(raw: Any) -> dict[str, Any]:
    """Decoded tool-call arguments. Malformed JSON (a model's slip, kept in a history) does
    not fail the call: it reads as empty arguments that keep the text, which a tool refuses
    to run with and which go back as they came."""
    return tool_arguments(raw)


def _args_out(arguments: Mapping[str, Any]) -> str:
    return arguments_text(arguments)


def _usage_in(data: Mapping[str, Any], inp: str, out: str) -> Usage | None:
    usage = _obj(data.get("usage"))
    if usage is None:
        return None
    i, o, total = map(json_int, map(usage.get, (inp, out, "total_tokens")))
    made: Usage = new_usage(i, o, total or i + o)
    return made


def _usage_out(usage: Usage, old: Any, inp: str, out: str, base: Mapping[str, Any]) -> _J:
    """`old` usage (details kept) with the neutral counts written in; `base` fills the
    fields a fresh one needs."""
    total = usage.total_tokens or usage.input_tokens + usage.output_tokens
    counts = {inp: usage.input_tokens, out: usage.output_tokens, "total_tokens": total}
    return {**base, **(_obj(old) or {}), **counts}


def _finish(reason: str | None, valid: frozenset[str], default: str) -> str:
    """A finish reason the API's type accepts: its own, one mapped from another provider's
    (a `Fallback` answer), else `default`. Another provider's end of turn is `default`
    too: Gemini's `STOP` and a Responses `completed` say it whether or not the answer
    calls tools, where OpenAI says "tool_calls" (the `default` of an answer with calls)."""
    if reason is not None and reason in valid:
        return reason
    mapped = finish_in(reason, _FINISH_WORDS)
    return mapped if mapped is not None and mapped != "stop" and mapped in valid else default


# OpenAI's words for what a finish reason means are the meanings' own names
_FINISH_WORDS = {word: word for word in ("stop", "length", "tool_calls", "content_filter")}


def _part_in(item: Any) -> Part | None:
    """The neutral part of a content part, or None for parts hookwrap does not model."""
    part = _obj(item)
    if part is None:
        return None
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
        return TextPart(part["text"])
    if kind in ("image_url", "input_image"):
        url: Any = part.get("image_url")
        nested = _obj(url)
        url = nested.get("url") if nested is not None else url
        if isinstance(url, str):
            return ImagePart(url)
    return None


def _content_in(content: Any) -> str | tuple[Part, ...]:
    if content is None or isinstance(content, str):
        return content or ""
    return tuple(p for p in map(_part_in, _list(content)) if p is not None)


def _content_out(
    content: str | tuple[Part, ...], old: Any, part_out: Callable[[Part], _J]
) -> str | list[Any]:
    """Native content for `content`, written over `old`: a list stays a list, unmodelled parts
    (audio, files, refusals) stay where they were, parts equal to what was read are reused,
    a changed text is written over the text part it replaces (see `_retexted`)."""
    olds = _list(old) if isinstance(old, (list, tuple)) else None
    if isinstance(content, str):
        if olds is None:
            return content
        slots = [k for k, item in enumerate(olds) if isinstance(_part_in(item), TextPart)]
        if len(slots) > 1 and content:  # split across the text parts (see `split_text`)
            written: list[Any] = list(olds)
            texts = [_str((_obj(olds[k]) or {}).get("text")) for k in slots]
            for k, before, after in zip(slots, texts, split_text(texts, content), strict=True):
                if after != before:
                    written[k] = _retexted(_obj(olds[k]) or {}, after) if after else None
            return [p for p in written if p is not None and not isinstance(_part_in(p), ImagePart)]
        content = (TextPart(content),) if content else ()
    if olds is None:
        return [part_out(p) for p in content]
    new = iter(content)
    out: list[Any] = []
    for item in olds:
        was = _part_in(item)
        if was is None:
            out.append(item)
        elif (part := next(new, None)) is not None:
            if part == was:
                out.append(item)
            elif isinstance(part, TextPart) and isinstance(was, TextPart):
                out.append(_retexted(_obj(item) or {}, part.text))
            elif isinstance(part, ImagePart) and isinstance(was, ImagePart):
                out.append(_reimaged(_obj(item) or {}, part.url))
            else:
                out.append(part_out(part))
    out.extend(map(part_out, new))
    return out


def _retexted(part: Mapping[str, Any], text: str) -> _J:
    """A text part with a new text. Its other keys stay (`annotations`, `cache_control`), as
    in an answer and a stream; its `logprobs` are emptied: they described the old text."""
    out = {**part, "text": text}
    if "logprobs" in out:
        out["logprobs"] = []
    return out


def _reimaged(part: Mapping[str, Any], url: str) -> _J:
    """An image part with a new URL. Its other keys stay (`detail`, which decides what the
    image costs), in chat's nested `image_url` object as beside a Responses URL."""
    nested = _obj(part.get("image_url"))
    if nested is not None:
        return {**part, "image_url": {**nested, "url": url}}
    return {**part, "image_url": url}


# -- messages and tools, shared by the two chat-shaped APIs --------------------------------------


def _groups(
    items: Any,
    read: Callable[[Any], Message | None],
    join: Callable[[Message, Any], Message | None] | None = None,
) -> tuple[list[_Group], list[Any]]:
    """Native items grouped by the neutral message they make, and the items before any.

    An unmodelled item travels with the next message (a reasoning item with the answer it
    led to), trailing ones with the last; `join` may fold an item into the previous message.
    """
    groups: list[_Group] = []
    pending: list[Any] = []
    for item in _list(items):
        if join is not None and groups:
            joined = join(groups[-1][0], item)
            if joined is not None:
                groups[-1] = (joined, [*groups[-1][1], *pending, item])
                pending = []
                continue
        message = read(item)
        if message is None:
            pending.append(item)
            continue
        groups.append((message, [*pending, item]))
        pending = []
    if pending and groups:
        groups[-1][1].extend(pending)
        pending = []
    return groups, pending


def _write_groups(
    groups: Sequence[_Group],
    head: list[Any],
    messages: Sequence[Message],
    render: _Render,
    api: str = "",
) -> list[Any]:
    """Native items for `messages`: the original items of each message left as it was read,
    the others rendered over the items of the message they stand for, paired as a plain
    model function's are (`_pairs`: in a changed run, by role, the most alike first when
    a hook added one), so a system prompt put before a changed "developer" message is
    written fresh and takes nothing of it. A message none stands for is rendered over the
    output items of the answer it was read from, when its `raw` records one of `api`'s:
    its reasoning items go back with its calls, as the API wants them."""
    out = list(head)
    olds = [message for message, _ in groups]
    for message, i in zip(messages, _pairs(olds, messages, _ROLE), strict=True):
        was, items = groups[i] if i is not None else (None, _recorded(message, api))
        out.extend(items if was == message else render(message, items))
    return out


def _recorded(message: Message, api: str) -> list[Any]:
    """The output items an answer's `raw` records (see `_write_groups`), or none."""
    items: Any = recorded(message.raw, api) if api and message.role == "assistant" else None
    return _list(items)


def _splice(base: list[Any], kind: Callable[[Any], object], new: list[Any]) -> list[Any]:
    """`new` in place of the modelled items of `base` (those of a `kind` not None), in
    their own order. Unmodelled items go with the modelled items they led to (a reasoning
    item before a call or message: the API wants it right before them), before the first
    new item that takes one of their places: the one of its kind, else (a call a hook gave
    another id) one of its type. Those that led only to items no new one stands for (a
    call a hook took out) go with them; those after the last modelled item stay last."""
    leads: list[list[Any]] = []  # the unmodelled items before each run of modelled ones
    run_of: dict[int, int] = {}  # a modelled item's place -> its run
    free: dict[object, list[int]] = {}  # the places of each kind no new item took yet
    pending: list[Any] = []
    for k, item in enumerate(base):
        key = kind(item)
        if key is None:
            pending.append(item)
            continue
        if pending or not leads:
            leads.append(pending)
            pending = []
        run_of[k] = len(leads) - 1
        free.setdefault(key, []).append(k)

    def take(key: object) -> int | None:
        ks = free.get(key) or next(
            (ks for k2, ks in free.items() if ks and _type_of(k2) == _type_of(key)), None
        )
        return ks.pop(0) if ks else None

    out: list[Any] = []
    for item in new:
        place = take(kind(item))
        if place is not None:
            out += leads[run_of[place]]
            leads[run_of[place]] = []
        out.append(item)
    return out + pending


def _write_tools(
    out: _J,
    body: Mapping[str, Any],
    specs: Sequence[ToolSpec],
    read: Callable[[Any], ToolSpec | None],
    render: Callable[[ToolSpec, Mapping[str, Any] | None], _J],
) -> None:
    """Function tools from `specs` in the slots of the old ones, other tools kept in place; a
    tool equal to what was read is its original dict, a changed one keeps its other keys."""
    old = _list(body.get("tools"))
    by_name = {spec.name: t for t in old if (spec := read(t)) is not None}

    def native(spec: ToolSpec) -> Any:
        was = by_name.get(spec.name)
        return was if was is not None and read(was) == spec else render(spec, _obj(was))

    new = iter(specs)
    tools: list[Any] = []
    for tool in old:
        if read(tool) is None:
            tools.append(tool)
        elif (spec := next(new, None)) is not None:
            tools.append(native(spec))
    tools.extend(map(native, new))
    if tools:
        out["tools"] = tools
    elif old:  # the API refuses an empty list
        del out["tools"]


def _options(body: Mapping[str, Any], modelled: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in modelled}


def _write_common(
    out: _J, body: Mapping[str, Any], request: ModelRequest, modelled: frozenset[str]
) -> None:
    """Model and options. `stream` is never written: the SDK already chose how to parse."""
    if request.model is not None:
        out["model"] = request.model
    options = request.options
    for key in _options(body, modelled):
        if key not in options:  # a hook removed it (say `temperature` for a reasoning model)
            del out[key]
    out.update((k, v) for k, v in options.items() if k not in modelled)


def _custom_events(chunk: Chunk, prefix: str, raw: Event | None) -> list[Event]:
    """A custom chunk of this API goes back as its value; another's has no place here."""
    if not (chunk.name or "").startswith(prefix) or chunk.value is None:
        return []
    data = _obj(chunk.value)
    event = raw.event if raw is not None else (_opt(data.get("type")) if data else None)
    return [Event(event, chunk.value)]


def _first(items: list[Any]) -> Mapping[str, Any] | None:
    return _obj(items[0]) if items else None


def _event_data(event: Event | None) -> Mapping[str, Any] | None:
    return _obj(event.data) if event is not None else None


# -- Chat Completions ---------------------------------------------------------------------------

_CHAT_KEYS = frozenset({"messages", "tools", "model", "stream"})
_CHAT_ROLES: dict[Any, Role] = {
    **{r: r for r in ("system", "user", "assistant", "tool")},
    "developer": "system",
    "function": "tool",
}
_CHAT_FINISH = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
_REASONING_KEYS = ("reasoning_content", "reasoning")  # OpenAI-compatible servers' reasoning
_DELTA_KEYS = frozenset({"content", "tool_calls", *_REASONING_KEYS})
_CHAT_USAGE = ("prompt_tokens", "completion_tokens")


def _text_delta(data: Any) -> bool:
    """Whether a chat event is nothing but a text delta of the first choice (dicts only)."""
    if type(data) is not dict:
        return False
    # annotations, not `cast` (a call): this runs for every event
    event: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    if "error" in event or event.get("usage") is not None:
        return False
    choices: Any = event.get("choices")
    if type(choices) is not list or not choices:
        return False
    items: list[Any] = choices  # pyright: ignore[reportUnknownVariableType]
    choice: Any = items[0]
    if type(choice) is not dict:
        return False
    first: dict[str, Any] = choice  # pyright: ignore[reportUnknownVariableType]
    delta: Any = first.get("delta")
    if first.get("index", 0) != 0 or first.get("finish_reason") is not None:
        return False
    if type(delta) is not dict:
        return False
    found: dict[str, Any] = delta  # pyright: ignore[reportUnknownVariableType]
    text: Any = found.get("content")
    return bool(text) and type(text) is str and not found.get("tool_calls")


def _chat_call_in(item: Any) -> ToolCall:
    call = _obj(item) or {}
    if call.get("type") == "custom":  # free-form input reads as {"input": ...}
        custom = _obj(call.get("custom")) or {}
        args: dict[str, Any] = {"input": custom.get("input", "")}
        return ToolCall(_str(call.get("id")), _str(custom.get("name")), args, raw=item)
    fn = _obj(call.get("function")) or {}
    args = _args_in(fn.get("arguments"))
    return ToolCall(_str(call.get("id")), _str(fn.get("name")), args, raw=item)


def _chat_call_out(call: ToolCall) -> Any:
    """A tool call as the API takes it: its own dict when unchanged; a changed one is written
    over the dict of the call with its id, whose other keys stay (`extra_content`, where
    Gemini's OpenAI-compatible API puts the thought signature it wants back)."""
    raw = _obj(call.raw)
    if raw is not None and _chat_call_in(raw) == call:
        return call.raw
    ours = raw is not None and raw.get("type", "function") in ("function", "custom")
    old: Mapping[str, Any] = raw if raw is not None and ours and raw.get("id") == call.id else {}
    if raw is not None and raw.get("type") == "custom":
        custom = {**(_obj(old.get("custom")) or {}), "name": call.name}
        custom["input"] = _str(call.arguments.get("input"))
        return {**old, "id": call.id, "type": "custom", "custom": custom}
    fn = {**(_obj(old.get("function")) or {}), "name": call.name}
    fn["arguments"] = _args_out(call.arguments)
    return {**old, "id": call.id, "type": "function", "function": fn}


def _chat_message(item: Any) -> Message | None:
    data = _obj(item)
    role = _CHAT_ROLES.get(data.get("role")) if data is not None else None
    if data is None or role is None:
        return None
    content = data.get("content")
    if content.__class__ is not str or not content:
        content = _content_in(content)
    if not data.get("tool_calls") and data.get("tool_call_id") is None and data.get("name") is None:
        made: Message = new_message(role, content)  # the usual message: role and content
        return made
    calls = tuple(_chat_call_in(c) for c in _list(data.get("tool_calls")))
    return Message(role, content, calls, _opt(data.get("tool_call_id")), _opt(data.get("name")))


def _chat_part(part: Part) -> _J:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return {"type": "image_url", "image_url": {"url": part.url}}


def _chat_render(message: Message, base: list[Any]) -> list[Any]:
    """A chat message dict, over the dict it replaces: its role spelling ("developer") and
    unmodelled keys are kept. `name` is not added to tool messages (not in the API)."""
    old = next((_obj(i) for i in base if _chat_message(i) is not None), None)
    out: _J = dict(old) if old is not None else {"role": message.role}
    content = _content_out(message.content, old.get("content") if old else None, _chat_part)
    out["content"] = content if content or not message.tool_calls else None
    if message.tool_calls:
        out["tool_calls"] = [_chat_call_out(c) for c in message.tool_calls]
    else:
        out.pop("tool_calls", None)
    for key, value in (("tool_call_id", message.tool_call_id), ("name", message.name)):
        if value is None or (key == "name" and message.role == "tool" and key not in out):
            out.pop(key, None)
        else:
            out[key] = value
    return _splice(base, lambda i: "message" if _chat_message(i) is not None else None, [out])


def _chat_tool(item: Any) -> ToolSpec | None:
    tool = _obj(item)
    fn = _obj(tool.get("function")) if tool is not None else None
    if tool is None or tool.get("type", "function") != "function" or fn is None:
        return None
    params = _obj(fn.get("parameters"))
    spec = ToolSpec(_str(fn.get("name")), _str(fn.get("description")))
    return spec if params is None else spec.replace(parameters=dict(params))


def _chat_tool_out(spec: ToolSpec, old: Mapping[str, Any] | None) -> _J:
    fn: _J = dict(_obj(old.get("function")) or {}) if old is not None else {}
    fn.update(name=spec.name, parameters=dict(spec.parameters))
    if spec.description:
        fn["description"] = spec.description
    else:
        fn.pop("description", None)
    return {**(old or {}), "type": "function", "function": fn}


class _UsageLastFramer(Framer):
    """What the framers of Chat Completions and legacy Completions streams share: the
    stream's usage chunks (``choices == []``) wait for ``[DONE]`` and go last, as the API
    sends them, new counts added only where the request asked for usage (`_usage_last`)."""

    __slots__ = ("asked", "head", "pending", "replaying", "shown", "usage")

    def __init__(self, asked: bool) -> None:
        super().__init__()
        self.asked = asked  # whether the request asked for usage: the caller may index choices
        self.head: _J | None = None
        self.usage: list[Event] = []  # usage chunks, sent last as the API does
        self.shown: Mapping[str, Any] = {}  # the usage of the last chunk out: the SDK keeps it
        self.pending: Event | None = None  # a chunk with choices and usage (see `_pass`)
        self.replaying = False  # reading chunks that went out before (see `replay`)

    def replay(self, batch: Sequence[Event]) -> None:
        """The API's usage chunk that went out before a drop is not sent again."""
        self.replaying = True
        try:
            super().replay(batch)
        finally:
            self.replaying = False

    def _pass(self, event: Event, usage: Mapping[str, Any] | None, out: list[Event]) -> None:
        """Send `event`, a chunk with choices showing `usage` (the SDK keeps it). A finish
        chunk that shows a usage (as some compatible servers send it) may be the last to
        show one: it waits for the next event, so that the counts noted by then go in it
        rather than in a usage chunk after it that would show the API's counts a second
        time. Other chunks go at once (a server may put its usage on every chunk)."""
        if usage:  # (a chunk showing none leaves the SDK the last one shown)
            self.shown = usage
        if usage and not self.replaying and _finishes(event.data):
            self.pending = event
        else:
            out.append(event)

    def _release(self, out: list[Event], last: bool = True) -> None:
        """Send the chunk `_pass` held: with the counts noted so far, unless it is not the
        `last` to take them (the API's usage chunk follows it, and takes them instead): the
        counts go once. Any other chunk after it (another choice's, a hook's) takes no
        counts: a request that did not ask for usage gets no usage chunk to show them."""
        event = self.pending
        if event is None:
            return
        self.pending = None
        if last and self.noted:
            counts = highest(self.shown, self.noted)
            if counts != self.shown:
                self.shown = counts
                event = Event(event.event, {**cast("_J", event.data), "usage": counts})
        out.append(event)

    def flush(self) -> list[Event]:
        """`Framer.flush`: the finish chunk `_pass` held."""
        out: list[Event] = []
        self._release(out)
        return out

    def _kept(self, data: Mapping[str, Any] | None) -> bool:
        """Whether `data` is a usage chunk (no choices, no error) that waits for ``[DONE]``
        in `usage`, where `_usage_last` puts the noted counts."""
        if data is None or self.replaying or data.get("choices"):
            return False
        return data.get("error") is None

    def _data(self, event: Event, out: list[Event]) -> Mapping[str, Any] | None:
        """`event`'s JSON, or None for one that is none, handled here: ``[DONE]`` closes
        the stream, any other goes on as it came. A chunk `_pass` held goes first."""
        data = _obj(event.data)
        if self.pending is not None:
            self._release(out, not self._kept(data))
        if data is None:
            if event.data == "[DONE]":
                self._close(out)
            else:
                out.append(event)
        return data


class _ChatFramer(_UsageLastFramer):
    """Frames a Chat Completions stream made of new chunks as the API streams them: every
    chunk with the id, creation time and model of the first; the first choice naming the
    role; tool calls numbered in the order they start; a chunk with the finish reason, then
    the usage, then ``[DONE]`` last. A usage chunk is added only to the stream of a
    request that asked for one (``stream_options.include_usage``), as the API sends it."""

    __slots__ = ("api", "calls", "finished", "model", "roled", "tools")

    def __init__(self, model: Any, asked: bool) -> None:
        super().__init__(asked)
        self.model = model if isinstance(model, str) else ""
        self.finished = self.tools = self.roled = False
        self.calls = -1  # the index of the tool call started last
        self.api = False  # whether the API opened the stream: its usage stays where it put it

    def replay(self, batch: Sequence[Event]) -> None:
        self.api = True
        super().replay(batch)

    def _one(self, event: Event, out: list[Event]) -> None:
        data = self._data(event, out)
        if data is None:
            return
        if data.get("error") is not None and not data.get("choices"):
            out.append(event)  # the API's error, where it came: the SDK raises it there
            return
        if self.head is None:
            self.head = _chat_head(data, _str(data.get("model")) or self.model)
        made = event.raw is None
        choices = [self._choice(c, made) for c in map(_obj, _list(data.get("choices"))) if c]
        fixed = {**data, **self.head, "choices": choices}
        if choices:
            usage = _obj(data.get("usage"))
            if usage and made and not self.api:
                # another API's, on its finish (a Fallback's): in the closing usage chunk
                # only, where this API puts it
                self.noted = highest(self.noted, usage)
                usage = fixed["usage"] = None
            self._pass(Event(event.event, fixed), usage, out)
        elif self.replaying:  # it went out
            self.shown = _obj(data.get("usage")) or {}
        else:
            self.usage.append(Event(event.event, fixed))

    def _choice(self, given: Mapping[str, Any], made: bool = False) -> _J:
        """`given` framed; a `made` one (not the API's own event) that ends the stream
        with "stop" after tool calls ends it with "tool_calls": another API's end of turn
        (Gemini's `STOP`, a Responses `completed`) says "stop" whether or not it called."""
        choice = dict(given)
        delta = dict(_obj(choice.get("delta")) or {})
        if not self.roled:
            self.roled = True
            delta = {"role": "assistant", **delta}
        calls: list[Any] = []
        for item in _list(delta.get("tool_calls")):
            call = dict(_obj(item) or {})
            if call.get("id"):  # a call's first delta names it
                self.calls += 1
            call["index"] = max(self.calls, 0)
            calls.append(call)
        if calls:
            delta["tool_calls"] = calls
            self.tools = True
        choice["delta"] = delta
        if made and self.tools and choice.get("finish_reason") == "stop":
            choice["finish_reason"] = "tool_calls"
        self.finished = self.finished or choice.get("finish_reason") is not None
        return choice

    def _close(self, out: list[Event]) -> None:
        self.closed = True
        self._release(out)
        if not self.finished:
            head = self.head or _chat_head(None, self.model)
            finish = "tool_calls" if self.tools else "stop"
            choice: _J = {"index": 0, "delta": {}, "finish_reason": finish, "logprobs": None}
            out.append(Event(None, {**head, "choices": [self._choice(choice)]}))
            self.shown = {}
        head = self.head or _chat_head(None, self.model)
        out += _usage_last(self.usage, self.noted, self.shown, self.asked, head)
        out.append(Event(None, "[DONE]"))


def _finishes(data: Any) -> bool:
    """Whether the chunk `data` has a choice with a finish reason."""
    for item in _list(data.get("choices")):
        choice = _obj(item)
        if choice is not None and choice.get("finish_reason"):
            return True
    return False


def _usage_last(
    usage: list[Event], noted: Mapping[str, Any], shown: Mapping[str, Any], asked: bool, head: _J
) -> list[Event]:
    """A stream's closing usage chunks (``choices == []``, after `head`'s fields) with the
    `noted` new counts: in the last, which the SDK keeps, or in one added when none waits
    and the request `asked` for usage; not when the last chunk out shows them already (the
    API's own usage, on its finish or sent before a drop): the caller reads each count once.
    """
    if noted and (usage or (asked and highest(shown, noted) != shown)):
        last = usage.pop() if usage else Event(None, {**head, "choices": []})
        counts = highest(_obj(last.data.get("usage")) or shown, noted)
        usage.append(Event(last.event, {**last.data, "usage": counts}))
    return usage


class ChatCompletionsWire(Wire):
    """``POST /chat/completions``.

    Stream: one chunk per ``chat.completion.chunk`` event, from its first choice (events of
    other choices, ``n > 1``, are custom ``openai.chat.choice``). A delta names a tool call's
    id and name only in its first event, so ``tool_call_args`` chunks made here carry no
    `tool_call_id`; their `value` (and that of ``tool_call_start``) is the call's ``index``
    in the delta, by which the adapter fills the id in from the call's start. A delta with
    several things is read by priority: tool call, content, reasoning, finish, usage;
    `finish_reason` and `usage` are set whatever the kind.
    """

    __slots__ = ()
    path = "/chat/completions"
    frames = True
    reframes = True
    notes = True

    def opens(self, event: Event) -> bool:
        """A chunk as it came from the API (some compatible servers name no role), or one
        naming the role, as the API's first does; a stream of new chunks does not (framing
        a stream that had it anyway changes nothing the caller reads)."""
        if event.raw is not None:
            return True
        first = _obj(_first(_list((_obj(event.data) or {}).get("choices"))))
        return first is not None and "role" in (_obj(first.get("delta")) or {})

    def framer(self, body: Mapping[str, Any]) -> _ChatFramer:
        asked = (_obj(body.get("stream_options")) or {}).get("include_usage")
        return _ChatFramer(body.get("model"), bool(asked))

    def answers(self, data: Mapping[str, Any]) -> bool:
        # named by its `object`, or (a compatible server leaves that out) by its first choice
        if "object" in data:
            return data.get("object") == "chat.completion"
        return _obj((_first(_list(data.get("choices"))) or {}).get("message")) is not None

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        message = _obj((_first(_list(data.get("choices"))) or {}).get("message")) or {}
        content = message.get("content")
        return [content] if isinstance(content, str) else []  # one block (or parts)

    def _read(self, body: Mapping[str, Any]) -> tuple[ModelRequest, list[_Group], list[Any]]:
        groups, head = _groups(body.get("messages"), _chat_message)
        given = body.get("tools")
        tools = (s for t in _list(given) if (s := _chat_tool(t)) is not None) if given else ()
        request: ModelRequest = new_request(
            tuple(map(_MESSAGE, groups)),
            tuple(tools),
            _opt(body.get("model")),
            _options(body, _CHAT_KEYS),
            bool(body.get("stream")),
            None,
        )
        return request, groups, head

    def request(self, body: Mapping[str, Any]) -> ModelRequest:
        return self._read(body)[0]

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        read, groups, head = self._read(body)
        out = dict(body)
        if request == read:
            return out
        if request.messages != read.messages:
            out["messages"] = _write_groups(groups, head, request.messages, _chat_render)
        if request.tools != read.tools:
            _write_tools(out, body, request.tools, _chat_tool, _chat_tool_out)
        _write_common(out, body, request, _CHAT_KEYS)
        return out

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        choices = _list(data.get("choices"))
        choice = _first(choices) or {}
        message = _chat_message(choice.get("message")) or new_message("assistant", "")
        finish = _opt(choice.get("finish_reason"))
        usage = _usage_in(data, *_CHAT_USAGE)
        made: ModelResponse = new_response(message, usage, finish, _opt(data.get("model")), data)
        return made

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        message = response.message.replace(content=response.text)  # the API's content is a str
        calls = bool(message.tool_calls)
        fresh = data is None
        if data is None:
            head = _chat_head(None, response.model)
            data = {**head, "object": "chat.completion", "choices": []}
        out = dict(data)
        choices = _list(data.get("choices"))
        choice: _J = dict(_first(choices) or {"index": 0, "logprobs": None})
        old = _obj(choice.get("message")) or {"role": "assistant", "refusal": None}
        was = _chat_message(old)
        if fresh or was != message:
            choice["message"] = _chat_render(message, [old])[0]
            if was is not None and was.text != message.text and choice.get("logprobs") is not None:
                choice["logprobs"] = None  # they described the old text (as in a stream)
        if response.finish_reason is not None or choice.get("finish_reason") is None:
            default = "tool_calls" if calls else "stop"
            choice["finish_reason"] = _finish(response.finish_reason, _CHAT_FINISH, default)
        out["choices"] = [choice, *choices[1:]]
        if response.usage is not None:
            out["usage"] = _usage_out(response.usage, data.get("usage"), *_CHAT_USAGE, {})
        if response.model is not None:
            out["model"] = response.model
        return out

    def chunk(self, event: Event) -> Chunk:
        if _text_delta(event.data):  # the usual event: one choice's text delta, nothing else
            made: Chunk = new_chunk("text", event.data["choices"][0]["delta"]["content"], event)
            return made
        data = _obj(event.data)
        if data is None:
            name = "done" if event.data == "[DONE]" else "event"
            return Chunk("custom", name=f"openai.chat.{name}", value=event.data, raw=event)
        usage = _usage_in(data, *_CHAT_USAGE)
        choices = _list(data.get("choices"))
        choice = _first(choices) or {}
        if not choices or "error" in data or choice.get("index", 0) != 0:
            if usage is not None and not choices:
                made = new_chunk("usage", "", usage=usage, raw=event)
                return made
            name = "error" if "error" in data else "choice" if choices else "chunk"
            return Chunk("custom", name=f"openai.chat.{name}", value=data, raw=event)
        delta = _obj(choice.get("delta")) or {}
        finish = _opt(choice.get("finish_reason"))
        calls = _list(delta.get("tool_calls"))
        if calls:
            call = _obj(calls[0]) or {}
            fn = _obj(call.get("function")) or {}
            args, index = _str(fn.get("arguments")), call.get("index", 0)
            if call.get("id") or fn.get("name"):
                ids = (_opt(call.get("id")), _opt(fn.get("name")))
                return Chunk("tool_call_start", args, *ids, usage, finish, value=index, raw=event)
            return Chunk("tool_call_args", args, None, None, usage, finish, value=index, raw=event)
        if delta.get("content"):
            return Chunk("text", _str(delta["content"]), None, None, usage, finish, raw=event)
        for key in _REASONING_KEYS:
            if delta.get(key) and isinstance(delta[key], str):
                return Chunk("reasoning", delta[key], None, None, usage, finish, raw=event)
        if finish is not None:
            made = new_chunk("finish", "", usage=usage, finish_reason=finish, raw=event)
            return made
        if usage is not None:
            made = new_chunk("usage", "", usage=usage, raw=event)
            return made
        name = "role" if delta.get("role") else "refusal" if delta.get("refusal") else "chunk"
        return Chunk("custom", name=f"openai.chat.{name}", value=data, raw=event)

    def split(self, event: Event) -> list[Event] | None:
        """One event per thing in the first choice's delta (reasoning, text, each tool
        call), in that order; the role and other keys go with the first, the finish reason
        and usage with the last. The usual event carries one."""
        data = event.data
        if _text_delta(data):
            return None
        data = _obj(data)
        choices = _list(data.get("choices")) if data is not None else []
        if data is None or len(choices) != 1:
            return None
        choice = _obj(choices[0]) or {}
        delta = _obj(choice.get("delta")) or {}
        pieces: list[_J] = [{k: delta[k]} for k in _REASONING_KEYS if _str(delta.get(k))]
        if delta.get("content"):
            pieces.append({"content": delta["content"]})
        pieces += [{"tool_calls": [call]} for call in _list(delta.get("tool_calls"))]
        if len(pieces) < 2:
            return None
        rest = {k: v for k, v in delta.items() if k not in _DELTA_KEYS}
        out: list[Event] = []
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            one = {**choice, "delta": {**(rest if i == 0 else {}), **piece}}
            if not last:
                one["finish_reason"] = None
            if "content" not in piece and one.get("logprobs") is not None:
                one["logprobs"] = None  # they describe the text
            part = {**data, "choices": [one]}
            if not last and part.get("usage") is not None:
                part["usage"] = None
            out.append(Event(event.event, part))
        return out

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        raw = chunk.raw if isinstance(chunk.raw, Event) else None
        kind = chunk.kind
        if kind == "custom":
            return _custom_events(chunk, "openai.chat.", raw)
        if kind == "tool_call_end":  # Chat Completions has no such event
            return []
        src = _event_data(raw)
        if kind == "usage" and chunk.usage is not None and src is None:
            # a new usage (or a whole answer's, see `stream_events`): the SDK keeps the last
            # usage chunk's, so it waits for the framer
            counts = _usage_out(chunk.usage, None, *_CHAT_USAGE, {})
            return [Event(NOTE, {"type": NOTE, "usage": counts})]
        out: _J = dict(src) if src is not None else _chat_head(_event_data(template))
        if kind == "usage":
            out["choices"] = []
        else:
            choices = _list(out.get("choices"))
            choice: _J = dict(_first(choices) or {"index": 0})
            old = _obj(choice.get("delta")) or {}
            delta = {k: v for k, v in old.items() if k not in _DELTA_KEYS}
            if kind == "text":
                delta["content"] = chunk.text
            elif kind == "reasoning":
                key = next((k for k in _REASONING_KEYS if k in old), _REASONING_KEYS[0])
                delta[key] = chunk.text
            elif kind in ("tool_call_start", "tool_call_args"):
                call: _J = {"index": chunk.value if isinstance(chunk.value, int) else 0}
                fn: _J = {"arguments": chunk.text}
                if kind == "tool_call_start":
                    call.update(id=chunk.tool_call_id, type="function")
                    fn = {"name": chunk.tool_name, **fn}
                    # the call it changes keeps its other keys (`extra_content`, as in
                    # `_chat_call_out`)
                    was = _obj(_first(_list(old.get("tool_calls")))) or {}
                    if (
                        was.get("id") == chunk.tool_call_id
                        and was.get("type", "function") == "function"
                    ):
                        call = {**was, **call}
                        fn = {**(_obj(was.get("function")) or {}), **fn}
                delta["tool_calls"] = [{**call, "function": fn}]
            if delta.get("content") != old.get("content") and choice.get("logprobs") is not None:
                choice["logprobs"] = None  # they described the old text
            choice["delta"] = delta
            finish = chunk.finish_reason
            if kind == "finish" or finish is not None:
                choice["finish_reason"] = _finish(finish, _CHAT_FINISH, "stop")
            else:
                choice["finish_reason"] = None
            out["choices"] = [choice, *choices[1:]]
        if chunk.usage is not None:
            out["usage"] = _usage_out(chunk.usage, out.get("usage"), *_CHAT_USAGE, {})
        elif out.get("usage") is not None:
            out["usage"] = None
        return [Event(raw.event if raw is not None else None, out)]

    def stream_events(self, response: ModelResponse) -> list[Event]:
        head = _chat_head(None, response.model)
        calls = response.message.tool_calls

        def event(delta: _J, finish: str | None = None) -> Event:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return Event(None, {**head, "choices": [choice]})

        events = [event({"role": "assistant", "content": "", "refusal": None})]
        events += [event({"content": p}) for p in _pieces(response.text, 1)]
        for i, call in enumerate(calls):
            fn = {"name": call.name, "arguments": ""}
            start = {"index": i, "id": call.id, "type": "function", "function": fn}
            events.append(event({"tool_calls": [start]}))
            for piece in _pieces(_args_out(call.arguments)):
                events.append(
                    event({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
                )
        default = "tool_calls" if calls else "stop"
        events.append(event({}, _finish(response.finish_reason, _CHAT_FINISH, default)))
        if response.usage is not None:
            # `Made`: in a stream standing for a whole answer a hook gave, its usage goes on
            # as a new chunk's (see `write_chunk`): the framer sends it only to a request
            # that asked
            usage = _usage_out(response.usage, None, *_CHAT_USAGE, {})
            events.append(Made(None, {**head, "choices": [], "usage": usage}))
        events.append(Event(None, "[DONE]"))
        return events


def _chat_streamed_call(raws: list[Any]) -> _J | None:
    """A streamed tool call as an answer holds it (see `_chat_call_in`), put together from
    the deltas its chunks were read from: their keys, the first's where they repeat one
    (`extra_content`, where Gemini's OpenAI-compatible API puts the thought signature it
    wants back), the arguments joined, and no `index` (a stream's numbering)."""
    pieces = [p for p in map(_delta_call, raws) if p is not None]
    if not pieces:
        return None
    call: _J = {}
    fn: _J = {}
    args: list[str] = []
    for piece in reversed(pieces):
        own = _obj(piece.get("function")) or {}
        call.update(piece)
        fn.update(own)
        args.append(_str(own.get("arguments")))
    if call.get("type", "function") != "function":
        return None
    call.pop("index", None)
    fn["arguments"] = "".join(reversed(args))
    call["function"] = fn
    return call


def _delta_call(raw: Any) -> Mapping[str, Any] | None:
    """The tool call in the delta of a streamed event `raw` (one, once `split`)."""
    data = _obj(raw.data) if isinstance(raw, Event) else None
    choice = _first(_list(data.get("choices"))) if data is not None else None
    delta = _obj(choice.get("delta")) if choice is not None else None
    return _first(_list(delta.get("tool_calls"))) if delta is not None else None


CALL_READERS.append(_chat_streamed_call)


def _chat_head(template: Mapping[str, Any] | None, model: str | None = None) -> _J:
    """The fields every chunk of a stream repeats: the template's, or fresh ones."""
    t = template or {}
    head: _J = {
        "id": _str(t.get("id")) or _uid("chatcmpl-"),
        "object": _str(t.get("object")) or "chat.completion.chunk",
        "created": json_int(t.get("created")) or int(time.time()),
        "model": model or _str(t.get("model")),
    }
    head.update((k, t[k]) for k in ("system_fingerprint", "service_tier") if k in t)
    return head


# -- Responses ----------------------------------------------------------------------------------

_RESP_KEYS = frozenset({"input", "instructions", "tools", "model", "stream"})
_RESPONSES = "openai.responses"  # the tag of an answer's record in `Message.raw`
_RESP_ROLES: dict[Any, Role] = {
    **{r: r for r in ("system", "user", "assistant")},
    "developer": "system",
}
_RESP_STATUS = frozenset(
    {"completed", "failed", "in_progress", "cancelled", "queued", "incomplete"}
)
_RESP_USAGE = ("input_tokens", "output_tokens")
_RESP_USAGE_BASE: Mapping[str, Any] = {
    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
    "output_tokens_details": {"reasoning_tokens": 0},
}
_REASONING_DELTAS = frozenset(
    {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
)
_TERMINAL = frozenset({"response.completed", "response.incomplete"})
_EVENT_KINDS = {
    "text": "response.output_text.delta",
    "reasoning": "response.reasoning_text.delta",
    "tool_call_start": "response.output_item.added",
    "tool_call_args": "response.function_call_arguments.delta",
    "tool_call_end": "response.output_item.done",
    "usage": "response.completed",
    "finish": "response.completed",
}


def _resp_call_in(item: Mapping[str, Any]) -> ToolCall:
    args = _args_in(item.get("arguments"))
    return ToolCall(_str(item.get("call_id")), _str(item.get("name")), args, raw=item)


def _resp_call_out(call: ToolCall, output: bool) -> Any:
    raw = _obj(call.raw)
    if raw is not None and raw.get("type") == "function_call" and _resp_call_in(raw) == call:
        return call.raw
    out: _J = {"type": "function_call", "call_id": call.id, "name": call.name}
    out["arguments"] = _args_out(call.arguments)
    if raw is not None and raw.get("type") == "function_call" and raw.get("call_id") == call.id:
        # written over its item, whose id and status stay: the API pairs a reasoning
        # item with the item after it by id
        return {**raw, **out}
    return {"id": _uid("fc_"), **out, "status": "completed"} if output else out


def _resp_type(item: Any) -> str | None:
    """The modelled kind of an input or output item, or None."""
    data = _obj(item)
    if data is None:
        return None
    kind = data.get("type", "message")
    if kind == "message":
        return kind if data.get("role") in _RESP_ROLES else None
    return kind if kind in ("function_call", "function_call_output") else None


def _resp_read(item: Any) -> Message | None:
    kind = _resp_type(item)
    data = _obj(item) or {}
    if kind == "message":
        return Message(_RESP_ROLES[data["role"]], _content_in(data.get("content")))
    if kind == "function_call":
        return Message("assistant", "", (_resp_call_in(data),))
    if kind == "function_call_output":
        return Message.tool(_content_in(data.get("output")), _str(data.get("call_id")))
    return None


def _resp_join(last: Message, item: Any) -> Message | None:
    """A function call after an assistant message (or call) belongs to it, as in chat."""
    if last.role != "assistant" or _resp_type(item) != "function_call":
        return None
    return last.replace(tool_calls=(*last.tool_calls, _resp_call_in(_obj(item) or {})))


def _resp_part(role: str) -> Callable[[Part], _J]:
    def part(p: Part) -> _J:
        if isinstance(p, ImagePart):
            return {"type": "input_image", "image_url": p.url, "detail": "auto"}
        if role == "assistant":
            return {"type": "output_text", "text": p.text, "annotations": []}
        return {"type": "input_text", "text": p.text}

    return part


def _resp_render(message: Message, base: list[Any]) -> list[Any]:
    """Input items for `message`, over the items it replaces: their ids, statuses, unmodelled
    parts and keys, and the unmodelled items around them (reasoning) are kept."""
    old = {kind: _obj(i) for i in reversed(base) if (kind := _resp_type(i)) is not None}
    items: list[Any] = []
    if message.role == "tool":
        was = old.get("function_call_output")
        out: _J = dict(was) if was is not None else {"type": "function_call_output"}
        out["call_id"] = message.tool_call_id or ""
        part = _resp_part("user")
        out["output"] = _content_out(message.content, (was or {}).get("output"), part)
        items.append(out)
    else:
        if message.role != "assistant" or message.content or not message.tool_calls:
            was = old.get("message")
            out = dict(was) if was is not None else {"type": "message", "role": message.role}
            part = _resp_part(message.role)
            out["content"] = _content_out(message.content, (was or {}).get("content"), part)
            items.append(out)
        # a call not read from an item (a checkpoint keeps none) takes the one of its id
        calls: dict[Any, Any] = {
            (_obj(i) or {}).get("call_id"): i for i in base if _resp_type(i) == "function_call"
        }
        items += [
            _resp_call_out(
                c if _resp_type(c.raw) == "function_call" else c.replace(raw=calls.get(c.id)),
                False,
            )
            for c in message.tool_calls
        ]
    return _splice(base, _resp_place, items)


def _type_of(key: object) -> object:
    """The type part of a place's key (see `_resp_place`)."""
    return key[0] if isinstance(key, tuple) else key  # pyright: ignore[reportUnknownVariableType]


def _resp_place(item: Any) -> object:
    """What an item's place is kept for (see `_splice`): its kind, and a call's own id."""
    kind = _resp_type(item)
    if kind == "function_call":
        return kind, (_obj(item) or {}).get("call_id")
    return kind


def _resp_tool(item: Any) -> ToolSpec | None:
    tool = _obj(item)
    if tool is None or tool.get("type") != "function":
        return None
    params = _obj(tool.get("parameters"))
    spec = ToolSpec(_str(tool.get("name")), _str(tool.get("description")))
    return spec if params is None else spec.replace(parameters=dict(params))


def _resp_tool_out(spec: ToolSpec, old: Mapping[str, Any] | None) -> _J:
    # a tool a hook adds is not strict: `strict` defaults to true in this API, which refuses
    # most hand-written schemas; one written over the caller's keeps the caller's keys only
    base = old if old is not None else {"strict": False}
    out: _J = {**base, "type": "function", "name": spec.name}
    out["parameters"] = dict(spec.parameters)
    if spec.description:
        out["description"] = spec.description
    else:
        out.pop("description", None)
    return out


def _resp_status(reason: str | None) -> str:
    if reason is not None and reason in _RESP_STATUS:
        return reason
    cut = finish_in(reason, _FINISH_WORDS) in _INCOMPLETE
    return "incomplete" if cut else "completed"


# the finish reasons a Responses answer says as `incomplete`, and its words for why
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _set_status(resp: _J, reason: str | None) -> None:
    """`resp` (a Responses object) finished for `reason`: its `status`, and why it is
    incomplete where it is (a reason the status alone says keeps the details it has)."""
    status = resp["status"] = _resp_status(reason)
    why = _INCOMPLETE.get(finish_in(reason, _FINISH_WORDS) or "")
    if status != "incomplete":
        resp["incomplete_details"] = None
    elif why is not None:
        resp["incomplete_details"] = {"reason": why}
    elif not resp.get("incomplete_details"):
        resp["incomplete_details"] = {"reason": "max_output_tokens"}


def _output_items(message: Message, old: list[Any]) -> list[Any]:
    """Output items for an answer, over `old`, each where `old` had one of its kind: the
    text in the message items' output texts (see `_retext`), the calls in the function
    call items in order (more go last), other items (reasoning) as they were. Where there is
    no output text to write over, the text is one message item in place of the first (its
    id kept), or before the calls; an answer of only tool calls has none."""
    text = message.text
    olds = [i for i in old if _resp_type(i) == "message"]
    news: list[Any] | None = _retext(olds, text)
    lead: list[Any] = []  # a message item with no message item to take the place of
    if news is None:
        news = [None] * len(olds)
        if text or not message.tool_calls:
            item = _message_item(_obj(olds[0]) if olds else None, text)
            if olds:
                news[0] = item
            else:
                lead = [item]
    messages = iter(news)
    calls = iter([_resp_call_out(c, True) for c in message.tool_calls])
    out: list[Any] = []
    for item in old:
        kind = _resp_type(item)
        if kind == "message":
            if (new := next(messages)) is not None:
                out.append(new)
        elif kind == "function_call":
            out += lead
            lead = []
            out.extend(itertools.islice(calls, 1))
        else:
            out.append(item)
    return [*out, *lead, *calls]


def _message_item(was: Mapping[str, Any] | None, text: str) -> _J:
    """A message item holding `text` in one output text, over `was` (its id and status kept)."""
    out: _J = dict(was) if was is not None else {"id": _uid("msg_"), "type": "message"}
    out.update(role="assistant", status=out.get("status") or "completed")
    if was is None or _output_text(was) != text:
        part: _J = {"type": "output_text", "text": text}
        out["content"] = [{**part, "annotations": [], "logprobs": []}]
    return out


def _retext(items: list[Any], text: str) -> list[Any | None] | None:
    """Message `items` (each or None: gone) with `text` written into their output texts,
    split across them where there are several (`split_text`): each part keeps its place and
    its keys (annotations), as a stream's deltas do, but not its logprobs, which described
    the old text. A part left empty goes, and an item left with no part. None where there
    is no output text to write over, or no text."""
    contents = [list(_list((_obj(i) or {}).get("content"))) for i in items]
    slots = [
        (k, j)
        for k, content in enumerate(contents)
        for j, part in enumerate(content)
        if (_obj(part) or {}).get("type") == "output_text"
    ]
    if not slots or not text:
        return None
    old = [_str(contents[k][j].get("text")) for k, j in slots]
    if "".join(old) == text:  # the calls changed, not the text
        return list(items)
    for (k, j), was, now in zip(slots, old, split_text(old, text), strict=True):
        if now != was:
            part = contents[k][j]
            contents[k][j] = {**part, "text": now, "logprobs": []} if now else None
    out: list[Any | None] = []
    for item, content in zip(items, contents, strict=True):
        kept = [p for p in content if p is not None]
        if kept == _list(item.get("content")):
            out.append(item)
        else:
            out.append({**item, "content": kept} if kept else None)
    return out


def _output_text(item: Mapping[str, Any]) -> str:
    parts = (_obj(p) or {} for p in _list(item.get("content")))
    return "".join(_str(p.get("text")) for p in parts if p.get("type") == "output_text")


class _ResponsesFramer(Framer):
    """Frames a Responses stream made of new chunks: `response.created` first, every delta
    in an output item of its kind (items numbered in the order they open, one open at a
    time, each closed with the `.done` events the API sends), `response.completed` last
    with the items delivered. The SDK's `responses.stream()` needs all that.

    The API's `output_item.done` for a message item leaves the item open until the next
    item or the stream's end: text a hook held back and releases before then (at the
    `finish` chunk, or before a `tool_call_start`) goes into that item, as the API would
    have sent it, rather than into another one (or leaving it empty).
    """

    __slots__ = (
        "api_item",
        "ended",
        "ending",
        "failed",
        "given",
        "item",
        "items",
        "model",
        "numbers",
        "opened",
        "parts",
        "replaying",
        "response",
        "text",
        "waiting",
    )

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model if isinstance(model, str) else ""
        self.response: _J | None = None
        self.opened = False  # whether the API opened the stream (its `response.created`)
        self.parts: set[str] = set()  # the open item's part events out (see `_ITEM_PARTS`)
        self.replaying = False  # reading events that went out before (see `replay`)
        self.api_item = False  # whether the API opened the open item (not a `Made` event)
        self.waiting: list[Event] = []  # made deltas for after the API's open function call
        # the terminal event a chunk made (its usage, its status), sent when the stream ends
        self.ending: tuple[str, Mapping[str, Any]] = ("response.completed", {})
        self.failed = False  # whether the API sent an `error` (and no terminal event yet)
        self.item: _J | None = None  # the open output item
        self.ended = False  # whether the API ended it already (its end held: see above)
        self.given: Any = None  # the output index its events came with
        self.text: list[str] = []  # the open item's text (a message) or arguments
        self.items: list[_J] = []  # the items closed
        self.numbers = itertools.count()

    def replay(self, batch: Sequence[Event]) -> None:
        self.replaying = True
        try:
            super().replay(batch)
        finally:
            self.replaying = False
        self.numbers = itertools.count(len(batch))  # numbered on from what went out

    def _part(self, out: list[Event], kind: str, **fields: Any) -> None:
        """An item's part event, unless it went out already. What a replay makes went out
        only if the API sent it: those are noted as the replay reads them (`_one`)."""
        if kind not in self.parts and not self.replaying:
            self.parts.add(kind)
            self._emit(out, kind, **fields)

    def _start(self, out: list[Event]) -> _J:
        """The response the stream opened with (`response.created`), sent now if it was not."""
        if self.response is None:
            start = _response_json(ModelResponse(model=self.model), [])
            start.update(status="in_progress", completed_at=None, usage=None)
            self.response = start
            self._emit(out, "response.created", response=start)
            self._emit(out, "response.in_progress", response=dict(start))
        return self.response

    def _close(self, out: list[Event]) -> None:
        response = self._start(out)
        while self.item is not None or self.waiting:
            self._close_item(out)
        if self.failed:  # the stream ended with the API's `error`: no success is made up
            self.closed = True
            return
        kind, given = self.ending
        final: _J = {**response, **given}
        final.update(id=response["id"], output=self.items)
        if not final.get("model"):  # a closing event of new chunks names none: as opened
            final["model"] = response.get("model") or self.model
        if self.noted:  # counts new usage chunks gave
            final["usage"] = highest(_obj(final.get("usage")) or _RESP_USAGE_BASE, self.noted)
        if kind == "response.completed":
            final.update(status="completed", completed_at=int(time.time()))
        self._emit(out, kind, response=final)
        self.closed = True

    def _emit(self, out: list[Event], kind: str, **fields: Any) -> None:
        data = {**fields, "type": kind, "sequence_number": next(self.numbers)}
        out.append(Event(kind, data))

    def _one(self, event: Event, out: list[Event]) -> None:
        data: _J = dict(_obj(event.data) or {})
        kind = _str(data.pop("type", None)) or event.event or ""
        data.pop("sequence_number", None)
        if self.response is None and kind == "response.created" and _obj(data.get("response")):
            self.response = dict(cast("_J", data["response"]))
            self.opened = True
            self._emit(out, kind, **data)
            return
        self._start(out)
        index = data.get("output_index")
        if event.__class__ is Made:  # the item it names is a guess: it goes where it fits
            if kind in _ITEM_OF and not self._fit(_ITEM_OF[kind], event, out):
                return
            index = object() if kind == "response.output_item.added" else self.given
        if kind == "response.output_text.delta":
            self._hold(index, "message", out)
            self.text.append(_str(data.get("delta")))
            self._emit(out, kind, **{**data, **self._text_part(out)})
        elif kind in _REASONING_DELTAS:
            self._hold(index, "reasoning", out)
            item_id, at = self._at()
            self._emit(out, kind, **{**data, "item_id": item_id, "output_index": at})
        elif kind == "response.function_call_arguments.delta":
            self._hold(index, "function_call", out)
            self.text.append(_str(data.get("delta")))
            item_id, at = self._at()
            self._emit(out, kind, **{**data, "item_id": item_id, "output_index": at})
        elif kind == "response.output_item.added":
            item = dict(_obj(data.get("item")) or {})
            made = event.__class__ is Made
            self._open(index, _str(item.get("type")) or "message", item, out, api=not made)
        elif kind == "response.output_item.done":
            if self.item is not None and self.given == index:
                done = _obj(data.get("item")) or {}
                # its id stays the one that went out with the item (made here, if the
                # API's `output_item.added` was dropped)
                self.item.update((k, v) for k, v in done.items() if k != "id")
                # a message waits for held text (see above), unless its end went out
                if self.replaying or self.item["type"] != "message":
                    self._close_item(out)
                else:
                    self.ended = True
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.ending = (kind, _obj(data.get("response")) or {})  # deltas may still come
            self.failed = False
        elif kind in _ITEM_PARTS:
            # an open item's own parts: sent here, with what was delivered; the API's were
            # out already if a replay reads them
            if self.replaying:
                self.parts.add(kind)
        elif kind in ("response.in_progress", "response.queued"):
            if self.opened:  # the API's own opening goes on; a made one has its own
                self._emit(out, kind, **data)
        elif kind != "response.created":
            if self.ended:  # an event after the item (an `error`): the item's end first
                self._close_item(out)
            self.failed = self.failed or kind == "error"
            self._emit(out, kind, **data)

    def _fit(self, kind: str, event: Event, out: list[Event]) -> bool:
        """For a made delta: an open item of `kind` (False: it waits, not to go inside
        the API's own function call while it streams)."""
        item = self.item
        if item is not None and item.get("type") != kind:
            if self.api_item and item.get("type") == "function_call":
                self.waiting.append(event)
                return False
            self._close_item(out)
        if self.item is None:
            self._open(object(), kind, {}, out, api=False)
        return True

    def _text_part(self, out: list[Event]) -> _J:
        """Where the open message's text goes (its item, output and content index), its
        `content_part.added` sent first if it was not."""
        item_id, at = self._at()
        where: _J = {"item_id": item_id, "output_index": at, "content_index": 0}
        part: _J = {"type": "output_text", "text": "", "annotations": []}
        self._part(out, "response.content_part.added", **where, part=part)
        return where

    def _at(self) -> tuple[str, int]:
        assert self.item is not None
        return _str(self.item.get("id")), len(self.items)

    def _hold(self, index: Any, kind: str, out: list[Event]) -> None:
        """An item of `kind`, given `index`, open."""
        if self.item is None or self.given != index or self.item.get("type") != kind:
            self._open(index, kind, {}, out)

    def _open(self, index: Any, kind: str, item: _J, out: list[Event], api: bool = True) -> None:
        self._close_item(out)
        self.api_item = api
        prefix = {"message": "msg_", "function_call": "fc_", "reasoning": "rs_"}.get(kind, "it_")
        item.update(id=item.get("id") or _uid(prefix), type=kind)
        if kind == "message":
            item.update(role="assistant", status="in_progress", content=[])
        elif kind == "function_call":
            item.setdefault("call_id", _uid("call_"))
            item.setdefault("name", "")
            item.setdefault("status", "in_progress")
            item["arguments"] = _str(item.get("arguments"))
        elif kind == "reasoning":
            item.setdefault("summary", [])
        self.item, self.given = item, index
        self.text = [item["arguments"]] if kind == "function_call" else []
        self.parts = set()
        at = len(self.items)
        self._emit(out, "response.output_item.added", output_index=at, item=dict(item))
        if kind == "message":
            self._text_part(out)

    def _close_item(self, out: list[Event]) -> None:
        """Close the open item, if any; then the made deltas that waited for it go on."""
        if self.item is not None:
            self._end_item(self.item, out)
        waiting, self.waiting = self.waiting, []
        for event in waiting:
            self._one(event, out)

    def _end_item(self, item: _J, out: list[Event]) -> None:
        at = len(self.items)
        text = "".join(self.text)
        if item["type"] == "message":
            part: _J = {"type": "output_text", "text": text, "annotations": _kept(item, text)}
            where = self._text_part(out)
            self._part(out, "response.output_text.done", **where, text=text)
            self._part(out, "response.content_part.done", **where, part=part)
            item["content"] = [part]
        elif item["type"] == "function_call":
            item["arguments"] = text
            done = {"arguments": text, "name": item.get("name", ""), "item_id": item["id"]}
            self._part(out, "response.function_call_arguments.done", output_index=at, **done)
        item["status"] = "completed"
        self._emit(out, "response.output_item.done", output_index=at, item=item)
        self.items.append(item)
        self.item = None
        self.ended = False


def _kept(item: Mapping[str, Any], text: str) -> list[Any]:
    """The annotations (citations) of the API's own text parts of message `item` (as its
    `output_item.done` gave them), on the one part a framed stream ends it with, when they
    hold the very text delivered: their positions moved by the length of the parts before.
    None once a hook changed the text (they would point at other words)."""
    parts = [p for q in _list(item.get("content")) if (p := _obj(q)) is not None]
    texts = [p for p in parts if p.get("type") == "output_text"]
    if "".join(_str(p.get("text")) for p in texts) != text:
        return []
    kept: list[Any] = []
    offset = 0
    for part in texts:
        for found in _list(part.get("annotations")):
            note = dict(_obj(found) or {})
            for key in ("start_index", "end_index", "index"):  # positions in the text
                if isinstance(note.get(key), int):
                    note[key] += offset
            kept.append(note)
        offset += len(_str(part.get("text")))
    return kept


# a delta kind -> the kind of output item it goes in
_ITEM_OF = {
    "response.output_text.delta": "message",
    "response.reasoning_text.delta": "reasoning",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.function_call_arguments.delta": "function_call",
}

# the parts of an output item that `_ResponsesFramer` sends itself
_ITEM_PARTS = frozenset(
    {
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.function_call_arguments.done",
    }
)


class ResponsesWire(Wire):
    """``POST /responses``.

    `instructions` is a leading system message. Written back, the leading system messages
    with a str content that were not read from the input (the one read from `instructions`,
    those a hook put next to it) are `instructions` again, joined by a blank line as
    Anthropic's `system`: the caller's instructions never become an input item, which a
    stored conversation would keep. Input items map to messages as in chat:
    function calls join the assistant message before them, a function call output is a tool
    message; other items travel with the next message. Stream: text and reasoning deltas,
    a function call item added / done (``tool_call_start`` / ``tool_call_end``, `value` =
    ``output_index``), argument deltas (``tool_call_args``, same `value`; the event has no
    call id, which the adapter fills in from the start with that `value`),
    ``response.completed`` / ``incomplete`` (``finish``, with the status as `finish_reason`
    and the usage, as Anthropic's `message_delta`); every other event is custom
    ``openai.responses.<type>``.
    """

    __slots__ = ()
    path = "/responses"
    frames = True
    reframes = True
    numbers = True
    notes = True
    made = True
    restates = True

    def opens(self, event: Event) -> bool:
        data = _obj(event.data)
        return (event.event or (data or {}).get("type")) == "response.created"

    def framer(self, body: Mapping[str, Any]) -> _ResponsesFramer:
        return _ResponsesFramer(body.get("model"))

    def restate(self, event: Event, delivered: dict[Any, Any]) -> Event:
        """Closing events repeat the whole text and function calls (`output_text.done`,
        `content_part.done`, `function_call_arguments.done`, `output_item.done`,
        `response.completed`); they carry what the deltas and the calls' opening events
        delivered, so `get_final_response()` and the SDK's snapshots agree with what the
        caller read. A text part's delivered text counts from its `content_part.added`:
        a part whose every delta a hook took out (a `wrap_model` hook filtering the chunks
        takes them out unseen) closes with the text it opened with, not the model's."""
        raw: Any = event.data
        if not isinstance(raw, dict):
            return event
        data = cast("dict[str, Any]", raw)
        kind = data.get("type")
        if kind == "response.output_text.delta":
            key = (data.get("item_id"), data.get("content_index"))
            delivered[key] = delivered.get(key, "") + str(data.get("delta", ""))
            return event
        if kind == "response.content_part.added":
            part = _obj(data.get("part")) or {}
            if part.get("type") == "output_text":
                key = (data.get("item_id"), data.get("content_index"))
                delivered.setdefault(key, _str(part.get("text")))
            return event
        if kind == "response.output_item.added":
            item = _obj(data.get("item")) or {}
            if item.get("type") == "function_call":  # a call as it went out: id, name, args
                fields = ("call_id", "name", "arguments")
                delivered["call", item.get("id")] = {k: item[k] for k in fields if k in item}
            return event
        if kind == "response.function_call_arguments.delta":
            call = delivered.get(("call", data.get("item_id")))
            if call is not None:
                call["arguments"] = str(call.get("arguments", "")) + str(data.get("delta", ""))
            return event
        closing = isinstance(kind, str) and (
            kind.endswith(".done")
            or kind in ("response.completed", "response.incomplete", "response.failed")
        )
        if not delivered or not closing:
            return event
        fixed: dict[str, Any] = json.loads(json.dumps(data))
        changed = False

        def settle(item_id: Any, index: Any, holder: Any, key: str) -> None:
            nonlocal changed
            text = delivered.get((item_id, index))
            if isinstance(holder, dict) and text is not None:
                found = cast("dict[str, Any]", holder)
                if found.get(key) != text:
                    found[key] = text
                    if found.get("logprobs"):
                        found["logprobs"] = []  # they described the old text
                    changed = True

        def settle_call(item_id: Any, holder: dict[str, Any]) -> None:
            nonlocal changed
            call = delivered.get(("call", item_id))
            if call is not None:
                for key, value in call.items():
                    if key in holder and holder[key] != value:
                        holder[key] = value
                        changed = True

        def settle_item(value: Any) -> None:
            if isinstance(value, dict):
                item = cast("dict[str, Any]", value)
                if item.get("type") == "function_call":
                    settle_call(item.get("id"), item)
                elif item.get("type") == "message":
                    for index, part in enumerate(_list(item.get("content"))):
                        if isinstance(part, dict) and cast("dict[str, Any]", part).get("type") == (
                            "output_text"
                        ):
                            settle(item.get("id"), index, part, "text")

        if kind == "response.output_text.done":
            settle(fixed.get("item_id"), fixed.get("content_index"), fixed, "text")
        elif kind == "response.content_part.done":
            settle(fixed.get("item_id"), fixed.get("content_index"), fixed.get("part"), "text")
        elif kind == "response.function_call_arguments.done":
            settle_call(fixed.get("item_id"), fixed)
        elif kind == "response.output_item.done":
            settle_item(fixed.get("item"))
        elif isinstance(fixed.get("response"), dict):
            for item in _list(fixed["response"].get("output")):
                settle_item(item)
        return Event(event.event, fixed) if changed else event

    def settle(self, body: Mapping[str, Any]) -> None:
        """`Wire.settle`. An `input` or `tools` given as a generator (or another iterable
        but a list or tuple) is read into a list at once, in `body` itself, the SDK's own
        body, which it sends as it is when no hook changes anything: a generator the view
        was read from would leave it nothing to send (and the SDK sends a generator
        `input` as no JSON at all)."""
        arrays = _resp_arrays(body)
        if arrays and isinstance(body, MutableMapping):
            body.update(arrays)

    def view(self, body: Mapping[str, Any], raw: Any) -> ModelRequest:
        """`Wire.view`, of `body` settled (see `settle`)."""
        get = body.get  # every call's view passes here: classes told before, told at once
        told = ARRAY_CLASSES.get
        if not (told(get("input").__class__) is False and told(get("tools").__class__) is False):
            self.settle(body)
        return Wire.view(self, body, raw)

    def _read(
        self, body: Mapping[str, Any]
    ) -> tuple[ModelRequest, list[_Group], list[Any], Message | None]:
        source = body.get("input")
        if isinstance(source, str):  # a str input is one user message
            source = [{"role": "user", "content": source}]
        groups, head = _groups(source, _resp_read, _resp_join)
        instructions = body.get("instructions")
        lead = Message.system(instructions) if isinstance(instructions, str) else None
        messages = tuple(map(_MESSAGE, groups))
        tools = (s for t in _list(body.get("tools")) if (s := _resp_tool(t)) is not None)
        request = ModelRequest(
            (lead, *messages) if lead is not None else messages,
            tuple(tools),
            _opt(body.get("model")),
            _options(body, _RESP_KEYS),
            bool(body.get("stream")),
        )
        return request, groups, head, lead

    def request(self, body: Mapping[str, Any]) -> ModelRequest:
        """An `input` or `tools` that is an iterable but a list or tuple is read (see
        `view`), a generator once."""
        return self._read(_resp_settled(body))[0]

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        body = _resp_settled(body)
        read, groups, head, lead = self._read(body)
        out = dict(body)
        if request == read:
            return out
        if request.messages != read.messages:
            messages = request.messages
            # the leading system messages not read from an input item; `instructions` is a
            # str, so one with parts is an item
            top = 0
            for message, i in zip(messages, _pairs(read.messages, messages, _ROLE), strict=True):
                item = i is not None and (lead is None or i > 0)
                if item or message.role != "system" or not isinstance(message.content, str):
                    break
                top += 1
            if top:
                out["instructions"] = "\n\n".join(m.text for m in messages[:top])
            elif lead is not None:
                del out["instructions"]
            items = _write_groups(groups, head, messages[top:], _resp_render, _RESPONSES)
            if items or "input" in body:
                out["input"] = _as_str_input(items) if isinstance(body.get("input"), str) else items
        if request.tools != read.tools:
            _write_tools(out, body, request.tools, _resp_tool, _resp_tool_out)
        _write_common(out, body, request, _RESP_KEYS)
        return out

    def answers(self, data: Mapping[str, Any]) -> bool:
        return data.get("object") == "response"

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        output = [o for i in _list(data.get("output")) if (o := _obj(i)) is not None]
        return [
            _str(p.get("text"))
            for o in output
            if o.get("type") == "message"
            for p in (_obj(q) or {} for q in _list(o.get("content")))
            if p.get("type") == "output_text"
        ]

    def with_texts(self, data: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        given = iter(texts)

        def part(item: Any) -> Any:
            found = _obj(item)
            if found is None or found.get("type") != "output_text":
                return item
            text = next(given)
            # a changed part's logprobs go, as in `write_response`: they spell the old text
            return item if text == found.get("text") else _retexted(found, text)

        def item(value: Any) -> Any:
            found = _obj(value)
            if found is None or found.get("type") != "message":
                return value
            return {**found, "content": [part(p) for p in _list(found.get("content"))]}

        return {**data, "output": [item(o) for o in _list(data.get("output"))]}

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        output = [o for i in _list(data.get("output")) if (o := _obj(i)) is not None]
        text = "".join(self.texts(data))
        calls = tuple(_resp_call_in(o) for o in output if o.get("type") == "function_call")
        usage = _usage_in(data, *_RESP_USAGE)
        # its output items (reasoning), for the next request
        message = Message("assistant", text, calls, raw=(_RESPONSES, data.get("output")))
        status, model = _opt(data.get("status")), _opt(data.get("model"))
        return ModelResponse(message, usage, status, model, raw=data)

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if data is None:
            return _response_json(response, _output_items(response.message, []))
        out = dict(data)
        if self.response(data).message != response.message:
            out["output"] = _output_items(response.message, _list(data.get("output")))
        if response.finish_reason is not None:
            _set_status(out, response.finish_reason)
        if response.usage is not None:
            usage = _usage_out(response.usage, data.get("usage"), *_RESP_USAGE, _RESP_USAGE_BASE)
            out["usage"] = usage
        if response.model is not None:
            out["model"] = response.model
        return out

    def chunk(self, event: Event) -> Chunk:
        data = _obj(event.data)
        if data is None:
            return Chunk("custom", name="openai.responses.event", value=event.data, raw=event)
        kind = _str(data.get("type")) or event.event or ""
        index = data.get("output_index")
        if kind == "response.output_text.delta":
            made: Chunk = new_chunk("text", _str(data.get("delta")), event)
            return made
        if kind in _REASONING_DELTAS:
            return Chunk("reasoning", _str(data.get("delta")), raw=event)
        if kind == "response.function_call_arguments.delta":
            return Chunk("tool_call_args", _str(data.get("delta")), value=index, raw=event)
        item = _obj(data.get("item")) or {}
        if item.get("type") == "function_call" and kind.startswith("response.output_item."):
            ids = (_opt(item.get("call_id")), _opt(item.get("name")))
            if kind.endswith(".added"):
                args = _str(item.get("arguments"))
                return Chunk("tool_call_start", args, *ids, value=index, raw=event)
            return Chunk("tool_call_end", "", *ids, value=index, raw=event)
        if kind in _TERMINAL:
            resp = _obj(data.get("response")) or {}
            usage = _usage_in(resp, *_RESP_USAGE)
            status = _opt(resp.get("status")) or kind.rpartition(".")[2]
            end: ChunkKind = "finish"  # the end of the answer, with its usage
            made = new_chunk(end, "", usage=usage, finish_reason=status, raw=event)
            return made
        return Chunk("custom", name=f"openai.responses.{kind}", value=data, raw=event)

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        raw = chunk.raw if isinstance(chunk.raw, Event) else None
        kind = chunk.kind
        if kind == "custom":
            return _custom_events(chunk, "openai.responses.", raw)
        src = _event_data(raw)
        if kind == "usage" and _str((src or {}).get("type")) not in _TERMINAL:
            # a new usage: only the closing event carries one, so it waits for the framer
            if chunk.usage is None:
                return []
            counts = _usage_out(chunk.usage, None, *_RESP_USAGE, _RESP_USAGE_BASE)
            return [Event(NOTE, {"type": NOTE, "usage": counts})]
        base = src or _event_data(template) or {}
        was = _str(base.get("type"))
        wanted = _EVENT_KINDS[kind]
        status = _resp_status(chunk.finish_reason or "completed")
        if kind == "reasoning" and was in _REASONING_DELTAS:
            wanted = was
        elif kind in ("usage", "finish") and status == "incomplete":
            wanted = "response.incomplete"
        same = src is not None and was == wanted
        out: _J = dict(base) if same else {"type": wanted}
        out.setdefault("sequence_number", json_int(base.get("sequence_number")))
        index = chunk.value if isinstance(chunk.value, int) else json_int(base.get("output_index"))
        if kind in ("usage", "finish"):
            old = _obj(out.get("response")) or _obj(base.get("response"))
            resp: _J = dict(old or _response_json(ModelResponse(), []))
            _set_status(resp, chunk.finish_reason or "completed")
            if chunk.usage is not None:
                usage = _usage_out(chunk.usage, resp.get("usage"), *_RESP_USAGE, _RESP_USAGE_BASE)
                resp["usage"] = usage
            out["response"] = resp
        elif kind in ("tool_call_start", "tool_call_end"):
            item: _J = dict(_obj(out.get("item")) or {"id": _uid("fc_"), "arguments": ""})
            item["type"] = "function_call"
            item["call_id"] = chunk.tool_call_id or _str(item.get("call_id"))
            item["name"] = chunk.tool_name or _str(item.get("name"))
            item.setdefault("status", "in_progress" if kind == "tool_call_start" else "completed")
            if kind == "tool_call_start":
                item["arguments"] = chunk.text
            out.update(output_index=index, item=item)
        else:
            out.setdefault("item_id", _str(base.get("item_id")))
            if kind != "tool_call_args":
                key = "summary_index" if "summary" in wanted else "content_index"
                out.setdefault(key, json_int(base.get(key)))
            if kind == "text" and out.get("delta") != chunk.text:
                out["logprobs"] = []  # they described the old text
            out.update(output_index=index, delta=chunk.text)
        return [(Event if same else Made)(wanted, out)]

    def stream_events(self, response: ModelResponse) -> list[Event]:
        output = _output_items(response.message, [])
        final = _response_json(response, output)
        start: _J = {**final, "status": "in_progress", "output": [], "usage": None}
        start.update(completed_at=None, incomplete_details=None)
        numbers = itertools.count()
        events: list[Event] = []

        def emit(kind: str, **fields: Any) -> None:
            events.append(Event(kind, {"type": kind, "sequence_number": next(numbers), **fields}))

        emit("response.created", response=start)
        emit("response.in_progress", response=dict(start))
        for index, item in enumerate(output):
            at: _J = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                opening: _J = {**item, "status": "in_progress", "content": []}
                emit("response.output_item.added", output_index=index, item=opening)
                part = item["content"][0]
                at["content_index"] = 0
                emit("response.content_part.added", **at, part={**part, "text": ""})
                for piece in _pieces(part["text"], 1):
                    emit("response.output_text.delta", **at, delta=piece, logprobs=[])
                emit("response.output_text.done", **at, text=part["text"], logprobs=[])
                emit("response.content_part.done", **at, part=part)
            else:
                opening = {**item, "arguments": "", "status": "in_progress"}
                emit("response.output_item.added", output_index=index, item=opening)
                for piece in _pieces(item["arguments"]):
                    emit("response.function_call_arguments.delta", **at, delta=piece)
                # the API sends `name`; openai < 3.9 requires it in this event's model,
                # later releases keep it as an extra field
                done = {"arguments": item["arguments"], "name": item["name"]}
                emit("response.function_call_arguments.done", **at, **done)
            emit("response.output_item.done", output_index=index, item=item)
        end = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        emit(end, response=final)
        return events


def _response_json(response: ModelResponse, output: list[Any]) -> _J:
    """A complete Response object: the fields the API always sends, and the answer."""
    usage = response.usage
    now = int(time.time())
    made: _J = {
        "id": _uid("resp_"),
        "object": "response",
        "created_at": now,
        "completed_at": None,
        "model": response.model or "",
        "status": "completed",
        "incomplete_details": None,
        "error": None,
        "instructions": None,
        "metadata": {},
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None if usage is None else _usage_out(usage, None, *_RESP_USAGE, _RESP_USAGE_BASE),
    }
    _set_status(made, response.finish_reason)
    if made["status"] == "completed":
        made["completed_at"] = now
    return made


def _resp_arrays(body: Mapping[str, Any]) -> dict[str, Any]:
    """The `input` and `tools` of `body` given as iterables other than a list or a tuple
    (a generator), read into lists. Usually empty."""
    out: dict[str, Any] = {}
    for key in ("input", "tools"):
        items = array_of(body.get(key))
        if items is not None:
            out[key] = items
    return out


def _resp_settled(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """`body`, or a copy of it with its iterables read into lists (see `_resp_arrays`)."""
    arrays = _resp_arrays(body)
    return {**body, **arrays} if arrays else body


def _as_str_input(items: list[Any]) -> str | list[Any]:
    """Input that was a str stays one while it is a single plain user message."""
    only = _obj(items[0]) if len(items) == 1 else None
    if only is None or only.get("role") != "user" or not isinstance(only.get("content"), str):
        return items
    return cast(str, only["content"]) if only.keys() <= {"type", "role", "content"} else items


def _resp_streamed_answer(raws: list[Any]) -> tuple[str, list[Any]] | None:
    """The record of a streamed answer (see `ResponsesWire.response`): the output of the
    response its closing event holds, or, in a stream that has none (a hook made it), the
    items its `response.output_item.done` events gave, in order."""
    if not _str(_map_of(raws[0]).get("type")).startswith("response."):
        return None
    for raw in reversed(raws):  # the closing event: the last, as a rule
        data = _map_of(raw)
        if data.get("type") in _TERMINAL:
            output = (_obj(data.get("response")) or {}).get("output")
            if isinstance(output, list):
                return _RESPONSES, _list(output)
    done = {
        json_int(data.get("output_index")): data.get("item")
        for data in streamed(raws)
        if data.get("type") == "response.output_item.done"
    }
    return _RESPONSES, [done[i] for i in sorted(done)]


def _map_of(raw: Any) -> Mapping[str, Any]:
    """The JSON object of an event `raw`, or an empty one."""
    return (_obj(raw.data) if isinstance(raw, Event) and raw.__class__ is not Made else None) or {}


ANSWER_READERS.append(_resp_streamed_answer)


# -- legacy Completions -------------------------------------------------------------------------

_COMPLETION_KEYS = frozenset({"prompt", "model", "stream"})
_COMPLETION_FINISH = frozenset({"stop", "length", "content_filter"})


def _prompt_text(prompt: Any) -> str | None:
    """The text of a prompt that is one text: a str, or a list of one str."""
    items = _list(prompt)
    text: Any = items[0] if len(items) == 1 else prompt
    return text if isinstance(text, str) else None


def _unshown(prompt: Any) -> str:
    """What a prompt that is not one text is, for an error."""
    if not isinstance(prompt, list):
        return f"a {type(prompt).__name__}"
    items = _list(prompt)
    if items and all(isinstance(x, int) for x in items):
        return "token ids"
    if items and all(isinstance(x, list) for x in items):
        return f"a batch of {len(items)} token-id prompts"
    return f"a batch of {len(items)} prompts"


class _CompletionsFramer(_UsageLastFramer):
    """Frames a legacy Completions stream that a hook added a usage to, or dropped a chunk
    of: its events as they come, but the usage chunk (``choices == []``) last, before
    ``[DONE]``, and only in the stream of a request that asked for one
    (``stream_options.include_usage``), as the API sends it."""

    __slots__ = ()

    def _one(self, event: Event, out: list[Event]) -> None:
        data = self._data(event, out)
        if data is None:
            return
        if self.head is None:
            self.head = _completion_head(data, _str(data.get("model")))
        if data.get("choices"):
            self._pass(event, _obj(data.get("usage")), out)
        elif data.get("error") is not None:
            self.shown = _obj(data.get("usage")) or {}
            out.append(event)
        elif self.replaying:  # it went out
            self.shown = _obj(data.get("usage")) or {}
        else:
            self.usage.append(event)

    def _close(self, out: list[Event]) -> None:
        self.closed = True
        self._release(out)
        head = self.head or _completion_head(None)
        out += _usage_last(self.usage, self.noted, self.shown, self.asked, head)
        out.append(Event(None, "[DONE]"))


class CompletionsWire(Wire):
    """``POST /completions`` (legacy): a `prompt` str, or a list of one str, is one user
    message. Writing back, the messages' texts are joined with blank lines (the API has no
    roles), in a list of one when the prompt was one. Other prompts (token ids, a batch)
    are no messages: they go as they came, and hooks that change the messages are refused,
    as their messages would replace the whole prompt.

    Stream: the usage of a new chunk (a hook's, a whole answer's, another API's) is a
    `NOTE` for the framer, which sends its counts only to a request that asked for usage.
    """

    __slots__ = ()
    path = "/completions"
    reframes = True
    notes = True

    def framer(self, body: Mapping[str, Any]) -> _CompletionsFramer:
        asked = (_obj(body.get("stream_options")) or {}).get("include_usage")
        return _CompletionsFramer(bool(asked))

    def answers(self, data: Mapping[str, Any]) -> bool:
        if "object" in data:
            return data.get("object") == "text_completion"
        return isinstance((_first(_list(data.get("choices"))) or {}).get("text"), str)

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        text = (_first(_list(data.get("choices"))) or {}).get("text")
        return [text] if isinstance(text, str) else []  # one block

    def request(self, body: Mapping[str, Any]) -> ModelRequest:
        prompt = _prompt_text(body.get("prompt"))
        messages = (Message.user(prompt),) if prompt is not None else ()
        model, stream = _opt(body.get("model")), bool(body.get("stream"))
        return ModelRequest(messages, (), model, _options(body, _COMPLETION_KEYS), stream)

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        read = self.request(body)
        out = dict(body)
        if request == read:
            return out
        if request.messages != read.messages:
            prompt = body.get("prompt")
            if prompt is not None and _prompt_text(prompt) is None:
                raise TypeError(
                    "hooks changed the messages of a completion whose prompt is "
                    f"{_unshown(prompt)}, which hookwrap cannot show as messages: their text "
                    "would replace the whole prompt. Hooks can change a str prompt (or a list "
                    "of one str); leave the messages of this one as they are"
                )
            text = "\n\n".join(m.text for m in request.messages)
            out["prompt"] = [text] if isinstance(prompt, list) else text
        _write_common(out, body, request, _COMPLETION_KEYS)
        return out

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        choices = _list(data.get("choices"))
        choice = _first(choices) or {}
        message = Message.assistant(_str(choice.get("text")))
        usage = _usage_in(data, *_CHAT_USAGE)
        finish, model = _opt(choice.get("finish_reason")), _opt(data.get("model"))
        return ModelResponse(message, usage, finish, model, raw=data)

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        out = dict(data) if data is not None else _completion_head(None, response.model)
        choices = _list(out.get("choices"))
        choice: _J = dict(_first(choices) or {"index": 0, "logprobs": None})
        if choice.get("text") != response.text:
            choice["text"] = response.text
            choice["logprobs"] = None
        if response.finish_reason is not None or choice.get("finish_reason") is None:
            choice["finish_reason"] = _finish(response.finish_reason, _COMPLETION_FINISH, "stop")
        out["choices"] = [choice, *choices[1:]]
        if response.usage is not None:
            out["usage"] = _usage_out(response.usage, out.get("usage"), *_CHAT_USAGE, {})
        if response.model is not None:
            out["model"] = response.model
        return out

    def chunk(self, event: Event) -> Chunk:
        data = _obj(event.data)
        if data is None:
            name = "done" if event.data == "[DONE]" else "event"
            return Chunk("custom", name=f"openai.completions.{name}", value=event.data, raw=event)
        usage = _usage_in(data, *_CHAT_USAGE)
        choices = _list(data.get("choices"))
        choice = _first(choices) or {}
        finish = _opt(choice.get("finish_reason"))
        if choices and choice.get("index", 0) == 0 and "error" not in data:
            if choice.get("text"):
                return Chunk("text", _str(choice["text"]), None, None, usage, finish, raw=event)
            if finish is not None:
                return Chunk("finish", usage=usage, finish_reason=finish, raw=event)
        if usage is not None and "error" not in data:
            return Chunk("usage", usage=usage, raw=event)
        name = "error" if "error" in data else "choice" if choices else "chunk"
        return Chunk("custom", name=f"openai.completions.{name}", value=data, raw=event)

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        raw = chunk.raw if isinstance(chunk.raw, Event) else None
        kind = chunk.kind
        if kind == "custom":
            return _custom_events(chunk, "openai.completions.", raw)
        if kind not in ("text", "finish", "usage"):  # no tool calls or reasoning in this API
            return []
        src = _event_data(raw)
        notes: list[Event] = []
        if src is None and chunk.usage is not None:
            # new counts (a hook's, a whole answer's, another API's on its finish) wait for
            # the framer, which sends them only to a request that asked
            counts = _usage_out(chunk.usage, None, *_CHAT_USAGE, {})
            notes.append(Event(NOTE, {"type": NOTE, "usage": counts}))
            if kind == "usage":
                return notes
            chunk = chunk.replace(usage=None)
        out: _J = dict(src) if src is not None else _completion_head(_event_data(template))
        if kind == "usage":
            out["choices"] = []
        else:
            choices = _list(out.get("choices"))
            choice: _J = dict(_first(choices) or {"index": 0, "logprobs": None})
            text = chunk.text if kind == "text" else ""
            if choice.get("text") != text:
                choice["logprobs"] = None
            choice["text"] = text
            finish = chunk.finish_reason
            if kind == "text" and finish is None:
                choice["finish_reason"] = None
            else:
                choice["finish_reason"] = _finish(finish, _COMPLETION_FINISH, "stop")
            out["choices"] = [choice, *choices[1:]]
        if chunk.usage is not None:
            out["usage"] = _usage_out(chunk.usage, out.get("usage"), *_CHAT_USAGE, {})
        elif out.get("usage") is not None:
            out["usage"] = None
        return [Event(raw.event if raw is not None else None, out), *notes]

    def stream_events(self, response: ModelResponse) -> list[Event]:
        head = _completion_head(None, response.model)

        def event(text: str, finish: str | None) -> Event:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            return Event(None, {**head, "choices": [choice]})

        events = [event(p, None) for p in _pieces(response.text, 1)]
        events.append(event("", _finish(response.finish_reason, _COMPLETION_FINISH, "stop")))
        if response.usage is not None:  # `Made`: as in `ChatCompletionsWire.stream_events`
            usage = _usage_out(response.usage, None, *_CHAT_USAGE, {})
            events.append(Made(None, {**head, "choices": [], "usage": usage}))
        events.append(Event(None, "[DONE]"))
        return events


def _completion_head(template: Mapping[str, Any] | None, model: str | None = None) -> _J:
    t = template or {}
    return {
        "id": _str(t.get("id")) or _uid("cmpl-"),
        "object": "text_completion",
        "created": json_int(t.get("created")) or int(time.time()),
        "model": model or _str(t.get("model")),
        "choices": [],
    }
