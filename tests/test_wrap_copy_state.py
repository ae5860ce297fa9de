"""`hw.wrap` of an OpenAI or Anthropic client hooks a shallow copy of the client as it is
then: the attributes the caller set, and the state of a subclass, are the wrapped client's
too (SPEC §3: every untouched attribute behaves as on the original), and the original is
left alone. The copy is not made by the SDK's `client.copy()`, which builds a new client
from the SDK's own arguments only."""

from __future__ import annotations

import asyncio
import copy
import inspect
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]

seen: list[str] = []


@hw.before_model
def note(request: hw.ModelRequest) -> None:
    seen.append(request.messages[-1].text)


@hw.before_model
def again(request: hw.ModelRequest) -> None:
    seen.append("again")


CLIENTS = [("openai", False), ("openai", True), ("anthropic", False), ("anthropic", True)]


@pytest.fixture(params=CLIENTS, ids=["OpenAI", "AsyncOpenAI", "Anthropic", "AsyncAnthropic"])
def kind(request: pytest.FixtureRequest) -> tuple[str, bool]:
    sdk, is_async = request.param
    pytest.importorskip(sdk)
    seen.clear()
    return sdk, is_async


def make(provider: FakeProvider, kind: tuple[str, bool]) -> Any:
    sdk, is_async = kind
    return getattr(provider, sdk)(is_async)


def ask(client: Any) -> Any:
    """One model call of `client`, sync or async, through its own resource."""
    if hasattr(client, "chat"):
        made = client.chat.completions.create(model="m", messages=USER)
    else:
        made = client.messages.create(model="m", max_tokens=9, messages=USER)
    return asyncio.run(made) if inspect.isawaitable(made) else made


def subclass(base: type[Any]) -> type[Any]:
    """A client class of a tenant, which it sends in a header of every request."""

    class Tenant(base):  # type: ignore[misc,valid-type]
        def __init__(self, *, tenant: str = "default", **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.tenant = tenant

        @property
        def default_headers(self) -> dict[str, str]:
            return {**super().default_headers, "X-Tenant": self.tenant}

    return Tenant


def as_tenant(client: Any, tenant: str) -> Any:
    """A `Tenant` client of `tenant` talking where `client` does."""
    return subclass(type(client))(
        tenant=tenant, api_key="test", base_url=client.base_url, http_client=client._client
    )


@pytest.mark.parametrize("hooks", [[], [note]], ids=["no hooks", "a hook"])
def test_an_attribute_set_on_the_client_before_wrapping_is_on_the_wrapped_client(
    kind: tuple[str, bool], hooks: list[Any]
) -> None:
    provider = FakeProvider()
    client = make(provider, kind)
    client.app_tag = "billing"
    before = dict(vars(client))
    wrapped = hw.wrap(client, use=hooks)
    assert wrapped.app_tag == "billing"
    ask(wrapped)
    assert vars(client) == before  # the original left alone
    assert seen == (["hi"] if hooks else [])


@pytest.mark.parametrize("hooks", [[], [note]], ids=["no hooks", "a hook"])
def test_a_subclass_keeps_its_own_state_and_sends_it(
    kind: tuple[str, bool], hooks: list[Any]
) -> None:
    provider = FakeProvider()
    client = as_tenant(make(provider, kind), "acme")
    wrapped = hw.wrap(client, use=hooks)
    assert isinstance(wrapped, type(client))
    assert wrapped.tenant == "acme"
    ask(wrapped)
    assert provider.requests[-1].headers["x-tenant"] == "acme"
    assert seen == (["hi"] if hooks else [])


def test_a_subclass_whose_init_takes_a_required_argument_can_be_wrapped(
    kind: tuple[str, bool],
) -> None:
    provider = FakeProvider()
    base = type(make(provider, kind))

    class Strict(base):  # type: ignore[misc,valid-type]
        def __init__(self, region: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.region = region

    plain = make(provider, kind)
    client = Strict("eu", api_key="test", base_url=plain.base_url, http_client=plain._client)
    wrapped = hw.wrap(client, use=[note])
    assert wrapped.region == "eu"
    ask(wrapped)
    assert seen == ["hi"]


def test_a_wrapped_resource_and_a_second_layer_keep_the_clients_state(
    kind: tuple[str, bool],
) -> None:
    provider = FakeProvider()
    client = as_tenant(make(provider, kind), "acme")
    resource = client.chat.completions if kind[0] == "openai" else client.messages
    wrapped_resource = hw.wrap(resource, use=[note])
    kwargs: dict[str, Any] = {"model": "m", "messages": USER}
    if kind[0] == "anthropic":
        kwargs["max_tokens"] = 9
    made = wrapped_resource.create(**kwargs)
    if inspect.isawaitable(made):
        asyncio.run(made)
    assert provider.requests[-1].headers["x-tenant"] == "acme"

    twice = hw.wrap(hw.wrap(client, use=[note]), use=[again])
    assert twice.tenant == "acme"
    ask(twice)
    assert provider.requests[-1].headers["x-tenant"] == "acme"
    assert seen == ["hi", "again", "hi"]  # the resource's hook, then both layers


def test_writes_go_to_the_wrapped_client_and_later_changes_of_the_original_do_not(
    kind: tuple[str, bool],
) -> None:
    provider = FakeProvider()
    client = as_tenant(make(provider, kind), "acme")
    wrapped = hw.wrap(client, use=[note])
    assert "tenant" in vars(client)
    assert not hasattr(client, "app_tag")
    wrapped.tenant = "globex"  # through the proxy: the hooked copy's
    wrapped.app_tag = "billing"
    client.tenant = "initech"  # the original's own, after wrapping: not the copy's
    assert (wrapped.tenant, wrapped.app_tag) == ("globex", "billing")
    assert client.tenant == "initech"
    assert not hasattr(client, "app_tag")
    ask(wrapped)
    assert provider.requests[-1].headers["x-tenant"] == "globex"
    ask(client)
    assert provider.requests[-1].headers["x-tenant"] == "initech"
    assert seen == ["hi"]  # the original has no hooks


def test_a_copy_of_a_wrapped_client_keeps_its_state_and_calls_through_the_copy(
    kind: tuple[str, bool],
) -> None:
    provider = FakeProvider()
    client = as_tenant(make(provider, kind), "acme")
    wrapped = hw.wrap(client, use=[note])
    ask(wrapped)  # its resources made and cached
    twin = copy.copy(wrapped)
    twin.tenant = "globex"
    ask(twin)
    assert provider.requests[-1].headers["x-tenant"] == "globex"
    assert wrapped.tenant == "acme"
    assert seen == ["hi", "hi"]


def test_an_anthropic_clients_middleware_runs_on_the_wrapped_client(
    kind: tuple[str, bool],
) -> None:
    sdk, is_async = kind
    module = pytest.importorskip(sdk)
    if sdk != "anthropic" or not hasattr(module, "Middleware"):
        pytest.skip("client middleware: anthropic 2.x")
    met: list[str] = []

    def middleware(request: Any, call_next: Any) -> Any:
        met.append("middleware")
        return call_next(request)

    async def amiddleware(request: Any, call_next: Any) -> Any:
        met.append("middleware")
        return await call_next(request)

    provider = FakeProvider()
    client = make(provider, kind).with_middleware(amiddleware if is_async else middleware)
    wrapped = hw.wrap(client, use=[note])
    wrapped.api_key = "rotated"  # the copy's: its middleware's requests send it
    ask(wrapped)
    assert met == ["middleware"]
    assert seen == ["hi"]
    sent = provider.requests[-1].headers  # (anthropic 2.x sends the key as a bearer token)
    assert "rotated" in (sent.get("x-api-key"), sent.get("authorization", "")[len("Bearer ") :])
    assert client.api_key == "test"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_client_whose_resources_its_init_made_runs_the_hooks(is_async: bool) -> None:
    """`AnthropicVertex` makes `messages` in `__init__`, not as a cached property: the
    wrapped copy's own are made for it, so its calls run the hooks."""
    anthropic = pytest.importorskip("anthropic")

    @hw.before_model
    def canned(request: hw.ModelRequest) -> Any:
        return hw.Respond("from the hook")

    cls = anthropic.AsyncAnthropicVertex if is_async else anthropic.AnthropicVertex
    client = cls(region="us-east5", project_id="p", access_token="t", base_url="http://127.0.0.1:9")
    wrapped = hw.wrap(client, use=[canned])
    made = wrapped.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
    )
    message = asyncio.run(made) if is_async else made
    assert message.content[0].text == "from the hook"
    assert client.messages._client is client  # the original's own, untouched
