"""The plain-function adapter: a `messages` or `prompt` argument; a str, dict or Message result.

A function taking a `ModelRequest` (its one parameter annotated so, or named `request`) is
called with the request itself and may return a `ModelResponse`, `Message` or `str`.
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import typing
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, cast

from .._adapter import Adapter, Call, Natives, is_stream, lost_call, same_shape
from .._convert import (
    answer_from,
    chunk_from_dict,
    chunk_to_dict,
    message_from,
    message_to_dict,
    part_from,
    tool_call_from,
)
from .._hooks import describe
from .._types import (
    DROP,
    Chunk,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    TextPart,
    ToolCall,
    deferred_request,
    deferred_response,
    new_chunk,
    new_message,
    new_request,
    new_response,
)

__all__ = ["FunctionAdapter", "takes_model"]

Form = Literal["messages", "prompt", "request"]
_RESERVED = ("model", "stream")
_MESSAGE_KEYS = frozenset(("role", "content", "tool_calls", "tool_call_id", "name"))
Kind = Literal["str", "dict", "Message", "Chunk", "ModelResponse"]
_T = TypeVar("_T")
_STREAMS = (Iterator, Iterable, Generator, AsyncIterator, AsyncIterable, AsyncGenerator)
# read from an annotation that cannot be resolved: the first of these names in it decides
_NAMES = re.compile(r"\b(str|Chunk|Message|ModelResponse|dict|Dict|Mapping|MutableMapping)\b")
_KINDS: dict[str, Kind] = {  # or dict
    "str": "str",
    "Chunk": "Chunk",
    "Message": "Message",
    "ModelResponse": "ModelResponse",
}
_ASYNC_STREAM = re.compile(r"\bAsync(?:Iterator|Iterable|Generator)\b")
_STREAM_NAME = re.compile(r"(?:[\w.]*\.)?(?:Async)?(?:Iterator|Iterable|Generator)\b")


def _names_whole(fn: Callable[..., Any]) -> bool:
    """Whether `fn`'s return annotation names one whole answer and nothing else: a `str`, a
    mapping, a `Message` or a `ModelResponse` (`Optional`, `Annotated` looked through), not a
    stream, a union of several or something that cannot be resolved."""
    try:
        ret: Any = inspect.signature(fn, eval_str=True).return_annotation
    except Exception:  # a name that cannot be resolved
        return False
    while True:
        origin = typing.get_origin(ret)
        args = typing.get_args(ret)
        if origin is Annotated:
            ret = args[0]
        elif origin is Union or origin is UnionType:
            rest = [a for a in args if a is not type(None)]
            if len(rest) != 1:
                return False
            ret = rest[0]
        else:
            break
    form = typing.get_origin(ret) or ret
    return isinstance(form, type) and issubclass(form, (str, Mapping, Message, ModelResponse))


def _return_annotation(fn: Callable[..., Any]) -> tuple[Kind, bool]:
    """The form of `fn`'s answer that its return annotation names, and whether it names a
    stream of them (an iterator, iterable or generator, sync or async): a `Respond`ed
    answer, and a chunk a hook makes, go back to the caller in that form.

    The resolved type decides: `Message` or `Chunk` (or a subclass), a mapping (`dict`,
    `Mapping`, a TypedDict) is "dict", anything else "str". `Annotated` is looked through,
    and so is a union: `None` is left out and the first other member decides (`dict | str`
    answers as a dict). An annotation that cannot be resolved is read as text, by whole
    names only (a `ChatMessage` is no `Message`, a `Verdict` no `dict`)."""
    try:
        ret: Any = inspect.signature(fn, eval_str=True).return_annotation
    except Exception:  # a name that cannot be resolved
        ret = inspect.signature(fn).return_annotation
    streams = False
    while True:
        if isinstance(ret, (str, typing.ForwardRef)):
            text = ret if isinstance(ret, str) else ret.__forward_arg__
            found = _NAMES.search(text)
            kind = _KINDS.get(found[1], "dict") if found else "str"
            return kind, streams or _STREAM_NAME.match(text.strip()) is not None
        origin = typing.get_origin(ret)
        args = typing.get_args(ret)
        if origin is Annotated:
            ret = args[0]
        elif origin is Union or origin is UnionType:
            ret = next(a for a in args if a is not type(None))
        elif (origin or ret) in _STREAMS and not streams:
            streams = True
            ret = args[0] if args else None
        else:
            break
    form = origin if isinstance(origin, type) else ret
    if not isinstance(form, type):
        return "str", streams
    if issubclass(form, Message):
        return "Message", streams
    if issubclass(form, Chunk):
        return "Chunk", streams
    if issubclass(form, ModelResponse):  # a stream of them is none: its chunks are text
        return ("str" if streams else "ModelResponse"), streams
    if issubclass(form, Mapping):  # dict, Mapping, any TypedDict (a dict subclass)
        return "dict", streams
    return "str", streams


class FunctionAdapter(Adapter):
    """Adapter for a plain callable; everything about its signature is read once."""

    __slots__ = (
        "accepts",
        "bound",
        "default",
        "fn",
        "form",
        "index",
        "iterables",
        "model_by_position",
        "model_index",
        "name",
        "other",
        "positional",
        "reader",
        "returns",
        "streams",
        "var_kw",
        "whole",
        "whole_named",
    )

    def __init__(self, fn: Callable[..., Any], argument: str | None = None) -> None:
        self.fn = fn
        self.other: FunctionAdapter | None = None  # for a function taking messages and prompt
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"hw.model: cannot read the signature of {fn!r}") from exc
        params = list(sig.parameters.values())
        self.returns, annotated = _return_annotation(fn)
        # a generator function streams, and so does an object whose `__call__` is one, or a
        # function whose return annotation says it streams (`-> Iterator[str]`)
        generates = any(
            inspect.isgeneratorfunction(f) or inspect.isasyncgenfunction(f)
            for f in (fn, type(fn).__call__ if callable(fn) else None)
        )
        self.streams = annotated or generates
        self.whole_named = not generates and _names_whole(fn)
        # `-> Iterable[str]` may return a list: its items are the stream (a sync one: an
        # `AsyncIterable` must be an async iterator, which a list is not)
        self.iterables = (
            annotated
            and not generates
            and not inspect.iscoroutinefunction(fn)
            and _ASYNC_STREAM.search(str(sig.return_annotation)) is None
        )
        self.accepts = frozenset(p.name for p in params)
        # what a `functools.partial` passes by keyword is given as much as what the caller
        # passes: hooks see it (the model, options) and may change it
        partial = isinstance(fn, functools.partial)
        self.bound: dict[str, Any] = dict(cast(Any, fn).keywords) if partial else {}
        self.var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
        self.form: Form
        names = ("messages", "prompt") if argument is None else (argument,)
        found = next((p for p in params if p.name in names), None)
        if found is None:
            req = [p for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
            if len(req) == 1 and (
                req[0].name == "request" or _is_request_annotation(fn, req[0].name)
            ):
                found = req[0]
                self.form = "request"
            else:
                shown = ", ".join(str(p) for p in params) or "no parameters"
                raise TypeError(
                    f"hw.model: {describe(fn)} takes ({shown}); expected a parameter named "
                    "`messages` (a list of chat dicts or Messages) or `prompt` (a str), or a "
                    "single parameter `request: ModelRequest`"
                )
        else:
            self.form = found.name  # type: ignore[assignment]
        # the form of a whole answer the function did not give itself (a `Respond`, a
        # `Fallback`'s): for the agent's kind of model function, with no annotation, the
        # response itself, its tool calls and usage kept
        unannotated = self.form == "request" and sig.return_annotation is sig.empty
        unannotated = unannotated and not self.streams  # (a generator's answer streams)
        self.whole: Kind = "ModelResponse" if unannotated else self.returns
        self.name = found.name
        positional = (found.POSITIONAL_ONLY, found.POSITIONAL_OR_KEYWORD)
        self.index = params.index(found) if found.kind in positional else 1 << 30
        self.default = found.default
        model = next((p for p in params if p.name == "model"), None)
        at = params.index(model) if model is not None and model.kind in positional else None
        self.model_index = 1 << 30 if at is None else at
        self.model_by_position = model is not None and model.kind is model.POSITIONAL_ONLY
        # the parameters an argument given by position binds to, with their defaults
        self.positional = tuple((p.name, p.default) for p in params if p.kind in positional)
        if argument is None and self.form != "request":
            second = "prompt" if self.form == "messages" else "messages"
            if second in self.accepts:  # each call uses the one it was given
                self.other = FunctionAdapter(fn, second)
        self.reader = self._read  # bound once: a view built per call keeps it

    # -- request ------------------------------------------------------------------------

    def _argument(self, call: Call) -> Any:
        args = call.args
        if len(args) > self.index:
            return args[self.index]
        value = call.kwargs.get(self.name, self.default)
        if value is inspect.Parameter.empty:
            raise TypeError(f"{describe(self.fn)} was called without its `{self.name}` argument")
        return value

    def _given(self, call: Call) -> FunctionAdapter:
        """The adapter for this call's form: `other` when only its argument was given."""
        other = self.other
        if other is not None:
            args = call.args
            mine = args[self.index] if len(args) > self.index else call.kwargs.get(self.name)
            if mine is None:
                return other
        return self

    def _by_position(self, args: tuple[Any, ...]) -> dict[str, Any]:
        """The arguments given by position other than the messages (or prompt), by name (a
        method's `self` left out)."""
        named = zip(self.positional, args, strict=False)
        return {
            name: arg
            for i, ((name, _), arg) in enumerate(named)
            if i != self.index and not (i == 0 and name in ("self", "cls"))
        }

    def _model(self, call: Call, kwargs: Mapping[str, Any]) -> Any:
        args = call.args
        if len(args) > self.model_index:
            return args[self.model_index]
        return kwargs.get("model")

    def request(self, call: Call) -> ModelRequest:
        if self.other is not None and (given := self._given(call)) is not self:
            return given.request(call)
        args = call.args
        value = args[self.index] if len(args) > self.index else self._argument(call)
        if self.form == "request":
            if not isinstance(value, ModelRequest):
                raise TypeError(
                    f"{describe(self.fn)} takes a ModelRequest (got {type(value).__name__})"
                )
            # a function that streams is asked for a stream, as `request.stream` says
            request = value.replace(raw=call, stream=value.stream or self.streams)
        else:
            if self.form == "prompt":
                if not isinstance(value, str):
                    raise TypeError(
                        f"{describe(self.fn)}: `prompt` must be a str (got {type(value).__name__})"
                    )
            elif isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"{describe(self.fn)}: `messages` must be a list of chat dicts or "
                    f"Messages (got {type(value).__name__})"
                )
            else:
                value = tuple(cast("list[Any]", value))  # as called, whatever the target appends
            # messages and options are read when a hook first looks at them
            kwargs = {**self.bound, **call.kwargs} if self.bound else call.kwargs
            if len(args) > 1:  # options given by position are options too
                kwargs = {**self._by_position(args), **kwargs}
            if kwargs or len(args) > self.model_index:
                model = self._model(call, kwargs)
                request = deferred_request(
                    model if isinstance(model, str) else None,
                    bool(kwargs.get("stream", self.streams)),
                    call,
                    self.reader,
                    (value, kwargs),
                )
            else:
                request = deferred_request(None, self.streams, call, self.reader, (value, None))
        call.request = request
        return request

    def _read(self, given: tuple[Any, dict[str, Any] | None]) -> ModelRequest:
        """The messages and options of a call, from its argument (`value`) and keywords."""
        value, kwargs = given
        if self.form == "prompt":
            messages: tuple[Message, ...] = (new_message("user", value),)
        else:
            messages = tuple(message_from(m, unmodelled=True) for m in value)
        options = (
            {k: v for k, v in kwargs.items() if k != self.name and k not in _RESERVED}
            if kwargs
            else {}
        )
        made: ModelRequest = new_request(messages, (), None, options, False, None)
        return made

    def invoke(self, request: ModelRequest) -> Any:
        call = request.raw
        if not isinstance(call, Call):
            raise lost_call()
        if request is call.request:
            kwargs = call.kwargs
            made = call.fn(*call.args, **kwargs) if kwargs else call.fn(*call.args)
        else:
            args, kwargs = self._given(call)._write_back(request, call)
            made = call.fn(*args, **kwargs)
        return _iterated(made) if self.iterables else made

    def _write_back(
        self, request: ModelRequest, call: Call
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        original = call.request
        if original is None:  # let go of when the call ended (see `Call.release`)
            raise RuntimeError(
                f"a hook called the model of {describe(self.fn)} for a call that is over "
                "(its caller has its answer or error already, as when a sync Timeout gave up "
                "on it): call_next can call the model only while the call lasts"
            )
        kwargs = dict(call.kwargs)
        args = call.args
        if self.form == "request":
            value: Any = request
        elif request.messages == original.messages:
            value = self._argument(call)
        elif self.form == "prompt":
            value = "\n\n".join(m.text for m in request.messages)
        else:
            value = self._messages_back(request.messages, call)
        if len(args) > self.index:
            args = (*args[: self.index], value, *args[self.index + 1 :])
        else:
            kwargs[self.name] = value
        if self.form != "request":  # (a function taking the request reads `stream` itself)
            same_shape(request.stream, original)
            if request.model is None and original.model is not None:
                args = self._model_removed(args, kwargs)
            elif request.model != original.model:
                if not ("model" in self.accepts or self.var_kw):
                    raise TypeError(
                        f"a hook set the model to {request.model!r}, which {describe(self.fn)} "
                        "cannot take (no `model` parameter, no **kwargs)"
                    )
                at = self.model_index
                if len(args) > at:  # given positionally: stays there
                    args = (*args[:at], request.model, *args[at + 1 :])
                elif self.model_by_position:  # before a `/`: the places before it defaulted
                    filler = (default for _, default in self.positional[len(args) : at])
                    args = (*args, *filler, request.model)
                else:
                    kwargs["model"] = request.model
            if request.options != original.options:
                args = self._options_back(request.options, original.options, args, kwargs)
        return args, kwargs

    def _model_removed(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """The arguments without the model a hook unset (`request.model = None`), as without
        an option it removed: the function's default takes its place, not a `None`."""
        param = inspect.signature(self.fn).parameters.get("model")
        if param is not None and param.default is param.empty:
            raise TypeError(
                f"a hook removed the model, which {describe(self.fn)} takes with no default; "
                "give it another model instead"
            )
        at = self.model_index
        if len(args) > at:
            return (*args[:at], self.positional[at][1], *args[at + 1 :])
        if "model" in self.bound:
            raise TypeError(
                f"a hook removed the model, which {describe(self.fn)} binds (a "
                "functools.partial passes it whatever the call says); give it another one"
            )
        kwargs.pop("model", None)
        return args

    def _options_back(
        self,
        options: Mapping[str, Any],
        original: Mapping[str, Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> tuple[Any, ...]:
        """The arguments with the options a hook changed: one given by position stays in
        its place (a removed one takes its default), and one the function takes only by
        position goes there (the places before it given their defaults); the others go by
        keyword. One given both ways is the keyword, as it is read (a `**kwargs` item)."""
        at = {name: i for i, (name, _) in enumerate(self.positional) if i < len(args)}
        given = list(args)
        for key in original:
            if key in options:
                continue
            if key in at and key not in kwargs:
                default = self.positional[at[key]][1]
                if default is inspect.Parameter.empty:
                    raise TypeError(
                        f"a hook removed option {key!r}, which {describe(self.fn)} takes by "
                        "position with no default"
                    )
                given[at[key]] = default
            elif key in self.bound:
                raise TypeError(
                    f"a hook removed option {key!r}, which {describe(self.fn)} binds (a "
                    "functools.partial passes it whatever the call says); give it another "
                    "value instead"
                )
            else:
                kwargs.pop(key, None)
        only = {  # the parameters before a `/`: Python refuses them by keyword
            p.name: i
            for i, p in enumerate(inspect.signature(self.fn).parameters.values())
            if p.kind is p.POSITIONAL_ONLY
        }
        for key, item in options.items():
            i = None if key in kwargs else at.get(key, only.get(key))
            if i is not None:
                given.extend(default for _, default in self.positional[len(given) : i + 1])
                given[i] = item
            elif key in self.accepts or self.var_kw:
                kwargs[key] = item
            else:
                raise TypeError(
                    f"a hook set option {key!r}, which {describe(self.fn)} does not take"
                )
        return tuple(given)

    def _messages_back(self, messages: tuple[Message, ...], call: Call) -> list[Any]:
        """The messages in the caller's form: each unchanged one the caller's own item, a
        changed one written over the dict it stands for (see `_message_over`), one a hook
        added a new dict (or the `Message`, in a list of `Message`s)."""
        given = list(self._argument(call))
        original = call.request.messages if call.request is not None else ()
        as_dicts = any(isinstance(m, Mapping) for m in given) or not given
        out: list[Any] = []
        for m, i in zip(messages, _pairs(original, messages, _role), strict=True):
            item: Any = given[i] if i is not None else None  # `original` was read from it
            if i is not None and original[i] == m:
                out.append(item)
            elif i is not None and isinstance(item, Mapping):
                out.append(_message_over(m, original[i], cast("Mapping[str, Any]", item)))
            else:
                out.append(message_to_dict(m) if as_dicts else m)
        return out

    # -- response -----------------------------------------------------------------------

    def response(self, native: Any, call: Call | None) -> ModelResponse:
        if native.__class__ is str:  # the usual answer, read when a hook first looks at it
            response: ModelResponse = deferred_response(_text_response, native)
        else:
            response = self.coerce(native, call)
        if call is not None:
            call.result = native
            call.response = response
        return response

    def waits_whole(self, call: Call) -> bool:
        """A function's caller waits for a whole answer when the function answered this
        call whole (its answer decides the shape of the call), or, the function not asked
        yet, when its return annotation names a whole answer; unless the call asked for a
        stream or the function streamed."""
        if self.streams or call.extra is not None:  # it streams, or it did in this call
            return False
        asked = call.request
        if asked is not None and asked.stream:
            return False
        return self.whole_named or call.response is not None

    def passthrough(self, native: Any, call: Call) -> Any:
        if native.__class__ is not str:  # the usual answer needs no check
            self.coerce(native, call)  # what is no answer is refused, as when hooks see it
        return native

    def coerce(self, value: Any, call: Call | None) -> ModelResponse:
        made: ModelResponse
        if value.__class__ is str:  # the usual answer, first
            return _text_response(value)
        if isinstance(value, ModelResponse):
            return value
        if isinstance(value, str):
            return _text_response(value)
        if isinstance(value, Message):
            made = new_response(value, None, None, None, value)
            return made
        if isinstance(value, Mapping):
            item: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            if call is not None:  # the function's own answer, a record too: as it gave it
                if "role" not in item:
                    item = {"role": "assistant", **item}
                return ModelResponse(message_from(item), raw=value)
            # a hook's answer (a `Respond`, a wrap hook's): a dict of no message is no answer
            try:
                message = answer_from(item)
            except TypeError as exc:
                raise TypeError(f"{describe(self.fn)}: {exc}") from None
            return ModelResponse(message, raw=value)
        raise TypeError(
            f"{describe(self.fn)} returned {type(value).__name__}; a model function returns "
            "a str, a dict, a Message (or a ModelResponse), or an iterator of str/dicts "
            "when it streams"
        )

    def native(self, response: ModelResponse, call: Call | None) -> Any:
        if call is not None and response is call.response:
            return call.result
        if call is not None and call.response is None and self.form != "request":
            # the model never ran (a `Respond`) in a streamed call: a hook unset `stream`
            same_shape(False, call.request)
        kind = self.whole
        if call is not None and call.response is not None:  # the form the function answered in
            original = call.result
            if isinstance(original, ModelResponse):
                kind = "ModelResponse"
            elif isinstance(original, Mapping):
                kind = "dict"
            else:
                kind = "Message" if isinstance(original, Message) else "str"
        if kind == "ModelResponse":
            return response
        if kind == "Message":
            return response.message
        if kind == "dict":
            out: dict[str, Any] = message_to_dict(response.message)
            kept: Any = call.result if call is not None else None
            if isinstance(kept, Mapping):  # keys a message does not have stay as they were
                items: Mapping[str, Any] = kept  # pyright: ignore[reportUnknownVariableType]
                out = {**{k: v for k, v in items.items() if k not in _MESSAGE_KEYS}, **out}
            return out
        return response.text

    def respond_chunks(self, response: ModelResponse, request: ModelRequest) -> list[Chunk]:
        call = request.raw
        if self.form != "request" and isinstance(call, Call):
            same_shape(request.stream, call.request)
        return super().respond_chunks(response, request)

    # -- streams ------------------------------------------------------------------------

    def chunk(self, item: Any) -> Chunk:
        if isinstance(item, str):
            made: Chunk = new_chunk("text", item, item)
            return made
        if isinstance(item, Chunk):
            return item
        if isinstance(item, Mapping):
            return chunk_from_dict(item)  # pyright: ignore[reportUnknownArgumentType]
        raise TypeError(
            f"{describe(self.fn)} streamed a {type(item).__name__}; a streaming model "
            "function yields str or dict chunks"
        )

    def chunk_of(self, item: Any, call: Call | None) -> Chunk:
        """`item`'s chunk, noting on `call` the form of the stream's items when they are no
        `str`: a chunk a hook makes goes to the caller in that form (see `native_chunk`)."""
        if call is not None and call.form is None:
            call.form = "dict" if isinstance(item, Mapping) else "Chunk"
        return self.chunk(item)

    def chunks(self, native: Any, call: Call | None) -> Iterator[Chunk]:
        if call is not None:
            call.made = None  # pulled: no other reading of the stream now
        try:
            for item in native:
                if item.__class__ is str:  # the usual chunk, without a call
                    yield new_chunk("text", item, item)
                else:
                    yield self.chunk_of(item, call)
        finally:
            if call is not None:
                call.let_go(native)  # closed here, once
            close = getattr(native, "close", None)
            if close is not None:
                close()

    async def achunks(self, native: Any, call: Call | None) -> AsyncIterator[Chunk]:
        if call is not None:
            call.made = None
        try:
            async for item in native:
                yield (
                    new_chunk("text", item, item)
                    if item.__class__ is str
                    else self.chunk_of(item, call)
                )
        finally:
            if call is not None:
                call.let_go(native)
            aclose = getattr(native, "aclose", None)
            if aclose is not None:
                await aclose()

    def items(self, native: Any, call: Call, is_async: bool) -> Natives | None:
        def chunk(item: Any) -> Chunk:
            return self.chunk_of(item, call)

        return (_aitems if is_async else _items)(native, chunk, call), self._chunks

    def _chunks(self, item: Any) -> list[Chunk]:
        return [self.chunk(item)]

    def native_chunk(self, chunk: Chunk, call: Call | None) -> Any:
        """`chunk` in the form the stream's items came in: a new chunk (a hook's) in the
        form of the stream's other items, or of the return annotation before any came."""
        raw = chunk.raw
        if raw is None:
            form = call.form if call is not None and call.form is not None else self.returns
        else:
            form = "str" if isinstance(raw, str) else "dict" if isinstance(raw, Mapping) else ""
        if form == "str":
            # a str stream carries text; other kinds have no str form
            return chunk.text if chunk.kind == "text" else DROP
        if form == "dict":
            original: Any = chunk.raw
            if original is not None and chunk == chunk_from_dict(original):
                return original
            return chunk_to_dict(chunk, original)
        return chunk

    def respond_stream(self, response: ModelResponse) -> list[Any]:
        """Native chunks that stand for a `Respond`ed answer in a streamed call."""
        chunk = Chunk("text", response.text)
        if self.returns == "dict":
            return [chunk_to_dict(chunk)]
        if self.returns == "Chunk":
            return [chunk]
        return [response.text]

    def hands_over(self) -> bool:
        # only a target hookwrap wrapped with hooks (a call of its own is opened at once),
        # or through wrappers with none, which call their target at once: a model called
        # inside the function (a judge) makes a call of its own
        fn: Any = self.fn
        while (chain := getattr(fn, "_self_chain", None)) is not None:
            if chain.hooks:
                return True
            fn = getattr(fn, "__wrapped__", None)
        return False

    def is_stream(self, value: Any) -> bool:
        return is_stream(value)


def _iterated(made: Any) -> Any:
    """What a function annotated as streaming returned, as a stream: a list (any iterable
    but a str, bytes, dict or Message) is iterated; an iterator is one already."""
    kind = cast("type[object]", made.__class__)
    if is_stream(made) or issubclass(kind, (str, bytes, Mapping, Message)):
        return made
    return iter(made) if issubclass(kind, Iterable) else made


def _text_response(text: str) -> ModelResponse:
    made: ModelResponse = new_response(new_message("assistant", text), None, None, None, text)
    return made


def _role(message: Message) -> str:
    return message.role


def _selves(old: Sequence[object], new: Sequence[object], found: list[int | None]) -> None:
    """Where a new item is the very object of an old one (a hook kept it) but was paired
    with another that looks the same (the view hides what differs: an audio part), swap
    the two pairings: each stays with an item equal to it, and this one with itself."""
    if len(old) < 2:
        return
    at = {id(x): i for i, x in enumerate(old)}
    paired = {i: j for j, i in enumerate(found) if i is not None}
    for j, x in enumerate(new):
        i, was = at.get(id(x)), found[j]
        if i is None or was is None or i == was or old[i] is not x or old[was] != x:
            continue
        other = paired.get(i)
        found[j], paired[i] = i, j
        if other is not None:
            found[other], paired[was] = was, other
        else:
            del paired[was]


def _pairs(old: Sequence[_T], new: Sequence[_T], kin: Callable[[_T], object]) -> list[int | None]:
    """For each new item, the index of the old one it stands for (None: a hook added it).
    Unchanged ones pair by a diff (edits are local), then one a hook only moved with itself.
    In a run of changed ones, those of a kind (a message's role, a part's type) pair the
    most alike first (by the words of their texts, a tenth of them shared at least), then,
    where the run holds as many on each side, those left in their places: a system prompt
    a hook puts before a changed one, or a message it appends where it took others out,
    takes nothing of them, and a message a hook rewrote is still itself."""
    # only once a hook changed messages: `import hookwrap` stays light
    from ._wire import diff_runs, moved

    olds, news = [repr(x) for x in old], [repr(x) for x in new]
    found: list[int | None] = [None] * len(new)
    runs = diff_runs(olds, news)
    for tag, i1, i2, j1, j2 in runs:
        if tag == "equal":
            found[j1:j2] = range(i1, i2)
    taken = moved(olds, news, found)
    words: dict[int, frozenset[str]] = {}

    def alike(i: int, j: int) -> float:
        """How alike two items are, negated: by the words they share, and a tool result
        most of all like the result of its own call, however alike another's text is."""
        a = words.get(i)
        if a is None:
            a = words[i] = _words(old[i])
        b = words.get(~j)  # the new items' under negative keys
        if b is None:
            b = words[~j] = _words(new[j])
        call = getattr(new[j], "tool_call_id", None)
        same = call is not None and call == getattr(old[i], "tool_call_id", None)
        return -(same + len(a & b) / (len(a | b) or 1))  # the most alike sort first

    for tag, i1, i2, j1, j2 in runs:
        if tag == "equal":
            continue
        for key in {kin(x) for x in new[j1:j2]}:
            was = [i for i in range(i1, i2) if kin(old[i]) == key and i not in taken]
            now = [j for j in range(j1, j2) if kin(new[j]) == key and found[j] is None]
            ranked = _ranked(was, now, alike)
            if len(was) == len(now):  # then each in its own place: a hook rewrote it
                ranked += zip(was, now, strict=True)
            for i, j in ranked:
                if i not in taken and found[j] is None:
                    taken.add(i)
                    found[j] = i
    _selves(old, new, found)
    return found


def _ranked(was: list[int], now: list[int], alike: Callable[[int, int], float]) -> list[Any]:
    """The pairs of a changed run, the most alike first (those that share under a tenth
    of their words left out: one a hook added, one it took out). Of
    pairs as alike (a redaction took out what told them apart), those nearest the places
    the ends give first (a hook trimmed the oldest or put some first), then those the
    starts give (it appended some). A long run weighs only pairs near those places, for a
    cost that grows with the run, not its square."""
    d = len(was) - len(now)
    every = range(len(now))
    long = len(was) * len(now) > 10**5
    scored: list[tuple[float, int, int, int, int]] = []
    for a, i in enumerate(was):
        near: Sequence[int] = every
        if long:  # those within 16 places of where the ends or the starts put it
            ends = every[max(a - d - 16, 0) : max(a - d + 17, 0)]
            near = sorted({*ends, *every[max(a - 16, 0) : a + 17]})
        for b in near:
            j = now[b]
            scored.append((alike(i, j), abs(a - b - d), abs(a - b), i, j))
    scored.sort()
    return [(i, j) for score, _, _, i, j in scored if score <= -0.1]


_WORD = re.compile(r"\w+|[^\w\s]")
_first = operator.itemgetter(0)


def _words(item: object) -> frozenset[str]:
    """The words two items' likeness is judged by: a message's (or part's) text, with its
    calls' ids and names, else (an image) its repr."""
    text = getattr(item, "text", None)
    if isinstance(text, str):
        calls = getattr(item, "tool_calls", ())
        ids = " ".join(f"{c.id} {c.name}" for c in calls)
        found = frozenset(_WORD.findall(f"{text} {ids} {getattr(item, 'tool_call_id', '') or ''}"))
        if found:
            return found
    return frozenset(_WORD.findall(repr(item)))


def _message_over(message: Message, was: Message, old: Mapping[str, Any]) -> dict[str, Any]:
    """`message`, changed by a hook, as a chat dict written over `old`, the dict it was
    read from (`was`), as the OpenAI adapters write a message back: keys a `Message` does
    not model stay (`metadata`), and so do the role's spelling ("developer"), the items of
    unchanged parts and tool calls, a changed text or image part's other keys (`cache_control`,
    `detail`) and a changed call's other keys, and the parts a `Message` does not model
    (`input_audio`, `file`). A str given for parts is split across the text parts
    (`split_text`); no image is left, as with every SDK."""
    from ._wire import split_text

    given: Any = old.get("content")
    content = message.content
    if isinstance(content, str) and isinstance(given, (list, tuple)):
        texts = [p.text for p in was.content if isinstance(p, TextPart)]
        content = tuple(TextPart(t) for t in split_text(texts, content) if t)
    fresh = message_to_dict(message.replace(content=content))
    out: dict[str, Any] = {**old, **fresh}
    for key in _MESSAGE_KEYS.difference(fresh):  # what the hook removed (a name, the calls)
        out.pop(key, None)
    if message.role == was.role:
        out["role"] = old["role"]
    if content == was.content:
        out["content"] = old.get("content", fresh["content"])
    elif isinstance(content, tuple) and isinstance(given, (list, tuple)):
        was_parts = cast("tuple[Part, ...]", was.content)
        olds = cast("Sequence[Any]", given)
        out["content"] = _parts_over(content, was_parts, olds, fresh["content"])
    if message.tool_calls:
        out["tool_calls"] = list(map(_call_over, message.tool_calls, fresh["tool_calls"]))
    return out


def _parts_over(
    parts: tuple[Part, ...], was: tuple[Part, ...], olds: Sequence[Any], written: list[Any]
) -> list[Any]:
    """`parts` (`written`, as new dicts), changed by a hook, over `olds`, the caller's
    items `was` was read from: an unchanged part is the caller's item, a changed text or
    image part keeps its other keys, and an item hooks did not see (`input_audio`, `file`)
    stays where it was: after the part it followed (or the nearest one before that a hook
    kept), else first."""
    read = [j for j, item in enumerate(olds) if part_from(item) is not None]  # was[i]'s item
    pairs = _pairs(was, parts, type)
    for k, i in enumerate(pairs):
        if i is None:
            continue
        part, old = parts[k], olds[read[i]]
        if part == was[i]:
            written[k] = old
        elif isinstance(part, TextPart) and isinstance(old, Mapping):
            written[k] = _retexted(cast("Mapping[str, Any]", old), part.text)
        elif isinstance(part, ImagePart) and isinstance(old, Mapping):
            written[k] = _reimaged(cast("Mapping[str, Any]", old), part)
    kept = {i: k for k, i in enumerate(pairs) if i is not None}
    after: list[list[Any]] = [[] for _ in range(len(parts) + 1)]  # [k + 1]: after part k
    slot, n = 0, 0
    for j, item in enumerate(olds):
        if n < len(read) and read[n] == j:
            slot = kept[n] + 1 if n in kept else slot
            n += 1
        else:
            after[slot].append(item)
    return [*after[0], *(x for k, w in enumerate(written) for x in (w, *after[k + 1]))]


def _retexted(part: Mapping[str, Any], text: str) -> dict[str, Any]:
    """A text part with a new text: its other keys stay; `logprobs` are emptied (they
    described the old text)."""
    out = {**part, "text": text}
    if "logprobs" in out:
        out["logprobs"] = []
    return out


def _reimaged(part: Mapping[str, Any], image: ImagePart) -> dict[str, Any]:
    """An image part with a new URL (or media type), the URL where the caller put it: its
    other keys stay (`detail`, which decides what the image costs)."""
    out = {**part}
    nested: Any = part.get("image_url")
    if isinstance(nested, Mapping):
        out["image_url"] = {**cast("Mapping[str, Any]", nested), "url": image.url}
    else:
        out["image_url" if "image_url" in part else "url"] = image.url
    if image.media_type:
        out["media_type"] = image.media_type
    else:
        out.pop("media_type", None)
    return out


def _call_over(call: ToolCall, fresh: dict[str, Any]) -> Any:
    """A tool call as the caller gave it when unchanged; a changed one written over the dict
    of the call with its id, whose other keys stay (`extra_content`, where Gemini's
    OpenAI-compatible API puts the thought signature it wants back)."""
    raw: Any = call.raw
    if not isinstance(raw, Mapping):
        return fresh
    old = cast("Mapping[str, Any]", raw)
    if tool_call_from(old) == call:
        return old
    if old.get("id") != call.id:
        return fresh
    fn: Any = old.get("function")
    if isinstance(fn, Mapping):
        return {**old, **fresh, "function": {**cast("Mapping[str, Any]", fn), **fresh["function"]}}
    flat = ("name", "arguments", "args")  # a call given flat is written in the usual shape
    return {**{k: v for k, v in old.items() if k not in flat}, **fresh}


def _is_request_annotation(fn: Callable[..., Any], name: str) -> bool:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    ann = hints.get(name)
    return ann is ModelRequest or (isinstance(ann, str) and ann.endswith("ModelRequest"))


def _items(native: Any, chunk: Callable[[Any], Chunk], call: Call) -> Iterator[Any]:
    """A stream's `str` items as they come; any other item as its chunk (checked, and
    written back as a changed chunk would be). Closes the stream when closed."""
    try:
        for item in native:
            yield item if item.__class__ is str else chunk(item)
    finally:
        call.let_go(native)  # closed here, once
        close = getattr(native, "close", None)
        if close is not None:
            close()


async def _aitems(native: Any, chunk: Callable[[Any], Chunk], call: Call) -> AsyncIterator[Any]:
    try:
        async for item in native:
            yield item if item.__class__ is str else chunk(item)
    finally:
        call.let_go(native)
        aclose = getattr(native, "aclose", None)
        if aclose is not None:
            await aclose()


def takes_model(fn: Callable[..., Any]) -> bool | None:
    """Whether the model function `fn` can be given another model (a `model` parameter,
    `**kwargs`, or the request itself); None when `fn` is no model function. Its adapter,
    made to read the signature as for a call, is let go of at once (it holds itself)."""
    try:
        adapter = FunctionAdapter(fn)
    except TypeError:
        return None
    try:
        return adapter.form == "request" or "model" in adapter.accepts or adapter.var_kw
    finally:
        for made in (adapter, adapter.other):
            if made is not None:
                del made.reader  # no cycle left for the garbage collector
