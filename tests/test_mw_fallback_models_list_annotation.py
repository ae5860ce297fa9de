"""`Fallback(models=...)` is annotated as the list it must be at run time, so a type
checker refuses the tuple that the constructor refuses (tests/typing/fallback_models.py
holds the checkers' side)."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from hookwrap.middleware import Fallback


def test_models_is_annotated_a_list() -> None:
    hints = typing.get_type_hints(Fallback.__init__)
    assert hints["models"] == list[Any]


def test_a_tuple_is_still_refused_at_run_time() -> None:
    with pytest.raises(TypeError, match=r"Fallback\(models=\.\.\.\) must be a list"):
        Fallback(models=typing.cast(Any, ("backup",)))
