"""Fixtures shared by the test files."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture
def no_gc() -> Iterator[None]:
    """No cyclic garbage collection: what ends "at once" cannot be the collector's doing."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
