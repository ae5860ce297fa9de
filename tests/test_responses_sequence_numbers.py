"""A Responses stream's events go out numbered 0, 1, 2, ... (`sequence_number`), however
the hooks changed it (docs/hooks/wrap-model.md: the caller "still gets a well-formed stream
of its SDK's kind"): a chunk expanded into several, chunks held back and released later
(ContentGuard), dropped or added leave no repeat and no gap."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import ContentGuard
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")

TEXT = "The staging key is sk-live4f9a2b7c and more text after it"


@hw.on_chunk
def doubled(chunk: hw.Chunk) -> Any:
    if chunk.kind == "text":
        return [chunk, chunk.replace(text="|")]
    return None


@hw.on_chunk
def no_spaces(chunk: hw.Chunk) -> Any:
    return hw.DROP if chunk.kind == "text" and chunk.text.startswith(" ") else None


HOOKS = {
    "none": [],
    "expanded": [doubled],
    "dropped": [no_spaces],
    "held-back": [ContentGuard(rules=[(r"sk-[A-Za-z0-9]{8,40}", "[key]")])],
}


@pytest.mark.parametrize("hooks", HOOKS.values(), ids=HOOKS.keys())
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_responses_streams_events_are_numbered_in_order(hooks: list[Any], is_async: bool) -> None:
    fake = FakeProvider([TEXT], chunk_size=3)
    client = hw.wrap(fake.openai(is_async), use=hooks)
    if is_async:

        async def read() -> list[Any]:
            stream = await client.responses.create(model="m", input="x", stream=True)
            return [event async for event in stream]

        events = asyncio.run(read())
    else:
        events = list(client.responses.create(model="m", input="x", stream=True))
    numbers = [event.sequence_number for event in events]
    assert numbers == list(range(len(events)))
    assert events[-1].type == "response.completed"
