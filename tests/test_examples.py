"""Every example runs offline and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

# What each example must print: evidence that the hooks really ran.
EXPECTED: dict[str, list[str]] = {
    "quickstart.py": [
        "(Answer in one sentence.) You asked: what is the deploy key.",  # system prompt hook
        "[redacted]",  # streamed secret redacted
        "[timed] inner call returned in",  # generator-form wrap hook
        "[after_model]",
        "18°C and clear in Paris",  # tool allowed
        "aborted: city 'Atlantis' is not allowed",  # tool guard
        "before_model  1     add_system_prompt",  # explain table
    ],
}


def test_every_example_has_expectations() -> None:
    assert {p.name for p in EXAMPLES} == set(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_offline(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "", "PYTHONPATH": str(path.parent.parent), "NO_PROXY": "*"},
    )
    assert done.returncode == 0, done.stderr
    for fragment in EXPECTED[path.name]:
        assert fragment in done.stdout
    assert "sk-live-" not in done.stdout
