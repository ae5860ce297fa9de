"""A wrap hook's own stream, shared by the SDK tests: chunks that came from no provider."""

from __future__ import annotations

from typing import Any

import hookwrap as hw


def own_chunks(inner: Any, call_id: str) -> Any:
    """Text, then a whole tool call, in place of `inner` (the model's stream, read to its end
    and left out), as the same kind of iterator."""
    chunks = [
        hw.Chunk("text", "Let me "),
        hw.Chunk("text", "look."),
        hw.Chunk("tool_call_start", '{"city": "Paris"}', call_id, "weather"),
    ]
    if hasattr(inner, "__aiter__"):

        async def read_async() -> Any:
            async for _ in inner:
                pass
            for chunk in chunks:
                yield chunk

        return read_async()

    def read() -> Any:
        for _ in inner:
            pass
        yield from chunks

    return read()
