"""`Fallback` in `hw.patch`: an alternative that is a client of the patched SDK is asked
once, past the patched stack (whose hooks run already, around the call that failed); and
a wrapped client is labelled with its SDK's class."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import CallLimit, Fallback
from hookwrap.testing import FakeProvider

USER: Any = [{"role": "user", "content": "hi"}]
SDKS = {"openai": "openai", "anthropic": "anthropic", "google": "google.genai"}


@pytest.fixture(autouse=True)
def _unpatched() -> Iterator[None]:
    yield
    hw.unpatch()


def _client(provider: FakeProvider, sdk: str, is_async: bool) -> Any:
    if sdk == "google":
        client = provider.genai(max_retries=0)
        return client.aio if is_async else client
    return getattr(provider, sdk)(is_async, max_retries=0)


async def _aask(client: Any, sdk: str, stream: bool) -> str:
    if sdk == "google":
        if not stream:
            return str((await client.models.generate_content(model="m", contents="hi")).text)
        chunks = await client.models.generate_content_stream(model="m", contents="hi")
        return "".join([chunk.text or "" async for chunk in chunks])
    if sdk == "openai":
        made = await client.chat.completions.create(model="m", messages=USER, stream=stream)
        if not stream:
            return str(made.choices[0].message.content)
        return "".join([c.choices[0].delta.content or "" async for c in made if c.choices])
    made = await client.messages.create(model="m", max_tokens=9, messages=USER, stream=stream)
    if not stream:
        return str(made.content[0].text)
    return "".join([e.delta.text async for e in made if e.type == "content_block_delta"])


def _ask(client: Any, sdk: str, is_async: bool, stream: bool) -> str:
    if is_async:
        return asyncio.run(_aask(client, sdk, stream))
    if sdk == "google":
        if not stream:
            return str(client.models.generate_content(model="m", contents="hi").text)
        chunks = client.models.generate_content_stream(model="m", contents="hi")
        return "".join(chunk.text or "" for chunk in chunks)
    if sdk == "openai":
        made = client.chat.completions.create(model="m", messages=USER, stream=stream)
        if not stream:
            return str(made.choices[0].message.content)
        return "".join(c.choices[0].delta.content or "" for c in made if c.choices)
    made = client.messages.create(model="m", max_tokens=9, messages=USER, stream=stream)
    if not stream:
        return str(made.content[0].text)
    return "".join(e.delta.text for e in made if e.type == "content_block_delta")


SHAPES = pytest.mark.parametrize(
    ("is_async", "stream"),
    [(False, False), (False, True), (True, False), (True, True)],
    ids=["sync", "sync stream", "async", "async stream"],
)


@pytest.mark.parametrize("sdk", list(SDKS))
@SHAPES
def test_a_patched_fallback_to_a_client_of_its_sdk_asks_it_once(
    sdk: str, is_async: bool, stream: bool
) -> None:
    """Both down: one request each, then the backup's error. (The backup's request went
    through the patch too, and its `Fallback` fell back to the backup again and again.)"""
    pytest.importorskip(SDKS[sdk])
    primary, backup = FakeProvider([]), FakeProvider([])
    primary.fail(503)
    backup.fail(503, times=100)
    hw.patch(sdk, use=[Fallback(models=[(_client(backup, sdk, is_async), "backup")])])
    with pytest.raises(Exception) as raised:
        _ask(_client(primary, sdk, is_async), sdk, is_async, stream)
    assert "503" in str(raised.value) or "scripted" in str(raised.value)
    notes: list[str] = getattr(raised.value, "__notes__", [])
    assert any("the first model failed before" in note for note in notes)
    assert (len(primary.requests), len(backup.requests)) == (1, 1)


@pytest.mark.parametrize("sdk", list(SDKS))
@SHAPES
def test_the_patched_stack_runs_once_when_a_client_of_its_sdk_answers(
    sdk: str, is_async: bool, stream: bool
) -> None:
    """The patched hooks run once per logical call (a `CallLimit` of one call passes); the
    backup's own hooks (`hw.wrap`) run for its call."""
    pytest.importorskip(SDKS[sdk])
    primary, backup = FakeProvider([]), FakeProvider(["from the backup"])
    primary.fail(503)
    seen: list[str] = []

    @hw.before_model
    def patched(request: hw.ModelRequest) -> None:
        seen.append("patched")

    @hw.before_model
    def own(request: hw.ModelRequest) -> None:
        seen.append("own")

    alternative = hw.wrap(_client(backup, sdk, is_async), use=[own])
    limit = CallLimit(model_calls=1)
    hw.patch(sdk, use=[limit, patched, Fallback(models=[(alternative, "backup")])])
    assert _ask(_client(primary, sdk, is_async), sdk, is_async, stream) == "from the backup"
    assert seen == ["patched", "own"]
    assert len(backup.requests) == 1


def test_another_patched_sdk_keeps_its_hooks_for_the_alternative() -> None:
    """Only the stack that holds the `Fallback` is passed by: an alternative of another
    patched SDK runs that SDK's hooks, which did not run around the call."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary, backup = FakeProvider([]), FakeProvider(["from claude"])
    primary.fail(503)
    seen: list[str] = []

    @hw.before_model
    def on_anthropic(request: hw.ModelRequest) -> None:
        seen.append("anthropic")

    hw.patch("anthropic", use=[on_anthropic])
    hw.patch("openai", use=[Fallback(models=[(backup.anthropic(max_retries=0), "claude")])])
    assert _ask(primary.openai(max_retries=0), "openai", False, False) == "from claude"
    assert seen == ["anthropic"]


def test_the_same_fallback_patched_on_two_sdks_runs_once() -> None:
    """One stack patched on both SDKs: its hooks run around the call once, not again for
    the alternative of the other SDK."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary, backup = FakeProvider([]), FakeProvider([])
    primary.fail(503)
    backup.fail(503, times=100)
    seen: list[str] = []

    @hw.before_model
    def counted(request: hw.ModelRequest) -> None:
        seen.append("counted")

    use = [counted, Fallback(models=[(backup.anthropic(max_retries=0), "claude")])]
    hw.patch("openai", use=use)
    hw.patch("anthropic", use=use)
    with pytest.raises(Exception, match="503"):
        _ask(primary.openai(max_retries=0), "openai", False, False)
    assert seen == ["counted"]
    assert (len(primary.requests), len(backup.requests)) == (1, 1)


# -- labels ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sdk", "label"),
    [("openai", "OpenAI(x)"), ("anthropic", "Anthropic(x)"), ("google", "Client(x)")],
)
def test_a_wrapped_client_is_labelled_with_its_sdk_class(sdk: str, label: str) -> None:
    pytest.importorskip(SDKS[sdk])
    primary, backup = FakeProvider([]), FakeProvider(["from the backup"])
    primary.fail(503)
    labels: list[Any] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        labels.append(ctx.call_state["fallback"])

    @hw.before_model
    def own(request: hw.ModelRequest) -> None:
        pass

    alternative = hw.wrap(_client(backup, sdk, False), use=[own])
    fallback = Fallback(models=[(alternative, "x")])
    assert repr(fallback) == f"Fallback(models=[{label}])"

    def down(messages: list[Any]) -> str:
        raise ConnectionError("down")

    hw.model(down, use=[record, fallback])(USER)
    assert labels == [label]
