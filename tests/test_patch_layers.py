"""A client wrapped while its SDK is patched runs a hook it shares with the patch once, and
runs it again itself once the patch is removed; a `.with_raw_response` or
`.with_streaming_response` method of a wrapped client is wrapped as one of its methods."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER: Any = [{"role": "user", "content": "hi"}]
SDKS = {"openai": "openai", "anthropic": "anthropic", "google": "google-genai"}

seen: list[str] = []


@hw.before_model
def redact(request: hw.ModelRequest) -> None:
    seen.append("redact")


@hw.before_model
def audit(request: hw.ModelRequest) -> None:
    seen.append("audit")


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    seen.clear()
    yield
    hw.unpatch()


@pytest.fixture(autouse=True)
def installed(request: pytest.FixtureRequest) -> None:
    """A test of an SDK this Python has not got is skipped (google-genai, say)."""
    callspec = getattr(request.node, "callspec", None)
    sdk = callspec.params.get("sdk") if callspec is not None else None
    if sdk is not None:
        pytest.importorskip(SDKS[sdk].replace("-", "."))


def _client(sdk: str, is_async: bool = False) -> Any:
    provider = FakeProvider()
    if sdk == "google":
        client = provider.genai()
        return client.aio if is_async else client
    return getattr(provider, sdk)(is_async)


def _ask(target: Any, sdk: str) -> list[str]:
    """The hooks one call of `target` (a client, or its resource) ran."""
    seen.clear()
    if sdk == "google":
        models = getattr(target, "models", target)
        result = models.generate_content(model="m", contents="hi")
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    elif sdk == "openai":
        completions = getattr(getattr(target, "chat", None), "completions", target)
        result = completions.create(model="m", messages=USER)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    else:
        messages = getattr(target, "messages", target)
        result = messages.create(model="m", max_tokens=9, messages=USER)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    return list(seen)


def _hooks(target: Any) -> list[str]:
    """The hooks `hw.explain` lists for `target`, in order."""
    rows = hw.explain(target).splitlines()[2:]
    return [row.split()[2] for row in rows]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", list(SDKS))
def test_a_hook_lent_to_a_patch_runs_again_in_the_client_once_it_is_removed(
    sdk: str, is_async: bool
) -> None:
    hw.patch(SDKS[sdk], use=[redact])
    client = hw.wrap(_client(sdk, is_async), use=[redact, audit])
    assert _ask(client, sdk) == ["audit", "redact"]  # `redact` once, in the patch
    assert _hooks(client) == ["audit", "redact"]
    hw.unpatch(SDKS[sdk])
    assert _ask(client, sdk) == ["redact", "audit"]  # the client's own, once
    assert _hooks(client) == ["redact", "audit"]
    assert "hw.patch" not in hw.explain(client)


@pytest.mark.parametrize("sdk", list(SDKS))
def test_a_resource_wrapped_while_patched_gets_its_hooks_back(sdk: str) -> None:
    hw.patch(SDKS[sdk], use=[redact])
    client = _client(sdk)  # kept: a google-genai client closes its HTTP client when let go
    resource = hw.wrap(_RESOURCE_OF[sdk](client), use=[redact, audit])
    assert _ask(resource, sdk) == ["audit", "redact"]
    assert _hooks(resource) == ["audit", "redact"]
    hw.unpatch(SDKS[sdk])
    assert _ask(resource, sdk) == ["redact", "audit"]
    assert _hooks(resource) == ["redact", "audit"]


_RESOURCE_OF: dict[str, Callable[[Any], Any]] = {
    "openai": lambda client: client.chat.completions,
    "anthropic": lambda client: client.messages,
    "google": lambda client: client.models,
}


@pytest.mark.parametrize("sdk", list(SDKS))
def test_copies_and_outer_layers_keep_the_hook_once(sdk: str) -> None:
    hw.patch(SDKS[sdk], use=[redact])
    inner = hw.wrap(_client(sdk), use=[redact])  # all its hooks lent to the patch
    outer = hw.wrap(inner, use=[redact, audit])  # `redact` is the inner layer's already
    twin = inner.copy() if sdk != "google" else inner
    assert _ask(outer, sdk) == ["audit", "redact"]
    assert _ask(twin, sdk) == ["redact"]
    hw.unpatch(SDKS[sdk])
    assert _ask(outer, sdk) == ["audit", "redact"]  # `redact` in the inner layer
    assert _ask(twin, sdk) == ["redact"]
    assert _ask(inner, sdk) == ["redact"]


@pytest.mark.parametrize("sdk", list(SDKS))
def test_a_patch_made_after_the_wrap_runs_in_both_stacks(sdk: str) -> None:
    """Also a patch made again, with the same hooks, after the one the client lent to."""
    hw.patch(SDKS[sdk], use=[redact])
    client = hw.wrap(_client(sdk), use=[redact])
    hw.unpatch(SDKS[sdk])
    hw.patch(SDKS[sdk], use=[redact])
    assert _ask(client, sdk) == ["redact", "redact"]
    hw.unpatch(SDKS[sdk])
    assert _ask(client, sdk) == ["redact"]


def _parsed(streaming: Any) -> Any:
    with streaming as response:
        return response.parse()


Case = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]  # SDK, method of client, call

RAW_CASES: dict[str, Case] = {
    "openai raw": (
        "openai",
        lambda c: c.chat.completions.with_raw_response.create,
        lambda f: f(model="m", messages=USER).parse(),
    ),
    "openai streaming": (
        "openai",
        lambda c: c.responses.with_streaming_response.create,
        lambda f: _parsed(f(model="m", input="hi")),
    ),
    "anthropic raw": (
        "anthropic",
        lambda c: c.messages.with_raw_response.create,
        lambda f: f(model="m", max_tokens=9, messages=USER).parse(),
    ),
    "anthropic streaming": (
        "anthropic",
        lambda c: c.messages.with_streaming_response.create,
        lambda f: _parsed(f(model="m", max_tokens=9, messages=USER)),
    ),
}


@pytest.mark.parametrize("case", list(RAW_CASES))
def test_a_response_wrapper_method_of_a_wrapped_client_adds_no_hook_twice(case: str) -> None:
    sdk, method_of, call = RAW_CASES[case]
    client = hw.wrap(_client(sdk), use=[audit])
    wrapped = hw.wrap(method_of(client), use=[redact, audit])
    seen.clear()
    call(wrapped)
    assert seen == ["redact", "audit"]
    assert _hooks(wrapped) == ["redact", "audit"]  # the client's layer listed too


@pytest.mark.parametrize("case", list(RAW_CASES))
def test_a_response_wrapper_method_of_a_patched_sdk_adds_no_hook_twice(case: str) -> None:
    sdk, method_of, call = RAW_CASES[case]
    hw.patch(sdk, use=[audit])
    wrapped = hw.wrap(method_of(_client(sdk)), use=[redact, audit])
    seen.clear()
    call(wrapped)
    assert seen == ["redact", "audit"]
    assert _hooks(wrapped) == ["redact", "audit"]
    assert "hw.patch('" in hw.explain(wrapped)
    hw.unpatch(sdk)
    seen.clear()
    call(wrapped)
    assert seen == ["redact", "audit"]
