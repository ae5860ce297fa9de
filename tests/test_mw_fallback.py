"""`Fallback` (SPEC §8): alternative models tried in order, any provider, the request carried
over through the neutral types and the answer written back in the caller's own format."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._fallback import Fallback
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "What is the capital of France?"}]


class Down(Exception):
    """The first model is down."""


def down(messages: list[dict[str, Any]]) -> str:
    raise Down("primary is down")


def backup(messages: list[dict[str, Any]]) -> str:
    return f"backup saw {len(messages)} messages: {messages[-1]['content']}"


def test_the_next_model_answers_when_the_first_fails() -> None:
    seen: list[Any] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen.append((response.text, ctx.call_state.get("fallback")))

    ask = hw.model(down, use=[record, Fallback(models=[backup])])
    answer = ask(USER)
    assert answer == "backup saw 1 messages: What is the capital of France?"
    assert seen == [(answer, "backup")]


def test_the_first_model_answering_records_none() -> None:
    states: list[Any] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        states.append(ctx.call_state.get("fallback", "unset"))

    assert hw.model(backup, use=[record, Fallback(models=[down])])(USER).startswith("backup")
    assert states == [None]


def test_a_model_name_calls_the_same_target_with_that_model() -> None:
    calls: list[str] = []

    def llm(prompt: str, model: str = "big") -> str:
        calls.append(model)
        if model == "big":
            raise Down("big is overloaded")
        return f"{model} says hi"

    assert hw.model(llm, use=[Fallback(models=["medium", "small"])])("hi") == "medium says hi"
    assert calls == ["big", "medium"]


def test_alternatives_go_in_order_and_the_last_error_carries_the_others() -> None:
    first, second = Down("one"), Down("two")

    def fails_too(messages: list[dict[str, Any]]) -> str:
        raise second

    def primary(messages: list[dict[str, Any]]) -> str:
        raise first

    with pytest.raises(Down) as excinfo:
        hw.model(primary, use=[Fallback(models=[fails_too])])(USER)
    assert excinfo.value is second
    notes = getattr(second, "__notes__", [])
    assert any("the first model failed before: Down: one" in note for note in notes)


def test_on_picks_the_errors_that_fall_back() -> None:
    used: list[str] = []

    def alternative(messages: list[dict[str, Any]]) -> str:
        used.append("alternative")
        return "alternative"

    ask = hw.model(down, use=[Fallback(models=[alternative], on=KeyError)])
    with pytest.raises(Down):
        ask(USER)
    assert used == []
    ask = hw.model(down, use=[Fallback(models=[alternative], on=lambda e: "down" in str(e))])
    assert ask(USER) == "alternative"


def test_aborted_never_falls_back() -> None:
    @hw.before_model
    def stop(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.abort("no")

    with pytest.raises(hw.Aborted):
        hw.model(down, use=[Fallback(models=[backup]), stop])(USER)


def test_the_request_hooks_changed_is_what_the_alternative_gets() -> None:
    got: list[hw.ModelRequest] = []

    def takes_request(request: hw.ModelRequest) -> str:
        got.append(request)
        return "ok"

    @hw.before_model
    def system(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

    assert hw.model(down, use=[system, Fallback(models=[takes_request])])(USER) == "ok"
    assert [m.role for m in got[0].messages] == ["system", "user"]
    assert got[0].messages[1].text == USER[0]["content"]


# -- shapes ------------------------------------------------------------------------------------


def test_a_stream_failing_before_its_first_chunk_falls_back_to_a_stream() -> None:
    def primary(prompt: str) -> Iterator[str]:
        raise Down("no stream today")
        yield ""  # pragma: no cover

    def whole(prompt: str) -> str:
        return f"whole answer to {prompt}"

    stream = hw.model(primary, use=[Fallback(models=[whole])])("q")
    assert not isinstance(stream, str)
    assert "".join(stream) == "whole answer to q"


def test_a_stream_failing_after_its_first_chunk_does_not_fall_back() -> None:
    def primary(prompt: str) -> Iterator[str]:
        yield "par"
        raise Down("cut")

    stream = hw.model(primary, use=[Fallback(models=[backup])])("q")
    got: list[str] = []
    with pytest.raises(Down):
        got.extend(stream)
    assert got == ["par"]


@pytest.mark.parametrize("alternative_async", [False, True], ids=["sync alt", "async alt"])
def test_async_calls_fall_back_to_sync_and_async_models(alternative_async: bool) -> None:
    async def primary(prompt: str) -> str:
        raise Down("down")

    def sync_alt(prompt: str) -> str:
        return f"sync {prompt}"

    async def async_alt(prompt: str) -> str:
        return f"async {prompt}"

    alternative = async_alt if alternative_async else sync_alt
    ask = hw.model(primary, use=[Fallback(models=[alternative])])
    assert asyncio.run(ask("q")) == ("async q" if alternative_async else "sync q")


def test_an_async_stream_falls_back() -> None:
    async def primary(prompt: str) -> AsyncIterator[str]:
        raise Down("down")
        yield ""  # pragma: no cover

    async def alt(prompt: str) -> str:
        return "from the alternative"

    async def read() -> list[str]:
        return [piece async for piece in hw.model(primary, use=[Fallback(models=[alt])])("q")]

    assert "".join(asyncio.run(read())) == "from the alternative"


def test_an_async_alternative_in_a_sync_call_is_a_clear_error_not_a_fallback() -> None:
    async def async_alt(prompt: str) -> str:
        return "never"

    def last(prompt: str) -> str:
        return "never either"

    ask = hw.model(down, use=[Fallback(models=[async_alt, last])])
    with pytest.raises(TypeError, match="async_alt is async and cannot answer a sync call"):
        ask(USER)


# -- across providers --------------------------------------------------------------------------


def test_openai_falls_back_to_anthropic_and_the_caller_still_gets_an_openai_object() -> None:
    openai = pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary, other = FakeProvider(["never"]), FakeProvider(["Paris."])
    primary.fail(500)
    claude = other.anthropic(max_retries=0)
    client = hw.wrap(
        primary.openai(max_retries=0),
        use=[Fallback(models=[(claude, "claude-test")])],
    )
    completion = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "Be brief."}, *USER],
        temperature=0.2,
    )
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    assert completion.choices[0].message.content == "Paris."
    assert completion.model == "claude-test"
    sent = other.requests[0].body
    assert sent["model"] == "claude-test"
    assert sent["system"] in ("Be brief.", [{"type": "text", "text": "Be brief."}])
    assert sent["messages"][-1]["content"] in (
        USER[0]["content"],
        [{"type": "text", "text": USER[0]["content"]}],
    )
    assert sent["temperature"] == 0.2
    assert sent["max_tokens"] > 0


def test_stop_sequences_are_carried_in_each_providers_spelling() -> None:
    """An Anthropic caller's `stop_sequences` reach an OpenAI Chat Completions alternative as
    `stop`, and an OpenAI caller's `stop` reach Anthropic as `stop_sequences`."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary, other = FakeProvider(["never"]), FakeProvider(["ok"])
    primary.fail(500)
    gpt = (other.openai(max_retries=0), "gpt-test")
    client = hw.wrap(primary.anthropic(max_retries=0), use=[Fallback(models=[gpt])])
    client.messages.create(model="claude", max_tokens=77, stop_sequences=["END"], messages=USER)
    assert other.requests[0].body["stop"] == ["END"]
    primary, other = FakeProvider(["never"]), FakeProvider(["ok"])
    primary.fail(500)
    claude = (other.anthropic(max_retries=0), "claude-test")
    client2 = hw.wrap(primary.openai(max_retries=0), use=[Fallback(models=[claude])])
    client2.chat.completions.create(model="gpt", messages=USER, stop=["END"])
    assert other.requests[0].body["stop_sequences"] == ["END"]


@pytest.mark.parametrize("caller", ["anthropic", "genai"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_the_finish_reason_comes_back_in_the_callers_own_words(caller: str, streamed: bool) -> None:
    """An answer from another provider ends in the caller's own words: `end_turn` /
    `tool_use` for Anthropic, `STOP` for Gemini (not OpenAI's `stop` / `tool_calls`)."""
    pytest.importorskip("openai")
    pytest.importorskip("google.genai" if caller == "genai" else "anthropic")
    answer = hw.Message.assistant("", [hw.ToolCall("call_1", "lookup", {"q": "x"})])
    primary, other = FakeProvider(["never"]), FakeProvider([answer])
    primary.fail(500)
    gpt = (other.openai(max_retries=0), "gpt-test")
    fallback = Fallback(models=[gpt])
    if caller == "anthropic":
        client = hw.wrap(primary.anthropic(max_retries=0), use=[fallback])
        ask = {"model": "claude", "max_tokens": 50, "messages": USER}
        if streamed:
            with client.messages.stream(**ask) as stream:
                reason = stream.get_final_message().stop_reason
        else:
            reason = client.messages.create(**ask).stop_reason
        assert reason == "tool_use"
        return
    gemini = hw.wrap(primary.genai(max_retries=0), use=[fallback])
    if streamed:
        items = list(gemini.models.generate_content_stream(model="g", contents="hi"))
        reasons = [
            c[0].finish_reason for c in (i.candidates for i in items) if c and c[0].finish_reason
        ]
    else:
        reasons = [
            gemini.models.generate_content(model="g", contents="hi").candidates[0].finish_reason
        ]
    assert [str(getattr(r, "value", r)) for r in reasons] == ["STOP"]


@pytest.mark.parametrize("alternative", ["openai", "anthropic"])
def test_a_streamed_gemini_caller_gets_another_providers_tool_calls_whole(
    alternative: str,
) -> None:
    """Another provider streams a call's arguments in pieces; Gemini sends each call whole:
    the caller's stream has one function call part per call, with its arguments, and no
    empty parts for the other provider's own events."""
    pytest.importorskip("google.genai")
    pytest.importorskip(alternative)
    calls = [hw.ToolCall("call_1", "lookup", {"q": "x"}), hw.ToolCall("call_2", "other", {})]
    primary, other = FakeProvider(["never"]), FakeProvider([hw.Message.assistant("On it.", calls)])
    primary.fail(500)
    backup = (getattr(other, alternative)(max_retries=0), "m")
    gemini = hw.wrap(primary.genai(max_retries=0), use=[Fallback(models=[backup])])
    parts = [
        part
        for item in gemini.models.generate_content_stream(model="g", contents="hi")
        if item.candidates and item.candidates[0].content
        for part in item.candidates[0].content.parts or []
    ]
    assert all(part.text or part.function_call for part in parts)
    assert "".join(part.text or "" for part in parts) == "On it."
    found = [
        (part.function_call.name, dict(part.function_call.args or {}))
        for part in parts
        if part.function_call
    ]
    assert found == [("lookup", {"q": "x"}), ("other", {})]


@pytest.mark.parametrize("alternative", ["an Anthropic stream", "a function's whole answer"])
@pytest.mark.parametrize("caller", ["responses", "chat", "genai"])
def test_a_streamed_answer_from_an_alternative_names_the_model_the_caller_asked(
    caller: str, alternative: str
) -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("google.genai" if caller == "genai" else "openai")
    primary, other = FakeProvider(["never"]), FakeProvider(["ok"])
    primary.fail(500)
    fallback = Fallback(
        models=[(other.anthropic(max_retries=0), "claude-test")]
        if alternative == "an Anthropic stream"
        else [backup]  # no stream: its answer is made into the caller's stream
    )
    if caller == "chat":
        client = hw.wrap(primary.openai(max_retries=0), use=[fallback])
        chunks = client.chat.completions.create(model="gpt-asked", messages=USER, stream=True)
        assert {chunk.model for chunk in chunks} == {"gpt-asked"}
        return
    if caller == "responses":
        client = hw.wrap(primary.openai(max_retries=0), use=[fallback])
        with client.responses.stream(model="gpt-asked", input="hi") as stream:
            assert stream.get_final_response().model == "gpt-asked"
        return
    gemini = hw.wrap(primary.genai(max_retries=0), use=[fallback])
    items = list(gemini.models.generate_content_stream(model="gem-asked", contents="hi"))
    assert {item.model_version for item in items} == {"gem-asked"}


def anthropic_falling_back_to_gemini(reply: str) -> tuple[Any, FakeProvider]:
    """An async Anthropic client whose model is down, and Gemini's provider behind it."""
    pytest.importorskip("google.genai")
    primary, other = FakeProvider(["never"]), FakeProvider([reply])
    primary.fail(503)
    gemini = other.genai(max_retries=0)
    fallback = Fallback(models=[(gemini, "gemini-test")])
    return hw.wrap(primary.anthropic(True, max_retries=0), use=[fallback]), other


def test_anthropic_async_falls_back_to_a_google_client() -> None:
    anthropic = pytest.importorskip("anthropic")
    client, other = anthropic_falling_back_to_gemini("Bonjour.")

    async def ask() -> Any:
        return await client.messages.create(model="claude-test", max_tokens=50, messages=USER)

    message = asyncio.run(ask())
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "Bonjour."
    assert "gemini-test" in other.requests[0].path
    assert other.requests[0].body["generationConfig"]["maxOutputTokens"] == 50


def test_a_streamed_openai_call_falls_back_to_a_function() -> None:
    pytest.importorskip("openai")
    primary = FakeProvider(["never"])
    primary.fail(503)
    client = hw.wrap(primary.openai(max_retries=0), use=[Fallback(models=[backup])])
    stream = client.chat.completions.create(model="gpt-test", messages=USER, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "backup saw 1 messages: What is the capital of France?"


def test_a_streamed_openai_call_falls_back_to_an_anthropic_stream_chunk_by_chunk() -> None:
    openai = pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    primary, other = FakeProvider(["never"]), FakeProvider(["Paris is the capital."])
    primary.fail(503)
    claude = other.anthropic(max_retries=0)
    seen: list[str] = []
    answered: list[Any] = []

    @hw.on_chunk
    def note(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    @hw.after_model
    def who(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        answered.append((ctx.call_state.get("fallback"), response.text))

    fallback = Fallback(models=[(claude, "claude-test")])
    client = hw.wrap(primary.openai(max_retries=0), use=[who, note, fallback])
    stream = client.chat.completions.create(model="gpt-test", messages=USER, stream=True)
    assert isinstance(stream, openai.Stream)
    chunks = list(stream)
    assert all(isinstance(c, openai.types.chat.ChatCompletionChunk) for c in chunks)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    pieces = [d.content for d in deltas if d.content]
    assert "".join(pieces) == "Paris is the capital."
    assert len(pieces) > 1  # streamed as the alternative sent it, not one whole answer
    assert other.requests[0].body["stream"] is True
    assert "".join(t for t in seen if t) == "Paris is the capital."
    assert answered == [("Anthropic(claude-test)", "Paris is the capital.")]


def test_an_async_anthropic_stream_falls_back_to_a_google_stream() -> None:
    anthropic = pytest.importorskip("anthropic")
    client, other = anthropic_falling_back_to_gemini("Bonjour tout le monde.")

    async def ask() -> list[Any]:
        stream = await client.messages.create(
            model="claude-test", max_tokens=50, messages=USER, stream=True
        )
        assert isinstance(stream, anthropic.AsyncStream)
        return [event async for event in stream]

    events = asyncio.run(ask())
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert "".join(deltas) == "Bonjour tout le monde."
    assert len(deltas) > 1
    assert events[-1].type == "message_stop"
    assert "streamGenerateContent" in other.requests[0].path


def test_a_streamed_alternative_failing_before_its_first_chunk_falls_back_further() -> None:
    def broken(prompt: str) -> Iterator[str]:
        raise Down("the alternative is down too")
        yield ""  # pragma: no cover

    def last(prompt: str) -> Iterator[str]:
        yield from ("third ", "time")

    def primary(prompt: str) -> Iterator[str]:
        raise Down("down")
        yield ""  # pragma: no cover

    ask = hw.model(primary, use=[Fallback(models=[broken, last])])
    assert list(ask("q")) == ["third ", "time"]


def test_closing_a_fallback_stream_closes_the_alternatives_stream_at_once() -> None:
    closed: list[str] = []

    def primary(prompt: str) -> Iterator[str]:
        raise Down("down")
        yield ""  # pragma: no cover

    def alternative(prompt: str) -> Iterator[str]:
        try:
            yield from ("one", "two", "three")
        finally:
            closed.append("alternative")

    stream = hw.model(primary, use=[Fallback(models=[alternative])])("q")
    assert next(iter(stream)) == "one"
    assert closed == []
    stream.close()  # type: ignore[attr-defined]
    assert closed == ["alternative"]


def test_an_async_stream_reads_a_sync_alternatives_stream_off_the_event_loop() -> None:
    threads: list[int] = []

    async def primary(prompt: str) -> AsyncIterator[str]:
        raise Down("down")
        yield ""  # pragma: no cover

    def alternative(prompt: str) -> Iterator[str]:
        for piece in ("a", "b", "c"):
            threads.append(threading.get_ident())
            yield piece

    async def read() -> list[str]:
        stream = hw.model(primary, use=[Fallback(models=[alternative])])("q")
        return [piece async for piece in stream]

    assert asyncio.run(read()) == ["a", "b", "c"]
    assert threads
    assert threading.get_ident() not in threads


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, TypeError, "missing 1 required keyword-only argument: .models."),
        ({"models": []}, ValueError, "at least one"),
        ({"models": "gpt-4o"}, TypeError, "must be a list"),
        ({"models": [42]}, TypeError, "model names.*got int"),
        ({"models": [""]}, ValueError, "must not be empty"),
        ({"models": [(backup,)]}, TypeError, r"\(client, 'model name'\)"),
        ({"models": ["m"], "on": "Down"}, TypeError, "on=.*exception type"),
        ({"models": ["m"], "on": ()}, TypeError, "on="),
    ],
)
def test_bad_arguments_are_refused_when_made(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Fallback(**kwargs)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_model_an_alternative_was_called_with_is_recorded(stream: bool, is_async: bool) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    seen: list[Any] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen.append(ctx.call_state["fallback_model"])

    primary, other = FakeProvider(["first"]), FakeProvider(["from the backup"])
    primary.fail(503, times=1)
    fallback = Fallback(models=[(other.anthropic(is_async, max_retries=0), "claude-x")])
    client: Any = hw.wrap(primary.openai(is_async, max_retries=0), use=[record, fallback])

    async def ask() -> None:
        answer = await client.chat.completions.create(model="gpt-4o", messages=USER, stream=stream)
        if stream:
            [chunk async for chunk in answer]

    for _ in range(2):  # the first model fails once, then answers
        if is_async:
            asyncio.run(ask())
        else:
            answer = client.chat.completions.create(model="gpt-4o", messages=USER, stream=stream)
            if stream:
                list(answer)
    assert seen == ["claude-x", None]


def test_a_partial_or_a_callable_object_is_labelled_by_name() -> None:
    """Not by its repr, which holds a memory address that differs in every run."""

    def spare(messages: list[dict[str, Any]], style: str = "plain") -> str:
        return f"a {style} answer"

    class Backup:
        def __call__(self, messages: list[dict[str, Any]]) -> str:
            return "the backup's answer"

    seen: list[Any] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen.append((ctx.call_state["fallback"], ctx.call_state["fallback_model"], response.model))

    styled = functools.partial(spare, style="terse")
    assert hw.model(down, use=[record, Fallback(models=[styled])])(USER) == "a terse answer"
    assert hw.model(down, use=[record, Fallback(models=[Backup()])])(USER) == "the backup's answer"
    wrapped = hw.model(Backup())  # a wrapped one: by what it wraps, not the wrapper
    assert hw.model(down, use=[record, Fallback(models=[wrapped])])(USER) == "the backup's answer"
    assert repr(Fallback(models=[functools.partial(wrapped)])) == "Fallback(models=[Backup])"
    assert seen == [("spare",) * 3, ("Backup",) * 3, ("Backup",) * 3]
    assert repr(Fallback(models=[styled, Backup()])) == "Fallback(models=[spare, Backup])"
