"""Adapters map native model calls to hookwrap's neutral types and back.

`function` serves plain Python callables; SDK adapters live beside it and import their SDK
only when used.
"""

from __future__ import annotations

from .function import FunctionAdapter

__all__ = ["FunctionAdapter"]
