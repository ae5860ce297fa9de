"""The base class of hookwrap's proxies: `wrapt.ObjectProxy`, generic to type checkers only.

wrapt releases before 2.2 cannot subscript it at run time (`ObjectProxy[Any]` is a
`TypeError` there), and many environments pin wrapt 1.x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wrapt

__all__ = ["ObjectProxy"]

if TYPE_CHECKING:
    ObjectProxy = wrapt.ObjectProxy[Any]
else:
    ObjectProxy = wrapt.ObjectProxy
