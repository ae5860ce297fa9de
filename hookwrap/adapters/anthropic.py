"""Anthropic clients (`Anthropic`, `AsyncAnthropic`, Bedrock, Vertex): Messages, beta included.

Imports nothing from `anthropic` until a client is wrapped or the SDK is patched.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from .._stack import Chain
from ._anthropic_wire import MessagesWire
from ._apiclient import ClientProxy, Layer, patch_classes, unpatch_classes, wrap_client
from ._apiclient import hook_resource as _hook_resource

__all__ = ["WIRES", "hook_resource", "is_client", "is_resource", "patch", "unpatch", "wrap"]

WIRES = (MessagesWire(),)


def is_client(obj: Any) -> bool:
    """An Anthropic client (without importing `anthropic` when the program has not)."""
    module = sys.modules.get("anthropic._base_client")
    return module is not None and isinstance(obj, module.BaseClient)


def is_resource(obj: Any) -> bool:
    """A resource of a client (`client.messages`, ...), sync or async."""
    module = sys.modules.get("anthropic._resource")
    return module is not None and isinstance(obj, (module.SyncAPIResource, module.AsyncAPIResource))


def hook_resource(resource: Any, chain: Chain) -> Any:
    return _hook_resource(resource, chain, WIRES, f"{type(resource).__name__} of anthropic")


def wrap(client: Any, chain: Chain) -> ClientProxy:
    return wrap_client(client, chain, WIRES, f"{type(client).__name__} client")


def patch(chain: Chain) -> None:
    _base_client = importlib.import_module("anthropic._base_client")
    patch_classes(
        _base_client.SyncAPIClient, _base_client.AsyncAPIClient, Layer(chain, WIRES, "anthropic")
    )


def unpatch() -> None:
    _base_client = importlib.import_module("anthropic._base_client")
    unpatch_classes(_base_client.SyncAPIClient, _base_client.AsyncAPIClient)
