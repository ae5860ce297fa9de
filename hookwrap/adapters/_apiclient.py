"""OpenAI and Anthropic clients: hooks around each model call, once per logical call.

Both SDKs send every request through `client.request(cast_to, options, stream=,
stream_cls=)`, which retries as configured and then hands the final HTTP response to
`client._process_response(...)` (an Anthropic client with middleware hands each attempt's
response to its middleware, and what that answers to `_finalize_middleware_result`).
hookwrap puts its own `request` on a copy of the client (or on the SDK's base classes, for
`hw.patch`): hooks see the JSON body going out and the JSON or SSE events coming back, and
the SDK builds its native objects from what the hooks left. So every entry point (`create`,
`parse`, the `stream()` helpers, `with_raw_response`, `with_streaming_response`) keeps
returning exactly what it always returns, and the SDK's own retries and middleware stay
inside one hooked call.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import functools
import inspect
import json
import operator
import sys
import threading
import types
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, cast

from .._adapter import Adapter, Call, Natives, lost_call, same_shape
from .._convert import answer_from
from .._engine import ModelEngine
from .._patch import lend, passing
from .._proxy import ObjectProxy
from .._stack import Chain
from .._types import DROP, Chunk, Message, ModelRequest, ModelResponse, new_message, new_response
from ._wire import Event, Framer, Made, SSEDecoder, Wire

__all__ = [
    "ApiClientAdapter",
    "ClientProxy",
    "Layer",
    "hook_client",
    "process_hooked",
    "same_shape",
]


class Exchange:
    """One model call's native side: the client, its wire, and what came back."""

    __slots__ = (
        "capture",
        "client",
        "dropped",
        "failed",
        "http",
        "live",
        "parsed",
        "retries",
        "template",
        "wire",
    )

    def __init__(self, client: Any, wire: Wire, capture: Exchange | None) -> None:
        self.client = client
        self.wire = wire
        self.capture = capture  # an outer layer wants the HTTP response, not SDK objects
        self.http: Any = None
        self.retries = 0  # the SDK's own, for `http`
        self.template: Event | None = None
        self.dropped = False  # whether a hook dropped one of the stream's chunks
        self.live = False  # whether `http`'s events are being read, between two of them
        self.failed: BaseException | None = None  # the SDK's error, for that reading to raise
        self.parsed = False  # an SDK stream reads its events (see `_raise_as_sdk`)


# Set while hookwrap itself calls the SDK's `request`, to the call's `Exchange`:
# `_process_response` then hands back the HTTP response instead of parsing it (noting the
# retries the SDK took in `Exchange.retries`), so the hooks can read and rewrite it first.
_capture: ContextVar[Exchange | None] = ContextVar("hookwrap_capture", default=None)


def wire_for(wires: Sequence[Wire], options: Any) -> Wire | None:
    """The wire of a model call, or None for every other request (listing models, files)."""
    if options.method != "post":
        return None
    body = options.json_data
    if body.__class__ is not dict and not isinstance(body, Mapping):  # a dict: no ABC check
        return None
    path: str = options.url.partition("?")[0]
    for wire in wires:
        if path.endswith(wire.path):
            return wire
    return None


def _body(options: Any) -> Mapping[str, Any]:
    """The JSON body a call sends: its `extra_body` (which the SDK merges in as it sends,
    over the keys it names, leaving out those it marks `omit`) included, for the hooks to
    see and change like the rest."""
    body: Mapping[str, Any] = options.json_data
    extra = options.extra_json
    if not extra:
        return body
    root = type(options).__module__.partition(".")[0]
    merge = getattr(sys.modules.get(f"{root}._base_client"), "_merge_mappings", None)
    if merge is None:  # pragma: no cover - every supported release has it
        return {**body, **extra}
    merged: Mapping[str, Any] = merge(body, extra)
    return merged


def process_hooked(original: Callable[..., Any], chained: bool = False) -> Callable[..., Any]:
    """`_process_response` that yields the raw HTTP response to hookwrap's own calls.

    `chained`: for the base classes of an SDK with client-level middleware (`hw.patch`). A
    client with middleware calls `_process_response` in the middleware chain, once per HTTP
    attempt, and its middleware must get the SDK's response, as without hooks: for such a
    client it stays the SDK's own, and `finalize_hooked` yields the HTTP response the chain
    answered with. (`hook_client` decides this once per client, so a hooked copy without
    middleware pays nothing for it.)
    """
    if inspect.iscoroutinefunction(original):

        async def aprocess(self: Any, **kwargs: Any) -> Any:
            captured = _capture.get()
            if captured is not None:
                captured.retries = kwargs.get("retries_taken", 0)
                return kwargs["response"]
            return await original(self, **kwargs)

        async def achained(self: Any, **kwargs: Any) -> Any:
            return await (original if self._middleware else aprocess)(self, **kwargs)

        hooked: Any = achained if chained else aprocess
    else:

        def process(self: Any, **kwargs: Any) -> Any:
            captured = _capture.get()
            if captured is not None:
                captured.retries = kwargs.get("retries_taken", 0)
                return kwargs["response"]
            return original(self, **kwargs)

        def chained_(self: Any, **kwargs: Any) -> Any:
            return (original if self._middleware else process)(self, **kwargs)

        hooked = chained_ if chained else process
    hooked.__hookwrap_original__ = original
    return cast("Callable[..., Any]", hooked)


def finalize_hooked(original: Callable[..., Any]) -> Callable[..., Any]:
    """`_finalize_middleware_result` (anthropic 2.x) that yields to hookwrap's own calls the
    HTTP response of the SDK response the client's middleware answered with, for the hooks
    to read before the SDK parses it (see `_answered`)."""
    if inspect.iscoroutinefunction(original):

        async def afinalize(self: Any, result: Any, request: Any) -> Any:
            captured = _capture.get()
            if captured is None:
                return await original(self, result, request)
            return _answered(self, captured, result, request)

        afinalize.__hookwrap_original__ = original  # type: ignore[attr-defined]
        return afinalize

    def finalize(self: Any, result: Any, request: Any) -> Any:
        captured = _capture.get()
        if captured is None:
            return original(self, result, request)
        return _answered(self, captured, result, request)

    finalize.__hookwrap_original__ = original  # type: ignore[attr-defined]
    return finalize


def _answered(client: Any, captured: Exchange, result: Any, request: Any) -> Any:
    """The HTTP response of `result`, what a client's middleware chain answered `request`
    with, marked raw only if the caller asked for the raw response.

    The SDK marks each attempt's request raw (a header), so that the middleware gets an
    `APIResponse`, and parses that response afterwards unless the caller asked for it; the
    SDK's `_process_response` reads the mark off the HTTP request, so it is taken off
    again, for hookwrap's call of it to build what the caller asked for.
    """
    http = getattr(result, "http_response", None)
    if http is None:
        raise TypeError(
            f"the middleware of a hooked {type(client).__name__} client answered with "
            f"{result!r:.80}, not a response: hookwrap's hooks read the model's answer from "
            "the response `call_next` returns, so a middleware under them must return one "
            "(that one, or another the SDK made)"
        )
    captured.retries = request.retries_taken
    base = _base_client(client)
    if base._middleware_entry_mode(request) is None:
        http.request.headers.pop(base.RAW_RESPONSE_HEADER, None)
    return http


def _base_client(client: Any) -> Any:
    """The `_base_client` module of the SDK `client` is of (a subclass of its client class
    in the user's own module too)."""
    sdk = next(c for c in type(client).__mro__ if c.__module__.endswith("._base_client"))
    return sys.modules[sdk.__module__]


_MODULES: dict[type, Any] = {}


def _http_module(client: Any) -> Any:
    """`httpx2` or `httpx`: whichever the client's HTTP client is built on."""
    cls: type = client._client.__class__
    found = _MODULES.get(cls)
    if found is None:
        for base in cls.__mro__:
            top = base.__module__.partition(".")[0]
            if top in ("httpx2", "httpx"):
                found = _MODULES[cls] = sys.modules[top]
                break
        else:
            raise TypeError(f"{cls.__qualname__} is not an httpx client")
    return found


_STREAMS: dict[tuple[str, bool], type] = {}


def _byte_stream(module: Any, is_async: bool) -> type:
    """A byte stream class of `module` over the events hookwrap hands on.

    The SDK reads it in one of two ways. Through `Decoded` (see `feed`), it gets the events
    themselves, already parsed. Otherwise it gets their bytes, e.g. when a raw response is
    parsed later.
    """
    key = (module.__name__, is_async)
    found = _STREAMS.get(key)
    if found is not None:
        return found
    if is_async:

        class AsyncEvents(module.AsyncByteStream):  # type: ignore[misc]
            def __init__(self, source: Any, ex: Exchange, body: Mapping[str, Any]) -> None:
                self.source = source
                self.ex = ex
                self.body = body
                self.made: weakref.ref[Any] | None = None  # the response made over it
                self.reading = False  # the SDK's stream is reading (see `ended`)
                self.left = False  # closed while it was

            def outgoing(self) -> AsyncIterator[Event]:
                return _aoutgoing(self.source, self.ex, self.body)

            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for event in self.outgoing():
                    yield event.encode()

            async def aclose(self) -> None:
                if self.reading:  # the SDK closes it as it stops: `ended` closes it then
                    self.left = True
                    return
                await self.source.aclose()
                _time(self.made, self.ex.http)

            async def ended(self, error: BaseException | None) -> None:
                """`Events.ended` of an async stream."""
                self.reading = False
                if error is not None:
                    await _afail(self.source, self.ex, error)
                if self.left:
                    self.left = False
                    await self.aclose()

        found = AsyncEvents
    else:

        class Events(module.SyncByteStream):  # type: ignore[misc]
            def __init__(self, source: Any, ex: Exchange, body: Mapping[str, Any]) -> None:
                self.source = source
                self.ex = ex
                self.body = body
                self.made: weakref.ref[Any] | None = None  # the response made over it
                self.reading = False  # the SDK's stream is reading (see `ended`)
                self.left = False  # closed while it was

            def outgoing(self) -> Iterator[Event]:
                return _outgoing(self.source, self.ex, self.body)

            def __iter__(self) -> Iterator[bytes]:
                for event in self.outgoing():
                    yield event.encode()

            def close(self) -> None:
                if self.reading:  # the SDK closes it as it stops: `ended` closes it then
                    self.left = True
                    return
                self.source.close()
                _time(self.made, self.ex.http)

            def ended(self, error: BaseException | None) -> None:
                """The SDK's stream stopped reading, having raised `error` (one it made
                from an `error` event, say) or not. The SDK closes the response before
                its error reaches anyone, so `close` waits for this: the call then ends
                with that very error (the hooks' `on_error`), not closed by the consumer."""
                self.reading = False
                if error is not None:
                    _fail(self.source, self.ex, error)
                if self.left:
                    self.left = False
                    self.close()

        found = Events
    _STREAMS[key] = found
    return found


def _fail(source: Any, ex: Exchange, error: BaseException) -> None:
    """End the call of the stream `source` with `error`, which the SDK raised reading it.

    While the model's events are still being read, the reading raises it at its next pull
    (`Exchange.failed`), so it comes up through every `wrap_model` hook (a span, a
    fallback's) as an error of the model's own would. Else, or if a hook held chunks back,
    it is thrown into `source`. Either way the caller gets it as the SDK raised it.
    """
    trace = error.__traceback__
    if ex.live:
        ex.failed = error
        with contextlib.suppress(BaseException):  # it is raised to the caller, not here
            next(source)
        ex.failed = None  # raised once: a hook that calls the model again reads on
    if hasattr(source, "throw"):  # (nothing happens in a stream ended already)
        with contextlib.suppress(BaseException):
            source.throw(error)
    error.__traceback__ = trace  # as the SDK raised it, without the hooks' frames


async def _afail(source: Any, ex: Exchange, error: BaseException) -> None:
    trace = error.__traceback__
    if ex.live:
        ex.failed = error
        with contextlib.suppress(BaseException):
            await source.__anext__()
        ex.failed = None
    if hasattr(source, "athrow"):
        with contextlib.suppress(BaseException):
            await source.athrow(error)
    error.__traceback__ = trace


def _time(made: weakref.ref[Any] | None, received: Any) -> None:
    """Give the response hookwrap `made` the `elapsed` time of the one received (zero when
    a hook answered and nothing was sent), as httpx gives a response when it is closed."""
    response = made() if made is not None else None
    if response is None:
        return
    try:
        response.elapsed = received.elapsed if received is not None else datetime.timedelta(0)
    except RuntimeError:  # the one received is not closed: it has no time to give either
        pass


def _outgoing(
    source: Iterator[Event | list[Event]], ex: Exchange, body: Mapping[str, Any]
) -> Iterator[Event]:
    """The events to send on, one by one, as they come from the source (a changed chunk
    may stand for several). The SDKs stop reading at a stream's last event and close the
    response; so before that event is handed over, the source is run to its end, and the
    call ends as finished (`after_model`, `on_finish`) rather than closed by the consumer.
    Where the source fails (a dropped connection), what was held for the events after it
    goes out before the error, as the API sent it."""
    is_last = ex.wire.is_last
    send = _Outgoing(ex, body)
    sent = send.sent
    numbers = ex.wire.numbers
    waits = ex.wire.waits
    held: tuple[Event, ...] = ()  # an opening that goes out with the next event (`waits`)
    as_is = False  # while the stream goes on unchanged, events skip `send` (noted only)
    try:
        for item in source:
            if isinstance(item, Event) and not is_last(item):
                if as_is and not ex.dropped:
                    if waits is not None and item.event == waits:
                        held = (item,)  # it goes with the next event, through `send`
                        as_is = False
                        continue
                    if sent is not None:  # the usual event
                        sent.append(item)
                    yield send.numbered(item) if numbers else item
                    continue
                if held and ex.wire.joins(held[0], item):  # a `ping`: the opening waits on
                    held += (item,)
                    continue
                batch: Sequence[Event] = (*held, item) if held else (item,)
            else:
                batch = _each(item)
                if held:
                    batch = [*held, *batch]
                if batch and is_last(batch[-1]):
                    rest = [event for more in source for event in _each(more)]
                    batch = _closing(batch, rest, is_last)
            held = ()
            yield from send(batch)
            as_is = send.as_is()
    except Exception:
        yield from send.flush(held)
        raise
    if held:
        yield from send(held)
    yield from send.end()


async def _aoutgoing(
    source: AsyncIterator[Event | list[Event]], ex: Exchange, body: Mapping[str, Any]
) -> AsyncIterator[Event]:
    is_last = ex.wire.is_last
    send = _Outgoing(ex, body)
    sent = send.sent
    numbers = ex.wire.numbers
    waits = ex.wire.waits
    held: tuple[Event, ...] = ()
    as_is = False
    try:
        async for item in source:
            if isinstance(item, Event) and not is_last(item):
                if as_is and not ex.dropped:
                    if waits is not None and item.event == waits:
                        held = (item,)
                        as_is = False
                        continue
                    if sent is not None:
                        sent.append(item)
                    yield send.numbered(item) if numbers else item
                    continue
                if held and ex.wire.joins(held[0], item):
                    held += (item,)
                    continue
                batch: Sequence[Event] = (*held, item) if held else (item,)
            else:
                batch = _each(item)
                if held:
                    batch = [*held, *batch]
                if batch and is_last(batch[-1]):
                    rest = [event async for more in source for event in _each(more)]
                    batch = _closing(batch, rest, is_last)
            held = ()
            for event in send(batch):
                yield event
            as_is = send.as_is()
    except Exception:
        for event in send.flush(held):
            yield event
        raise
    if held:
        for event in send(held):
            yield event
    for event in send.end():
        yield event


class _Outgoing:
    """One stream's batches of events as they go on: restated where the API needs it, and
    framed where the stream is not as the API frames its streams: when it did not open so
    (its chunks all made by hooks, or its opening left out), or once a hook dropped one of
    its chunks (the framer then first reads what went out before, sending nothing)."""

    __slots__ = ("body", "ex", "framer", "next", "opened", "restated", "sent", "wire")

    def __init__(self, ex: Exchange, body: Mapping[str, Any]) -> None:
        self.ex = ex
        self.wire = wire = ex.wire
        self.body = body
        self.restated = _restater(wire)
        self.next: int | None = None  # the next event's `sequence_number` (see `numbered`)
        self.framer: Framer | None = None
        self.opened = False
        # what went out, for a framer that takes over after a drop (see `Wire.reframes`)
        self.sent: list[Event] | None = [] if wire.reframes else None

    def __call__(self, batch: Sequence[Event]) -> Sequence[Event]:
        if self.framer is None:
            self.framer = self._framer_from(batch)
            if self.framer is None and self.opened and self.wire.unframed(batch):
                self.framer = self._replaying()  # a hook's chunk the API's frame cannot hold
        if self.framer is not None:
            batch = self.framer.events(batch)
        elif self.sent is not None:
            self.sent.extend(batch)
        return self._out(batch)

    def _out(self, batch: Sequence[Event]) -> Sequence[Event]:
        restated = self.restated
        if restated is not None:
            batch = [restated(event) for event in batch]
        return [self.numbered(event) for event in batch] if self.wire.numbers else batch

    def numbered(self, event: Event) -> Event:
        """`event` with the stream's next `sequence_number` (counted on from the first
        event's), for APIs that number their events: chunks a hook dropped, added or
        expanded leave no gap and no repeat."""
        data = event.data
        if data.__class__ is not dict or "sequence_number" not in data:
            return event
        given = data["sequence_number"]
        number = self.next
        if number is None:
            number = given if isinstance(given, int) else 0
        self.next = number + 1
        return event if given == number else Event(event.event, {**data, "sequence_number": number})

    def _framer_from(self, batch: Sequence[Event]) -> Framer | None:
        """The framer the stream needs from `batch` on, or None while it needs none."""
        if not self.opened:
            if not batch:
                return None
            self.opened = True
            if not self.wire.opens(batch[0]):  # hooks made the stream, or left out its opening
                return self.wire.framer(self.body)
        if not self.ex.dropped or self.sent is None:
            return None
        return self._replaying()  # a hook dropped a chunk (perhaps before this first batch)

    def _replaying(self) -> Framer:
        """A framer taking over a stream the API framed, having read what went out."""
        framer = self.wire.framer(self.body)
        assert self.sent is not None, f"{type(self.wire).__name__} cannot reframe"
        framer.replay(self.sent)  # read, not sent again
        self.sent = None
        return framer

    def as_is(self) -> bool:
        """Whether the batches go on unchanged for now (opened by the API, not restated)."""
        return self.opened and self.framer is None and self.restated is None

    def flush(self, held: Sequence[Event]) -> Sequence[Event]:
        """For a stream whose source failed: the events `held` for the next one, and those
        its framer held (Chat's finish chunk, say), which would have gone out with the
        events after them. The stream ends with the error, not closed here."""
        batch = self(held) if held else ()
        if self.framer is None:
            return batch
        return [*batch, *self._out(self.framer.flush())]

    def end(self) -> Sequence[Event]:
        """The closing events a framed stream has not sent yet (an empty stream, or one a
        hook dropped a chunk from after its last batch, is framed now)."""
        if self.framer is None:
            empty = not self.opened and self.wire.frames
            self.framer = self.wire.framer(self.body) if empty else self._framer_from(())
        if self.framer is None:
            return ()
        return self._out(self.framer.end())


def _closing(
    batch: Sequence[Event], rest: list[Event], is_last: Callable[[Event], bool]
) -> Sequence[Event]:
    """The stream's last batch: `batch` (which ends with the stream's last event) and the
    `rest` of the stream after it, the last event at the end. What hooks added after it
    goes before it, where the SDK still reads."""
    if not rest:
        return batch
    return [*batch[:-1], *rest, batch[-1]]


def _each(item: Event | list[Event]) -> Sequence[Event]:
    return (item,) if isinstance(item, Event) else item


def _restater(wire: Wire) -> Callable[[Event], Event] | None:
    """How one stream's events are restated before they go on (None: as they are)."""
    if not wire.restates:
        return None
    delivered: dict[Any, Any] = {}
    restate = wire.restate
    return lambda event: restate(event, delivered)


class Decoded:
    """An event as the SDKs' SSE decoders hand it to their streams (`ServerSentEvent`'s
    face): read and parsed by hookwrap already, so the SDK does neither again."""

    __slots__ = ("_value", "data", "event")
    id: str | None = None
    retry: int | None = None

    def __init__(self, event: Event) -> None:
        self.event = event.event
        text = event.text  # `event.payload()` without a call for an event as it came
        self.data = event.payload() if text is None else text
        self._value = event.data

    def json(self) -> Any:
        value = self._value
        if value.__class__ is dict:
            return value
        return json.loads(self.data) if value is None or isinstance(value, str) else value

    def __repr__(self) -> str:
        return f"Decoded(event={self.event!r}, data={self.data!r})"


class _Feed:
    """An SDK stream's SSE decoder that takes the events from hookwrap's byte stream
    instead of decoding the bytes it is given (which stay unread)."""

    __slots__ = ("events",)

    def __init__(self, events: Any) -> None:
        self.events = events

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Decoded]:
        return map(Decoded, self.events.outgoing())  # no generator of its own per event

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[Decoded]:
        async for event in self.events.outgoing():
            yield Decoded(event)


def feed(result: Any, http: Any) -> Any:
    """Let an SDK stream made over `http` take its events without decoding them again, and
    read them through `_read_through`; a raw response does the same with the stream it
    parses later (see `_parsing`). Any other result is left as it is."""
    events = http.stream
    if not hasattr(events, "outgoing"):
        return result
    decoder = getattr(result, "_decoder", None)
    if getattr(result, "response", None) is http and decoder is not None:
        if decoder.__class__ is not _Feed:  # not the stream a raw response parsed before
            result._decoder = _Feed(events)
            _read_through(result, events)
            _parsed(events)
    elif getattr(result, "http_response", None) is http and hasattr(result, "parse"):
        result.__class__ = _parsing(result.__class__)
    return result


def _parsed(events: Any) -> None:
    """Tell the calls whose events `events` hands on (an outer layer's, then those of the
    layers within) that an SDK stream reads them."""
    while hasattr(events, "outgoing"):
        events.ex.parsed = True
        events = getattr(events.ex.http, "stream", None)


def _read_through(stream: Any, events: Any) -> None:
    """Have an SDK stream's iterator tell `events` when it reads (see `Events.ended`); made
    again over a copy of the stream, where the SDK made it over the stream itself.

    OpenAI's `Stream` and `AsyncStream` (and older Anthropic releases') make their iterator
    when they are made: a generator whose frame holds the stream, so the two form a
    reference cycle, and a stream its caller drops (after a bare `break`, say) would be
    closed only when the garbage collector finds it. Recent Anthropic releases iterate over
    a copy of the stream for this reason (made on first use, which is now); the others get
    the same here.
    """
    made: Any = getattr(stream, "_iterator", None)
    if made is None:
        return
    frame = getattr(made, "gi_frame", None) or getattr(made, "ag_frame", None)
    if frame is not None and frame.f_locals.get("self") is stream:
        twin = copy.copy(stream)
        del twin._iterator  # the copy holds no iterator, so nothing holds the stream back
        made = getattr(twin, made.__name__)()
    stream._iterator = (_areading if hasattr(made, "__anext__") else _reading)(made, events)


def _reading(made: Iterator[Any], events: Any) -> Iterator[Any]:
    """The items of an SDK stream's iterator `made`, `events` told while it reads."""
    while True:
        events.reading = True
        try:
            item = next(made)
        except StopIteration:
            events.ended(None)
            return
        except BaseException as error:
            events.ended(error)
            raise
        events.reading = False
        if events.left:  # closed from another thread while this pull ran: it ends here
            events.left = False
            events.close()
            return
        yield item


async def _areading(made: AsyncIterator[Any], events: Any) -> AsyncIterator[Any]:
    while True:
        events.reading = True
        try:
            item = await made.__anext__()
        except StopAsyncIteration:
            await events.ended(None)
            return
        except BaseException as error:
            await events.ended(error)
            raise
        events.reading = False
        if events.left:  # closed from another task while this pull ran: it ends here
            events.left = False
            await events.aclose()
            return
        yield item


_PARSING: dict[type, type] = {}


def _parsing(cls: type) -> type:
    """`cls`, a raw response class, with a `parse` that `feed`s the stream it makes.

    A raw response caches what it parsed, so a method put on the response itself, which
    would refer back to it, would keep a dropped stream from closing until the garbage
    collector came: its class is changed instead, to a subclass of the same name.
    """
    found = _PARSING.get(cls)
    if found is not None:
        return found
    parse: Any = getattr(cls, "parse")  # noqa: B009

    def fed(self: Any, *args: Any, **kwargs: Any) -> Any:
        return feed(parse(self, *args, **kwargs), self.http_response)

    async def afed(self: Any, *args: Any, **kwargs: Any) -> Any:
        return feed(await parse(self, *args, **kwargs), self.http_response)

    method = afed if inspect.iscoroutinefunction(parse) else fed
    own = {"parse": functools.wraps(parse)(method), "__module__": cls.__module__}
    found = _PARSING[cls] = type(cls.__name__, (cls,), own)
    found.__qualname__ = cls.__qualname__
    return found


async def _afeed(parsing: Any, http: Any) -> Any:
    return feed(await parsing, http)


# what no longer holds for a body hookwrap hands on (its bytes decoded, or made anew)
_DROPPED_HEADERS = (b"content-length", b"content-encoding", b"transfer-encoding")


class _CallIds:
    """A stream's chunks, each argument chunk naming its tool call as the call's start did:
    the APIs send a call's id in its first event only, and number the calls (`value`)."""

    __slots__ = ("chunk_of", "ids")

    def __init__(self, chunk_of: Callable[[Event], Chunk]) -> None:
        self.chunk_of = chunk_of
        self.ids: dict[int, str] = {}

    def __call__(self, event: Event) -> Chunk:
        chunk = self.chunk_of(event)
        kind = chunk.kind
        if kind == "text" or chunk.value.__class__ is not int:
            return chunk
        if kind == "tool_call_start" and chunk.tool_call_id:
            self.ids[chunk.value] = chunk.tool_call_id
        elif kind == "tool_call_args" and chunk.tool_call_id is None:
            found = self.ids.get(chunk.value)
            if found is not None:
                return chunk.replace(tool_call_id=found)
        return chunk


class ApiClientAdapter(Adapter):
    """Neutral views of a client call's JSON; the way back is the SDK's own parsing."""

    __slots__ = ("is_async",)
    notes_chunks = True

    def __init__(self, is_async: bool) -> None:
        self.is_async = is_async

    # -- the request ------------------------------------------------------------------------

    def request(self, call: Call) -> ModelRequest:
        ex: Exchange = call.args[2]
        options = call.args[1]
        body = options.json_data
        if options.extra_json:
            # the view gets the merged copy: a generator it read must be put back in the
            # SDK's own body, which it sends (with `extra_body` merged in) as the hooks saw
            # it; one in `extra_body` goes in a copy of it (the caller's dict is theirs)
            ex.wire.settle(body)
            extra = dict(options.extra_json)
            ex.wire.settle(extra)
            options.extra_json = extra
            body = _body(options)
        request = ex.wire.view(body, call)
        call.request = request
        return request

    def _send_options(self, request: ModelRequest, call: Call) -> Any:
        """The request options to send: the SDK's own, or a copy with the changes in."""
        try:
            options = call.args[1]
            if request is call.request:
                return options
        except AttributeError:  # a request made anew, not with `replace`: no call to send
            raise lost_call() from None
        ex: Exchange = call.args[2]
        same_shape(request.stream, call.request)
        body = _body(options)
        options = options.model_copy()
        options.json_data = ex.wire.write_request(request, body)
        options.extra_json = None  # in the body now, where the hooks' changes win
        return options

    def invoke(self, request: ModelRequest) -> Any:
        call: Call = request.raw
        if self.is_async:
            return self._ainvoke(request, call)
        try:
            unchanged = request is call.request
        except AttributeError:  # no call record: told as `_send_options` tells it
            unchanged = False
        # unchanged: `_send_options`, without a call
        options = call.args[1] if unchanged else self._send_options(request, call)
        ex: Exchange = call.args[2]
        token = _capture.set(ex)
        try:
            http = ex.http = call.fn(call.args[0], options, **call.kwargs)
        finally:
            _capture.reset(token)
        if call.kwargs["stream"]:
            return _HttpEvents(http, ex)
        http.read()  # `with_streaming_response` leaves the body unread; hooks need it
        return http

    async def _ainvoke(self, request: ModelRequest, call: Call) -> Any:
        options = self._send_options(request, call)
        ex: Exchange = call.args[2]
        token = _capture.set(ex)
        try:
            http = ex.http = await call.fn(call.args[0], options, **call.kwargs)
        finally:
            _capture.reset(token)
        if call.kwargs["stream"]:
            return _AsyncHttpEvents(http, ex)
        await http.aread()
        return http

    # -- the answer -------------------------------------------------------------------------

    def response(self, native: Any, call: Call | None) -> ModelResponse:
        assert call is not None
        ex: Exchange = call.args[2]
        response = ex.wire.response_view(native.content)
        call.response = response
        call.result = native
        return response

    def chunks(self, native: Any, call: Call | None) -> Iterator[Chunk]:
        assert call is not None
        ex: Exchange = call.args[2]
        chunk_of = _CallIds(ex.wire.chunk)
        spread = ex.wire.spread  # an event carrying several things is one chunk each
        http = native.http
        decoder = SSEDecoder()
        feed = decoder.feed
        call.made = None  # pulled: no other reading of the response now
        ex.live = True
        try:
            for data in _raw_or_decoded(http):
                for event in spread(feed(data)):
                    if ex.template is None:
                        ex.template = event
                    chunk = call.seen = chunk_of(event)
                    yield chunk
                    if ex.failed is not None:  # see `_fail`
                        raise ex.failed
            for event in spread(decoder.flush()):
                if ex.template is None:
                    ex.template = event
                chunk = call.seen = chunk_of(event)
                yield chunk
                if ex.failed is not None:
                    raise ex.failed
        except Exception as error:
            _raise_as_sdk(error, ex, http)
            raise
        finally:
            ex.live = False
            http.close()

    async def achunks(self, native: Any, call: Call | None) -> AsyncIterator[Chunk]:
        assert call is not None
        ex: Exchange = call.args[2]
        chunk_of = _CallIds(ex.wire.chunk)
        spread = ex.wire.spread
        http = native.http
        decoder = SSEDecoder()
        feed = decoder.feed
        call.made = None  # pulled: no other reading of the response now
        ex.live = True
        try:
            async for data in _araw_or_decoded(http):
                for event in spread(feed(data)):
                    if ex.template is None:
                        ex.template = event
                    chunk = call.seen = chunk_of(event)
                    yield chunk
                    if ex.failed is not None:
                        raise ex.failed
            for event in spread(decoder.flush()):
                if ex.template is None:
                    ex.template = event
                chunk = call.seen = chunk_of(event)
                yield chunk
                if ex.failed is not None:
                    raise ex.failed
        except Exception as error:
            _raise_as_sdk(error, ex, http)
            raise
        finally:
            ex.live = False
            await http.aclose()

    def items(self, native: Any, call: Call, is_async: bool) -> Natives | None:
        ex: Exchange = call.args[2]
        return (_aevents if is_async else _events)(native.http, ex), ex.wire.chunks

    def dropped(self, chunk: Chunk, call: Call | None) -> None:
        assert call is not None
        call.args[2].dropped = True

    def native_chunk(self, chunk: Chunk, call: Call | None) -> Any:
        assert call is not None
        ex: Exchange = call.args[2]
        raw = chunk.raw
        if chunk is call.seen or (raw.__class__ is Event and ex.wire.chunk(raw) == chunk):
            return raw  # unchanged: its bytes go on as they came
        events = ex.wire.write_chunk(chunk, ex.template)
        return events or DROP

    def respond_chunks(self, response: ModelResponse, request: ModelRequest) -> list[Chunk]:
        call: Call = request.raw
        same_shape(request.stream, call.request)
        ex: Exchange = call.args[2]
        chunk_of = _CallIds(ex.wire.chunk)
        raw: Any = response.raw
        base = cast("Mapping[str, Any] | None", raw if isinstance(raw, Mapping) else None)
        response = _named(response, base, request.model)
        # a `Made` event (the usage chunk of a stream whose request may not have asked for
        # one) has no place of its own in the stream: its chunk goes on as a new one would
        # (`native_chunk`), never as it is
        chunks = [chunk_of(event) for event in ex.wire.stream_events(response)]
        chunks = [c.replace(raw=None) if c.raw.__class__ is Made else c for c in chunks]
        if chunks:
            ex.template = chunks[0].raw
        if response.usage is None:  # the zeros a native event must carry are no usage seen
            chunks = [c if c.usage is None else c.replace(usage=None) for c in chunks]
        return chunks

    def coerce(self, value: Any, call: Call | None) -> ModelResponse:
        if isinstance(value, ModelResponse):
            return value
        if isinstance(value, str):
            made: ModelResponse = new_response(
                new_message("assistant", value), None, None, None, None
            )
            return made
        if isinstance(value, Message):
            return ModelResponse(value)
        if isinstance(value, Mapping):
            item: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return ModelResponse(answer_from(item))
        raise TypeError(
            f"a model call of an SDK client answers with a ModelResponse, Message, str or "
            f"dict (got {type(value).__name__}: {value!r})"
        )

    # -- back to the SDK --------------------------------------------------------------------

    def native(self, response: ModelResponse, call: Call | None) -> Any:
        assert call is not None
        ex: Exchange = call.args[2]
        if response is call.response:
            return self._process(call.result, call)
        # a whole answer to a streamed call: the engine streams it (`respond_chunks`) unless
        # a hook set `request.stream` false
        same_shape(False, call.request)
        raw: Any = response.raw
        base = cast("Mapping[str, Any] | None", raw if isinstance(raw, Mapping) else None)
        asked = call.request.model if call.request is not None else None
        response = _named(response, base, asked)
        data = ex.wire.write_response(response, base)
        return self._process(self._http(call, content=json.dumps(data).encode()), call)

    def passthrough(self, native: Any, call: Call) -> Any:
        return self._process(native, call)

    def stream_result(self, stream: Any, call: Call | None) -> Any:
        assert call is not None
        return self._process(self._stream_http(stream, call), call)

    def _stream_http(self, source: Any, call: Call) -> Any:
        if self.is_async and not hasattr(source, "__anext__"):
            source = _async_of(source)
        module = _http_module(call.args[2].client)
        stream = _byte_stream(module, self.is_async)(source, call.args[2], _body(call.args[1]))
        return self._http(call, stream=stream)

    def _http(self, call: Call, **body: Any) -> Any:
        """An HTTP response carrying what the hooks left, shaped like the one received."""
        ex: Exchange = call.args[2]
        module = _http_module(ex.client)
        original = ex.http
        if original is None:  # answered by a hook: no HTTP exchange happened
            request = _unsent_request(module, ex.client, call.args[1])
            headers: Any = {"content-type": "application/json"}
            if "stream" in body:
                headers = {"content-type": "text/event-stream"}
            status = 200
        else:
            request = original.request
            # as received, byte for byte (a header sent twice stays two)
            headers = [(k, v) for k, v in original.headers.raw if k.lower() not in _DROPPED_HEADERS]
            status = original.status_code
        made = module.Response(status, headers=headers, request=request, **body)
        if "stream" in body:  # timed when it closes, as httpx does (a weak reference: the
            body["stream"].made = weakref.ref(made)  # response holds the stream already)
        else:
            _time(weakref.ref(made), original)
        return made

    def _process(self, http: Any, call: Call) -> Any:
        ex: Exchange = call.args[2]
        if ex.capture is not None:  # an outer layer parses it: it learns the retries too
            ex.capture.retries = ex.retries
            return http
        found: Any = ex.client.__class__._process_response  # the SDK's, if patched
        process = getattr(found, "__hookwrap_original__", found)
        stream = call.kwargs["stream"]
        result = process(
            ex.client,
            cast_to=call.args[0],
            options=call.args[1],
            response=http,
            stream=stream,
            stream_cls=call.kwargs["stream_cls"],
            retries_taken=ex.retries,
        )
        if not stream:
            return result
        return _afeed(result, http) if self.is_async else feed(result, http)


def _named(
    response: ModelResponse, base: Mapping[str, Any] | None, model: str | None
) -> ModelResponse:
    """`response` naming `model`, the model the call asked for, if neither it nor the JSON
    it is written into (`base`) names one: a hook's answer (`hw.Respond("...")`) stands
    for the model's, and the API names the model in every answer."""
    if response.model is not None or model is None or (base and base.get("model")):
        return response
    return response.replace(model=model)


def _unsent_request(module: Any, client: Any, options: Any) -> Any:
    """The request a hook answered in place of the model (the SDK reads its headers)."""
    headers = cast("Mapping[str, Any]", options.headers or {})
    url = f"{str(client.base_url).rstrip('/')}/{options.url.lstrip('/')}"
    return module.Request(
        "POST", url, headers={k: v for k, v in headers.items() if isinstance(v, str)}
    )


async def _async_of(items: Iterator[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


class _HttpEvents:
    """A streamed HTTP response as the engine sees it: a stream (its events), which
    `ApiClientAdapter.chunks` reads straight from the response."""

    __slots__ = ("events", "ex", "http")

    def __init__(self, http: Any, ex: Exchange) -> None:
        self.http = http
        self.ex = ex
        self.events: Iterator[Event] | None = None

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        if self.events is None:
            self.events = _events(self.http, self.ex)
        return next(self.events)

    def close(self) -> None:
        self.http.close()


class _AsyncHttpEvents:
    """`_HttpEvents` of an async response."""

    __slots__ = ("events", "ex", "http")

    def __init__(self, http: Any, ex: Exchange) -> None:
        self.http = http
        self.ex = ex
        self.events: AsyncIterator[Event] | None = None

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        if self.events is None:
            self.events = _aevents(self.http, self.ex)
        return await self.events.__anext__()

    async def aclose(self) -> None:
        await self.http.aclose()


def _identity(http: Any) -> bool:
    """Whether the body is sent as is (no content-encoding): its raw bytes are the body."""
    encoding = http.headers.get("content-encoding")
    return encoding is None or encoding.strip().lower() in ("", "identity")


def _raw(http: Any) -> bool:
    """Whether the body's raw bytes are the body, still to come: no content-encoding, and
    not read already (a response made with its content, as test transports make them,
    gives its bytes only once read)."""
    return _identity(http) and not getattr(http, "is_stream_consumed", False)


def _raw_or_decoded(http: Any) -> Iterator[bytes]:
    """The body's bytes as they arrive; without a content-encoding, skipping httpx's
    decoding layer (a generator and two decoders per network chunk)."""
    found: Iterator[bytes] = http.iter_raw() if _raw(http) else http.iter_bytes()
    return found


def _araw_or_decoded(http: Any) -> AsyncIterator[bytes]:
    found: AsyncIterator[bytes] = http.aiter_raw() if _raw(http) else http.aiter_bytes()
    return found


# what an SDK's stream raises for a transport's error, from it, where it reads the bytes
_AS_SDK = (("timeout_exceptions", "APITimeoutError"), ("request_exceptions", "APIConnectionError"))


def _raise_as_sdk(error: Exception, ex: Exchange, http: Any) -> None:
    """Raise `error`, met reading a stream's bytes, as the SDK's stream would, if it
    raises another error for it: recent OpenAI releases raise a transport's error (a
    dropped connection) as an `APITimeoutError` or `APIConnectionError` made from it.

    hookwrap reads the bytes before the SDK's stream does, so the error is made here: the
    hooks (`on_error`, a `wrap_model` hook) see the very error the caller gets, of the SDK's
    own type wherever the call failed, and the SDK's stream hands it on as it is. A raw
    response's caller who reads its bytes, not the stream `parse()` makes, gets `error`
    itself, as from the SDK."""
    base = _base_client(ex.client)
    if not ex.parsed and http.request.headers.get(base.RAW_RESPONSE_HEADER):
        return
    streaming = sys.modules.get(base.__name__.partition(".")[0] + "._streaming")
    for caught, made in _AS_SDK:
        errors = getattr(streaming, caught, None)
        kind = getattr(streaming, made, None)
        if errors is not None and kind is not None and isinstance(error, errors()):
            raise kind(request=http.request) from error


def _events(http: Any, ex: Exchange) -> Iterator[Event]:
    """The events of a streamed response, read as they arrive (see `_fail` for `failed`)."""
    decoder = SSEDecoder()
    ex.live = True
    try:
        for data in _raw_or_decoded(http):
            for event in decoder.feed(data):
                yield event
                if ex.failed is not None:
                    raise ex.failed
        for event in decoder.flush():
            yield event
            if ex.failed is not None:
                raise ex.failed
    except Exception as error:
        _raise_as_sdk(error, ex, http)
        raise
    finally:
        ex.live = False
        http.close()


async def _aevents(http: Any, ex: Exchange) -> AsyncIterator[Event]:
    decoder = SSEDecoder()
    ex.live = True
    try:
        async for data in _araw_or_decoded(http):
            for event in decoder.feed(data):
                yield event
                if ex.failed is not None:
                    raise ex.failed
        for event in decoder.flush():
            yield event
            if ex.failed is not None:
                raise ex.failed
    except Exception as error:
        _raise_as_sdk(error, ex, http)
        raise
    finally:
        ex.live = False
        await http.aclose()


# -- installing the hooks ---------------------------------------------------------------------


class Layer:
    """One stack of hooks around a client's model calls: its engines, built once."""

    __slots__ = (
        "__weakref__",
        "async_engine",
        "chain",
        "hooked_wires",
        "sync_engine",
        "what",
        "wires",
    )

    def __init__(self, chain: Chain, wires: Sequence[Wire], what: str) -> None:
        # a stack with no hooks at all leaves calls alone: they go straight to the SDK
        self.hooked_wires = tuple(wires) if chain.hooks else ()
        self.what = what
        self.run(chain)

    def run(self, chain: Chain) -> None:
        """Run the hooks of `chain`, all or some of those it was made with (`_patch.lend`)."""
        self.chain = chain
        self.wires = self.hooked_wires if chain.hooks else ()
        self.sync_engine: ModelEngine | None = None
        self.async_engine: ModelEngine | None = None

    def engine(self, is_async: bool) -> ModelEngine:
        """Built on first use: a stack of async hooks is refused only by sync clients."""
        engine = self.async_engine if is_async else self.sync_engine
        if engine is None:
            engine = ModelEngine(ApiClientAdapter(is_async), self.chain, is_async, self.what)
            if is_async:
                self.async_engine = engine
            else:
                self.sync_engine = engine
        return engine

    def call(
        self,
        client: Any,
        inner: Callable[..., Any],
        cast_to: Any,
        options: Any,
        stream: bool = False,
        stream_cls: Any = None,
    ) -> Any:
        """One `request` of a sync client through this layer; `inner` sends it."""
        wire = wire_for(self.wires, options)
        if wire is None:
            return inner(cast_to, options, stream=stream, stream_cls=stream_cls)
        engine = self.sync_engine or self.engine(False)
        capture = _capture.get()
        ex = Exchange(client, wire, capture)
        args = (cast_to, options, ex)
        kwargs = {"stream": stream, "stream_cls": stream_cls}
        if not capture:  # the usual call, not one made by an outer layer
            return engine.call(inner, None, args, kwargs)
        token = _capture.set(None)  # calls made by hooks get SDK objects as usual
        try:
            return engine.call(inner, None, args, kwargs)
        finally:
            _capture.reset(token)

    async def acall(
        self,
        client: Any,
        inner: Callable[..., Any],
        cast_to: Any,
        options: Any,
        stream: bool = False,
        stream_cls: Any = None,
    ) -> Any:
        """`call` for async clients."""
        wire = wire_for(self.wires, options)
        if wire is None:
            return await inner(cast_to, options, stream=stream, stream_cls=stream_cls)
        engine = self.async_engine or self.engine(True)
        capture = _capture.get()
        ex = Exchange(client, wire, capture)
        args = (cast_to, options, ex)
        kwargs = {"stream": stream, "stream_cls": stream_cls}
        if not capture:
            result = await engine.acall(inner, None, args, kwargs)
        else:
            token = _capture.set(None)
            try:
                result = await engine.acall(inner, None, args, kwargs)
            finally:
                _capture.reset(token)
        # the async SDK parses in a coroutine, awaited here, outside the hooks
        return await result if inspect.isawaitable(result) else result


# hooked copy -> its layers, so that wrapping one of its resources again adds a layer
_LAYERS: weakref.WeakKeyDictionary[Any, tuple[Layer, ...]] = weakref.WeakKeyDictionary()


def chains_of(member: Any) -> list[Chain]:
    """The layers a resource (`wrapped.chat.completions`, say) or method runs through
    because its client is a hooked copy, outermost first."""
    wrapped = getattr(member, "__wrapped__", None)
    if not inspect.ismethod(member) and inspect.ismethod(wrapped):
        member = wrapped  # `resource.with_raw_response.create`, say: a function around it
    owner = member.__self__ if inspect.ismethod(member) else member
    try:
        kept = _LAYERS.get(getattr(owner, "_client", owner), ())
    except TypeError:  # not weakly referable: no client of an SDK
        return []
    return [layer.chain for layer in reversed(kept)]


def hook_client(client: Any, layers: Sequence[Layer]) -> Any:
    """Put `layers` (innermost first) on `client`, a copy hookwrap owns."""
    _LAYERS[client] = tuple(layers)
    cls: Any = client.__class__
    is_async = inspect.iscoroutinefunction(cls.request)

    @functools.wraps(cls.request)  # the SDK's method as far as a look at it tells
    def request(self: Any, *args: Any, **kwargs: Any) -> Any:
        # the class's own, read per call: patched (`hw.patch`) or not, as it is then
        return cls.request(self, *args, **kwargs)

    hooked: Any = types.MethodType(request, client)
    for layer in layers:
        if not layer.hooked_wires:  # nothing to go through, now or once a patch lends hooks back
            continue
        layer.engine(is_async)  # refuse hooks this client cannot run now, not at the first call
        hooked = functools.partial(layer.acall if is_async else layer.call, client, hooked)
    if hooked.__class__ is functools.partial:  # looks like the SDK's method too
        outer = hooked

        @functools.wraps(cls.request)
        def entry(self: Any, *args: Any, **kwargs: Any) -> Any:
            return outer(*args, **kwargs)

        @functools.wraps(cls.request)
        async def aentry(self: Any, *args: Any, **kwargs: Any) -> Any:
            return await outer(*args, **kwargs)

        hooked = types.MethodType(aentry if is_async else entry, client)
    client.request = hooked
    original = _unhooked(cls._process_response)  # (the SDK's, if patched)
    if getattr(client, "_middleware", None):  # anthropic 2.x: see `process_hooked`
        client._process_response = original.__get__(client)
        finalize = _unhooked(cls._finalize_middleware_result)
        client._finalize_middleware_result = finalize_hooked(finalize).__get__(client)
    else:
        client._process_response = process_hooked(original).__get__(client)
    return client


class ClientProxy(ObjectProxy):
    """What `hw.wrap(client)` returns: the client (a hooked copy of it), `isinstance` and
    every attribute intact; `copy()`, `with_options()` and `with_middleware()` keep the
    hooks."""

    def __init__(self, hooked: Any, layers: Sequence[Layer]) -> None:
        super().__init__(hooked)
        self._self_layers = tuple(layers)
        self._self_chain = layers[-1].chain

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        fresh = self.__wrapped__.copy(*args, **kwargs)
        return _proxy(hook_client(fresh, self._self_layers), self._self_layers)

    with_options = copy

    # `copy.copy(client)`, `copy.deepcopy(client)`: a copy of the client, with the hooks
    def __copy__(self) -> Any:
        twin = _twin(self.__wrapped__)
        return _proxy(hook_client(twin, self._self_layers), self._self_layers)

    def __deepcopy__(self, memo: Any) -> Any:
        twin = copy.deepcopy(self.__wrapped__, memo)
        return _proxy(hook_client(twin, self._self_layers), self._self_layers)

    # `with hw.wrap(OpenAI()) as client:` hands out the proxy (its `copy()` keeps the hooks)
    def __enter__(self) -> Any:
        self.__wrapped__.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        return self.__wrapped__.__exit__(*exc_info)

    async def __aenter__(self) -> Any:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self.__wrapped__.__aexit__(*exc_info)

    def __repr__(self) -> str:
        return f"<hookwrap client {self.__wrapped__!r}>"


def _forward(name: str) -> property:
    get = operator.attrgetter(f"__wrapped__.{name}")  # read in C, with no Python frame

    def set_(self: Any, value: Any) -> None:
        setattr(self.__wrapped__, name, value)

    def delete(self: Any) -> None:
        delattr(self.__wrapped__, name)

    return property(get, set_, delete)


def _with_middleware(self: ClientProxy, *middleware: Any) -> Any:
    """`client.with_middleware(...)` of a wrapped client: a copy with the same hooks."""
    fresh = self.__wrapped__.with_middleware(*middleware)
    layers = self._self_layers  # pyright: ignore[reportPrivateUsage]
    return _proxy(hook_client(fresh, layers), layers)


# client class -> its ClientProxy class
_PROXIES: dict[type, type[ClientProxy]] = {}


def _proxy(hooked: Any, layers: Sequence[Layer]) -> ClientProxy:
    """A `ClientProxy` of `hooked`, of a subclass that names the client class's public
    attributes (`chat`, `messages`, ...): a proxy answers the others by failing a lookup of
    its own first, which costs more than the rest of reaching `client.chat.completions`."""
    cls: type = hooked.__class__
    proxy_cls = _PROXIES.get(cls)
    if proxy_cls is None:
        names = [n for n in dir(cls) if not n.startswith("_") and not hasattr(ClientProxy, n)]
        own: dict[str, Any] = {name: _forward(name) for name in names}
        if "with_middleware" in own:  # anthropic 2.x: a copy of the client, which keeps the hooks
            own["with_middleware"] = _with_middleware
        proxy_cls = _PROXIES[cls] = type(f"ClientProxy[{cls.__name__}]", (ClientProxy,), own)
    return proxy_cls(hooked, layers)


def _twin(client: Any) -> Any:
    """A shallow copy of `client` as it is now, for the hooks to go on, the original left
    alone: every attribute kept, those a subclass's `__init__` or the caller set included.
    Not `client.copy()`, which builds a new client from the SDK's own arguments only (and
    calls the class with them, which a subclass may not accept).

    What the SDK caches on a client is bound to it, so it is built again for the copy, or
    calls through it would reach the original, without hooks: its resources (`chat`,
    `messages`, `with_raw_response`, ...: `cached_property`s, or attributes its `__init__`
    set) and anthropic's middleware chain.
    """
    twin = copy.copy(client)
    cls: type = client.__class__
    names: list[str] = list(twin.__dict__)
    for name in names:
        value = twin.__dict__[name]
        if isinstance(inspect.getattr_static(cls, name, None), functools.cached_property):
            del twin.__dict__[name]
        elif getattr(value, "_client", None) is client:  # a resource `__init__` made
            twin.__dict__[name] = type(value)(twin)  # (`AnthropicVertex`, `AnthropicBedrock`)
    if getattr(twin, "_middleware_chain", None) is not None:  # anthropic 2.x
        twin._middleware_chain = twin._build_middleware_chain()
    return twin


def wrap_client(client: Any, chain: Chain, wires: Sequence[Wire], what: str) -> ClientProxy:
    """`hw.wrap` of an OpenAI or Anthropic client; of a wrapped one, a layer outside."""
    layers: tuple[Layer, ...] = ()
    if isinstance(client, ClientProxy):
        layers = client._self_layers  # pyright: ignore[reportPrivateUsage]
        client = client.__wrapped__
    elif client in _LAYERS:  # the hooked copy behind a wrapped resource or method
        layers = _LAYERS[client]
    layers = (*layers, Layer(chain, wires, what))
    hooked = hook_client(_twin(client), layers)
    lend(layers[-1], client)  # (after `hook_client` has refused any hook the client cannot run)
    return _proxy(hooked, layers)


def hook_resource(resource: Any, chain: Chain, wires: Sequence[Wire], what: str) -> Any:
    """A twin of an SDK resource (`client.chat.completions`, `client.messages`, ...) bound to
    a hooked copy of its client: its methods, helpers included, go through `chain`."""
    client = wrap_client(resource._client, chain, wires, what)
    return type(resource)(client.__wrapped__)


# -- hw.patch -------------------------------------------------------------------------------

# what `patch_classes` replaces; `_finalize_middleware_result` only in releases with middleware
_PATCHED = ("request", "_process_response", "_finalize_middleware_result")


class _InFlight:
    """The calls of a patched SDK under way. Each needs the patched `_process_response` to
    hand hookwrap its HTTP response, so `hw.unpatch` puts the SDK's back once none is."""

    __slots__ = ("count", "lock", "then")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.then: list[Callable[[], None]] = []

    def enter(self) -> None:
        with self.lock:
            self.count += 1

    def leave(self) -> None:
        with self.lock:
            self.count -= 1
            todo, self.then = (self.then, []) if self.count == 0 else ([], self.then)
        for fn in todo:
            fn()

    def after(self, fn: Callable[[], None]) -> None:
        """Run `fn` now, or when the last call under way ends."""
        with self.lock:
            if self.count:
                self.then.append(fn)
                return
        fn()


_FLIGHTS: dict[type, _InFlight] = {}


def patch_classes(sync_cls: type, async_cls: type, layer: Layer) -> None:
    """Hook every client of an SDK, made before or after: its base classes' `request`."""
    for cls in (sync_cls, async_cls):
        if "__hookwrap_saved__" in cls.__dict__:
            raise AssertionError(f"{cls.__qualname__} is patched already")
    layer.engine(True)  # refuse, now, hooks that cannot run
    sync_original = sync_cls.__dict__["request"]
    async_original = async_cls.__dict__["request"]
    # one count per SDK, over its patches: an unpatch waits for every call under way
    flight = _FLIGHTS.setdefault(sync_cls, _InFlight())
    chain = layer.chain

    def request(
        self: Any, cast_to: Any, options: Any, *, stream: bool = False, stream_cls: Any = None
    ) -> Any:
        inner = sync_original.__get__(self)
        flight.enter()
        try:
            # unpatched since looked up, or asked by a `Fallback` of this very stack
            if sync_cls.__dict__.get("request") is not request or chain in passing.get():
                return inner(cast_to, options, stream=stream, stream_cls=stream_cls)
            return layer.call(self, inner, cast_to, options, stream, stream_cls)
        finally:
            flight.leave()

    async def arequest(
        self: Any, cast_to: Any, options: Any, *, stream: bool = False, stream_cls: Any = None
    ) -> Any:
        inner = async_original.__get__(self)
        flight.enter()
        try:
            if async_cls.__dict__.get("request") is not arequest or chain in passing.get():
                return await inner(cast_to, options, stream=stream, stream_cls=stream_cls)
            return await layer.acall(self, inner, cast_to, options, stream, stream_cls)
        finally:
            flight.leave()

    hooks: tuple[tuple[type, Any], ...] = ((sync_cls, request), (async_cls, arequest))
    for cls, hooked in hooks:
        # the SDK's own, also while an unpatch waits for calls under way to put it back
        saved = {name: _unhooked(cls.__dict__[name]) for name in _PATCHED if name in cls.__dict__}
        setattr(hooked, "__wrapped__", saved["request"])  # noqa: B010
        cls.request = hooked  # type: ignore[attr-defined]
        finalize = saved.get("_finalize_middleware_result")
        process = process_hooked(saved["_process_response"], chained=finalize is not None)
        cls._process_response = process  # type: ignore[attr-defined]
        if finalize is not None:
            cls._finalize_middleware_result = finalize_hooked(finalize)  # type: ignore[attr-defined]
        cls.__hookwrap_saved__ = (saved, flight)  # type: ignore[attr-defined]


def _unhooked(value: Any) -> Any:
    return getattr(value, "__hookwrap_original__", value)


def unpatch_classes(*classes: type) -> None:
    """Put back exactly what `patch_classes` replaced: `request` at once, so no call starts
    through the hooks; `_process_response` when the calls under way have ended."""
    for cls in classes:
        found = cls.__dict__.get("__hookwrap_saved__")
        if found is None:
            continue
        saved, flight = found
        cls.request = saved["request"]  # type: ignore[attr-defined]
        del cls.__hookwrap_saved__  # type: ignore[attr-defined]
        patched = {name: cls.__dict__[name] for name in saved if name != "request"}
        flight.after(functools.partial(_put_back, cls, patched, saved))


def _put_back(cls: type, patched: dict[str, Any], saved: dict[str, Any]) -> None:
    """The SDK's `_process_response` (and `_finalize_middleware_result`), unless a new
    patch has put its own in meanwhile."""
    for name, hooked in patched.items():
        if cls.__dict__.get(name) is hooked:
            setattr(cls, name, saved[name])
