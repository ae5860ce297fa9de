"""Tools from plain functions: a JSON schema from type hints and the docstring, and the
structuring of JSON arguments into the parameter types."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, cast

import attrs

from ._convert import UnparsedArguments, converter
from ._hooks import describe
from ._run import current_var
from ._stages import FROM_TOOL
from ._strict import class_hints, is_union, json_text, strict, why_not
from ._types import ToolCall, ToolSpec

__all__ = ["OnInstance", "ToolArgumentError", "ToolBinding", "instance_of", "schema_of"]


class ToolArgumentError(ValueError):
    """The model sent arguments that do not fit the tool's parameters."""


_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}


def schema_of(tp: Any) -> dict[str, Any]:
    """JSON schema of a type hint (dataclasses, attrs classes, enums, Literal, Optional, …).

    A class met again inside itself (a tree's node) is written out where it is used, and
    is a `$ref` to a copy under `$defs` (which the schema then carries) where it recurs."""
    schemas = _Schemas()
    return schemas.rooted(schemas.of(tp))


class _Schemas:
    """The schemas of the types of one JSON schema document (a tool's parameters). A class
    is written out where it is used; where it recurs inside itself, which written out would
    never end, it is a `$ref` to its one copy under the document's `$defs`."""

    __slots__ = ("defs", "names", "open")

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self.names: dict[Any, str] = {}  # a recursive class -> its key in `defs`
        self.open: list[Any] = []  # the classes being described, outermost first

    def rooted(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` as a whole document: with the `$defs` its `$ref`s point to."""
        if self.defs:
            schema["$defs"] = self.defs
        return schema

    def of(self, tp: Any) -> dict[str, Any]:
        if tp in _PRIMITIVES:
            return dict(_PRIMITIVES[tp])
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is Literal:  # an enum member stands for its value, as the model writes it
            return {"enum": [a.value if isinstance(a, enum.Enum) else a for a in args]}
        if is_union(tp):
            return {"anyOf": [self.of(a) for a in args]}
        if origin is tuple and args and args[-1] is not Ellipsis:
            # `items` (any of the positions' types) is for readers that ignore
            # `prefixItems`: OpenAI refuses an array without `items`
            kinds = [self.of(a) for a in dict.fromkeys(args)]
            return {
                "type": "array",
                "prefixItems": [self.of(a) for a in args],
                "items": kinds[0] if len(kinds) == 1 else {"anyOf": kinds},
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
            item = args[0] if args else Any
            return {"type": "array", "items": self.of(item)}
        if origin in (dict, Mapping) or tp is dict:
            value = args[1] if len(args) == 2 else Any
            return {"type": "object", "additionalProperties": self.of(value)}
        if origin is typing.Annotated:
            return self.of(args[0])
        if inspect.isclass(tp) and issubclass(tp, enum.Enum):
            members: list[enum.Enum] = list(tp)
            return {"enum": [m.value for m in members]}
        if inspect.isclass(tp) and (dataclasses.is_dataclass(tp) or attrs.has(tp)):
            return self._object(tp)
        raise TypeError(f"no JSON schema for the type {tp!r}")

    def _object(self, cls: Any) -> dict[str, Any]:
        """The schema of a dataclass or attrs class: an object of its fields."""
        if cls in self.open:
            return {"$ref": f"#/$defs/{self._name(cls)}"}
        try:
            hints = class_hints(cls)
        except Exception as exc:
            raise TypeError(f"cannot read the type hints of {cls!r}: {exc}") from None
        # a field with init=False cannot be passed, so the model is not shown it
        if attrs.has(cls):
            fields = [(a.name, a.default is attrs.NOTHING) for a in attrs.fields(cls) if a.init]
        else:
            fields = [
                (
                    f.name,
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                )
                for f in dataclasses.fields(cls)
                if f.init
            ]
        self.open.append(cls)
        try:
            properties = {name: self.of(hints.get(name, Any)) for name, _ in fields}
        finally:
            self.open.pop()
        schema = {
            "type": "object",
            "properties": properties,
            "required": [name for name, required in fields if required],
        }
        if cls in self.names:  # it recurs: its `$ref`s point to a copy of this
            self.defs[self.names[cls]] = copy.deepcopy(schema)
        return schema

    def _name(self, cls: Any) -> str:
        """`cls`'s key in `$defs`: its name, numbered if another class has that name."""
        if cls not in self.names:
            taken = set(self.names.values())
            name, n = cls.__name__, 1
            while name in taken:
                n += 1
                name = f"{cls.__name__}{n}"
            self.names[cls] = name
        return self.names[cls]


# where a docstring's description ends: a section heading alone on its line, Google style
# (`Returns:`) or NumPy/reST style (underlined); a Sphinx or Epydoc field (`:param x:`,
# `@param x`); a doctest (`>>>`); a reST directive (`.. note::`)
_HEADINGS = (
    "Args|Arguments|Parameters|Params|Other Parameters|Keyword Args|Keyword Arguments|"
    "Returns?|Yields?|Receives|Raises?|Warns|Warnings?|Examples?|Usage|Notes?|Attributes|"
    "Methods|See Also|References|Todo|Side Effects|Attention|Caution|Danger|Error|Hint|"
    "Important|Tip"
)
_FIELDS = "param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?|except|exception"
_SECTION = re.compile(
    rf"^[ \t]*(?:(?:{_HEADINGS})[ \t]*(?::[ \t]*$|\n[ \t]*[-=~]{{3,}}[ \t]*$)"
    rf"|:(?:{_FIELDS}|var|ivar|cvar)\b[^:\n]*:|@(?:{_FIELDS}|var|ivar)\b|>>>|\.\. \w)",
    re.MULTILINE,
)


def _doc_params(doc: str) -> tuple[str, dict[str, str]]:
    """The docstring's description and its `Args:` section (Google style), if any.

    The description is all the text before the first section (`Args:`, `Returns:`, ...),
    every paragraph of it: what a function's author tells its callers goes to the model.
    An entry's description may run on over more-indented lines; the section ends at the
    next unindented line (`Returns:`, `Raises:`, ...).
    """
    doc = inspect.cleandoc(doc or "")
    parts = re.split(r"\n\s*(?:Args|Arguments|Parameters):\s*\n", doc, maxsplit=1)
    section = _SECTION.search(doc)
    summary = (doc if section is None else doc[: section.start()]).strip()
    described: dict[str, list[str]] = {}
    if len(parts) == 2:
        indent: int | None = None
        current: list[str] | None = None
        for line in parts[1].splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            depth = len(line) - len(line.lstrip())
            if depth == 0:
                break
            match = _ENTRY.match(stripped)
            if match and (indent is None or depth <= indent):
                indent = depth
                current = described.setdefault(match.group(1), [])
                current.append(match.group(2).strip())
            elif current is not None:
                current.append(stripped)
    return summary, {name: " ".join(w for w in words if w) for name, words in described.items()}


_ENTRY = re.compile(r"^\*{0,2}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _described_by(fn: Callable[..., Any]) -> Any:
    """The function whose type hints and docstring describe `fn`: a partial's function, a
    callable object's `__call__`, or `fn` itself."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or inspect.isclass(fn):
        return fn
    return type(fn).__call__


def _bound_keywords(fn: Any) -> Iterator[str]:
    """The keywords a `functools.partial` (or one inside it) binds."""
    while isinstance(fn, functools.partial):
        yield from fn.keywords
        fn = fn.func


def _in_class(fn: Any) -> bool:
    """Whether `fn` is a plain function defined in a class body: the one a `@classmethod`
    above `@hw.tool` wraps, whose `cls` is its class, if that is its first parameter. (A
    `@staticmethod`'s function below `@hw.tool` is the same kind of function: nothing tells
    the two apart. A bound method, a `staticmethod` object, a partial or a callable object
    is none: its `cls` is a parameter like any other.)"""
    owner = getattr(fn, "__qualname__", "").rpartition(".")[0].rpartition(".")[2]
    return inspect.isfunction(fn) and owner not in ("", "<locals>")


def _doc_of(fn: Any, described_by: Any) -> str | None:
    """The docstring of the function behind `fn`, else (a callable object's) its class's."""
    own = None if isinstance(fn, functools.partial) else type(fn).__doc__
    return described_by.__doc__ or own


class _Direct:
    """A direct Python call of a tool: the arguments as given, kept to pass on untouched,
    and the instance a method tool was called on (`bound`), which is no argument."""

    __slots__ = ("args", "arguments", "bound", "fn", "kwargs")

    def __init__(
        self, fn: Callable[..., Any], args: Any, kwargs: Any, arguments: Any, bound: Any = None
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.arguments = arguments
        self.bound = bound


class OnInstance:
    """The `raw` of a model's call of a method tool read from an instance, one layer out
    (`Bot().look.invoke(call)`): the arguments, structured, go to `method`, the tool read
    from that instance, which runs the tool's hooks on it."""

    __slots__ = ("method",)

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method


def bound_to(call: ToolCall) -> Any:
    """The instance a call of a method tool was made on, or None: its result may depend on
    more than its arguments."""
    raw = call.raw
    if isinstance(raw, _Direct):
        found = raw.bound if raw.bound is not None else instance_of(raw.fn)
        if found is not None:
            return found
    # a tool made of a bound method, called by a model: its call notes it
    return getattr(current_var.get(), "_bound", None)


def instance_of(fn: Any) -> Any:
    """The object `fn`, a bound method (perhaps in a `functools.partial`), runs on, or None."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn.__self__ if inspect.ismethod(fn) else None


class ToolBinding:
    """How arguments reach one tool function."""

    __slots__ = (
        "fn",
        "hints",
        "method",
        "names",
        "params",
        "passes_ctx",
        "positional_only",
        "preset",
        "spec",
        "takes_ctx",
        "var_kw",
        "var_pos",
    )

    def __init__(self, fn: Callable[..., Any], name: str, description: str | None) -> None:
        self.fn = fn
        described_by = _described_by(fn)
        try:
            sig = inspect.signature(fn)
            self.hints = typing.get_type_hints(described_by)
        except Exception as exc:
            raise TypeError(f"hw.tool: cannot read the signature of {describe(fn)}: {exc}") from exc
        self.params = dict(sig.parameters)
        # a `ctx` parameter receives the tool call's RunContext; the model never sees it
        self.takes_ctx = "ctx" in self.params
        # this binding passes it, unless `fn` is a tool that passes the one its own hooks
        # see, and the layer around it leaves `ctx` out of what its hooks see (its
        # `ToolEngine` clears it then)
        self.passes_ctx = self.takes_ctx
        # what a `functools.partial` binds is the tool's own (an API key, a connection):
        # the model neither sees it nor gives it
        self.preset = frozenset(_bound_keywords(fn))
        self.names = tuple(
            p.name
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
        # a method: the instance (a classmethod's class) it is called on is no argument (the
        # schema leaves it out)
        self.method = self.names[:1] == ("self",) or (self.names[:1] == ("cls",) and _in_class(fn))
        self.positional_only = frozenset(
            p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_ONLY
        )
        self.var_pos = next(
            (p.name for p in sig.parameters.values() if p.kind is p.VAR_POSITIONAL), None
        )
        doc = described_by.__doc__ if described_by is fn else _doc_of(fn, described_by)
        summary, described = _doc_params(doc or "")
        properties: dict[str, Any] = {}
        required: list[str] = []
        schemas = _Schemas()  # one document: a recursive class's `$defs` go at its root
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("self", "ctx"):
                continue
            if self.method and p.name == self.names[0]:  # (a classmethod's `cls`)
                continue
            if p.name in self.preset:
                continue
            try:
                schema = schemas.of(self.hints.get(p.name, Any))
            except TypeError as exc:
                raise TypeError(f"hw.tool {describe(fn)}, parameter {p.name!r}: {exc}") from None
            if p.name in described:
                schema["description"] = described[p.name]
            if p.default is not p.empty:
                try:
                    default = converter.unstructure(p.default)
                    json.dumps(default, allow_nan=False)
                except Exception:  # a default with no JSON form (a sentinel, -inf): not shown
                    pass
                else:
                    schema["default"] = default
            else:
                required.append(p.name)
            properties[p.name] = schema
        # a `**kwargs` takes the arguments the signature does not name
        self.var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        if self.var_pos is not None and not properties and not self.var_kw:
            # the model sends a JSON object: every argument it could send would be refused
            raise TypeError(
                f"hw.tool {describe(fn)}: a tool's parameters need names: *{self.var_pos} "
                "cannot take a model's JSON arguments (name the parameters, or take **kwargs)"
            )
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        parameters = schemas.rooted(parameters)
        self.spec = ToolSpec(name, description if description is not None else summary, parameters)

    def tool_call(self, fn: Callable[..., Any], args: Any, kwargs: Any, call_id: str) -> ToolCall:
        names, given, bound = self.names, args, None
        if self.method and args:  # hooks see the arguments the spec names, not the instance
            names, given, bound = names[1:], args[1:], args[0]
        arguments = dict(zip(names, given, strict=False)) if given else {}
        if len(given) > len(names):
            if self.var_pos is None:
                raise TypeError(f"{self.spec.name}() takes {len(names)} positional arguments")
            arguments[self.var_pos] = tuple(given[len(names) :])
        if kwargs:
            arguments.update(kwargs)
        direct = _Direct(fn, args, kwargs, arguments, bound)
        return ToolCall(call_id, self.spec.name, arguments, direct)

    def _arguments(
        self, arguments: Mapping[str, Any], given: Mapping[str, Any] | None
    ) -> tuple[list[Any], dict[str, Any]]:
        """`_split`, its `ToolArgumentError` marked as the tool's own error (the model is
        told of it), wherever it comes up: in a tool made of a tool, an error out of the
        tool inside is that tool's to mark (its hooks' is no tool's answer)."""
        try:
            return self._split(arguments, given)
        except ToolArgumentError as exc:
            setattr(exc, FROM_TOOL, True)
            raise

    def _split(
        self, arguments: Mapping[str, Any], given: Mapping[str, Any] | None
    ) -> tuple[list[Any], dict[str, Any]]:
        """The tool's positional and keyword arguments. `given` is what a direct call passed
        (None for the model's call): a value still the one passed reaches the tool as it is,
        since nothing the caller passed is changed; a value a `before_tool` hook set is
        structured as the model's JSON is."""
        if isinstance(arguments, UnparsedArguments):
            raise ToolArgumentError(
                f"the arguments of {self.spec.name} must be a JSON object, got "
                f"{arguments.text[:200]!r} ({arguments.reason})"
            )
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for key, value in arguments.items():
            param = self.params.get(key)
            # what the tool binds itself (a partial's keyword, its RunContext) is not the model's
            own = key in self.preset or (key == "ctx" and self.takes_ctx)
            if given is None and own:
                raise ToolArgumentError(f"{self.spec.name}() got an unexpected argument {key!r}")
            if param is None:
                if self.var_kw:
                    kwargs[key] = value
                    continue
                raise ToolArgumentError(f"{self.spec.name}() got an unexpected argument {key!r}")
            passed = given is not None and (own or (key in given and given[key] is value))
            if (
                not passed
                and key in self.hints
                and param.kind is not param.VAR_POSITIONAL
                and not _typed(value, self.hints[key])
            ):
                try:
                    value = strict.structure(value, self.hints[key])
                except Exception as exc:
                    why = why_not(exc, key)
                    by = "" if given is None else " (set by a before_tool hook)"
                    raise ToolArgumentError(
                        f"argument {key!r} of {self.spec.name}{by}: expected "
                        f"{_type_name(self.hints[key])}, got {json_text(value)}"
                        + (f" ({why})" if why else "")
                    ) from exc
            if key in self.positional_only:
                args.append(value)
            elif param.kind is param.VAR_POSITIONAL:
                args.extend(value)
            else:
                kwargs[key] = value
        missing = [
            n
            for n, p in self.params.items()
            if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and n not in arguments
            and n != "ctx"
            and not (self.method and n == self.names[0])
        ]
        if missing:
            raise ToolArgumentError(
                f"{self.spec.name}() is missing argument(s): {', '.join(missing)}"
            )
        if self.passes_ctx and "ctx" not in arguments:
            kwargs["ctx"] = current_var.get()
        return args, kwargs

    def invoke(self, call: ToolCall) -> Any:
        raw = call.raw
        if isinstance(raw, _Direct):
            if call.arguments is raw.arguments:
                if self.passes_ctx and "ctx" not in raw.arguments:
                    return raw.fn(*raw.args, **raw.kwargs, ctx=current_var.get())
                return raw.fn(*raw.args, **raw.kwargs)
            args, kwargs = self._arguments(call.arguments, raw.arguments)
            if self.method and raw.args and self.names[0] not in call.arguments:
                args.insert(0, raw.args[0])  # the instance the method was called on
            return raw.fn(*args, **kwargs)
        args, kwargs = self._arguments(call.arguments, None)  # from a model: JSON values
        if isinstance(raw, OnInstance):
            return raw.method(*args, **kwargs)
        return self.fn(*args, **kwargs)


def _typed(value: Any, tp: Any) -> bool:
    """Whether `value` is of type `tp` already, as no JSON value is: an enum member, a
    dataclass or attrs instance, or a list, set, tuple or dict of them. A `before_tool` hook
    may set such a value; it reaches the tool as it is, where the model's JSON is structured."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is not None and not args:  # `typing.List` bare: items of any type, as JSON's
        return False
    if origin is typing.Annotated:
        return _typed(value, args[0])
    if is_union(tp):
        return any(_typed(value, option) for option in args)
    if origin in (list, set, frozenset) or (origin is tuple and args[1:] == (Ellipsis,)):
        items = cast("Iterable[Any]", value)
        return isinstance(value, origin) and all(_typed(item, args[0]) for item in items)
    if origin in (dict, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        return isinstance(value, Mapping) and all(_typed(v, args[1]) for v in mapping.values())
    return (
        inspect.isclass(tp)
        and (issubclass(tp, enum.Enum) or dataclasses.is_dataclass(tp) or attrs.has(tp))
        and isinstance(value, tp)
    )


def _type_name(tp: Any) -> str:
    """`tp` as written in a signature: `Optional[Location]`, not `Optional`."""
    if typing.get_origin(tp) is None and hasattr(tp, "__name__"):
        return str(tp.__name__)
    pieces = _QUOTED.split(repr(tp))  # a Literal's strings are left as they are
    pieces[::2] = [_MODULES.sub("", p) for p in pieces[::2]]
    return "".join(pieces)


_QUOTED = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")
_MODULES = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")
