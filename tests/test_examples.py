"""Every example runs offline and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

# What each example must print: evidence that the hooks really ran.
EXPECTED: dict[str, list[str]] = {
    "agent.py": [
        "paused: interrupted, asking {'question': 'delete draft.txt?'}",  # hw.interrupt
        "answer: Done: draft.txt is gone, notes.txt is left.",  # resumed with a decision
        "files left: ['notes.txt']",  # the approved tool call ran
        "chunks: Nothing else to tidy.",  # agent.stream events
    ],
    "quickstart.py": [
        "(Answer in one sentence.) You asked: what is the deploy key.",  # system prompt hook
        "[redacted]",  # streamed secret redacted
        "[timed] inner call returned in",  # generator-form wrap hook
        "[after_model]",
        "18°C and clear in Paris",  # tool allowed
        "aborted: city 'Atlantis' is not allowed",  # tool guard
        "before_model  1     add_system_prompt",  # explain table
    ],
    "openai_guard.py": [
        "answer: The staging key is [redacted].",  # after_model redaction
        "sent to the model: ['system', 'user']",  # before_model system prompt, on the wire
        "streamed: Deploys run at noon; key [redacted].",  # on_chunk redaction
        "[usage] 9 in, 11 out",  # on_usage from the stream
        "refused: I can't help with passwords.",  # Respond short-circuit
        "requests sent for it: 0",
        "one method hooked: ['system', 'user']",  # hw.wrap of one SDK method
        "the client itself: ['user']",  # ... leaves the client without hooks
    ],
    "anthropic_stream.py": [
        "final text: hello from a very loud model",  # on_chunk through messages.stream()
        "[after_model] the caller received 28 characters",
        "first piece only: one",
        "[on_abort] closed by consumer",  # early exit
        "streams the provider saw closed early: 1",
    ],
    "fallback_stream.py": [
        "[log] Fallback: the first model failed (InternalServerError",  # the primary is down
        "[after_model] answered by Anthropic(claude-sonnet-4-5): 'Paris is the capital",
        "pieces: ['Paris is', ' the cap', 'ital of ', 'France.']",  # streamed as it came
        "a ChatCompletion: True - Paris is the capital of France.",  # the caller's own type
        "sent to Claude: claude-sonnet-4-5 streamed",
    ],
    "patch_everything.py": [
        "answer: You said: ping [audited]",
        "audited calls: ['gpt-4o-mini: ping', 'claude-haiku-4-5: ping']",
        "after unpatch: You said: after unpatch",
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
