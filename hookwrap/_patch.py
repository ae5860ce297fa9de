"""`hw.patch`: hooks on every client of an SDK, for code you do not control."""

from __future__ import annotations

import importlib
import inspect
import threading
import weakref
from contextvars import ContextVar
from typing import Any

from ._stack import Chain, flatten, refuse_tools_only

__all__ = ["patch", "unpatch"]

# SDK name as users write it -> the adapter module that knows how to patch it
_SDKS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google-genai": "google",
    "google.genai": "google",
    "google": "google",
}

_patched: dict[str, Chain] = {}  # keyed by the top-level module of the SDK's classes

# The patched stacks the model call being made passes by, their hooks running already
# around it: set while a `Fallback` of one asks an alternative, which may be a client of a
# patched SDK (a patched SDK's request then goes straight to the SDK).
passing: ContextVar[tuple[Chain, ...]] = ContextVar("hookwrap_passing", default=())


def holding(owner: object) -> tuple[Chain, ...]:
    """The patched stacks that hold a hook of `owner` (a middleware)."""
    return tuple(
        chain
        for chain in list(_patched.values())
        if any(getattr(hook.target, "__self__", None) is owner for hook in chain.hooks)
    )


# the modules of the SDKs `hw.patch` knows, each followed by a dot
_SDK_MODULES = ("openai.", "anthropic.", "google.genai.")


def _sdk_of(cls: type) -> str | None:
    """The top-level module of the SDK `cls` is a class of, if a patchable one: found
    through its bases, for a subclass of a client in the user's own module
    (`class MyClient(OpenAI)`) is the SDK's client all the same."""
    for base in cls.__mro__:
        if f"{base.__module__}.".startswith(_SDK_MODULES):
            return base.__module__.partition(".")[0]
    return None


def patch_of(target: Any) -> tuple[str, Chain] | None:
    """The SDK `target` (a client, resource or method) belongs to, and the hooks
    `hw.patch` put on it, if patched."""
    wrapped = getattr(target, "__wrapped__", None)
    if not inspect.ismethod(target) and inspect.ismethod(wrapped):
        target = wrapped  # `resource.with_raw_response.create`, say: a function around it
    if inspect.ismethod(target):
        module = getattr(target.__func__, "__module__", None) or ""
        if not f"{module}.".startswith(_SDK_MODULES):
            return None  # the user's own method (of a subclass of a client): not the SDK's
    owner: object = target.__self__ if inspect.ismethod(target) else target
    name = _sdk_of(type(owner))
    chain = None if name is None else _patched.get(name)
    return None if name is None or chain is None else (name, chain)


_lock = threading.Lock()  # patching is a check, then a change of classes: one at a time


class Lent(Chain):
    """The hooks of a client's layer but those the patch of its SDK runs already, which
    run there, once, while it lasts; `full` holds them all, run again once it is removed."""

    __slots__ = ("full",)

    def __init__(self, full: Chain, patch: Chain) -> None:
        super().__init__(hook for hook in full.hooks if hook not in patch.hooks)
        self.full = full


# SDK -> the layers (of clients wrapped while it was patched) that lend the patch hooks
_lenders: dict[str, weakref.WeakSet[Any]] = {}


def lend(layer: Any, target: Any) -> None:
    """Let the patch of the SDK of `target` (a client or resource, wrapped just now in
    `layer`) run the hooks of `layer` it has too, for as long as it lasts: they run once,
    and in `layer` again once it is removed. `layer.chain` is the hooks it runs,
    `layer.run(chain)` changes them."""
    with _lock:
        found = patch_of(target)
        if found is None or not any(hook in found[1].hooks for hook in layer.chain.hooks):
            return
        layer.run(Lent(layer.chain, found[1]))
        _lenders.setdefault(found[0], weakref.WeakSet()).add(layer)


def _adapter(sdk: str) -> tuple[str, Any]:
    if not isinstance(sdk, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"hw.patch takes an SDK's name, one of {sorted(set(_SDKS))} (got "
            f"{type(sdk).__name__}: {sdk!r:.60})"
        )
    name = _SDKS.get(sdk)
    if name is None:
        raise ValueError(f"hw.patch knows the SDKs {sorted(set(_SDKS))} (got {sdk!r})")
    return name, importlib.import_module(f"hookwrap.adapters.{name}")


def patch(sdk: str, /, *, use: Any = ()) -> None:
    """Put the hooks of `use` around every model call the SDK makes, from every client,
    including clients made before this call and classes imported before it.

    A patched stack serves sync and async clients alike, so its `wrap_*` hooks must be
    written in the generator form. Patching again with the same hooks does nothing.
    """
    name, adapter = _adapter(sdk)
    refuse_tools_only(use, "hw.patch")
    chain = Chain(flatten(use))
    for hook in chain.hooks:
        if hook.spec.form == "call_next" and hook.async_twin() is None:
            raise TypeError(
                f"hw.patch({sdk!r}): {hook.label} takes call_next, which ties it to sync or "
                "async calls; a patched SDK serves both, so write it in the generator form:\n"
                "    def hook(request):\n        response = yield request\n        return response"
            )
    with _lock:
        found = _patched.get(name)
        if found is not None:
            if found.hooks == chain.hooks:
                return
            raise ValueError(
                f"hw.patch({sdk!r}): the SDK is patched already with other hooks; "
                f"call hw.unpatch({sdk!r}) first"
            )
        adapter.patch(chain)
        _patched[name] = chain


def unpatch(sdk: str | None = None, /) -> None:
    """Restore the SDK (every patched SDK when `sdk` is None) exactly as it was."""
    names = None if sdk is None else [_adapter(sdk)[0]]
    with _lock:
        for name in list(_patched) if names is None else names:
            if _patched.pop(name, None) is not None:
                importlib.import_module(f"hookwrap.adapters.{name}").unpatch()
                for layer in _lenders.pop(name, ()):  # the hooks it lent the patch, back
                    layer.run(layer.chain.full)
