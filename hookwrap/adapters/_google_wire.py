"""The Gemini API wire: `generateContent` / `streamGenerateContent` JSON as google-genai sends
it to its API client, mapped to neutral types and back.

The model is not in the body but in the path (`models/{model}:generateContent`), so
`request` and `write_path` take the path. Keys are read in both spellings the SDK emits
(`functionCall` and `function_call`, `mimeType` and `mime_type`); new keys are camelCase.

Mapping rules (each also stated where it is applied):

* `systemInstruction` is the first, `system` message; every system message is written back
  into it (Gemini has no system role in `contents`).
* A `user` content is one user message, except that each `functionResponse` part is a
  `tool` message; a `model` content is one assistant message (thought parts are not in the
  neutral view). A content whose messages come back unchanged is written back as the very
  same dict, so parts the neutral view leaves out survive. A changed message is written
  into the parts of the original message it stands for (paired as `_message_pairs` says):
  each part keeps its place and keys (a `thoughtSignature`), thoughts and other parts stay.
* Function calls without an `id` get `gemini-<name>-<hash of the arguments>`, the same
  wherever the call appears (a response, a stream, the next request's history); such ids
  are never written back. A `functionResponse` without an id takes the id of the pending
  call of that name; a tool result without a name is written with the name of the call it
  answers, found among all the request's calls.
* `options` is `generationConfig` (wire keys); `toolConfig`, `safetySettings` and the other
  keys are kept as they are.
* A streamed JSON object is one chunk, of the kind of its first part: text (`text`, with
  the text of all text parts), thought (`reasoning`), `functionCall` (`tool_call_start`,
  arguments as JSON in `text`), any other part (`custom` named after the part's key). One
  without parts is `finish` (with `finishReason`), `usage` or `custom` (`"gemini"`); every
  chunk also carries the object's usage and finish reason. A changed chunk is written back
  into its own object, so the parts it does not stand for are kept; a changed text goes
  across the object's text parts as a response's does (`_merge`), each keeping its keys.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Any, NamedTuple, TypeVar, cast

from .._engine import ANSWER_READERS, CALL_READERS
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
    deferred_request,
    maker,
    new_full_message,
    new_message,
    new_request,
    new_response,
    new_text_part,
    new_usage,
)
from ._wire import Event, Wire, diff_runs, finish_in, json_int, recorded, split_text, streamed

__all__ = ["SYNTHETIC_ID", "GeminiWire", "call_id", "model_of", "with_model"]

SYNTHETIC_ID = "gemini-"
"""Prefix of the ids hookwrap gives function calls that came without one."""

STREAM_PATH = ":streamGenerateContent"

_chunk = maker(Chunk, "kind", "text", "tool_call_id", "tool_name", "usage", "finish_reason", "raw")
_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}
# part keys that describe a part rather than make it one
_PART_EXTRAS = frozenset({"thought", "thoughtSignature", "thought_signature", "partMetadata"})
_API = "google.models"  # the tag of an answer's record in `Message.raw`


def _map(value: Any) -> Mapping[str, Any]:
    # what JSON gives, a dict, needs no ABC check; annotations rather than `cast` (a call)
    if value.__class__ is dict or isinstance(value, Mapping):
        found: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return found
    return {}


def _list(value: Any) -> list[Any]:
    if value.__class__ is list:
        return value  # pyright: ignore[reportUnknownVariableType]
    return cast("list[Any]", value) if isinstance(value, (list, tuple)) else []


def _get(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = data.get(camel)
    return data.get(snake) if value is None else value


def call_id(name: str, args: Mapping[str, Any]) -> str:
    """The id of a function call that came without one: stable for the same name and args."""
    canon = json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    return f"{SYNTHETIC_ID}{name}-{hashlib.sha1(canon.encode()).hexdigest()[:12]}"


def _is_synthetic(id_: str | None) -> bool:
    return id_ is None or id_ == "" or id_.startswith(SYNTHETIC_ID)


# a call's path -> its model and whether it streams, learned as calls come
_HEADS: dict[str | None, tuple[str | None, bool]] = {}


def model_of(path: str) -> str | None:
    """The model of a call's path: `models/gemini-2.0-flash:generateContent` ->
    `gemini-2.0-flash`; a resource without `models/` (`tunedModels/x`) is returned whole."""
    resource, colon, _ = path.partition("?")[0].rpartition(":")
    if not colon or not resource:
        return None
    head, found, name = resource.rpartition("models/")
    return name if found and not head.endswith("tuned") else resource


def with_model(path: str, model: str) -> str:
    """`path` calling `model` instead: a bare name replaces the part after `models/`, a name
    with a `/` (`tunedModels/x`, `publishers/google/models/y`) the whole resource."""
    resource, colon, rest = path.rpartition(":")
    if not colon:
        return path
    if "/" in model:
        return f"{model}:{rest}"
    head, found, _ = resource.rpartition("models/")
    if found and not head.endswith("tuned"):
        return f"{head}models/{model}:{rest}"
    return f"models/{model}:{rest}"


# -- parts ------------------------------------------------------------------------------------


def _neutral_part(part: Mapping[str, Any]) -> Part | None:
    """The neutral form of a text, inline data or file part (None for other parts)."""
    text = part.get("text")
    if isinstance(text, str):
        made: TextPart = new_text_part(text)
        return made
    inline = _map(_get(part, "inlineData", "inline_data"))
    if inline:
        mime = _get(inline, "mimeType", "mime_type")
        return ImagePart(f"data:{mime or ''};base64,{inline.get('data', '')}", mime)
    file = _map(_get(part, "fileData", "file_data"))
    if file:
        return ImagePart(
            str(_get(file, "fileUri", "file_uri")), _get(file, "mimeType", "mime_type")
        )
    return None


def _wire_part(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    url = part.url
    if url.startswith("data:"):
        head, _, data = url[5:].partition(",")
        mime = part.media_type or head.partition(";")[0] or "application/octet-stream"
        if not head.endswith(";base64"):
            data = base64.b64encode(data.encode()).decode()
        return {"inlineData": {"mimeType": mime, "data": data}}
    file: dict[str, Any] = {"fileUri": url}
    if part.media_type:
        file["mimeType"] = part.media_type
    return {"fileData": file}


def _content(parts: list[Part], join: bool) -> str | tuple[Part, ...]:
    """A message's content: one text part (or, with `join`, only text) as a str."""
    if len(parts) == 1 and isinstance(first := parts[0], TextPart):  # the usual content
        return first.text
    if all(isinstance(p, TextPart) for p in parts) and (join or len(parts) <= 1):
        return "".join(cast("TextPart", p).text for p in parts)
    return tuple(parts)


def _function_call(part: Mapping[str, Any]) -> Mapping[str, Any] | None:
    found = _get(part, "functionCall", "function_call")
    return cast("Mapping[str, Any]", found) if isinstance(found, Mapping) else None


def _function_response(part: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(_get(part, "functionResponse", "function_response"))


def _tool_call(part: Mapping[str, Any], fc: Mapping[str, Any]) -> ToolCall:
    name = str(fc.get("name", ""))
    args = dict(_map(fc.get("args")))
    id_ = fc.get("id")
    return ToolCall(str(id_) if id_ else call_id(name, args), name, args, raw=part)


def _call_part(call: ToolCall, slot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The part of a function call: its own part when it is unchanged; a changed one is
    written into `slot`, the call part it replaces, else into its own part (`raw`), which
    keeps its other keys (a `thoughtSignature`, as in a stream)."""
    raw = call.raw
    own: Mapping[str, Any] = {}  # the part it was read from, if any
    if isinstance(raw, Mapping):
        fc = _function_call(cast("Mapping[str, Any]", raw))
        if fc is not None and _tool_call(raw, fc) == call:  # pyright: ignore[reportUnknownArgumentType]
            return dict(cast("Mapping[str, Any]", raw))  # keeps its thoughtSignature
        if fc is not None:
            own = cast("Mapping[str, Any]", raw)
    base = slot or own  # a call a hook changed in an answer keeps its signature too
    out = {**(_function_call(base) or {}), "name": call.name, "args": dict(call.arguments)}
    if _is_synthetic(call.id):
        out.pop("id", None)
    else:
        out["id"] = call.id
    return {**{k: v for k, v in base.items() if k != "function_call"}, "functionCall": out}


def _assistant(parts: list[Any], raw: Any = None) -> Message:
    neutral, calls = _answer_parts(parts)
    content = _content(neutral, True)
    made: Message = new_full_message("assistant", content, tuple(calls), None, None, raw=raw)
    return made


def _answer_parts(parts: list[Any]) -> tuple[list[Part], list[ToolCall]]:
    """The neutral parts and the calls of an answer's parts (thoughts left out)."""
    neutral: list[Part] = []
    calls: list[ToolCall] = []
    for item in parts:
        part = _map(item)
        if len(part) == 1 and (text := part.get("text")).__class__ is str:  # a plain text part
            neutral.append(new_text_part(text))
            continue
        fc = _function_call(part)
        if fc is not None:
            calls.append(_tool_call(part, fc))
        elif not part.get("thought"):
            found = _neutral_part(part)
            if found is not None:
                neutral.append(found)
    return neutral, calls


def _tool_content(response: Any) -> str:
    data = _map(response)
    if len(data) == 1 and isinstance(data.get("result"), str):
        return str(data["result"])
    return json.dumps(response)


def _tool_response(content: str) -> Any:
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {"result": content}


# usage counts by the API's camelCase names, then by the SDK's own snake_case ones
_COUNTS = ("promptTokenCount", "candidatesTokenCount", "totalTokenCount", "thoughtsTokenCount")
_SNAKE_COUNTS = (
    "prompt_token_count",
    "candidates_token_count",
    "total_token_count",
    "thoughts_token_count",
)


def _usage(data: Any) -> Usage | None:
    meta = data if data.__class__ is dict else _map(data)
    if not meta:
        return None
    inp, out, total, thoughts = map(meta.get, _COUNTS)
    if inp is None and out is None and total is None:  # one object uses one spelling
        inp, out, total, thoughts = map(meta.get, _SNAKE_COUNTS)
    inp = int(inp or 0)
    out = int(out or 0) + int(thoughts) if thoughts else int(out or 0)
    made: Usage = new_usage(inp, out, inp + out if total is None else int(total))
    return made


def _usage_dict(usage: Usage, native: Any = None) -> dict[str, Any]:
    """`usage` as Gemini counts it, over `native` (the usage it replaces), whose other counts
    (cached content, details by modality) stay, and whose thoughts, which the neutral output
    holds, stay apart from the candidates."""
    base = _map(native)
    out = {k: v for k, v in base.items() if "_" not in k and k not in _COUNTS}
    thoughts = json_int(_get(base, "thoughtsTokenCount", "thoughts_token_count"))
    kept = min(thoughts, usage.output_tokens)
    out["promptTokenCount"] = usage.input_tokens
    out["candidatesTokenCount"] = usage.output_tokens - kept
    out["totalTokenCount"] = usage.total_tokens
    if thoughts:
        out["thoughtsTokenCount"] = kept
    return out


def _lower_types(schema: Any) -> Any:
    """A Gemini `Schema` (`"type": "OBJECT"`) as JSON schema (`"type": "object"`)."""
    if isinstance(schema, Mapping):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
            for k, v in cast("Mapping[str, Any]", schema).items()
        }
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]  # pyright: ignore[reportUnknownVariableType]
    return schema


def _spec(decl: Mapping[str, Any]) -> ToolSpec:
    params = _get(decl, "parametersJsonSchema", "parameters_json_schema")
    if params is None:
        params = _lower_types(decl.get("parameters")) if decl.get("parameters") else _EMPTY_SCHEMA
    return ToolSpec(str(decl.get("name", "")), str(decl.get("description") or ""), params)


def _declaration(spec: ToolSpec, base: Any) -> dict[str, Any]:
    """`spec`, changed by a hook, as a function declaration written over `base`, the one of
    its name: its other keys (`response`, `behavior`) stay, and so do its parameters in
    their own form (a Gemini `Schema`) unless the hook changed them."""
    was = _map(base)
    out = {**was, "name": spec.name}
    if spec.description:
        out["description"] = spec.description
    else:
        out.pop("description", None)
    if not was or _spec(was).parameters != spec.parameters:
        for key in ("parameters", "parameters_json_schema"):
            out.pop(key, None)
        out["parametersJsonSchema"] = dict(spec.parameters)
    return out


def _declarations(tool: Mapping[str, Any]) -> list[Any] | None:
    found = _get(tool, "functionDeclarations", "function_declarations")
    return _list(found) if found is not None else None


# -- contents <-> messages ----------------------------------------------------------------------


class _Group(NamedTuple):
    """A content of the body and the messages it stands for (at least one)."""

    content: Any
    messages: tuple[Message, ...]
    # where each message's parts end: every part belongs to one message (a part the neutral
    # view leaves out to the message read with or after it, or at the end to the last one)
    ends: tuple[int, ...]


def _groups(body: Mapping[str, Any]) -> list[_Group]:
    """Each content of `body` with the messages it stands for."""
    out: list[_Group] = []
    pending: dict[str, list[str]] = {}  # name -> ids of the last model turn's calls
    for content in _list(body.get("contents")):
        data = _map(content)
        parts = _list(data.get("parts"))
        if data.get("role") == "model":
            message = _assistant(parts)
            pending = {}
            for call in message.tool_calls:
                pending.setdefault(call.name, []).append(call.id)
            out.append(_Group(content, (message,), (len(parts),)))
            continue
        messages: list[Message] = []
        ends: list[int] = []
        buffer: list[Part] = []
        for k, item in enumerate(parts):
            part = _map(item)
            if len(part) == 1 and (text := part.get("text")).__class__ is str:  # plain text
                buffer.append(new_text_part(text))
                continue
            fr = _function_response(part)
            if fr:
                if buffer:
                    messages.append(new_message("user", _content(buffer, False)))
                    ends.append(k)
                    buffer = []
                name = str(fr.get("name", ""))
                ids = pending.get(name)
                id_ = fr.get("id") or (ids.pop(0) if ids else call_id(name, {}))
                messages.append(
                    Message("tool", _tool_content(fr.get("response")), (), str(id_), name)
                )
                ends.append(k + 1)
                continue
            found = _neutral_part(part)
            if found is not None:
                buffer.append(found)
        if buffer or not messages:
            messages.append(new_message("user", _content(buffer, False)))
            ends.append(len(parts))
        else:
            ends[-1] = len(parts)
        out.append(_Group(content, tuple(messages), tuple(ends)))
    return out


def _system(body: Mapping[str, Any]) -> Message | None:
    instruction = _get(body, "systemInstruction", "system_instruction")
    if instruction is None:
        return None
    if isinstance(instruction, str):
        made: Message = new_message("system", instruction)
        return made
    parts = [_neutral_part(_map(p)) for p in _list(_map(instruction).get("parts"))]
    made = new_message("system", _content([p for p in parts if p is not None], False))
    return made


def _parts_of(content: str | tuple[Part, ...]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [_wire_part(p) for p in content]


_T = TypeVar("_T")


def _pairs(
    old: Sequence[_T], new: Sequence[_T], shape: Callable[[_T], Hashable]
) -> list[int | None]:
    """For each new item, the index of the old one it stands for (None: it is new). Equal
    items pair first, in order: a common head and tail, then those in the middle (edits are
    local, and that settles which of two equal items is which); in a run of changed ones,
    items of the same shape (a part's kind) pair in order, so that an item a hook inserted
    or removed next to a changed one takes nothing of another."""
    found: list[int | None] = [None] * len(new)
    for tag, i1, i2, j1, j2 in diff_runs([repr(x) for x in old], [repr(x) for x in new]):
        if tag == "equal":
            found[j1:j2] = range(i1, i2)
        elif tag == "replace":
            shapes = [shape(x) for x in old[i1:i2]], [shape(x) for x in new[j1:j2]]
            alike = SequenceMatcher(None, *shapes, autojunk=False)
            for a, b, size in alike.get_matching_blocks():
                found[j1 + b : j1 + b + size] = range(i1 + a, i1 + a + size)
    return found


def _message_pairs(old: Sequence[Message], new: Sequence[Message]) -> list[int | None]:
    """`_pairs` for messages. In a run of changed ones, those of the same role, tool and
    calls (`_kin`; not the form of the content, which a hook that gives a text in place
    of parts changes) pair in order when the run holds as many on each side; when it does
    not (a hook added or removed one beside a changed one), those whose texts are most
    alike pair, so that an added message takes nothing of the changed one beside it."""
    found: list[int | None] = [None] * len(new)
    for tag, i1, i2, j1, j2 in diff_runs([repr(x) for x in old], [repr(x) for x in new]):
        if tag == "equal":
            found[j1:j2] = range(i1, i2)
        elif tag == "replace":
            for key in {_kin(m) for m in new[j1:j2]}:
                olds = [i for i in range(i1, i2) if _kin(old[i]) == key]
                news = [j for j in range(j1, j2) if _kin(new[j]) == key]
                if len(olds) == len(news):
                    for i, j in zip(olds, news, strict=True):
                        found[j] = i
                    continue
                scored = sorted((-_alike(old[i], new[j]), i, j) for i in olds for j in news)
                taken: set[int] = set()
                for _, i, j in scored:
                    if i not in taken and found[j] is None:
                        taken.add(i)
                        found[j] = i
    return found


def _kin(message: Message) -> Hashable:
    """What a hook that edits a message leaves: its role, its tool, the names of its calls."""
    return (message.role, message.name, tuple(c.name for c in message.tool_calls))


def _alike(old: Message, new: Message) -> float:
    """How alike two messages' texts are, 0 to 1: a redaction leaves a text close to the
    original, a message a hook adds is mostly another text."""
    return SequenceMatcher(None, old.text, new.text).ratio()


def _result_part(
    message: Message, names: Mapping[str, str], slot: Mapping[str, Any], was: Message | None
) -> dict[str, Any]:
    """The `functionResponse` part of a tool result, written into `slot` (the part it was
    read from, keeping its other keys; `{}` for a new result)."""
    fr = dict(_function_response(slot))
    fr["name"] = message.name or names.get(message.tool_call_id or "", "")
    if was is None or message.text != was.text:  # the same text: the very same response
        fr["response"] = _tool_response(message.text)
    if _is_synthetic(message.tool_call_id):
        fr.pop("id", None)
    else:
        fr["id"] = message.tool_call_id
    rest = {k: v for k, v in slot.items() if k != "function_response"}
    return {**rest, "functionResponse": fr}


def _rebuild(
    messages: Sequence[Message], near: Sequence[tuple[_Group, int]], names: Mapping[str, str]
) -> list[Any]:
    """Contents for messages not taken over whole from the body. `near` are the original
    messages they may stand for (a group and a message's index in it); one a message pairs
    with (`_message_pairs`) gives its parts: kept when the message is unchanged, written
    into (`_merge`, `_result_part`) when it changed, so that thoughts, signatures and the
    parts the neutral view leaves out stay. Consecutive tool results share one content, as Gemini
    wants a turn's function responses together. `names` gives each call id its function's
    name, for a tool result that names none."""
    olds = [group.messages[t] for group, t in near]
    contents: list[Any] = []
    results: list[Any] | None = None  # the parts of the open tool-results content
    for m, i in zip(messages, _message_pairs(olds, messages), strict=True):
        was = olds[i] if i is not None else None
        base: Mapping[str, Any] = {}  # the original content's keys
        old: list[Any] = []  # the original parts
        if i is not None:
            group, t = near[i]
            base = _map(group.content)
            old = _list(base.get("parts"))[group.ends[t - 1] if t else 0 : group.ends[t]]
        elif m.role == "assistant" and isinstance(native := recorded(m.raw, _API), Mapping):
            # an answer sent back: written over the content it was read from, so that its
            # thoughts and signatures go back too (the record survives a checkpoint, where
            # its calls' own `raw` does not)
            base = cast("Mapping[str, Any]", native)
            old = _list(base.get("parts"))
        if m.role == "tool":
            if results is None:
                results = []
                contents.append({"role": "user", "parts": results})
            if m == was:
                results += old
            elif was is None:
                results.append(_result_part(m, names, {}, None))
            else:  # `old` holds one function response, and parts it leaves out
                results += [
                    _result_part(m, names, p, was) if _function_response(p := _map(item)) else item
                    for item in old
                ]
            continue
        results = None
        if m == was:
            parts = old
        elif was is not None or m.role == "assistant":
            parts = _merge(old, m.content, m.tool_calls)
        else:
            parts = _parts_of(m.content)
        role = "model" if m.role == "assistant" else "user"
        contents.append({"role": role, **base, "parts": parts})
    return contents


def _match(messages: Sequence[Message], i: int, group: _Group) -> bool:
    return tuple(messages[i : i + len(group.messages)]) == group.messages


def _write_contents(messages: Sequence[Message], groups: list[_Group]) -> list[Any]:
    """Contents for `messages`: an original content wherever its messages are unchanged (an
    anchor); the other messages are written with the original ones between the same two
    anchors (`_rebuild`), each original to one run.

    The unchanged contents at the start and at the end are matched first: edits are local
    (a message changed, added or removed), and that settles which of two equal-looking
    contents is which, so each keeps its own parts (its signatures); in between, a message
    is matched with the content at its own place first (`_write_middle`)."""
    # the id of every call in the request -> its name, for a tool result that names none
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    head = start = 0
    while head < len(groups) and _match(messages, start, groups[head]):
        start += len(groups[head].messages)
        head += 1
    tail, stop = len(groups), len(messages)
    while tail > head and (size := len(groups[tail - 1].messages)) <= stop - start:
        if not _match(messages, stop - size, groups[tail - 1]):
            break
        stop -= size
        tail -= 1
    middle = _write_middle(messages[start:stop], groups[head:tail], names)
    return [*(g.content for g in groups[:head]), *middle, *(g.content for g in groups[tail:])]


def _write_middle(
    messages: Sequence[Message], groups: list[_Group], names: Mapping[str, str]
) -> list[Any]:
    """`_write_contents` for what lies between the unchanged head and tail."""
    runs: list[list[Message]] = [[]]  # runs[k]: the messages before anchors[k] (or at the end)
    anchors: list[int] = []
    used = [False] * len(groups)
    starts = list(accumulate((len(g.messages) for g in groups), initial=0))
    at = {start: j for j, start in enumerate(starts[:-1])}  # where each group began
    shift = 0  # how far the messages moved, as of the last anchor
    i = 0
    while i < len(messages):
        # messages mostly keep their place: the group where this one was is tried first,
        # then the nearest one it matches, so that of two equal groups each keeps its own
        found = at.get(i - shift, -1)
        if found < 0 or used[found] or not _match(messages, i, groups[found]):
            alike = [
                j for j in range(len(groups)) if not used[j] and _match(messages, i, groups[j])
            ]
            found = min(alike, key=lambda j: abs(starts[j] + shift - i), default=-1)
        if found < 0:
            runs[-1].append(messages[i])
            i += 1
            continue
        used[found] = True
        anchors.append(found)
        runs.append([])
        shift = i - starts[found]
        i += len(groups[found].messages)
    out: list[Any] = []
    for k, run in enumerate(runs):
        if run:
            start = anchors[k - 1] + 1 if k else 0
            stop = anchors[k] if k < len(anchors) else len(groups)
            near: list[tuple[_Group, int]] = []
            for j in range(start, stop):  # the original messages between the same anchors
                if not used[j]:
                    used[j] = True
                    near += [(groups[j], t) for t in range(len(groups[j].messages))]
            out += _rebuild(run, near, names)
        if k < len(anchors):
            out.append(groups[anchors[k]].content)
    return out


# -- responses --------------------------------------------------------------------------------


def _candidate(data: Mapping[str, Any]) -> Mapping[str, Any]:
    candidates = _list(data.get("candidates"))
    return _map(candidates[0]) if candidates else {}


_DATA_KEYS = frozenset({"text", "inlineData", "inline_data", "fileData", "file_data"})


def _merge(
    original: Sequence[Any], content: str | tuple[Part, ...], calls: Sequence[ToolCall]
) -> list[Any]:
    """`original`, the parts a message was read from, carrying its new `content` and `calls`,
    each where the original had it. Thoughts and the parts the neutral view leaves out stay
    as they were. A text goes into the text parts, split across them where there were
    several (`split_text`), each keeping its keys (a `thoughtSignature`) as a stream's
    deltas do; a text part left empty goes, unless it carries more than its text (a
    signature: Gemini itself sends such parts). Content given as parts pairs with the text
    and data parts (`_pairs`): an unchanged part stays as it was, a changed one takes the
    keys of the one it replaces, a new one follows the part before it. Calls go into the
    function call parts in order (`_call_part`), more of them last. What has no part to go
    to (a text where there was none) takes the place of the first text, data or call part."""
    slots: list[tuple[int, Part]] = []  # the text and data parts: index, neutral form
    for k, item in enumerate(original):
        part = _map(item)
        if _function_call(part) is None and not part.get("thought"):
            found = _neutral_part(part)
            if found is not None:
                slots.append((k, found))
    at: dict[int, list[Any]] = {}  # index of a slot -> what is written in its place
    loose: list[Any] = []
    if isinstance(content, str):
        texts = [(k, p.text) for k, p in slots if isinstance(p, TextPart)]
        if texts:
            pieces = split_text([text for _, text in texts], content)
            for (k, before), text in zip(texts, pieces, strict=True):
                part = _map(original[k])
                if text == before:
                    at[k] = [original[k]]
                elif text or len(part) > 1:
                    at[k] = [{**part, "text": text}]
        elif content:
            loose = [{"text": content}]
    else:
        anchor = -1
        for new, i in zip(content, _pairs([p for _, p in slots], content, type), strict=True):
            if i is None:
                written: Any = _wire_part(new)
            else:
                anchor, old = slots[i]
                written = original[anchor] if new == old else _rewritten(original[anchor], new)
            (at.setdefault(anchor, []) if anchor >= 0 else loose).append(written)
    pending = iter(calls)
    slotted = {k for k, _ in slots}
    parts: list[Any] = []
    for k, item in enumerate(original):
        part = _map(item)
        is_call = _function_call(part) is not None
        if not is_call and k not in slotted:
            parts.append(item)
            continue
        parts += loose
        loose = []
        if is_call:
            call = next(pending, None)
            if call is not None:
                parts.append(_call_part(call, part))
        else:
            parts += at.get(k, ())
    parts += loose
    parts.extend(_call_part(c) for c in pending)
    return parts


def _rewritten(item: Any, new: Part) -> dict[str, Any]:
    """`new` in the place of part `item`, which keeps the keys that describe it."""
    wire = _wire_part(new)
    out = {k: v for k, v in _map(item).items() if k not in _DATA_KEYS or k in wire}
    out.update(wire)
    return out


def _with_candidate(data: Mapping[str, Any], candidate: Mapping[str, Any]) -> dict[str, Any]:
    candidates = _list(data.get("candidates"))
    return {**data, "candidates": [candidate, *candidates[1:]]}


_LOGPROBS_KEYS = frozenset({"logprobsResult", "logprobs_result", "avgLogprobs", "avg_logprobs"})


def _without_logprobs(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """`candidate`, whose text a hook changed, without its logprobs: they describe (and
    spell out) the old text, so they go, as from a changed OpenAI chat answer."""
    return {k: v for k, v in candidate.items() if k not in _LOGPROBS_KEYS}


_USAGE_KEYS = frozenset(("usageMetadata", "usage_metadata"))


def _first_kind(part: Mapping[str, Any]) -> str:
    if _function_call(part) is not None:
        return "tool_call_start"
    if isinstance(part.get("text"), str):
        return "reasoning" if part.get("thought") else "text"
    return "custom"


def _part_name(part: Mapping[str, Any]) -> str:
    return next((k for k in part if k not in _PART_EXTRAS), "part")


# Gemini ends a turn that calls functions with STOP too
_FINISH_WORDS = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",
    "content_filter": "SAFETY",
}


def _finish_reason(reason: str | None) -> str | None:
    """A finish reason in Gemini's words (one from another provider mapped)."""
    return finish_in(reason, _FINISH_WORDS)


class GeminiWire(Wire):
    """The Gemini API's `generateContent` JSON (see the module docstring for the rules)."""

    __slots__ = ()

    path = ":generateContent"  # streamed calls use ":streamGenerateContent?alt=sse"

    # -- request ----------------------------------------------------------------------------

    def view(self, body: Mapping[str, Any], raw: Any, path: str | None = None) -> ModelRequest:
        """`request(body, path)` with `raw` set, read from `body` on first use (see `Wire`)."""
        head = _HEADS.get(path)
        if head is None:
            if len(_HEADS) >= 256:  # a few paths, one per model, are the rule
                _HEADS.clear()
            head = _HEADS[path] = (
                model_of(path) if path else None,
                bool(path and STREAM_PATH in path),
            )
        made: ModelRequest = deferred_request(*head, raw, self._request_of, (body, path))
        return made

    def _request_of(self, args: tuple[Mapping[str, Any], str | None]) -> ModelRequest:
        return self.request(*args)

    def request(self, body: Mapping[str, Any], path: str | None = None) -> ModelRequest:
        """The neutral request for `body`; the model and `stream` come from `path`."""
        messages: list[Message] = []
        system = _system(body)
        if system is not None:
            messages.append(system)
        for group in _groups(body):
            messages.extend(group.messages)
        tools = body.get("tools")
        specs = (
            [_spec(_map(d)) for t in _list(tools) for d in _declarations(_map(t)) or ()]
            if tools
            else ()
        )
        options = dict(_map(_get(body, "generationConfig", "generation_config")))
        made: ModelRequest = new_request(
            tuple(messages),
            tuple(specs),
            model_of(path) if path else None,
            options,
            bool(path and STREAM_PATH in path),
            None,
        )
        return made

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(body)
        original = self.request(body)
        if request.messages != original.messages:
            system = [m for m in request.messages if m.role == "system"]
            others = [m for m in request.messages if m.role != "system"]
            old_system = [m for m in original.messages if m.role == "system"]
            if system != old_system:
                for key in ("systemInstruction", "system_instruction"):
                    out.pop(key, None)
                if system:
                    # written into the parts they were read from, as contents are
                    was = _get(body, "systemInstruction", "system_instruction")
                    ends = (len(_list(_map(was).get("parts"))),)
                    near = [(_Group(was, (m,), ends), 0) for m in old_system]
                    parts = [p for c in _rebuild(system, near, {}) for p in c["parts"]]
                    # the caller's other keys (its `role`) stay; a new one is written as
                    # the SDK writes a str: with the "user" role
                    kept = _map(was) if isinstance(was, Mapping) else {"role": "user"}
                    out["systemInstruction"] = {**kept, "parts": parts}
            if others != [m for m in original.messages if m.role != "system"]:
                out["contents"] = _write_contents(others, _groups(body))
        if request.tools != original.tools:
            out.update(self._tools(request.tools, body))
            if not out.get("tools"):
                out.pop("tools", None)
        if request.options != original.options:
            out.pop("generation_config", None)
            if request.options:
                out["generationConfig"] = dict(request.options)
            else:
                out.pop("generationConfig", None)
        return out

    def _tools(self, specs: Sequence[ToolSpec], body: Mapping[str, Any]) -> dict[str, Any]:
        declared: list[tuple[ToolSpec, Any]] = [
            (_spec(_map(d)), d)
            for t in _list(body.get("tools"))
            for d in _declarations(_map(t)) or ()
        ]
        by_name = {s.name: d for s, d in declared}
        decls: list[Any] = []
        for spec in specs:
            kept = next((d for s, d in declared if s == spec), None)
            decls.append(kept if kept is not None else _declaration(spec, by_name.get(spec.name)))
        tools: list[Any] = []
        placed = False
        for tool in _list(body.get("tools")):
            data = _map(tool)
            if _declarations(data) is None:
                tools.append(tool)
                continue
            rest = {
                k: v
                for k, v in data.items()
                if k not in ("functionDeclarations", "function_declarations")
            }
            if not placed and decls:
                tools.append({**rest, "functionDeclarations": decls})
                placed = True
            elif rest:
                tools.append(rest)
        if not placed and decls:
            tools.insert(0, {"functionDeclarations": decls})
        return {"tools": tools}

    def write_path(self, request: ModelRequest, path: str) -> str:
        """`path` calling `request.model` (unchanged when the model is)."""
        model = request.model
        if model is None or model == model_of(path):
            return path
        return with_model(path, model)

    # -- response ---------------------------------------------------------------------------

    def answers(self, data: Mapping[str, Any]) -> bool:
        return "candidates" in data

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        parts, _ = _answer_parts(_list(_map(_candidate(data).get("content")).get("parts")))
        return [p.text for p in parts if isinstance(p, TextPart)]

    def with_texts(self, data: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        given = iter(texts)

        def part(item: Any) -> Any:
            found = _map(item)
            is_text = isinstance(found.get("text"), str) and not found.get("thought")
            if not is_text or _function_call(found) is not None:
                return item
            return {**found, "text": next(given)}

        candidate = dict(_candidate(data))
        content = _map(candidate.get("content"))
        old = list(_list(content.get("parts")))
        parts = [part(p) for p in old]
        if parts != old:
            candidate = _without_logprobs(candidate)
        candidate["content"] = {**content, "parts": parts}
        return _with_candidate(dict(data), candidate)

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        candidate = _candidate(data)
        content = _map(candidate.get("content"))
        # its thoughts and signatures, for the next request
        message = _assistant(_list(content.get("parts")), (_API, content))
        made: ModelResponse = new_response(
            message,
            _usage(_get(data, "usageMetadata", "usage_metadata")),
            _get(candidate, "finishReason", "finish_reason"),
            _get(data, "modelVersion", "model_version"),
            data,
        )
        return made

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if data is None:
            out: dict[str, Any] = {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": _merge(
                                [], response.message.content, response.message.tool_calls
                            ),
                        },
                        "finishReason": _finish_reason(response.finish_reason) or "STOP",
                        "index": 0,
                    }
                ]
            }
            if response.usage is not None:
                out["usageMetadata"] = _usage_dict(response.usage)
            if response.model:
                out["modelVersion"] = response.model
            return out
        view = self.response(data)
        out = dict(data)
        candidate = dict(_candidate(data))
        if response.message != view.message:
            content = _map(candidate.get("content"))
            message = response.message
            parts = _merge(_list(content.get("parts")), message.content, message.tool_calls)
            if message.text != view.message.text:
                candidate = _without_logprobs(candidate)
            candidate["content"] = {"role": "model", **content, "parts": parts}
        if response.finish_reason != view.finish_reason:
            candidate.pop("finish_reason", None)
            candidate["finishReason"] = _finish_reason(response.finish_reason)
            if response.finish_reason is None:
                del candidate["finishReason"]
        out = _with_candidate(out, candidate)
        if response.usage != view.usage:
            native = _get(out, "usageMetadata", "usage_metadata")
            out.pop("usage_metadata", None)
            out.pop("usageMetadata", None)
            if response.usage is not None:
                out["usageMetadata"] = _usage_dict(response.usage, native)
        if response.model != view.model:
            out.pop("model_version", None)
            out["modelVersion"] = response.model
        return out

    # -- streams ----------------------------------------------------------------------------

    def chunk(self, event: Event) -> Chunk:
        data: Any = event.data
        # the usual object: one candidate with one plain text part, read without a call
        try:
            candidates = data["candidates"]
            candidate: Mapping[str, Any] = candidates[0]
            parts = candidate["content"]["parts"]
            part = parts[0]
            text = part["text"]
        except (KeyError, TypeError, IndexError):
            return self._chunk(event)
        if (
            text.__class__ is str
            and len(part) == 1
            and len(parts) == 1
            and len(candidates) == 1
            and data.__class__ is dict
        ):
            meta = data.get("usageMetadata")
            usage = _usage(data.get("usage_metadata") if meta is None else meta)
            finish = candidate.get("finishReason")
            if finish is None:
                finish = candidate.get("finish_reason")
            made: Chunk = _chunk("text", text, None, None, usage, finish, event)
            return made
        return self._chunk(event)

    def split(self, event: Event) -> list[Event] | None:
        """One object per thing its candidate's parts hold, in order: a run of text parts
        (of thought parts), each function call, each other part. The finish reason and the
        usage go with the last. The usual object holds one text part."""
        data = event.data
        try:
            candidates = data["candidates"]
            candidate: Mapping[str, Any] = candidates[0]
            parts: list[Any] = candidate["content"]["parts"]
        except (KeyError, TypeError, IndexError):
            return None
        if len(parts) < 2 or len(candidates) != 1 or not isinstance(data, dict):
            return None
        runs: list[tuple[str, list[Any]]] = []
        for part in parts:
            kind = _first_kind(_map(part))
            if runs and kind in ("text", "reasoning") and runs[-1][0] == kind:
                runs[-1][1].append(part)
            else:
                runs.append((kind, [part]))
        if len(runs) < 2:
            return None
        ends = ("finishReason", "finish_reason")
        out: list[Event] = []
        for i, (_, run) in enumerate(runs):
            last = i == len(runs) - 1
            one = {**candidate, "content": {**candidate["content"], "parts": run}}
            piece: dict[str, Any] = {**cast("dict[str, Any]", data), "candidates": [one]}
            if not last:
                one = {k: v for k, v in one.items() if k not in ends}
                piece = {k: v for k, v in piece.items() if k not in _USAGE_KEYS}
                piece["candidates"] = [one]
            out.append(Event(event.event, piece))
        return out

    def _chunk(self, event: Event) -> Chunk:
        data = _map(event.data)
        candidate = _candidate(data)
        parts = _list(_map(candidate.get("content")).get("parts"))
        usage = _usage(_get(data, "usageMetadata", "usage_metadata"))
        finish = _get(candidate, "finishReason", "finish_reason")
        made: Chunk
        if parts:
            first = _map(parts[0])
            kind = _first_kind(first)
            if kind == "tool_call_start":
                fc = _function_call(first) or {}
                call = _tool_call(first, fc)
                made = _chunk(
                    kind, json.dumps(dict(call.arguments)), call.id, call.name, usage, finish, event
                )
                return made
            if kind == "custom":
                name = _part_name(first)
                return Chunk(
                    "custom", usage=usage, finish_reason=finish, name=name, value=first, raw=event
                )
            thought = kind == "reasoning"
            text = "".join(
                str(_map(p).get("text", ""))
                for p in parts
                if isinstance(_map(p).get("text"), str) and bool(_map(p).get("thought")) == thought
            )
            made = _chunk(kind, text, None, None, usage, finish, event)
            return made
        if finish:
            made = _chunk("finish", "", None, None, usage, finish, event)
            return made
        if usage is not None:
            made = _chunk("usage", "", None, None, usage, None, event)
            return made
        return Chunk("custom", name="gemini", value=event.data, raw=event)

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        raw = chunk.raw
        own_data = _map(raw.data) if isinstance(raw, Event) else None
        if own_data:
            own = self.chunk(raw)
            if own.kind == chunk.kind:
                data = self._edit(chunk, own, own_data)
                return [] if data is None else [Event(None, data)]
        return self._new(chunk, template)

    def _edit(self, chunk: Chunk, own: Chunk, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """`data` carrying `chunk` (a changed `own`); None when nothing is left to send."""
        kind = chunk.kind
        out = dict(data)
        candidate = dict(_candidate(data))
        content = dict(_map(candidate.get("content")))
        parts = list(_list(content.get("parts")))
        if kind in ("text", "reasoning") and chunk.text != own.text:
            thought = kind == "reasoning"
            same = [
                i
                for i, p in enumerate(parts)
                if isinstance(_map(p).get("text"), str) and bool(_map(p).get("thought")) == thought
            ]
            # written across the text parts as a non-streamed answer is (`_merge`): each
            # keeps its keys, and an empty one signed by Gemini keeps its signature
            pieces = split_text([str(_map(parts[i])["text"]) for i in same], chunk.text)
            for i, text in reversed(list(zip(same, pieces, strict=True))):
                part = _map(parts[i])
                if text == part["text"]:
                    continue
                if text or any(k not in ("text", "thought") for k in part):
                    parts[i] = {**part, "text": text}
                else:
                    del parts[i]
            if kind == "text":
                candidate = _without_logprobs(candidate)
        elif kind == "tool_call_start" and (
            chunk.text,
            chunk.tool_call_id,
            chunk.tool_name,
        ) != (own.text, own.tool_call_id, own.tool_name):
            index = next(i for i, p in enumerate(parts) if _function_call(_map(p)) is not None)
            part = _map(parts[index])
            fc = {**(_function_call(part) or {})}
            fc.pop("function_call", None)
            fc["name"] = chunk.tool_name or fc.get("name", "")
            fc["args"] = _args(chunk)
            if not _is_synthetic(chunk.tool_call_id):
                fc["id"] = chunk.tool_call_id
            part = {k: v for k, v in part.items() if k != "function_call"}
            parts[index] = {**part, "functionCall": fc}
        elif kind == "custom" and chunk.value != own.value:
            if chunk.name == "gemini":
                return dict(_map(chunk.value)) or None
            value = _map(chunk.value)
            if value:
                parts[0] = value
            else:
                del parts[0]
        if chunk.finish_reason != own.finish_reason:
            candidate.pop("finish_reason", None)
            candidate["finishReason"] = _finish_reason(chunk.finish_reason)
            if chunk.finish_reason is None:
                del candidate["finishReason"]
        if chunk.usage != own.usage:
            native = _get(out, "usageMetadata", "usage_metadata")
            out.pop("usage_metadata", None)
            out.pop("usageMetadata", None)
            if chunk.usage is not None:
                out["usageMetadata"] = _usage_dict(chunk.usage, native)
        if not parts and not candidate.get("finishReason") and "usageMetadata" not in out:
            return None
        if content or parts:
            content["parts"] = parts
            candidate["content"] = content
        return _with_candidate(out, candidate)

    def _new(self, chunk: Chunk, template: Event | None) -> list[Event]:
        """A new streamed object for `chunk` (ids and model taken from `template`)."""
        base = _map(template.data if template is not None else None)
        out: dict[str, Any] = {
            k: base[k] for k in ("modelVersion", "responseId", "model_version") if k in base
        }
        kind = chunk.kind
        part: dict[str, Any] | None = None
        if kind == "text":
            part = {"text": chunk.text}
        elif kind == "reasoning":
            part = {"text": chunk.text, "thought": True}
        elif kind in ("tool_call_start", "tool_call_args"):
            try:
                args = _args(chunk)
            except ValueError:
                if kind == "tool_call_start":
                    raise
                return []  # a fragment of arguments: Gemini sends a call's arguments whole
            fc: dict[str, Any] = {"name": chunk.tool_name or "", "args": args}
            if not _is_synthetic(chunk.tool_call_id):
                fc["id"] = chunk.tool_call_id
            part = {"functionCall": fc}
        elif kind == "custom":
            value = chunk.value
            if chunk.name == "gemini" and isinstance(value, Mapping):
                return [Event(None, dict(cast("Mapping[str, Any]", value)))]
            if not isinstance(value, Mapping) or "." in (chunk.name or ""):
                return []  # another API's event (`openai.chat.role`): no part of Gemini's
            part = dict(cast("Mapping[str, Any]", value))
        elif kind == "tool_call_end":
            return []
        candidate: dict[str, Any] = {}
        if part is not None:
            candidate["content"] = {"role": "model", "parts": [part]}
        if chunk.finish_reason:
            candidate["finishReason"] = _finish_reason(chunk.finish_reason)
        if candidate:
            candidate["index"] = 0
            out["candidates"] = [candidate]
        if chunk.usage is not None:
            out["usageMetadata"] = _usage_dict(chunk.usage)
        if "candidates" not in out and "usageMetadata" not in out:
            return []
        return [Event(None, out)]

    def stream_events(self, response: ModelResponse) -> list[Event]:
        """One object per text, part and function call, then one with the finish reason
        and usage (so each maps to exactly one neutral chunk)."""
        head: dict[str, Any] = {"modelVersion": response.model} if response.model else {}
        message = response.message
        parts = _parts_of(message.content) if message.content else []
        parts.extend(_call_part(c) for c in message.tool_calls)
        events = [
            Event(
                None,
                {
                    "candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}],
                    **head,
                },
            )
            for p in parts
        ]
        last: dict[str, Any] = {
            "candidates": [
                {"finishReason": _finish_reason(response.finish_reason) or "STOP", "index": 0}
            ],
            **head,
        }
        if response.usage is not None:
            last["usageMetadata"] = _usage_dict(response.usage)
        events.append(Event(None, last))
        return events


def _args(chunk: Chunk) -> dict[str, Any]:
    text = chunk.text.strip()
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(
            f"a Gemini function call's arguments are a JSON object (got {chunk.text!r} in "
            f"the {chunk.kind} chunk of {chunk.tool_name!r})"
        )
    return cast("dict[str, Any]", value)


def _streamed_call(raws: list[Any]) -> Mapping[str, Any] | None:
    """A streamed function call's part as it came, its `thoughtSignature` with it: Gemini
    sends a call whole, and the object its `tool_call_start` was read from holds the
    call's part first (see `split`)."""
    raw = raws[0]
    if not isinstance(raw, Event):
        return None
    parts = _list(_map(_candidate(_map(raw.data)).get("content")).get("parts"))
    first = _map(parts[0] if parts else None)
    return first if _function_call(first) is not None else None


CALL_READERS.append(_streamed_call)

_SIGNATURES = ("thoughtSignature", "thought_signature")
_TEXT_PART_KEYS = frozenset({"text", "thought", *_SIGNATURES})


def _streamed_answer(raws: list[Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The record of a streamed answer (see `GeminiWire.response`): the content its
    objects' candidate holds in pieces, as a whole answer holds it. A piece of text joins
    the text part before it of its kind (thought or not), the signature it may carry with
    it (a stream may send one on an empty part after the text), unless both are signed;
    every other part (a function call, its signature with it) stays as it came."""
    # Gemini's: an object with candidates (the first may hold only usage)
    if not any(isinstance(raw, Event) and "candidates" in _map(raw.data) for raw in raws):
        return None
    content: dict[str, Any] | None = None  # the candidate's content, its parts aside
    runs: list[tuple[Mapping[str, Any], list[str] | None]] = []  # a part, its text pieces
    head: Mapping[str, Any] = {}  # the last part
    pieces: list[str] | None = None  # its text pieces, when it is a text part
    for data in streamed(raws):
        given = _map(_candidate(data).get("content"))
        if not given:
            continue
        if content is None:
            content = {k: v for k, v in given.items() if k != "parts"}
        for item in _list(given.get("parts")):
            part = _map(item)
            text: Any = part.get("text")
            if text.__class__ is not str or not _TEXT_PART_KEYS.issuperset(part):
                pieces = None
            elif pieces is not None and bool(head.get("thought")) == bool(part.get("thought")):
                if len(part) == 1 or not _signed(part):  # the usual piece: text alone
                    pieces.append(text)
                    continue
                if not _signed(head):
                    head = {**head, **part}
                    runs[-1] = (head, pieces)
                    pieces.append(text)
                    continue
                pieces = [text]
            else:
                pieces = [text]
            head = part
            runs.append((part, pieces))
    if content is None:
        return None
    parts = [part if t is None else {**part, "text": "".join(t)} for part, t in runs]
    return _API, {**content, "parts": parts}


def _signed(part: Mapping[str, Any]) -> bool:
    return any(part.get(key) for key in _SIGNATURES)


ANSWER_READERS.append(_streamed_answer)
