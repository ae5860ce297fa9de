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
    "agent.md",
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


# Pages whose printed lines are checked: the lines (in order, together) they must print,
# or None for "what each `print(...)  # comment` on the page says".
PRINTS: dict[str, list[str] | None] = {
    "agent.md": [
        "interrupted {'question': 'delete a.txt?'}\nfinished Result: a.txt deleted True\n"
        "tool_result a.txt kept\nresult Result: a.txt kept\n"
    ],
    "stores.md": ["{'city': 'Paris', 'temp': 21}", "cannot store 'weather:oslo'"],
    "middleware/call-limit.md": [
        "CallLimit: model_calls=3 reached",
        "CallLimit: per_tool['search']=2 reached",
    ],
    "middleware/content-guard.md": None,
    "middleware/filesystem.md": [
        "['fs_list_files', 'fs_read_file', 'fs_write_file', 'fs_edit_file']",
        "path '../secrets.txt' is outside the root",
        "buy milk\ncall Grace\n",
    ],
    "middleware/skills.md": [
        "system: You are a release manager.\nsystem: You have skills",
        "- release-notes: Write release notes from a list of merged changes.",
        "Group the changes under Added, Changed and Fixed",
    ],
    "middleware/telemetry.md": [
        "It is sunny in Paris.\nhookwrap.run\n  chat gpt-4o\n  execute_tool weather\n"
        "  chat gpt-4o\n"
    ],
    "middleware/tool-approval.md": None,
    "middleware/tool-cache.md": ["looking up Paris\nParis: 21°C\nParis: 21°C\nlooking up Oslo"],
    "middleware/tool-search.md": [
        "['calculator', 'tool_search']\n{'selectedTools': ['get_weather']}\n"
        "['calculator', 'get_weather', 'tool_search']\nsunny in Oslo\n"
        "['calculator', 'tool_search']\n"
    ],
}


@pytest.mark.parametrize("page", sorted(PRINTS))
def test_a_page_prints_what_it_says(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a page that makes files makes them here
    path = ROOT / "docs" / page
    printed = run_blocks(path)
    expected = PRINTS[page]
    if expected is None:
        expected = re.findall(r"print\(.*\)  # (.+)", path.read_text(encoding="utf-8"))
        assert expected, f"{page} has no commented prints"
    for lines in expected:
        assert lines in printed


def test_before_tool_page_shows_the_guard_refusing() -> None:
    printed = run_blocks(ROOT / "docs" / "hooks" / "before-tool.md")
    assert "city 'Atlantis' is not allowed" in printed
