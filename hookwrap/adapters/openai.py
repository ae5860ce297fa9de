"""OpenAI clients (`OpenAI`, `AsyncOpenAI`, Azure): Chat Completions, Responses, Completions.

Imports nothing from `openai` until a client is wrapped or the SDK is patched.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from .._stack import Chain
from ._apiclient import ClientProxy, Layer, patch_classes, unpatch_classes, wrap_client
from ._apiclient import hook_resource as _hook_resource
from ._openai_wire import ChatCompletionsWire, CompletionsWire, ResponsesWire

__all__ = ["WIRES", "hook_resource", "is_client", "is_resource", "patch", "unpatch", "wrap"]

# longest path first: "/chat/completions" also ends with "/completions"
WIRES = (ChatCompletionsWire(), ResponsesWire(), CompletionsWire())


def is_client(obj: Any) -> bool:
    """An OpenAI client (without importing `openai` when the program has not)."""
    module = sys.modules.get("openai._base_client")
    return module is not None and isinstance(obj, module.BaseClient)


def is_resource(obj: Any) -> bool:
    """A resource of a client (`client.chat.completions`, ...), sync or async."""
    module = sys.modules.get("openai._resource")
    return module is not None and isinstance(obj, (module.SyncAPIResource, module.AsyncAPIResource))


def hook_resource(resource: Any, chain: Chain) -> Any:
    return _hook_resource(resource, chain, WIRES, f"{type(resource).__name__} of openai")


def wrap(client: Any, chain: Chain) -> ClientProxy:
    return wrap_client(client, chain, WIRES, f"{type(client).__name__} client")


def patch(chain: Chain) -> None:
    _base_client = importlib.import_module("openai._base_client")
    patch_classes(
        _base_client.SyncAPIClient, _base_client.AsyncAPIClient, Layer(chain, WIRES, "openai")
    )


def unpatch() -> None:
    _base_client = importlib.import_module("openai._base_client")
    unpatch_classes(_base_client.SyncAPIClient, _base_client.AsyncAPIClient)
