"""Built-in middleware: each one a `hw.Middleware` class in its own module."""

from __future__ import annotations

from ._retry import Retry

__all__ = [
    "Retry",
]
