"""An OpenAI chat stream ends with a usage chunk (`choices == []`) only when the request
asked for one (`stream_options={"include_usage": True}`), as the API sends it: the usual
loop reads `chunk.choices[0]` of every chunk. So a `Fallback` alternative's usage (which
hookwrap always asks the alternative for) and a usage chunk an `on_chunk` hook adds reach
the caller's stream only when it asked; `on_usage`, `after_model` and the run count them
either way."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

pytest.importorskip("openai")

USER: Any = [{"role": "user", "content": "hello"}]
ASKED = {"stream_options": {"include_usage": True}}


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    """The first model's failure is logged as the fallback happens: not the point here."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _anthropic(is_async: bool) -> tuple[Any, str]:
    return FakeProvider(["the answer"]).anthropic(async_=is_async), "claude-x"


def _genai(is_async: bool) -> tuple[Any, str]:
    pytest.importorskip("google.genai")  # (not installed under every Python CI runs)
    return FakeProvider(["the answer"]).genai(), "gemini-x"


def _openai(is_async: bool) -> tuple[Any, str]:
    return FakeProvider(["the answer"]).openai(async_=is_async), "gpt-other"


ALTERNATIVES = pytest.mark.parametrize(
    "alternative", [_anthropic, _genai, _openai], ids=["anthropic", "genai", "openai"]
)
SIDES = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


class Seen:
    """What the caller's hooks and its run saw of the usage."""

    def __init__(self) -> None:
        self.on_usage: list[hw.Usage] = []
        self.after_model: list[hw.Usage | None] = []
        self.run: list[int] = []
        seen = self

        @hw.on_usage
        def usage(usage: hw.Usage) -> None:
            seen.on_usage.append(usage)

        @hw.after_model
        def after(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            seen.after_model.append(response.usage)

        @hw.on_finish
        def finished(info: hw.FinishInfo) -> None:
            seen.run.append(info.usage.total_tokens)

        self.hooks = [usage, after]
        self.finished = finished


def fallback_chunks(
    alternative: Callable[[bool], tuple[Any, str]], is_async: bool, seen: Seen, **options: Any
) -> list[Any]:
    """The chunks an OpenAI chat caller streams when its model fails and `alternative`
    answers."""
    primary = FakeProvider(["never"])
    primary.fail(500)
    client = hw.wrap(
        primary.openai(async_=is_async, max_retries=0),
        use=[*seen.hooks, Fallback(models=[alternative(is_async)])],
    )
    request: dict[str, Any] = {"model": "gpt-4o", "messages": USER, "stream": True, **options}
    if not is_async:
        with hw.run(use=[seen.finished]):
            return list(client.chat.completions.create(**request))

    async def read() -> list[Any]:
        async with hw.run(use=[seen.finished]):
            return [chunk async for chunk in await client.chat.completions.create(**request)]

    return asyncio.run(read())


@ALTERNATIVES
@SIDES
def test_a_caller_that_did_not_ask_gets_no_usage_chunk_from_an_alternative(
    alternative: Callable[[bool], tuple[Any, str]], is_async: bool
) -> None:
    seen = Seen()
    chunks = fallback_chunks(alternative, is_async, seen)
    # the usual loop: every chunk has a first choice
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "the answer"
    assert [c.usage for c in chunks if c.usage is not None] == []
    # the hooks and the run still count the alternative's usage
    [usage] = seen.on_usage
    assert usage.total_tokens > 0
    assert seen.after_model == [usage]
    assert seen.run == [usage.total_tokens]


@ALTERNATIVES
@SIDES
def test_a_caller_that_asked_gets_the_alternatives_usage_chunk(
    alternative: Callable[[bool], tuple[Any, str]], is_async: bool
) -> None:
    seen = Seen()
    chunks = fallback_chunks(alternative, is_async, seen, **ASKED)
    assert chunks[-1].choices == []
    [usage] = seen.on_usage
    assert chunks[-1].usage.total_tokens == usage.total_tokens
    assert [c for c in chunks if not c.choices] == [chunks[-1]]


def helper_final(
    alternative: Callable[[bool], tuple[Any, str]], is_async: bool, **options: Any
) -> Any:
    """The final completion `chat.completions.stream()` builds from an alternative's
    answer, and the chunks it read."""
    primary = FakeProvider(["never"])
    primary.fail(500)
    client = hw.wrap(
        primary.openai(async_=is_async, max_retries=0),
        use=[Fallback(models=[alternative(is_async)])],
    )
    request: dict[str, Any] = {"model": "gpt-4o", "messages": USER, **options}
    if not is_async:
        with client.chat.completions.stream(**request) as stream:
            chunks = [event.chunk for event in stream if event.type == "chunk"]
            return stream.get_final_completion(), chunks

    async def read() -> Any:
        async with client.chat.completions.stream(**request) as stream:
            chunks = [event.chunk async for event in stream if event.type == "chunk"]
            return await stream.get_final_completion(), chunks

    return asyncio.run(read())


@ALTERNATIVES
@SIDES
def test_the_stream_helper_reads_usage_only_when_asked(
    alternative: Callable[[bool], tuple[Any, str]], is_async: bool
) -> None:
    final, chunks = helper_final(alternative, is_async)
    assert all(c.choices for c in chunks)
    assert final.choices[0].message.content == "the answer"
    assert final.usage is None
    final, chunks = helper_final(alternative, is_async, **ASKED)
    assert chunks[-1].choices == []
    assert final.usage is not None
    assert final.usage.total_tokens > 0


@SIDES
def test_a_usage_chunk_a_hook_adds_reaches_only_a_caller_that_asked(is_async: bool) -> None:
    """Counts an `on_chunk` hook adds where the API sent none go in a usage chunk added
    before `[DONE]` only when the request asked for usage; the hooks see them either way."""

    @hw.on_chunk
    def add(chunk: hw.Chunk) -> Any:
        if chunk.kind == "finish":
            return [chunk, hw.Chunk("usage", usage=hw.Usage(1, 2, 3))]
        return chunk

    def chunks(**options: Any) -> tuple[list[Any], Seen]:
        seen = Seen()
        client = hw.wrap(FakeProvider(["x"]).openai(async_=is_async), use=[*seen.hooks, add])
        request: dict[str, Any] = {"model": "gpt-4o", "messages": USER, "stream": True}
        request.update(options)
        if not is_async:
            return list(client.chat.completions.create(**request)), seen

        async def read() -> list[Any]:
            return [chunk async for chunk in await client.chat.completions.create(**request)]

        return asyncio.run(read()), seen

    unasked, seen = chunks()
    assert all(c.choices and c.usage is None for c in unasked)
    assert [u.total_tokens for u in seen.on_usage] == [3]
    asked, seen = chunks(**ASKED)
    assert asked[-1].choices == []
    # the API's own usage chunk (2 in, 1 out) carries the highest of each count
    usage = asked[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (2, 2, 4)
    assert [c for c in asked if not c.choices] == [asked[-1]]


@SIDES
def test_a_responses_caller_keeps_the_alternatives_usage_in_response_completed(
    is_async: bool,
) -> None:
    """The Responses API always reports usage, in `response.completed`: unchanged."""
    primary = FakeProvider(["never"])
    primary.fail(500)
    client = hw.wrap(
        primary.openai(async_=is_async, max_retries=0),
        use=[Fallback(models=[_anthropic(is_async)])],
    )
    request: dict[str, Any] = {"model": "gpt-4o", "input": "hello", "stream": True}
    if not is_async:
        events = list(client.responses.create(**request))
    else:

        async def read() -> list[Any]:
            return [event async for event in await client.responses.create(**request)]

        events = asyncio.run(read())
    [done] = [e for e in events if e.type == "response.completed"]
    assert done.response.usage is not None
    assert done.response.usage.total_tokens > 0


def whole_answer(request: hw.ModelRequest) -> hw.ModelResponse:
    """A model function that does not stream, and reports its usage."""
    return hw.ModelResponse(hw.Message.assistant("the answer"), usage=hw.Usage(3, 4, 7))


@hw.wrap_model
def answers_itself(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
    """A hook answering in place of the model (a cache would), with the usage it kept."""
    return whole_answer(request)


def down_then(alternative: Any, hooks: list[Any]) -> Any:
    primary = FakeProvider(["never"])
    primary.fail(500)
    return hw.wrap(primary.openai(max_retries=0), use=[*hooks, Fallback(models=[alternative])])


def answered(hooks: list[Any]) -> Any:
    return hw.wrap(FakeProvider(["x"]).openai(), use=[*hooks, answers_itself])


@pytest.mark.parametrize(
    "client",
    [
        pytest.param(
            lambda hooks: down_then(whole_answer, hooks), id="alternative-that-does-not-stream"
        ),
        pytest.param(answered, id="hook-answer"),
    ],
)
def test_a_whole_answer_to_a_stream_sends_its_usage_chunk_only_when_asked(
    client: Callable[[list[Any]], Any],
) -> None:
    seen = Seen()
    request: dict[str, Any] = {"model": "gpt-4o", "messages": USER, "stream": True}
    with hw.run(use=[seen.finished]):
        chunks = list(client(seen.hooks).chat.completions.create(**request))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "the answer"
    assert [c.usage for c in chunks if c.usage is not None] == []
    assert [u.total_tokens for u in seen.on_usage] == [7]
    assert seen.run == [7]
    asked = list(client([]).chat.completions.create(**request, **ASKED))
    assert [c for c in asked if not c.choices] == [asked[-1]]
    usage = asked[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (3, 4, 7)
    assert len({c.id for c in asked}) == 1


ANSWER = hw.ModelResponse(hw.Message.assistant("the answer"), usage=hw.Usage(3, 4, 7))


@hw.before_model
def responds(request: hw.ModelRequest) -> Any:
    """A cache's hit: the whole answer it kept, with its usage, in place of the call."""
    return hw.Respond(ANSWER)


@hw.wrap_model
def responds_in_a_generator(request: hw.ModelRequest) -> Any:
    yield hw.Respond(ANSWER)


@hw.on_chunk
def looks(chunk: hw.Chunk) -> None:
    """A hook that reads every chunk and changes none."""


def respond_chunks(
    hooks: list[Any], is_async: bool, patched: bool, seen: Seen, **options: Any
) -> list[Any]:
    """The chunks an OpenAI chat caller streams when `hooks` answer in place of the call,
    through `hw.wrap` or `hw.patch`."""
    provider = FakeProvider(["never"])
    use = [*seen.hooks, *hooks]
    if patched:
        hw.patch("openai", use=use)
    client = provider.openai(async_=is_async)
    if not patched:
        client = hw.wrap(client, use=use)
    request: dict[str, Any] = {"model": "gpt-4o", "messages": USER, "stream": True, **options}
    try:
        if not is_async:
            return list(client.chat.completions.create(**request))

        async def read() -> list[Any]:
            return [chunk async for chunk in await client.chat.completions.create(**request)]

        return asyncio.run(read())
    finally:
        if patched:
            hw.unpatch("openai")


@pytest.mark.parametrize(
    "hooks",
    [[responds], [responds, looks], [responds_in_a_generator]],
    ids=["before_model", "before_model-and-on_chunk", "wrap_model"],
)
@pytest.mark.parametrize("patched", [False, True], ids=["wrap", "patch"])
@SIDES
def test_a_respond_answer_to_a_stream_sends_its_usage_chunk_only_when_asked(
    hooks: list[Any], patched: bool, is_async: bool
) -> None:
    seen = Seen()
    unasked = respond_chunks(hooks, is_async, patched, seen)
    assert "".join(c.choices[0].delta.content or "" for c in unasked) == "the answer"
    assert [c.usage for c in unasked if c.usage is not None] == []
    assert seen.after_model == [hw.Usage(3, 4, 7)]
    seen = Seen()
    asked = respond_chunks(hooks, is_async, patched, seen, **ASKED)
    assert [c for c in asked if not c.choices] == [asked[-1]]
    usage = asked[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (3, 4, 7)
    assert seen.after_model == [hw.Usage(3, 4, 7)]


# -- the legacy Completions API has the same rule --------------------------------------------


@hw.on_chunk
def adds_usage(chunk: hw.Chunk) -> Any:
    """Counts after every text chunk, lower than the API's own (2 in, 1 out)."""
    return [chunk, hw.Chunk("usage", usage=hw.Usage(1, 1, 2))] if chunk.kind == "text" else chunk


def _plain(hooks: list[Any], is_async: bool) -> Any:
    return hw.wrap(FakeProvider(["the answer"]).openai(async_=is_async), use=hooks)


def _falls_back(hooks: list[Any], is_async: bool) -> Any:
    primary = FakeProvider(["never"])
    primary.fail(500)
    client = primary.openai(async_=is_async, max_retries=0)
    return hw.wrap(client, use=[*hooks, Fallback(models=[_anthropic(is_async)])])


@pytest.mark.parametrize(
    ("client", "hooks"),
    [
        pytest.param(_plain, [adds_usage], id="hook-usage-chunk"),
        pytest.param(_plain, [responds_in_a_generator], id="wrap_model-answer"),
        pytest.param(_plain, [responds], id="before_model-answer"),
        pytest.param(_falls_back, [], id="fallback"),
    ],
)
@SIDES
def test_a_completions_stream_carries_usage_only_when_asked(
    client: Callable[[list[Any], bool], Any], hooks: list[Any], is_async: bool
) -> None:
    def chunks(**options: Any) -> tuple[list[Any], hw.Usage]:
        seen = Seen()
        completions = client([*seen.hooks, *hooks], is_async).completions
        request: dict[str, Any] = {"model": "m", "prompt": "hello", "stream": True, **options}
        if not is_async:
            got = list(completions.create(**request))
        else:

            async def read() -> list[Any]:
                return [chunk async for chunk in await completions.create(**request)]

            got = asyncio.run(read())
        [usage] = seen.on_usage
        return got, usage

    unasked, usage = chunks()
    assert "".join(c.choices[0].text for c in unasked) == "the answer"
    assert [c.usage for c in unasked if c.usage is not None] == []
    assert usage.total_tokens > 0
    asked, usage = chunks(**ASKED)
    assert "".join(c.choices[0].text for c in asked[:-1]) == "the answer"
    assert [c for c in asked if c.usage is not None] == [asked[-1]]
    assert asked[-1].choices == []
    counts = asked[-1].usage
    assert hw.Usage(counts.prompt_tokens, counts.completion_tokens, counts.total_tokens) == usage
    if hooks in ([responds_in_a_generator], [responds]):
        assert usage == hw.Usage(3, 4, 7)
