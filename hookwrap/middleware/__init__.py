"""Built-in middleware: each one a `hw.Middleware` class in its own module."""

from __future__ import annotations

from ._calllimit import CallLimit
from ._debug import Debug
from ._fallback import Fallback
from ._filesystem import Filesystem
from ._filesystem import FilesystemError
from ._retry import Retry
from ._skills import Skills
from ._timeout import Timeout
from ._toolcache import ToolCache
from ._toolsearch import ToolSearch

__all__ = [
    "CallLimit",
    "Debug",
    "Fallback",
    "Filesystem",
    "FilesystemError",
    "Retry",
    "Skills",
    "Timeout",
    "ToolCache",
    "ToolSearch",
]
