"""Built-in middleware: each one a `hw.Middleware` class in its own module."""

from __future__ import annotations

from ._calllimit import CallLimit
from ._debug import Debug
from ._fallback import Fallback
from ._retry import Retry
from ._toolsearch import ToolSearch

__all__ = [
    "CallLimit",
    "Debug",
    "Fallback",
    "Retry",
    "ToolSearch",
]
