"""Built-in middleware: each one a `hw.Middleware` class in its own module."""

from __future__ import annotations

from ._calllimit import CallLimit
from ._contentguard import ContentGuard
from ._contentguard import Filtered
from ._debug import Debug
from ._fallback import Fallback
from ._filesystem import Filesystem
from ._filesystem import FilesystemError
from ._retry import Retry
from ._skills import Skills
from ._telemetry import Telemetry
from ._timeout import Timeout
from ._toolapproval import ToolApproval
from ._toolcache import ToolCache
from ._toolsearch import ToolSearch

__all__ = [
    "CallLimit",
    "ContentGuard",
    "Debug",
    "Fallback",
    "Filesystem",
    "FilesystemError",
    "Filtered",
    "Retry",
    "Skills",
    "Telemetry",
    "Timeout",
    "ToolApproval",
    "ToolCache",
    "ToolSearch",
]
