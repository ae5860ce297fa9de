"""Wire formats: one provider API's JSON bodies and stream events, mapped to neutral types.

SDK adapters intercept a client after it has built the JSON body and before it parses the
HTTP response, so a `Wire` works on plain dicts; the SDK itself turns what hooks changed
back into its own objects. The fake provider in `hookwrap.testing` speaks the same wires.
"""

from __future__ import annotations

import io
import json
from collections.abc import (
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MappingView,
    Sequence,
    Set,
)
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Any, cast

from .._types import Chunk, ModelRequest, ModelResponse, deferred_request, deferred_response

__all__ = [
    "NOTE",
    "Event",
    "Framer",
    "Made",
    "SSEDecoder",
    "Wire",
    "array_of",
    "diff_runs",
    "dumped",
    "encode_sse",
    "finish_in",
    "highest",
    "json_int",
    "loads",
    "parse_sse",
    "recorded",
    "split_text",
    "streamed",
]

#: The name of an event for a stream's framer only, never sent: what a new chunk says that
#: no event of the API can carry on its own (a usage, which the framer puts in the
#: stream's closing event: Anthropic's `message_delta`, the Responses `response.completed`).
NOTE = "hookwrap.note"


class Event:
    """One stream event: its SSE `event:` name (or None), its JSON `data`, and the bytes it
    arrived as (None for an event hookwrap built), so an unchanged event is passed on as is.

    `data` is a dict, or a str for non-JSON payloads such as OpenAI's `[DONE]`; `text` is
    the payload as it arrived (None for an event hookwrap built).
    """

    __slots__ = ("data", "event", "raw", "text")

    def __init__(
        self, event: str | None, data: Any, raw: bytes | None = None, text: str | None = None
    ) -> None:
        self.event = event
        self.data = data
        self.raw = raw
        self.text = text

    def payload(self) -> str:
        """The `data:` text of the event, as it arrived or as it would be sent."""
        return self.text if self.text is not None else _text_of(self.data)

    def encode(self) -> bytes:
        if self.raw is not None:
            return self.raw
        return encode_sse(self.event, self.data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self.event == other.event and self.data == other.data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Event({self.event!r}, {self.data!r})"


class Made(Event):
    """An event written for a chunk a hook made, with no event of the API's behind it: the
    block or item it names is a guess, so a stream the API framed is framed from it on,
    and the framer puts it where it fits (see `Wire.unframed`)."""

    __slots__ = ()


def _text_of(data: Any) -> str:
    return data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))


def encode_sse(event: str | None, data: Any) -> bytes:
    payload = _text_of(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def parse_sse(chunks: Iterable[bytes]) -> list[Event]:
    """Every event of an SSE body given in pieces (lines, network chunks, the whole)."""
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return [*events, *decoder.flush()]


class SSEDecoder:
    """Events from the bytes of an SSE body as they arrive, each keeping its exact bytes.

    Works on whole blocks (split at blank lines) rather than line by line: the hot path
    of every streamed SDK call. The usual network chunk is exactly one event (a `data:`
    line, perhaps after an `event:` line), which takes a short path.
    """

    __slots__ = ("buffer",)

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[Event]:
        buffer = self.buffer + data if self.buffer else data
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = buffer.find(b"\n\n")
        if end == -1:
            self.buffer = buffer
            return []
        if end + 2 == len(buffer) and buffer[:1] != b"\n":  # one whole event, as sent
            self.buffer = b""
            event = _block(buffer[:end], buffer)
            return [] if event is None else [event]
        blocks = buffer.split(b"\n\n")
        self.buffer = blocks.pop()
        return [event for block in blocks if (event := _block(block)) is not None]

    def flush(self) -> list[Event]:
        block, self.buffer = self.buffer, b""
        event = _block(block)
        return [] if event is None else [event]


def _payload(payload: str) -> Any:
    """An event's data: JSON when it parses as JSON, else the text itself (None if empty)."""
    if payload[:1] in _JSON_STARTS:  # the C scanner, as in `loads`: this runs for every event
        try:
            value, end = _scan(payload, 0)
        except (StopIteration, ValueError):
            pass
        else:
            if end == len(payload):
                return value
    if not payload:
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return payload


_JSON_STARTS = ("{", "[")
# `json.loads` without its two whitespace matches: the decoder's C scanner, called directly
_scan: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009


def json_int(value: Any) -> int:
    """An int read from JSON: the int itself, 0 for anything else (a bool too)."""
    if value.__class__ is int:  # what JSON gives, without a call
        found: int = value
        return found
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def loads(data: bytes | str) -> Any:
    """`json.loads`, quicker on the compact bodies APIs send: a body that is exactly one
    JSON object or array is read by the C scanner alone."""
    try:
        text = data if isinstance(data, str) else data.decode()
    except UnicodeDecodeError:  # UTF-16 or -32: `json.loads` tells them apart
        return json.loads(data)
    if text[:1] in _JSON_STARTS:
        try:
            value, end = _scan(text, 0)
        except (StopIteration, ValueError):
            pass
        else:
            if end == len(text):
                return value
    return json.loads(data)


def _block(block: bytes, raw: bytes | None = None) -> Event | None:
    """One event, or None for a block of comments (keep-alives) or nothing; `raw` is the
    block with its blank line when the caller has it already."""
    text = block.decode()
    if "\n" not in text:  # a single line, usually `data: {...}`
        if text[:6] == "data: ":
            payload = text[6:]
            raw = raw if raw is not None else block + b"\n\n"
            return Event(None, _payload(payload), raw, payload)
    elif text.startswith("event: ") and text.count("\n") == 1:
        name, _, line = text.partition("\n")
        if line[:6] == "data: ":
            payload = line[6:]
            raw = raw if raw is not None else block + b"\n\n"
            return Event(name[7:], _payload(payload), raw, payload)
    event: str | None = None
    data: list[str] = []
    for line in text.split("\n"):
        if not line or line[0] == ":":
            continue
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
    if not data and event is None:
        return None
    payload = "\n".join(data)
    return Event(event, _payload(payload), block.lstrip(b"\n") + b"\n\n", payload)


def dumped(value: Any) -> dict[str, Any] | None:
    """The JSON object an SDK sends for one of its pydantic models in a request (the content
    blocks or output items of an answer, sent back in the next request), as the SDKs dump
    them: by alias, in JSON mode, only the fields that were set, without those the model
    keeps out of requests (`__api_exclude__`). None for any other value."""
    cls = value.__class__
    model = _MODELS.get(cls)
    if model is None:  # told once per class: `_map` and `_obj` ask for every value
        model = _MODELS[cls] = callable(getattr(cls, "model_dump", None)) and not issubclass(
            cls, Mapping
        )
    if not model:
        return None
    found: Any = value.model_dump(
        mode="json",
        by_alias=True,
        exclude_unset=True,
        exclude=getattr(value, "__api_exclude__", None),
    )
    return cast("dict[str, Any]", found) if isinstance(found, dict) else None


# class -> whether its values are pydantic models an SDK dumps (see `dumped`)
_MODELS: dict[type, bool] = dict.fromkeys((dict, list, tuple, str, int, float, bool), False)
_MODELS[type(None)] = False


def array_of(value: Any) -> list[Any] | None:
    """`value` read into a list, when it is an iterable the SDKs send as a JSON array other
    than a list or a tuple (which a wire reads as they are): a generator, a `map`, an
    iterator, a set, a dict view. None for anything else. A one-shot iterator is read here
    once: the caller puts the list in its place (see the wires' `view`)."""
    cls = value.__class__
    array = ARRAY_CLASSES.get(cls)
    if array is None:  # told once per class: every request asks for a few values
        array = ARRAY_CLASSES[cls] = _is_array(cls)
    return list(value) if array else None


def _is_array(cls: type) -> bool:
    if issubclass(cls, (str, bytes, bytearray, memoryview, Mapping, list, tuple, io.IOBase)):
        return False  # a file is an iterator of lines, which no SDK sends as an array
    return issubclass(cls, (Iterator, Sequence, Set, MappingView))


# class -> whether `array_of` reads its values (False: told, none to read)
ARRAY_CLASSES: dict[type, bool] = dict.fromkeys((str, int, float, bool, dict, list, tuple), False)
ARRAY_CLASSES[type(None)] = False


class Wire:
    """One API format. Every method is pure: dicts in, dicts out, never mutating inputs
    (but `view`, see there)."""

    __slots__ = ()

    #: the URL path suffix that identifies this API's model calls (e.g. "/chat/completions")
    path: str = ""

    def request(self, body: Mapping[str, Any]) -> ModelRequest:
        """The neutral request for a JSON body (`raw` left unset)."""
        raise NotImplementedError

    def settle(self, body: Mapping[str, Any]) -> None:
        """Read into lists, in `body` itself (the SDK's own, which it sends when no hook
        changes anything), the iterables the SDK takes that can be read only once (a
        generator of messages): the SDK then sends what the hooks saw. Nothing for most
        wires. `view` does this to the body it is given; a caller that hands `view` a copy
        (the body with `extra_body` merged in) settles the SDK's own body first."""

    def view(self, body: Mapping[str, Any], raw: Any) -> ModelRequest:
        """`request(body)` with `raw` set, its messages, tools and options read from `body`
        the first time a hook looks at one of them. A wire may first `settle` `body`."""
        model = body.get("model")
        made: ModelRequest = deferred_request(
            model if isinstance(model, str) else None,
            bool(body.get("stream")),
            raw,
            self.request,
            body,
        )
        return made

    def write_request(self, request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any]:
        """A new body: `body` with the neutral fields of `request` written in, others kept."""
        raise NotImplementedError

    def response(self, data: Mapping[str, Any]) -> ModelResponse:
        """The neutral response for a JSON response body (`raw` set to `data`)."""
        raise NotImplementedError

    def response_view(self, content: bytes) -> ModelResponse:
        """`response` of a JSON response body's bytes, read the first time a hook looks at
        the view's fields."""
        made: ModelResponse = deferred_response(self._response_of, content)
        return made

    def _response_of(self, content: bytes) -> ModelResponse:
        return self.response(loads(content))

    def write_response(
        self, response: ModelResponse, data: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """A JSON response body: `data` with `response` written in, or a complete new one."""
        raise NotImplementedError

    def answers(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` is a JSON response body of this API (read from `response.raw`)."""
        return False

    def texts(self, data: Mapping[str, Any]) -> list[str]:
        """The texts of the answer `data`, one per text block (part, output text) in order:
        its message's text is them joined. A filter that must not match across two blocks
        (a match would take text of both, as a stream's blocks are filtered one by one)
        reads them here, and writes what it makes of each back with `with_texts`."""
        raise NotImplementedError

    def with_texts(self, data: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        """`data` with the text of each of its text blocks (those `texts` reads) replaced by
        the next of `texts`: each text lands in its own block, where a text joined and
        split again (`split_text`) can only guess at the cuts."""
        raise NotImplementedError

    def chunk(self, event: Event) -> Chunk:
        """Exactly one neutral chunk per event (`custom` for events with nothing neutral in
        them, named after the event); `raw` set to `event`. An event carrying several
        things is first `split`."""
        raise NotImplementedError

    def split(self, event: Event) -> list[Event] | None:
        """The events of one thing each that `event` stands for, when it carries several
        (text and tool calls in one delta, as some servers send them); None for the usual
        event. Each is then a chunk of its own, and the caller gets them one by one."""
        return None

    def spread(self, events: list[Event]) -> list[Event]:
        """`events`, each that carries several things `split` (the list itself when none
        does)."""
        out: list[Event] | None = None
        split = self.split
        for i, event in enumerate(events):
            parts = split(event)
            if parts is not None:
                if out is None:
                    out = events[:i]
                out += parts
            elif out is not None:
                out.append(event)
        return events if out is None else out

    def chunks(self, event: Event) -> list[Chunk]:
        """The chunks of `event`: one, or one per thing it carries."""
        return [self.chunk(part) for part in self.split(event) or (event,)]

    def write_chunk(self, chunk: Chunk, template: Event | None) -> list[Event]:
        """The events carrying a changed or new chunk; `template` is the stream's first
        event (ids, model) when there was one."""
        raise NotImplementedError

    def stream_events(self, response: ModelResponse) -> list[Event]:
        """A complete, well-formed stream standing for `response`."""
        raise NotImplementedError

    #: whether `restate` must see every event sent on (see there)
    restates: bool = False

    def restate(self, event: Event, delivered: dict[Any, Any]) -> Event:
        """The event to send on, for APIs whose closing events repeat content that hooks
        may have changed in earlier deltas; `delivered` is this stream's own scratch space.
        """
        return event

    #: whether `write_chunk` may give `NOTE` events (a stream is framed from its first on,
    #: which needs `reframes`: only a framer reads them, and none goes out)
    notes: bool = False
    #: whether `write_chunk` gives `Made` events for new chunks, which need a framer
    made: bool = False
    #: whether this API's streams open and close with events of their own (see `opens`)
    frames: bool = False
    #: whether a stream is framed once a hook dropped one of its chunks: where the API's
    #: events open and close blocks or items, a dropped one leaves the stream malformed
    reframes: bool = False
    #: whether this API numbers its stream's events (`sequence_number`), counted on anew
    #: as they go out
    numbers: bool = False
    #: the name of the events that open a block, in a stream the API framed: each goes out
    #: with the event after it, so that a framer a hook's change to that one brings in
    #: still holds the opening (and can leave out a block the hooks left empty)
    waits: str | None = None

    def joins(self, opening: Event, event: Event) -> bool:
        """Whether `event`, an unchanged one right after the `opening` held back (`waits`),
        is held with it rather than sent with it: one that comes before what goes in a
        block the framer may leave out (Anthropic's `ping` or a citation before a text
        block's text), so that the opening still waits for that. Asked once per held
        opening and event joining it, never of the stream's other events."""
        return False

    def opens(self, event: Event) -> bool:
        """Whether a stream whose first event is `event` came framed as the API frames it.
        A stream the hooks made from new chunks (a wrap hook's own, a fallback's) did not,
        and `framer` frames it. Only APIs whose streams open and close with events of their
        own say no."""
        return True

    def framer(self, body: Mapping[str, Any]) -> Framer:
        """Frames one stream of the call with JSON `body` (see `opens`)."""
        raise NotImplementedError

    def unframed(self, batch: Sequence[Event]) -> bool:
        """Whether `batch`, of new or changed events in a stream the API framed, holds one
        that has no place in that frame as it is (a `NOTE`, or, where `made` is set, a
        `Made` event): the stream is then framed from it on, which needs `reframes`."""
        return (self.notes or self.made) and any(
            event.event == NOTE or event.__class__ is Made for event in batch
        )

    def is_last(self, event: Event) -> bool:
        """Whether a stream ends with this event: SDKs stop reading there and close."""
        name: Any = event.event
        data = event.data
        if name is None and isinstance(data, dict):
            name = cast("dict[str, Any]", data).get("type")
        return name in _LAST or data == "[DONE]"


# Each API's finish reasons, by what they mean: an answer one provider gave another's caller
# (a `Fallback`'s) says why it ended in the caller's own words.
_MEANINGS = {
    "stop": ("stop", "end_turn", "stop_sequence", "STOP", "completed"),
    "length": ("length", "max_tokens", "MAX_TOKENS", "incomplete"),
    "tool_calls": ("tool_calls", "tool_use"),
    "content_filter": ("content_filter", "refusal", "SAFETY"),
}
_MEANING = {word: meaning for meaning, words in _MEANINGS.items() for word in words}


def recorded(raw: Any, api: str) -> Any:
    """The native message a `Message.raw` record of `api` holds, or None: no record, or
    one of another API (a `Fallback`'s other provider must not be sent its blocks).

    A wire's answer records its message as ``(api, native)``, two references taken as the
    answer is read; a checkpoint gives it back as a list."""
    if raw.__class__ in (tuple, list) and len(raw) == 2 and raw[0] == api:
        return raw[1]
    return None


def streamed(raws: Iterable[Any]) -> list[dict[str, Any]]:
    """The JSON objects of the API's events that a stream's chunks were read from (their
    `raw`s), in order and each once: the chunks a hook changed or made of one event keep
    it, one it made anew has none. A wire's reader of a streamed answer's record reads
    them (see `ANSWER_READERS`)."""
    out: list[dict[str, Any]] = []
    last: Any = None
    for raw in raws:
        event = raw is not last and isinstance(raw, Event) and raw.__class__ is not Made
        if event and raw.data.__class__ is dict:
            out.append(raw.data)
        last = raw
    return out


def finish_in(reason: str | None, words: Mapping[str, str]) -> str | None:
    """`reason` in an API's own words: `words` maps what a reason means (`stop`, `length`,
    `tool_calls`, `content_filter`) to that API's word for it. A reason the API has
    already, or one no table knows, stays as it is."""
    if reason is None or reason in words.values():
        return reason
    return words.get(_MEANING.get(reason, ""), reason)


class Framer:
    """Makes one stream's events well-formed as they pass: the opening events first, each
    delta inside an item or block of its kind (numbered in order), the closing events.
    Subclasses read one event at a time (`_one`) and close the stream once (`_close`,
    which sets `closed`); nothing is sent after that. The counts `NOTE`s give are kept in
    `noted` (the highest of each), for the closing events to carry."""

    __slots__ = ("closed", "noted")

    def __init__(self) -> None:
        self.closed = False
        self.noted: dict[str, Any] = {}

    def events(self, batch: Sequence[Event]) -> list[Event]:
        """The events to send for `batch`."""
        if any(event.event == NOTE for event in batch):
            # notes first: their counts go in the closing events, wherever in the batch
            for event in batch:
                if event.event == NOTE:
                    given = cast("dict[str, Any]", event.data).get("usage")
                    self.noted = highest(self.noted, cast("dict[str, Any]", given or {}))
            batch = [event for event in batch if event.event != NOTE]
        out: list[Event] = []
        for event in batch:
            if self.closed:
                break
            self._one(event, out)
        return out

    def replay(self, batch: Sequence[Event]) -> None:
        """Read events that went out before this framer took over (after a drop)."""
        self.events(batch)

    def flush(self) -> list[Event]:
        """The events held for what was to come after them, for a stream that stops with an
        error: they go out before it, as the API sent them. None by default."""
        return []

    def end(self) -> list[Event]:
        """The closing events the stream has not sent yet."""
        out: list[Event] = []
        if not self.closed:
            self._close(out)
        return out

    def _one(self, event: Event, out: list[Event]) -> None:
        raise NotImplementedError

    def _close(self, out: list[Event]) -> None:
        raise NotImplementedError


def highest(counts: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Token `counts` with each count of `more` that is higher, or missing: streams report
    running totals, so the highest is the latest (a response view keeps the highest of
    each, see `assemble`). Other values (details) stay as `counts` has them. A total is
    at least the input and output counts together, as `assemble` makes it: counts given
    apart (Anthropic's input first, its output last) each come with a total of their own.
    """
    out = dict(counts)
    for key, count in more.items():
        if key not in out or json_int(count) > json_int(out[key]):
            out[key] = count
    if "total_tokens" in out:
        both = sum(json_int(out.get(key)) for key in _COUNTED)
        if both > json_int(out["total_tokens"]):
            out["total_tokens"] = both
    return out


# the input and output counts a total adds up, by each API's names (Chat's, the others')
_COUNTED = ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")


def diff_runs(
    old: Sequence[Hashable], new: Sequence[Hashable]
) -> list[tuple[str, int, int, int, int]]:
    """The opcodes (`difflib`'s) of a diff of `old` to `new`, after a common head and tail
    are matched: edits are local (a prompt prepended, a message appended or changed), and
    that settles which of two equal items is which (a diff alone may pair an untouched one
    with its twin elsewhere, moving what the caller sent with it)."""
    n, m = len(old), len(new)
    head = 0
    while head < min(n, m) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(n, m) - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    middle = SequenceMatcher(None, old[head : n - tail], new[head : m - tail], autojunk=False)
    runs = [("equal", 0, head, 0, head)]
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        runs.append((tag, head + i1, head + i2, head + j1, head + j2))
    runs.append(("equal", n - tail, n, m - tail, m))
    return runs


def moved(old: Sequence[Hashable], new: Sequence[Hashable], found: list[int | None]) -> set[int]:
    """Pair each new item `found` leaves unpaired with an unpaired old item equal to it: an
    item a hook only moved (took out in one place and put back, as it was, in another) is
    still the caller's own. The old items paired, now including those."""
    taken = {i for i in found if i is not None}
    free: dict[Hashable, list[int]] = {}
    for i, key in enumerate(old):
        if i not in taken:
            free.setdefault(key, []).append(i)
    for j, key in enumerate(new):
        if found[j] is None and free.get(key):
            found[j] = i = free[key].pop(0)
            taken.add(i)
    return taken


def split_text(old: Sequence[str], new: str) -> list[str]:
    """`new`, a message's changed text, cut into as many pieces as `old` has: the texts of
    the parts (blocks, output texts) whose joined text it replaces. Each piece goes back
    into its part, which keeps its place and its other keys, as a stream's deltas do.

    The cuts between the parts are moved as the text moved: a cut in the part of the text
    that stayed the same at the start stays, one in the same end shifts by the change in
    length, one in the changed middle is found again by the text around it (else placed in
    proportion, between words where it can). An edit of the same length (a mask, upper
    case) leaves every cut in place; a redaction inside the second part changes the second
    part only.
    """
    if len(old) < 2:
        return [new]
    joined = "".join(old)
    n, m = len(joined), len(new)
    shortest = min(n, m)
    head = 0
    while head < shortest and joined[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and joined[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    was, now = joined[head : n - tail], new[head : m - tail]
    pieces: list[str] = []
    start = 0
    for cut in accumulate(map(len, old[:-1])):
        if head < cut < n - tail:  # in the changed middle (of the same length: it stays)
            if m != n:
                found = _found_again(was, now, cut - head)
                if found is not None:
                    cut = head + found
                else:  # in proportion, between words if a space is near
                    cut = _between_words(new, head + (cut - head) * len(now) // len(was))
        elif cut > head:
            cut += m - n
        cut = min(max(cut, start), m)  # in order, whatever the text around a cut
        pieces.append(new[start:cut])
        start = cut
    pieces.append(new[start:])
    return pieces


_CONTEXT = 24  # characters around a cut that find it again in the new text


def _found_again(was: str, now: str, at: int) -> int | None:
    """Where a position in `was` lands in `now`: after the text just before it, or before
    the text just after it (edits may have changed either), found nearest to the position
    in proportion; None when neither is found. A search, not a diff: a character diff of a
    long answer costs far more than the hooks around it."""
    guess = at * len(now) // len(was)  # `was` is not empty: a cut is inside it
    for size in (_CONTEXT, _CONTEXT // 4):
        before, after = was[max(0, at - size) : at], was[at : at + size]
        best: int | None = None
        for needle, shift in ((before, len(before)), (after, 0)):
            i = now.find(needle) if needle else -1
            while i >= 0:
                if best is None or abs(i + shift - guess) < abs(best - guess):
                    best = i + shift
                i = now.find(needle, i + 1)
        if best is not None:
            return best
    return None


def _between_words(text: str, at: int) -> int:
    """`at`, moved to the nearest place after a space within a few characters, so that a
    cut by proportion does not split a word."""
    for shift in range(_CONTEXT // 2):
        for place in (at - shift, at + shift):
            if 0 < place < len(text) and text[place - 1].isspace():
                return place
    return at


# the events after which the SDKs stop reading (OpenAI chat ends with `data: [DONE]`). Not
# `error`: an SDK raises there, and the call ends with that error (see `_apiclient.feed`)
_LAST = frozenset(("message_stop", "response.completed", "response.failed", "response.incomplete"))
