"""Stream from an Anthropic client through hooks: chunks are redacted as they arrive, the
SDK's `messages.stream()` helpers keep working, and leaving early closes the stream at once.
Runs offline against hookwrap's fake provider.

Run: python examples/anthropic_stream.py
"""

from __future__ import annotations

import time
from typing import Any

import hookwrap as hw
from hookwrap.testing import FakeProvider


@hw.on_chunk
def no_shouting(chunk: hw.Chunk) -> hw.Chunk | None:
    """Lower-case every streamed piece of text (a stand-in for any per-chunk filter)."""
    if chunk.kind == "text":
        return chunk.replace(text=chunk.text.lower())
    return None


@hw.wrap_model
def timed(request: hw.ModelRequest) -> Any:
    """Generator form: the same hook serves sync, async and streamed calls."""
    start = time.perf_counter()
    response = yield request
    print(f"  [timed] first byte after {1000 * (time.perf_counter() - start):.1f} ms")
    return response


@hw.after_model
def report(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    print(f"  [after_model] the caller received {len(response.text)} characters")


@hw.on_abort
def closed_early(info: hw.FinishInfo) -> None:
    print(f"  [on_abort] {info.reason}")


def main() -> None:
    provider = FakeProvider(["HELLO FROM A VERY LOUD MODEL", "ONE TWO THREE FOUR FIVE SIX"])
    client = hw.wrap(provider.anthropic(), use=[no_shouting, timed, report, closed_early])
    question = [{"role": "user", "content": "Say hello."}]

    with client.messages.stream(model="claude-haiku-4-5", max_tokens=64, messages=question) as s:
        for text in s.text_stream:
            print(f"  chunk: {text!r}")
        print("final text:", s.get_final_text())

    stream = client.messages.create(
        model="claude-haiku-4-5", max_tokens=64, messages=question, stream=True
    )
    for event in stream:
        if event.type == "content_block_delta":
            print("first piece only:", event.delta.text)  # type: ignore[union-attr]
            break
    stream.close()
    print("streams the provider saw closed early:", provider.closed)


if __name__ == "__main__":
    main()
