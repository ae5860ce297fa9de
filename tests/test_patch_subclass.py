"""A client of the user's own subclass of an SDK's client class (`class MyClient(OpenAI)`,
defined in the user's module) belongs to that SDK for `hw.patch`: a hook it shares with the
patch runs once while patched, and `hw.explain` lists the patch's layer, wrapped or not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER: Any = [{"role": "user", "content": "hi"}]
SDKS = {"openai": "openai", "anthropic": "anthropic", "google": "google-genai"}
HOST = "http://fake-llm.test"  # any host: the fake transport answers by path

seen: list[str] = []


@hw.before_model
def audit(request: hw.ModelRequest) -> None:
    seen.append("audit")


@hw.before_model
def redact(request: hw.ModelRequest) -> None:
    seen.append("redact")


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    seen.clear()
    yield
    hw.unpatch()


def _subclass(base: type[Any]) -> Any:
    class Mine(base):  # type: ignore[misc]  # the user's own, in their module
        pass

    return Mine


def _client(sdk: str, is_async: bool) -> Any:
    """A client of a subclass of the SDK's client class, on a fake provider; for
    google-genai, the subclass's client (its `.aio` side with `is_async`)."""
    pytest.importorskip(SDKS[sdk].replace("-", "."))
    provider = FakeProvider()
    if sdk == "google":
        from google import genai
        from google.genai import types

        args = {"transport": provider.transport()}
        options = types.HttpOptions(base_url=f"{HOST}/", client_args=args, async_client_args=args)
        return _subclass(genai.Client)(api_key="test", http_options=options)
    plain: Any = getattr(provider, sdk)(is_async)  # the SDK's own class, for its HTTP client
    mine = _subclass(plain.__class__)
    return mine(api_key="test", base_url=str(plain.base_url), http_client=plain._client)


def _ask(target: Any, sdk: str, is_async: bool) -> list[str]:
    """The hooks one call of `target` (a client) ran."""
    seen.clear()
    if sdk == "google":
        result = (target.aio if is_async else target).models.generate_content(
            model="m", contents="hi"
        )
    elif sdk == "openai":
        result = target.chat.completions.create(model="m", messages=USER)
    else:
        result = target.messages.create(model="m", max_tokens=9, messages=USER)
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    return list(seen)


def _hooks(target: Any) -> list[str]:
    """The hooks `hw.explain` lists for `target`, in order."""
    return [row.split()[2] for row in hw.explain(target).splitlines()[2:]]


CASES = [
    pytest.param(sdk, is_async, id=f"{sdk}-{'async' if is_async else 'sync'}")
    for sdk in SDKS
    for is_async in (False, True)
]


@pytest.mark.parametrize(("sdk", "is_async"), CASES)
def test_a_subclass_client_wrapped_while_patched_runs_the_patch_hook_once(
    sdk: str, is_async: bool
) -> None:
    client = _client(sdk, is_async)
    hw.patch(SDKS[sdk], use=[redact])
    wrapped = hw.wrap(client, use=[redact, audit])
    assert _ask(wrapped, sdk, is_async) == ["audit", "redact"]  # `redact` once, in the patch
    assert _hooks(wrapped) == ["audit", "redact"]
    assert f"via hw.patch({SDKS[sdk]!r})" in hw.explain(wrapped)
    hw.unpatch(SDKS[sdk])
    assert _ask(wrapped, sdk, is_async) == ["redact", "audit"]  # the client's own, once
    assert "hw.patch" not in hw.explain(wrapped)


@pytest.mark.parametrize(("sdk", "is_async"), CASES)
def test_a_subclass_client_of_a_patched_sdk_explains_unwrapped(sdk: str, is_async: bool) -> None:
    client = _client(sdk, is_async)
    target = client.aio if sdk == "google" and is_async else client
    hw.patch(SDKS[sdk], use=[audit])
    assert _ask(client, sdk, is_async) == ["audit"]
    assert _hooks(target) == ["audit"]
    assert f"via hw.patch({SDKS[sdk]!r})" in hw.explain(target)
    hw.unpatch(SDKS[sdk])
    assert _ask(client, sdk, is_async) == []
    with pytest.raises(TypeError, match="wrapped by hookwrap"):
        hw.explain(target)


def test_an_azure_client_belongs_to_the_openai_patch() -> None:
    """`AzureOpenAI` is an SDK class in a module of its own (`openai.lib.azure`)."""
    openai = pytest.importorskip("openai")
    args: dict[str, Any] = {"api_key": "test", "api_version": "2024-06-01", "azure_endpoint": HOST}
    hw.patch("openai", use=[audit])
    assert _hooks(openai.AzureOpenAI(**args)) == ["audit"]
    assert _hooks(_subclass(openai.AzureOpenAI)(**args)) == ["audit"]


def test_a_subclass_of_another_sdk_is_not_that_of_the_patch() -> None:
    """The patch of one SDK is not listed for a client of another, subclassed or not."""
    client = _client("anthropic", False)
    hw.patch("openai", use=[audit])
    with pytest.raises(TypeError, match="wrapped by hookwrap"):
        hw.explain(client)


def test_the_users_own_method_of_a_subclass_client_is_no_sdk_method() -> None:
    """Its hooks are its own: none is left to a patch that never runs them."""
    plain: Any = FakeProvider().openai()

    class Mine(plain.__class__):  # type: ignore[misc,name-defined]
        def ask(self, prompt: str) -> str:  # no SDK call in it
            return "cached: " + prompt

    client = Mine(api_key="test", base_url=str(plain.base_url), http_client=plain._client)
    hw.patch("openai", use=[audit])
    ask = hw.model(client.ask, use=[audit])
    assert ask("hi") == "cached: hi"
    assert seen == ["audit"]
    hw.unpatch("openai")
    seen.clear()
    assert ask("hi") == "cached: hi"
    assert seen == ["audit"]


def test_a_subclass_of_a_client_class_is_refused_as_a_target() -> None:
    openai = pytest.importorskip("openai")

    class Mine(openai.OpenAI):  # type: ignore[misc]
        pass

    with pytest.raises(TypeError, match=r"got the class .*Mine; pass a client"):
        hw.wrap(Mine)


def test_a_subclass_of_another_sdk_class_is_no_client_class() -> None:
    openai = pytest.importorskip("openai")

    class NotFound(openai.OpenAIError):
        """Raised when nothing is found."""

        def __init__(self, city: str) -> None:
            super().__init__(city)

    assert str(hw.tool(NotFound)(city="Oslo")) == "Oslo"


def test_a_subclass_of_any_client_class_of_an_sdk_is_refused_as_a_target() -> None:
    anthropic = pytest.importorskip("anthropic")

    class Mine(anthropic.AnthropicBedrock):  # type: ignore[misc]
        pass

    with pytest.raises(TypeError, match=r"got the class .*Mine; pass a client"):
        hw.model(Mine)
