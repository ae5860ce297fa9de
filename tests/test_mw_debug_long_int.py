"""Debug shows an int whose repr raises (more digits than Python writes as text) as
`<int instance at 0x...>`, as it shows any value whose repr raises, instead of dropping the
line."""

from __future__ import annotations

import io
import re

import hookwrap as hw
from hookwrap.middleware import Debug


def test_long_int_result_is_shown_as_an_instance() -> None:
    out = io.StringIO()

    @hw.tool(use=[Debug(out=out)])
    def t() -> object:
        """t"""
        return {"n": 10**5000, "m": 10**50}

    t()
    lines = [line for line in out.getvalue().splitlines() if "after_tool t outcome" in line]
    assert len(lines) == 1
    assert re.search(r"\{'n': <int instance at 0x[0-9a-f]+>, 'm': 1000", lines[0])
