"""The README's tour and the docs pages written as whole programs run as shown."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import hookwrap as hw

ROOT = Path(__file__).parent.parent
FENCE = re.compile(r"```python\n(.*?)```", re.S)

# Pages whose Python blocks, run top to bottom in one namespace, form a complete program.
# The other pages show fragments (`my_llm` stands for the reader's own function).
WHOLE_PAGES = [
    "getting-started.md",
    "streams.md",
    "hooks/index.md",
    "hooks/before-agent.md",
    "hooks/before-model.md",
    "hooks/before-tool.md",
    "hooks/after-tool.md",
    "hooks/on-start.md",
    "hooks/on-iteration.md",
    "hooks/after-agent.md",
    "hooks/on-finish.md",
    "hooks/on-chunk.md",
    "hooks/on-usage.md",
    "hooks/wrap-tool.md",
    "index.md",
    "middleware/index.md",
    "middleware/retry.md",
    "middleware/fallback.md",
]


def run_blocks(path: Path, expected_errors: int = 0) -> str:
    blocks = FENCE.findall(path.read_text(encoding="utf-8"))
    assert blocks, f"{path.name} has no python blocks"
    namespace: dict[str, object] = {"__name__": "docs", "hw": hw}
    out = io.StringIO()
    errors: list[str] = []
    for block in blocks:
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(block, str(path), "exec"), namespace)
            except TypeError as exc:  # a page may show the error a wrong hook gets
                errors.append(str(exc))
    assert len(errors) == expected_errors, errors
    assert all("expected" in e for e in errors), errors
    return out.getvalue()


def test_readme_tour_runs_and_prints_what_it_says() -> None:
    printed = run_blocks(ROOT / "README.md")
    assert "2 messages in; the key is [redacted]" in printed
    assert "the key is [redacted]\n" in printed  # the wrapped OpenAI client
    assert "sk-abcdef" not in printed
    assert "refused to read /etc/shadow" in printed
    assert "system_prompt" in printed  # the explain table
    assert "the backup model answers\n" in printed  # Retry, then Fallback


@pytest.mark.parametrize("page", WHOLE_PAGES)
def test_docs_page_runs(page: str) -> None:
    run_blocks(ROOT / "docs" / page, expected_errors=1 if page == "hooks/index.md" else 0)


def test_before_tool_page_shows_the_guard_refusing() -> None:
    printed = run_blocks(ROOT / "docs" / "hooks" / "before-tool.md")
    assert "city 'Atlantis' is not allowed" in printed
