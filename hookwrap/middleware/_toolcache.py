"""`ToolCache`: answers a tool call the same tool already answered for the same arguments."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any, cast

from .._errors import check_int
from .._hooks import Middleware, async_twin, before_agent, wrap_tool
from .._tool import bound_to
from .._types import AgentSetup, ToolCall
from ..stores._base import Store, check_store, check_ttl
from ._shared import AFTER_OTHERS, agent_tool, check_tool_names, given_name

__all__ = ["ToolCache"]

log = logging.getLogger("hookwrap")

_now = time.monotonic  # the clock the in-memory cache's expiry reads; tests replace it

_MISS: Any = object()
_PREFIX = "hookwrap:toolcache:"


def _single_use(result: object) -> bool:
    """Iterators are consumed by their first reader: a cached one would come back empty."""
    return hasattr(result, "__next__") or hasattr(result, "__anext__")


class _Memory:
    """The default storage: a least-recently-used dict of results, in this process."""

    __slots__ = ("_data", "_lock", "max_size", "ttl")

    def __init__(self, max_size: int, ttl: float | None) -> None:
        self.max_size = max_size
        self.ttl = ttl
        self._data: OrderedDict[str, tuple[Any, float | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return _MISS
            result, expires = entry
            if expires is not None and _now() >= expires:
                del self._data[key]
                return _MISS
            self._data.move_to_end(key)
            return result

    def set(self, key: str, result: Any) -> None:
        if _single_use(result):
            return
        expires = None if self.ttl is None else _now() + self.ttl
        with self._lock:
            self._data[key] = (result, expires)
            self._data.move_to_end(key)
            while len(self._data) > self.max_size:
                self._data.popitem(last=False)

    async def aget(self, key: str) -> Any:
        return self.get(key)

    async def aset(self, key: str, result: Any) -> None:
        self.set(key, result)


class _Shared:
    """Storage in a `Store`: results wrapped as ``[result]`` (so a `None` result is told
    apart from a missing key), under the keys every process computes alike.

    The cache is an optimisation, so a store that fails is logged and the call goes on as
    a miss; a result that is not JSON data is simply not kept.
    """

    __slots__ = ("store", "ttl")

    def __init__(self, store: Store, ttl: float | None) -> None:
        self.store = store
        self.ttl = ttl

    def get(self, key: str) -> Any:
        try:
            found = self.store.get(_PREFIX + key)
        except Exception as exc:
            return _failed("read", key, exc)
        return _unwrap(found)

    def set(self, key: str, result: Any) -> None:
        try:
            self.store.set(_PREFIX + key, [result], self.ttl)
        except TypeError as exc:
            log.debug("ToolCache: %s not cached: %s", key, exc)
        except Exception as exc:
            _failed("write", key, exc)

    async def aget(self, key: str) -> Any:
        try:
            found = await self.store.aget(_PREFIX + key)
        except Exception as exc:
            return _failed("read", key, exc)
        return _unwrap(found)

    async def aset(self, key: str, result: Any) -> None:
        try:
            await self.store.aset(_PREFIX + key, [result], self.ttl)
        except TypeError as exc:
            log.debug("ToolCache: %s not cached: %s", key, exc)
        except Exception as exc:
            _failed("write", key, exc)


def _unwrap(found: Any) -> Any:
    if not isinstance(found, list):
        return _MISS  # missing or expired
    wrapped: list[Any] = found  # pyright: ignore[reportUnknownVariableType]
    return wrapped[0] if len(wrapped) == 1 else _MISS  # not written by a ToolCache


def _failed(action: str, key: str, exc: Exception) -> Any:
    log.warning(
        "ToolCache: could not %s %s in the store (%s: %s)", action, key, type(exc).__name__, exc
    )
    return _MISS


def _tool_names(tools: object) -> frozenset[str] | None:
    expected = "ToolCache(tools=...) expects None or a collection of tool names (str) or tools"
    if tools is None:
        return None
    # A tool proxies its function's attributes, so it passes for a Collection: refuse it here.
    # A class (an Enum of tool names) is a collection, not a tool.
    single = isinstance(tools, str) or (callable(tools) and not isinstance(tools, type))
    if single or isinstance(tools, bytes) or not isinstance(tools, Collection):
        hint = "; put a single tool in a list: tools=[tool]" if single else ""
        raise TypeError(f"{expected} (got {type(tools).__name__}: {tools!r:.80}){hint}")
    items = cast("Collection[object]", tools)
    names: set[str] = set()
    for given in items:
        item = given_name(given)
        if callable(item):  # what the agent takes as a tool, named as the agent names it
            names.add(agent_tool(item, "ToolCache(tools=...)", expected).name)
        elif isinstance(item, str):
            names.add(item)
        else:
            raise TypeError(f"{expected} (got the item {type(given).__name__}: {given!r})")
    if not names:
        raise ValueError(f"{expected} (got an empty {type(items).__name__}, which caches nothing)")
    return frozenset(names)


class ToolCache(Middleware):
    """Answer a tool call from a cache when the same tool was called with the same arguments.

    The key is the tool's name and its arguments as canonical JSON (sorted keys, no
    spaces), so the order of the arguments does not matter. A call whose arguments are not
    JSON data goes through uncached; so do a tool not named in `tools` and a tool made of a
    method (its answer may depend on the instance it is called on), called directly or by
    an agent's model. Errors are never cached. A hit skips the tool and every hook inside
    `ToolCache` in the onion. In an `hw.Agent`, a name in `tools` that is none of the
    agent's tools is a `ValueError` when the agent starts.

    Args:
        store: a `hookwrap.stores` store to keep results in, shared by every process using
            it; results that are not JSON data are then not cached. `None`: an in-memory
            LRU cache of this object.
        ttl: seconds a result stays fresh; `None`: until evicted.
        max_size: entries the in-memory cache holds before it evicts the least recently
            used; does not apply to a `store`.
        tools: names of the tools to cache, or the tools (anything `hw.Agent(tools=...)`
            takes: a tool method read from an instance too); `None`: every tool.
    """

    name = "ToolCache"

    def __init__(
        self,
        *,
        store: Store | None = None,
        ttl: float | None = None,
        max_size: int = 100,
        tools: Collection[str | Callable[..., Any]] | None = None,
    ) -> None:
        check_store("ToolCache(store=...)", store)
        try:
            seconds = check_ttl(ttl)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"ToolCache(ttl=...): {exc}") from None
        check_int("ToolCache(max_size=...)", max_size, 1)
        self.store = store
        self.ttl = seconds
        self.max_size = max_size
        self.cached_tools = _tool_names(tools)  # `tools` is what a Middleware provides
        self._cache: _Memory | _Shared = (
            _Memory(max_size, seconds) if store is None else _Shared(store, seconds)
        )

    def __repr__(self) -> str:
        where = "memory" if self.store is None else repr(self.store)
        names = None if self.cached_tools is None else sorted(self.cached_tools)
        return f"ToolCache(store={where}, ttl={self.ttl}, max_size={self.max_size}, tools={names})"

    def key(self, call: ToolCall) -> str | None:
        """The cache key of `call` (``name:{canonical JSON arguments}``), or `None` if the
        call is not cached: its tool is not in `tools` or its arguments are not JSON data."""
        names = self.cached_tools
        if names is not None and call.name not in names:
            return None
        if bound_to(call) is not None:  # a method's answer may depend on its instance
            return None
        try:
            arguments = json.dumps(dict(call.arguments), sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):  # objects from a direct Python call, mixed key types
            return None
        return f"{call.name}:{arguments}"

    async def _acached(self, call: ToolCall, call_next: Any) -> Any:
        key = self.key(call)
        if key is None:
            return await call_next(call)
        found = await self._cache.aget(key)
        if found is not _MISS:
            return found
        result = await call_next(call)
        await self._cache.aset(key, result)
        return result

    @wrap_tool
    @async_twin(_acached)
    def cached(self, call: ToolCall, call_next: Any) -> Any:
        """Return the cached result of this call, or call the tool and cache what it returns."""
        key = self.key(call)
        if key is None:
            return call_next(call)
        found = self._cache.get(key)
        if found is not _MISS:
            return found
        result = call_next(call)
        self._cache.set(key, result)
        return result

    @before_agent(priority=AFTER_OTHERS)
    def check_tools(self, setup: AgentSetup) -> None:
        """Refuse, as the agent starts, a name in `tools` that is none of its tools (a typo):
        it would never be cached."""
        if self.cached_tools is not None:
            check_tool_names("ToolCache(tools=...)", self.cached_tools, setup)
