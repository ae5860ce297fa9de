"""What the engine asks of an adapter: neutral views of a native call, and the way back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, ClassVar

from ._types import Chunk, ModelRequest, ModelResponse

__all__ = ["Adapter", "Call", "Natives", "is_stream", "lost_call", "same_shape"]

# a stream's native items (an iterator, or an async one) and the chunk each stands for
Natives = tuple[Any, Callable[[Any], list[Chunk]]]


class Call:
    """One native call as it arrived: the bound target, its arguments, and the views of it.

    Kept in `ModelRequest.raw`, so that an unchanged request is passed on untouched.
    """

    __slots__ = (
        "answered",
        "args",
        "extra",
        "fn",
        "form",
        "kwargs",
        "made",
        "request",
        "response",
        "result",
        "seen",
    )

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.request: ModelRequest | None = None  # the view built from args
        self.response: ModelResponse | None = None  # the view built from result
        self.result: Any = None  # the native result
        self.extra: Any = None  # the streams the model opened, to close at once when asked
        self.form: Any = None  # the adapter's note of the form a stream's items came in
        self.seen: Any = None  # the chunk the adapter made last, in a stream
        self.made: Any = None  # (chunks, native): the last stream made, while unpulled
        self.answered: str | None = None  # the model a whole answer streamed in its place names

    def __deepcopy__(self, memo: dict[int, Any]) -> Call:
        """A copy of a view stands for the same call: the record is not a value to copy
        (it holds the SDK's client, its locks and sockets)."""
        return self

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        """A pickled view keeps its values, not the live call: its `raw` reads back as None."""
        return _no_call, ()

    def let_go(self, stream: Any) -> None:
        """`stream`, closed by the one reading it (an adapter's stream closes the model's
        when it ends): not one to close again."""
        if self.extra is not None:
            self.extra = [s for s in self.extra if s is not stream]

    def release(self) -> None:
        """Let go of the views and streams once the call is over. `request.raw` points back
        here, so keeping them would leave a cycle (views, native answer, HTTP response)
        for the garbage collector, which is slow to find in a large heap."""
        self.request = self.response = self.result = self.extra = self.seen = self.made = None


def _no_call() -> None:
    return None


_NOT_STREAMY = (str, bytes, bytearray, dict)
# class -> whether its values are streams, learned as they come (a class's answer can be
# slow: a pydantic model class looks a missing attribute up in Python, then raises)
_STREAMY: dict[type, bool] = {str: False, dict: False}
_LEARNED = 512  # classes remembered at most (proxies and test doubles make classes anew)


def lost_call() -> TypeError:
    """The error for a request a hook built anew (not with `replace`): it has no `raw` call
    record, so the adapter has nothing to call."""
    return TypeError(
        "the ModelRequest has lost its `raw` call record; build new requests with "
        "request.replace(...) so hookwrap can still call the model"
    )


def is_stream(value: object) -> bool:
    """An iterator (sync or async) that is not a str, bytes or dict."""
    cls = value.__class__
    if cls is str:  # the usual answer of a plain function, at once
        return False
    found = _STREAMY.get(cls)
    if found is None:
        found = not isinstance(value, _NOT_STREAMY) and (
            hasattr(cls, "__next__") or hasattr(cls, "__anext__")
        )
        if len(_STREAMY) < _LEARNED:
            _STREAMY[cls] = found
    return found


class Adapter:
    """Maps one kind of model call to the neutral types and writes changes back.

    Subclasses implement the conversions; the engine calls them once per call.
    """

    __slots__ = ()

    # whether `chunks`/`achunks` note each chunk they yield as `call.seen` themselves (else
    # the engine notes them, one generator more, when a wrap hook may rebuild chunks)
    notes_chunks: ClassVar[bool] = False

    def hands_over(self) -> bool:
        """Whether the hooks the target itself runs (a wrapped model's, those of an SDK's
        request path) are part of this call: they then share its `call_id` and
        `call_state`. An SDK's request path runs only the hooks of its client's layers and
        of a patch."""
        return True

    def request(self, call: Call) -> ModelRequest:
        """The neutral view of a call; must set `raw=call` and `call.request`."""
        raise NotImplementedError

    def invoke(self, request: ModelRequest) -> Any:
        """Call the target for `request` (written back into native arguments)."""
        raise NotImplementedError

    def response(self, native: Any, call: Call | None) -> ModelResponse:
        """The neutral view of a native result (sets `call.response`)."""
        raise NotImplementedError

    def passthrough(self, native: Any, call: Call) -> Any:
        """The caller's form of a native answer no hook sees (no view of it was made)."""
        return native

    def waits_whole(self, call: Call) -> bool:
        """Whether the caller of `call` waits for a whole answer, whatever the hooks do, so
        a stream a wrap hook answers is no answer to it. An SDK call says so by its own
        `stream` argument (its native result types differ)."""
        asked = call.request
        return asked is not None and not asked.stream

    def chunks(self, native: Any, call: Call | None) -> Iterator[Chunk]:
        """Neutral chunks of a native sync stream, closing it when closed."""
        raise NotImplementedError

    def achunks(self, native: Any, call: Call | None) -> AsyncIterator[Chunk]:
        raise NotImplementedError

    def natives(self, chunks: Any, call: Call, is_async: bool) -> Natives | None:
        """For a stream no hook looks at chunk by chunk: `items` of its native stream, to
        read in place of `chunks`, if those are the chunks made last for `call` (the
        engine notes them as `call.made`) and nothing pulled them yet (`chunks` and
        `achunks` clear `call.made` when first pulled). None: chunks are read."""
        made = call.made
        if made is None or made[0] is not chunks:
            return None
        call.made = None
        return self.items(made[1], call, is_async)

    def items(self, native: Any, call: Call, is_async: bool) -> Natives | None:
        """The items of the native stream `native` to hand on as they come (a `Chunk`
        among them goes the way of chunks), and what makes the chunks of one (for a
        response view, made only if someone looks at it). None: the adapter offers none."""
        return None

    def native(self, response: ModelResponse, call: Call | None) -> Any:
        """The caller's form of a (possibly changed) response."""
        raise NotImplementedError

    def dropped(self, chunk: Chunk, call: Call | None) -> None:
        """A hook dropped `chunk` (`hw.DROP`, or an expansion to nothing): the caller never
        gets it."""

    def native_chunk(self, chunk: Chunk, call: Call | None) -> Any:
        """The caller's form of a (possibly changed or new) chunk; `DROP` if it has none."""
        raise NotImplementedError

    def coerce(self, value: Any, call: Call | None) -> ModelResponse:
        """A `ModelResponse` from what a hook returned or `Respond`ed with."""
        raise NotImplementedError

    def respond_chunks(self, response: ModelResponse, request: ModelRequest) -> list[Chunk]:
        """The chunks standing for a whole answer (a `Respond`, a wrap hook's) in a streamed
        call: its text, each tool call whole, its usage and finish reason."""
        chunks = [Chunk("text", response.text)] if response.text else []
        for call in response.message.tool_calls:
            arguments = json.dumps(dict(call.arguments))
            chunks.append(Chunk("tool_call_start", arguments, call.id, call.name))
        if response.usage is not None:
            chunks.append(Chunk("usage", usage=response.usage))
        if response.finish_reason is not None:
            chunks.append(Chunk("finish", finish_reason=response.finish_reason))
        return chunks

    def stream_result(self, stream: Any, call: Call | None) -> Any:
        """What the caller gets for a stream (`stream` is hookwrap's native iterator)."""
        return stream


def same_shape(stream: bool, asked: ModelRequest | None) -> None:
    """Refuse a request whose `stream` a hook changed from that of the call, `asked`.

    Whether a call streams decides the native type its caller gets (a stream or a whole
    response), which is the caller's: a changed flag could be honoured only by handing back
    another type, so it is refused rather than ignored.
    """
    if asked is None or stream == asked.stream:
        return
    does = "streams" if asked.stream else "does not stream"
    raise TypeError(
        f"a hook set request.stream={stream}, but this call {does}; the call's "
        "shape is the caller's (it decides the native type the caller gets), so a hook "
        f"cannot change it: leave `stream` as it came ({asked.stream})"
    )
