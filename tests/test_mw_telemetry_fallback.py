"""Telemetry listed before Fallback: a model span names the model that answered, also
when an alternative answers a streamed call (its chunks reach the caller as the caller's
own, under the model it asked for, so they cannot say which model it was)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.middleware._telemetry import Telemetry
from hookwrap.testing import FakeProvider

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

USER = [{"role": "user", "content": "hi"}]
PROVIDERS = ("openai", "anthropic", "genai")


@pytest.fixture(autouse=True)
def quiet_fallback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="hookwrap")  # Fallback warns of each failure


def alternative(provider: FakeProvider, sdk: str, is_async: bool) -> Any:
    if sdk == "genai":
        pytest.importorskip("google.genai")
        return provider.genai()  # one client serves both sides
    return getattr(provider, sdk)(is_async)


def response_models(
    sdk: str, stream: bool, is_async: bool, target: Any | None = None
) -> tuple[Any, list[str]]:
    """The `gen_ai.response.model` of the one model span, and the models the caller's
    chunks (or completion) carry, for a call that the alternative `sdk` answers."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    first = FakeProvider()
    first.fail(500)
    spare = FakeProvider(["from the alternative"])
    alt = target if target is not None else (alternative(spare, sdk, is_async), "alt-model")
    use = [Telemetry(tracer_provider=tracer_provider), Fallback(models=[alt])]
    client: Any = hw.wrap(first.openai(is_async, max_retries=0), use=use)

    async def acall() -> list[str]:
        answer = await client.chat.completions.create(model="gpt-4o", messages=USER, stream=stream)
        if stream:
            return [chunk.model async for chunk in answer]
        return [answer.model]

    if is_async:
        seen = asyncio.run(acall())
    else:
        answer = client.chat.completions.create(model="gpt-4o", messages=USER, stream=stream)
        seen = [chunk.model for chunk in answer] if stream else [answer.model]
    tracer_provider.force_flush()
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat gpt-4o"
    return (span.attributes or {}).get("gen_ai.response.model"), seen


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", PROVIDERS)
def test_a_streamed_answer_of_an_alternative_names_its_model(sdk: str, is_async: bool) -> None:
    model, _ = response_models(sdk, stream=True, is_async=is_async)
    assert model == "alt-model"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("sdk", PROVIDERS)
def test_streamed_or_not_the_span_names_the_same_model(sdk: str, is_async: bool) -> None:
    assert (
        response_models(sdk, stream=True, is_async=is_async)[0]
        == response_models(sdk, stream=False, is_async=is_async)[0]
        == "alt-model"
    )


def test_a_client_given_no_model_answers_under_the_requested_one() -> None:
    spare = FakeProvider(["from the alternative"])
    model, _ = response_models("anthropic", stream=True, is_async=False, target=spare.anthropic())
    assert model == "gpt-4o"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_function_that_does_not_stream_is_named_as_unstreamed(is_async: bool) -> None:
    def spare(prompt: str) -> str:
        return "from the alternative"

    model, seen = response_models("function", stream=True, is_async=is_async, target=spare)
    assert model == "spare" == response_models("function", False, is_async, target=spare)[0]
    assert set(seen) == {"gpt-4o"}
