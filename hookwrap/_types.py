"""Neutral value types: what every hook sees, whatever the provider or callable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

import attrs
from typing_extensions import Self

__all__ = [
    "DROP",
    "Abort",
    "AgentSetup",
    "Chunk",
    "ChunkKind",
    "FinishInfo",
    "ImagePart",
    "IterationInfo",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "Part",
    "Respond",
    "RunResult",
    "Skip",
    "TextPart",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
]


class _Replace:
    __slots__ = ()

    # One `replace` for every class at run time; a type checker sees instead the one each
    # class declares under TYPE_CHECKING, whose keywords are its fields, typed as its
    # constructor takes them (a misspelt field or a value of the wrong type is an error).
    if not TYPE_CHECKING:

        def replace(self, **changes: Any) -> Any:
            """Return a copy with `changes` applied (the original is frozen)."""
            return attrs.evolve(self, **changes)


class _View(_Replace):
    """Base of the call views an adapter may read on demand: see `deferred_class`."""

    __slots__ = ("_source",)  # (read, arg) while deferred: `read(arg)` is the complete view


def deferred_class(cls: type[Any]) -> type[Any]:
    """The class of `cls`'s deferred views (`cls` a `_View`): views whose fields, other
    than those an adapter set, are read all at once, the first time one of them is; the
    view then becomes a `cls` like any other.

    It is a subclass with `__getattr__`, which Python calls only for a name it did not find,
    as an empty slot. The public class has none: its attributes are read at full speed
    (Python cannot specialize attribute reads on a class with `__getattr__`). Until it is
    read, a view compares, copies, pickles and replaces as the complete view would, and
    building one by its class (`attrs.evolve`) gives a `cls`.
    """
    names = frozenset(f.name for f in attrs.fields(cls))
    public: Any = cls  # its methods, called with a view

    def fill(self: Any) -> None:
        try:
            read, arg = object.__getattribute__(self, "_source")
        except AttributeError:  # filled meanwhile, by another thread
            return
        full = read(arg)
        for field in names:
            try:
                object.__getattribute__(self, field)
            except AttributeError:
                object.__setattr__(self, field, object.__getattribute__(full, field))
        object.__setattr__(self, "__class__", cls)  # every field set: now a plain `cls`
        try:
            object.__delattr__(self, "_source")
        except AttributeError:  # another thread was quicker
            pass

    def __getattr__(self: Any, name: str) -> Any:
        if name in names:
            fill(self)
        return object.__getattribute__(self, name)

    def __eq__(self: Any, other: object) -> Any:
        fill(self)
        return public.__eq__(self, other)

    def __reduce_ex__(self: Any, protocol: Any) -> Any:
        fill(self)
        return public.__reduce_ex__(self, protocol)

    def __new__(_: type[Any], *args: Any, **kwargs: Any) -> Any:
        return cls(*args, **kwargs)  # not a deferred view: a plain one

    namespace = {
        "__slots__": (),
        "__getattr__": __getattr__,
        "__eq__": __eq__,
        "__ne__": cls.__ne__,
        "__hash__": cls.__hash__,
        "__reduce_ex__": __reduce_ex__,
        "__new__": __new__,
        "__qualname__": cls.__qualname__,
        "__module__": cls.__module__,
        "__doc__": cls.__doc__,
    }
    return type(cls.__name__, (cls,), namespace)


def maker(cls: type[Any], *names: str, deferred: bool = False) -> Callable[..., Any]:
    """A fast constructor of a frozen class taking `names` positionally.

    It skips converters and validators (for values hookwrap builds per call or per chunk,
    already of the right types). Every other field takes its default, or a value given by
    keyword (one whose default is a factory always takes a new default). A frozen class
    refuses plain attribute stores, and its descriptors' `__set__` costs a call per field,
    so the fields are stored on a twin with the same slots, which then becomes `cls`. The
    twin is made by calling it (`object.__new__(twin)` costs more).

    `deferred` (for a `_View`): the constructor takes `read` and `arg` after `names`, and
    leaves every other field empty until one is read; then they all come from `read(arg)`,
    which makes the complete view (see `deferred_class`). A call whose hooks never look at
    a field does not pay for reading it from the native call.
    """
    fields = attrs.fields(cls)
    twin = type(f"_{cls.__name__}Builder", cls.__bases__, {"__slots__": [f.name for f in fields]})
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls}
    body: list[str] = []
    keywords: list[str] = []  # the other fields with a plain default may be given by name
    if deferred:
        assert issubclass(cls, _View), f"{cls.__name__} cannot be deferred"
        names = (*names, "read", "arg")
        body.append("    obj._source = (read, arg)\n")
        namespace["_cls"] = deferred_class(cls)
    for field in fields:
        name = field.name
        if deferred and name not in names:
            continue
        if name in names:
            value = name
        elif isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            namespace[f"_make_{name}"] = field.default.factory
            value = f"_make_{name}()"
        else:
            namespace[f"_default_{name}"] = field.default
            value = name
            keywords.append(f"{name}=_default_{name}")
        body.append(f"    obj.{name} = {value}\n")
    params = ", ".join([*names, *(["*", *keywords] if keywords else [])])
    source = (
        f"def make({params}):\n    obj = _twin()\n{''.join(body)}"
        "    obj.__class__ = _cls\n    return obj\n"
    )
    exec(compile(source, f"<hookwrap maker {cls.__name__}>", "exec"), namespace)
    return namespace["make"]  # type: ignore[no-any-return]


def _tuple(value: Sequence[Any] | None) -> tuple[Any, ...]:
    return () if value is None else tuple(value)


def _is_sequence(value: object) -> bool:
    """Items, one by one: not a str (its characters), bytes or a dict (its keys)."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _items(what: str, value: Any, kind: tuple[type[Any], ...], hint: str = "") -> Any:
    """`value` as a tuple of `kind` items, refusing anything else by name: a str (which
    would become its characters), a dict, a non-sequence, an item of another type."""
    names = " or ".join(k.__name__ for k in kind)
    if value is None:
        return ()
    if not _is_sequence(value):
        raise TypeError(f"{what} must be a sequence of {names} (got {type(value).__name__})")
    items = tuple(value)
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise TypeError(
                f"{what}[{i}] must be a {names} (got {type(item).__name__}: {item!r:.60}){hint}"
            )
    return items


def _content(value: str | Sequence[Part]) -> str | tuple[Part, ...]:
    if isinstance(value, str):
        return value
    if not _is_sequence(value):
        raise TypeError(
            "Message content must be a str or a sequence of TextPart or ImagePart "
            f"(got {type(value).__name__})"
        )
    parts: tuple[Part, ...] = _items(
        "Message content", value, (TextPart, ImagePart), "; a str is content on its own"
    )
    return parts


_Check = tuple[str, tuple[type[Any], ...], str]  # field, the types it takes, how they read
_STR: tuple[type[Any], ...] = (str,)
_OPT_STR: tuple[type[Any], ...] = (str, type(None))


def _refuse(obj: object, checks: tuple[_Check, ...]) -> None:
    """Raise a `TypeError` naming the first field of `obj` that `checks` refuses (a bool is
    no int here, though Python says it is one)."""
    for name, kinds, expected in checks:
        value = getattr(obj, name)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise TypeError(
                f"{type(obj).__name__} {name} must be {expected} "
                f"(got {type(value).__name__}: {value!r:.60})"
            )


@attrs.frozen(slots=True, weakref_slot=False)
class TextPart(_Replace):
    """A text part of a multi-part message."""

    text: str
    type: Literal["text"] = "text"

    if TYPE_CHECKING:

        def replace(self, *, text: str = ..., type: Literal["text"] = ...) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _TEXT_PART)


@attrs.frozen(slots=True, weakref_slot=False)
class ImagePart(_Replace):
    """An image part: a URL (``https:`` or ``data:``) and an optional media type."""

    url: str
    media_type: str | None = None
    type: Literal["image"] = "image"

    if TYPE_CHECKING:

        def replace(
            self, *, url: str = ..., media_type: str | None = ..., type: Literal["image"] = ...
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _IMAGE_PART)


Part = Union[TextPart, ImagePart]


@attrs.frozen(slots=True, weakref_slot=False)
class Usage(_Replace):
    """Token counts of one model call (or of a whole run, when summed with ``+``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    if TYPE_CHECKING:

        def replace(
            self, *, input_tokens: int = ..., output_tokens: int = ..., total_tokens: int = ...
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _USAGE)

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):  # pyright: ignore[reportUnnecessaryIsInstance]
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
        )


@attrs.frozen(slots=True, weakref_slot=False)
class ToolCall(_Replace):
    """A request from the model to run a tool; `arguments` is the decoded JSON object."""

    id: str
    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=lambda: {})
    raw: Any = attrs.field(default=None, eq=False, repr=False)

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            id: str = ...,
            name: str = ...,
            arguments: Mapping[str, Any] = ...,
            raw: Any = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _TOOL_CALL)


Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = Role.__args__  # type: ignore[attr-defined]


def _tool_calls(value: Sequence[ToolCall] | None) -> tuple[ToolCall, ...]:
    calls: tuple[ToolCall, ...] = _items("Message tool_calls", value, (ToolCall,))
    return calls


def _check_role(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if value not in ROLES:
        raise ValueError(f"Message role must be one of {list(ROLES)} (got {value!r})")


@attrs.frozen(slots=True, weakref_slot=False)
class Message(_Replace):
    """One message of a conversation.

    `content` is a ``str`` or a tuple of parts; `.text` joins the text of the parts.
    `raw` is the adapter's record of the native message it was read from (an answer's
    thinking blocks, reasoning items, signatures), which the adapter writes the message
    over when it is sent again; hooks leave it alone.
    """

    role: Role = attrs.field(validator=_check_role)
    content: str | tuple[Part, ...] = attrs.field(default="", converter=_content)
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_tool_calls)
    tool_call_id: str | None = None
    name: str | None = None
    raw: Any = attrs.field(default=None, eq=False, repr=False)

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            role: Role = ...,
            content: str | Sequence[Part] = ...,
            tool_calls: Sequence[ToolCall] | None = ...,
            tool_call_id: str | None = ...,
            name: str | None = ...,
            raw: Any = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _MESSAGE)

    @property
    def text(self) -> str:
        """The message's text: `content` itself, or its text parts joined."""
        content = self.content
        if isinstance(content, str):
            return content
        return "".join(p.text for p in content if isinstance(p, TextPart))

    @classmethod
    def system(cls, content: str | Sequence[Part]) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str | Sequence[Part]) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(
        cls, content: str | Sequence[Part] = "", tool_calls: Sequence[ToolCall] = ()
    ) -> Message:
        return cls("assistant", content, tool_calls)

    @classmethod
    def tool(
        cls, content: str | Sequence[Part], tool_call_id: str, name: str | None = None
    ) -> Message:
        return cls("tool", content, (), tool_call_id, name)


@attrs.frozen(slots=True, weakref_slot=False)
class ToolSpec(_Replace):
    """What the model is told about a tool: name, description, JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(
        factory=lambda: {"type": "object", "properties": {}}
    )

    if TYPE_CHECKING:

        def replace(
            self, *, name: str = ..., description: str = ..., parameters: Mapping[str, Any] = ...
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _TOOL_SPEC)


def _messages(value: Sequence[Message] | None) -> tuple[Message, ...]:
    hint = "; build messages with hw.Message(...) or hw.Message.user(...)"
    messages: tuple[Message, ...] = _items("ModelRequest messages", value, (Message,), hint)
    return messages


def _tools(value: Sequence[ToolSpec] | None) -> tuple[ToolSpec, ...]:
    tools: tuple[ToolSpec, ...] = _items("ModelRequest tools", value, (ToolSpec,))
    return tools


@attrs.frozen(slots=True, weakref_slot=False)
class ModelRequest(_View):
    """A model call: messages, tools, model name, other options, whether it streams.

    `raw` is the adapter's record of the native call; hooks leave it alone.
    """

    messages: tuple[Message, ...] = attrs.field(default=(), converter=_messages)
    tools: tuple[ToolSpec, ...] = attrs.field(default=(), converter=_tools)
    model: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=lambda: {})
    stream: bool = False
    raw: Any = attrs.field(default=None, eq=False, repr=False)

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            messages: Sequence[Message] | None = ...,
            tools: Sequence[ToolSpec] | None = ...,
            model: str | None = ...,
            options: Mapping[str, Any] = ...,
            stream: bool = ...,
            raw: Any = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _REQUEST)


@attrs.frozen(slots=True, weakref_slot=False)
class ModelResponse(_View):
    """A model's answer; `raw` is the native response it was read from (if any)."""

    message: Message = attrs.field(factory=lambda: Message("assistant"))
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    raw: Any = attrs.field(default=None, eq=False, repr=False)

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            message: Message = ...,
            usage: Usage | None = ...,
            finish_reason: str | None = ...,
            model: str | None = ...,
            raw: Any = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _RESPONSE)

    @property
    def text(self) -> str:
        """The text of the answer's message."""
        return self.message.text


ChunkKind = Literal[
    "text",
    "reasoning",
    "tool_call_start",
    "tool_call_args",
    "tool_call_end",
    "usage",
    "finish",
    "custom",
]
CHUNK_KINDS: frozenset[str] = frozenset(ChunkKind.__args__)  # type: ignore[attr-defined]


def _check_kind(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if value not in CHUNK_KINDS:
        raise ValueError(f"Chunk kind must be one of {sorted(CHUNK_KINDS)} (got {value!r})")


@attrs.frozen(slots=True, weakref_slot=False)
class Chunk(_Replace):
    """One piece of a streamed answer.

    ``text`` and ``reasoning`` chunks carry `text`; tool-call chunks carry `tool_call_id`,
    `tool_name` and a fragment of the JSON arguments in `text` (``tool_call_args``, and a
    ``tool_call_start`` whose provider sends the first fragment, or all, with the name);
    ``usage`` carries `usage`, ``finish`` a `finish_reason`, ``custom`` a `name` and `value`.
    """

    kind: ChunkKind = attrs.field(default="text", validator=_check_kind)
    text: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    name: str | None = None
    value: Any = None
    raw: Any = attrs.field(default=None, eq=False, repr=False)

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            kind: ChunkKind = ...,
            text: str = ...,
            tool_call_id: str | None = ...,
            tool_name: str | None = ...,
            usage: Usage | None = ...,
            finish_reason: str | None = ...,
            name: str | None = ...,
            value: Any = ...,
            raw: Any = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        # `_CHUNK` as one test: a hook may replace every chunk of a stream
        if not (
            isinstance(self.text, str)  # pyright: ignore[reportUnnecessaryIsInstance]
            and isinstance(self.tool_call_id, _OPT_STR)
            and isinstance(self.tool_name, _OPT_STR)
            and isinstance(self.finish_reason, _OPT_STR)
            and isinstance(self.name, _OPT_STR)
            and isinstance(self.usage, _OPT_USAGE)
        ):
            _refuse(self, _CHUNK)


@attrs.frozen(slots=True, weakref_slot=False)
class ToolOutcome(_Replace):
    """How a tool call ended: `ok` with a `result`, or not, with the `error`."""

    ok: bool
    result: Any = None
    error: BaseException | None = None
    duration: float = 0.0

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            ok: bool = ...,
            result: Any = ...,
            error: BaseException | None = ...,
            duration: float = ...,
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _OUTCOME)


def _setup_tools(value: Sequence[Any] | None) -> tuple[Any, ...]:
    """The tools as a tuple, each an `hw.tool` function or a plain function. One tool alone
    is refused: a tool iterates as what it wraps would, a str by its characters."""
    what = "AgentSetup tools"
    if value is None:
        return ()
    if callable(value) or not _is_sequence(value):
        raise TypeError(
            f"{what} must be a sequence of tools (hw.tool functions or plain functions), "
            f"even for one tool: tools=(my_tool,) (got {type(value).__name__}: {value!r:.60})"
        )
    tools = tuple(value)
    for i, item in enumerate(tools):
        if not callable(item):
            raise TypeError(
                f"{what}[{i}] must be an hw.tool function or a plain function "
                f"(got {type(item).__name__}: {item!r:.60})"
            )
    return tools


@attrs.frozen(slots=True, weakref_slot=False)
class AgentSetup(_Replace):
    """What an agent starts with; `before_agent` hooks may return a changed copy."""

    instructions: str = ""
    tools: tuple[Any, ...] = attrs.field(default=(), converter=_setup_tools)

    if TYPE_CHECKING:

        def replace(
            self, *, instructions: str = ..., tools: Sequence[Any] | None = ...
        ) -> Self: ...

    def __attrs_post_init__(self) -> None:
        _refuse(self, _SETUP)


@attrs.frozen(slots=True, weakref_slot=False)
class IterationInfo(_Replace):
    """Passed to `on_iteration` at the start of each model → tools turn of an agent."""

    iteration: int
    messages: tuple[Message, ...] = attrs.field(default=(), converter=_tuple)

    if TYPE_CHECKING:

        def replace(
            self, *, iteration: int = ..., messages: Sequence[Any] | None = ...
        ) -> Self: ...


@attrs.frozen(slots=True, weakref_slot=False)
class RunResult(_Replace):
    """What an agent run ended with."""

    status: Literal["finished", "interrupted", "aborted"]
    text: str = ""
    messages: tuple[Message, ...] = attrs.field(default=(), converter=_tuple)
    usage: Usage = attrs.field(factory=Usage)
    iterations: int = 0
    run_id: str = ""
    interrupt: Any = None

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            status: Literal["finished", "interrupted", "aborted"] = ...,
            text: str = ...,
            messages: Sequence[Any] | None = ...,
            usage: Usage = ...,
            iterations: int = ...,
            run_id: str = ...,
            interrupt: Any = ...,
        ) -> Self: ...


@attrs.frozen(slots=True, weakref_slot=False)
class FinishInfo(_Replace):
    """Passed to `on_finish`, `on_error` and `on_abort`: how and after how long a run ended.

    `error` is set for `on_error`, `reason` for `on_abort`.
    """

    run_id: str
    duration: float
    usage: Usage
    error: BaseException | None = None
    reason: str | None = None

    if TYPE_CHECKING:

        def replace(
            self,
            *,
            run_id: str = ...,
            duration: float = ...,
            usage: Usage = ...,
            error: BaseException | None = ...,
            reason: str | None = ...,
        ) -> Self: ...


_TEXT_PART: tuple[_Check, ...] = (("text", _STR, "a str"),)
_IMAGE_PART: tuple[_Check, ...] = (
    ("url", _STR, "a str"),
    ("media_type", _OPT_STR, "a str or None"),
)
_OPT_USAGE: tuple[type[Any], ...] = (Usage, type(None))
_USAGE: tuple[_Check, ...] = tuple(
    (name, (int,), "an int") for name in ("input_tokens", "output_tokens", "total_tokens")
)
_TOOL_CALL: tuple[_Check, ...] = (
    ("id", _STR, "a str"),
    ("name", _STR, "a str"),
    ("arguments", (Mapping,), "a dict"),
)
_MESSAGE: tuple[_Check, ...] = (
    ("tool_call_id", _OPT_STR, "a str or None"),
    ("name", _OPT_STR, "a str or None"),
)
_TOOL_SPEC: tuple[_Check, ...] = (
    ("name", _STR, "a str"),
    ("description", _STR, "a str"),
    ("parameters", (Mapping,), "a dict (a JSON schema)"),
)
_REQUEST: tuple[_Check, ...] = (
    ("model", _OPT_STR, "a str or None"),
    ("options", (Mapping,), "a dict"),
    ("stream", (bool,), "True or False"),
)
_RESPONSE: tuple[_Check, ...] = (
    ("message", (Message,), "a Message"),
    ("usage", _OPT_USAGE, "a Usage or None"),
    ("finish_reason", _OPT_STR, "a str or None"),
    ("model", _OPT_STR, "a str or None"),
)
_CHUNK: tuple[_Check, ...] = (
    ("text", _STR, "a str"),
    ("tool_call_id", _OPT_STR, "a str or None"),
    ("tool_name", _OPT_STR, "a str or None"),
    ("usage", _OPT_USAGE, "a Usage or None"),
    ("finish_reason", _OPT_STR, "a str or None"),
    ("name", _OPT_STR, "a str or None"),
)
_OUTCOME: tuple[_Check, ...] = (
    ("ok", (bool,), "True or False"),
    ("error", (BaseException, type(None)), "an exception or None"),
    ("duration", (float, int), "a number of seconds"),
)
_SETUP: tuple[_Check, ...] = (("instructions", _STR, "a str"),)


# Markers a hook returns to steer its stage.


@attrs.frozen(slots=True, weakref_slot=False)
class Respond:
    """From `before_model`: answer with `value` instead of calling the model."""

    value: Any


@attrs.frozen(slots=True, weakref_slot=False)
class Skip:
    """From `before_tool`: do not run the tool; `result` stands in for its result."""

    result: Any = None


@attrs.frozen(slots=True, weakref_slot=False)
class Abort:
    """Returned from any hook (yielded by a generator-form `wrap_*` hook), as `ctx.abort`
    anywhere: end the run with `reason` (`hw.Aborted` is raised at once)."""

    reason: str = "aborted"

    def __attrs_post_init__(self) -> None:
        _refuse(self, (("reason", _STR, "a str saying why the run ends"),))


class _Drop:
    __slots__ = ()

    def __repr__(self) -> str:
        return "hookwrap.DROP"

    def __reduce__(self) -> str:
        return "DROP"


DROP: Any = _Drop()
"""From `on_chunk`: remove this chunk from the stream."""


# Fast constructors for the hot paths (see `maker`).
new_message = maker(Message, "role", "content")
new_full_message = maker(Message, "role", "content", "tool_calls", "tool_call_id", "name")
new_request = maker(ModelRequest, "messages", "tools", "model", "options", "stream", "raw")
new_response = maker(ModelResponse, "message", "usage", "finish_reason", "model", "raw")
deferred_request = maker(ModelRequest, "model", "stream", "raw", deferred=True)
deferred_response = maker(ModelResponse, deferred=True)
new_chunk = maker(Chunk, "kind", "text", "raw")
new_usage = maker(Usage, "input_tokens", "output_tokens", "total_tokens")
new_text_part = maker(TextPart, "text")
