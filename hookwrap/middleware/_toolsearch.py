"""ToolSearch: tools hidden from the model until a `tool_search` call in the history selects
them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from .._convert import message_from
from .._hooks import Middleware, before_model
from .._tool import ToolArgumentError
from .._types import Message, ModelRequest, ToolSpec
from .._wrap import Tool, tool
from ._shared import agent_tool

__all__ = ["SEARCH_TOOL", "ToolSearch"]

#: The name of the tool `ToolSearch` provides.
SEARCH_TOOL = "tool_search"

_DESCRIPTION = (
    "Find more tools. Some tools are hidden until you search for them: give a regular "
    "expression (case-insensitive) matched against tool names and descriptions; the "
    "matching tools can be called from your next turn on. Returns "
    '{"selectedTools": [names of the matching tools]}.'
)

_EXPECTED = "ToolSearch(dynamic_tools=...) expects a non-empty list of hw.Tool or hw.ToolSpec"


def _dynamic(item: object, index: int) -> Tool[..., Any] | ToolSpec:
    """`item` as a `ToolSpec`, or as the `Tool` an agent makes of it (anything
    `hw.Agent(tools=...)` takes: a tool method read from an instance, a plain function)."""
    if isinstance(item, ToolSpec):
        found: Tool[..., Any] | ToolSpec = item
    elif callable(item):
        argument = "ToolSearch(dynamic_tools=...)"
        found = agent_tool(item, argument, _EXPECTED, f" at index {index}")
    else:
        raise TypeError(f"{_EXPECTED} (got {type(item).__name__}: {item!r:.80} at index {index})")
    name: object = _spec(found).name
    if not isinstance(name, str) or not name:
        raise ValueError(f"{_EXPECTED} with names (got the name {name!r} at index {index})")
    if name == SEARCH_TOOL:
        raise ValueError(
            f"{_EXPECTED} (got a tool named {SEARCH_TOOL!r} at index {index}: that name is "
            "ToolSearch's own tool)"
        )
    return found


def _spec(item: Tool[..., Any] | ToolSpec) -> ToolSpec:
    return item if isinstance(item, ToolSpec) else item.spec


def _selected_in(message: Message) -> list[str]:
    """The `selectedTools` of a `tool_search` result message; [] if it holds none (an
    error text, a result edited into something else)."""
    try:
        data: object = json.loads(message.text)
    except ValueError:
        return []
    if not isinstance(data, Mapping):
        return []
    names: object = cast("Mapping[str, object]", data).get("selectedTools")
    if not isinstance(names, list):
        return []
    return [n for n in cast("list[object]", names) if isinstance(n, str)]


class ToolSearch(Middleware):
    """Hide `dynamic_tools` from the model until it asks for them with `tool_search`.

    The middleware provides the tool ``tool_search(regex_pattern)``, which returns
    ``{"selectedTools": [...]}``: the dynamic tools whose name or description the pattern
    matches (`re.search`, case-insensitive). Before each model call, the request's tools are
    rewritten: `tool_search` is added, the dynamic tools selected by the `tool_search`
    results still in the history are added (if missing), the other dynamic tools removed.
    Selections accumulate over several searches and vanish when the history is trimmed.

    `tools` holds `tool_search` and the dynamic tools given as tools, so that an agent can
    run them once the model calls them; the model sees them only once selected.

    Args:
        dynamic_tools: the tools to hide: anything `hw.Agent(tools=...)` takes as a tool
            (an `hw.Tool`, a tool method read from an instance, a plain function, each
            kept as the `hw.Tool` the agent would make of it) or `hw.ToolSpec`s (for tools
            run elsewhere); names must be unique.
    """

    def __init__(self, *, dynamic_tools: Sequence[Callable[..., Any] | ToolSpec]) -> None:
        if not isinstance(dynamic_tools, (list, tuple)):
            single = isinstance(dynamic_tools, ToolSpec) or callable(dynamic_tools)
            hint = "; put a single tool in a list: dynamic_tools=[tool]" if single else ""
            raise TypeError(
                f"{_EXPECTED} (got {type(dynamic_tools).__name__}: {dynamic_tools!r:.80}){hint}"
            )
        if not dynamic_tools:
            raise ValueError(f"{_EXPECTED} (got an empty {type(dynamic_tools).__name__})")
        found: list[Tool[..., Any] | ToolSpec] = []
        specs: dict[str, ToolSpec] = {}
        for index, item in enumerate(cast("Sequence[object]", dynamic_tools)):
            found.append(_dynamic(item, index))
            spec = _spec(found[-1])
            if spec.name in specs:
                raise ValueError(
                    f"{_EXPECTED} with unique names (got {spec.name!r} twice, the second "
                    f"at index {index})"
                )
            specs[spec.name] = spec
        self.dynamic_tools: tuple[Tool[..., Any] | ToolSpec, ...] = tuple(found)
        self._specs = specs
        self.search_tool: Tool[[str], dict[str, list[str]]] = tool(
            self.search, name=SEARCH_TOOL, description=_DESCRIPTION
        )
        self._search_spec = self.search_tool.spec
        runnable = (t for t in self.dynamic_tools if isinstance(t, Tool))
        self.tools = (self.search_tool, *runnable)

    def __repr__(self) -> str:
        return f"ToolSearch(dynamic_tools={list(self._specs)!r})"

    def search(self, regex_pattern: str) -> dict[str, list[str]]:
        """Select the tools whose name or description matches a regular expression.

        Args:
            regex_pattern: a Python regular expression, searched case-insensitively in
                each tool's name and description, e.g. "weather|forecast".
        """
        try:
            pattern = re.compile(regex_pattern, re.IGNORECASE)
        except (re.error, TypeError) as exc:
            raise ToolArgumentError(
                f"{SEARCH_TOOL}: {regex_pattern!r} is not a valid regular expression ({exc})"
            ) from None
        found = [
            name
            for name, spec in self._specs.items()
            if pattern.search(name) or pattern.search(spec.description)
        ]
        return {"selectedTools": found}

    def selected(self, messages: Iterable[Message | Mapping[str, Any]]) -> tuple[str, ...]:
        """Names of the dynamic tools selected by the `tool_search` results in `messages`
        (`Message`s or chat dicts), in `dynamic_tools` order.

        A result counts while both the assistant message calling `tool_search` and the
        ``tool`` message answering it (same `tool_call_id`) are in `messages`.
        """
        read = tuple(map(message_from, messages))
        calls = {
            call.id
            for m in read
            if m.role == "assistant"
            for call in m.tool_calls
            if call.name == SEARCH_TOOL
        }
        if not calls:
            return ()
        names: set[str] = set()
        for m in read:
            if m.role == "tool" and m.tool_call_id in calls:
                names.update(_selected_in(m))
        return tuple(name for name in self._specs if name in names)

    @before_model
    def offer_tools(self, request: ModelRequest) -> ModelRequest | None:
        """Offer `tool_search` and the selected dynamic tools; hide the unselected ones.

        The request's other tools keep their places; a spec named ``tool_search`` is
        replaced by this middleware's own.
        """
        selected = set(self.selected(request.messages))
        dynamic = self._specs
        placed: set[str] = set()
        tools: list[ToolSpec] = []
        for spec in request.tools:
            name = spec.name
            if name == SEARCH_TOOL or name in dynamic:
                if name in placed or (name in dynamic and name not in selected):
                    continue
                placed.add(name)
                if name == SEARCH_TOOL:
                    spec = self._search_spec
            tools.append(spec)
        if SEARCH_TOOL not in placed:
            tools.append(self._search_spec)
        missing = selected - placed
        tools.extend(spec for name, spec in dynamic.items() if name in missing)
        if tuple(tools) == request.tools:
            return None
        return request.replace(tools=tools)
