"""A plain model function's content parts that hookwrap does not model (`input_audio`,
`file`): hooks do not see them, as with the OpenAI adapters, and the function gets them
back as the caller's own dicts, in their places, whatever the hooks did to the text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw

AUDIO = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
FILE = {"type": "file", "file": {"file_id": "file-1"}}
KINDS = ("sync", "async", "stream", "async stream")


def content() -> list[Any]:
    return [
        {"type": "text", "text": "hear this", "cache_control": {"type": "ephemeral"}},
        AUDIO,
        {"type": "text", "text": "and read secret"},
        FILE,
    ]


def target(kind: str, got: list[Any]) -> Callable[..., Any]:
    """A model function of `kind` noting the messages it is given."""
    if kind == "sync":

        def llm(messages: list[Any]) -> str:
            got.append(messages)
            return "ok"

        return llm
    if kind == "async":

        async def allm(messages: list[Any]) -> str:
            got.append(messages)
            return "ok"

        return allm
    if kind == "stream":

        def slm(messages: list[Any]) -> Iterator[str]:
            got.append(messages)
            yield "ok"

        return slm

    async def aslm(messages: list[Any]) -> AsyncIterator[str]:
        got.append(messages)
        yield "ok"

    return aslm


def call(kind: str, hook: Any, messages: list[Any]) -> Any:
    """What the function of `kind`, wrapped with `hook`, was given for `messages`."""
    got: list[Any] = []
    model = hw.model(target(kind, got), use=[hook])
    if kind == "sync":
        assert model(messages) == "ok"
    elif kind == "stream":
        assert list(model(messages)) == ["ok"]
    elif kind == "async":
        assert asyncio.run(model(messages)) == "ok"
    else:

        async def drain() -> list[str]:
            return [c async for c in model(messages)]

        assert asyncio.run(drain()) == ["ok"]
    (given,) = got
    return given


seen: list[Any] = []


@hw.before_model
def log(request: hw.ModelRequest) -> None:
    seen.extend((m.content, m.text) for m in request.messages)


@hw.before_model
def redact(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(
        messages=[m.replace(content=m.text.replace("secret", "***")) for m in request.messages]
    )


@hw.before_model
def shout(request: hw.ModelRequest) -> hw.ModelRequest:
    """Each text part in upper case, the other parts as they are."""

    def upper(m: hw.Message) -> hw.Message:
        if isinstance(m.content, str):
            return m
        return m.replace(
            content=[
                p.replace(text=p.text.upper()) if isinstance(p, hw.TextPart) else p
                for p in m.content
            ]
        )

    return request.replace(messages=[upper(m) for m in request.messages])


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=[hw.Message.system("Be brief."), *request.messages])


@pytest.mark.parametrize("kind", KINDS)
def test_a_read_only_hook_sees_the_text_and_the_function_gets_its_argument(kind: str) -> None:
    seen.clear()
    messages = [{"role": "user", "content": content()}]
    given = call(kind, log, messages)
    assert given is messages
    ((parts, text),) = seen
    assert parts == (hw.TextPart("hear this"), hw.TextPart("and read secret"))
    assert text == "hear thisand read secret"


@pytest.mark.parametrize("kind", KINDS)
def test_a_redacting_hook_keeps_the_other_parts_in_their_places(kind: str) -> None:
    parts = content()
    given = call(kind, redact, [{"role": "user", "content": parts, "name": "ann"}])
    assert given == [
        {
            "role": "user",
            "name": "ann",
            "content": [
                parts[0],
                AUDIO,
                {"type": "text", "text": "and read ***"},
                FILE,
            ],
        }
    ]
    written = given[0]["content"]
    assert [written[k] is parts[k] for k in (0, 1, 3)] == [True] * 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_hook_editing_the_text_parts_keeps_the_other_parts_and_keys(kind: str) -> None:
    parts = content()
    given = call(kind, shout, [{"role": "user", "content": parts}])
    (message,) = given
    assert message["content"] == [
        {"type": "text", "text": "HEAR THIS", "cache_control": {"type": "ephemeral"}},
        AUDIO,
        {"type": "text", "text": "AND READ SECRET"},
        FILE,
    ]
    assert message["content"][1] is parts[1]
    assert message["content"][3] is parts[3]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hook_adding_a_message_leaves_the_callers_dicts(kind: str) -> None:
    messages = [
        {"role": "user", "content": [AUDIO, {"type": "text", "text": "what is said?"}]},
        {"role": "assistant", "content": "hello"},
    ]
    given = call(kind, add_system, messages)
    assert given == [{"role": "system", "content": "Be brief."}, *messages]
    assert given[1] is messages[0]
    assert given[2] is messages[1]


def test_a_part_follows_the_nearest_part_before_it_that_a_hook_kept() -> None:
    @hw.before_model
    def edit(request: hw.ModelRequest) -> hw.ModelRequest:
        (m,) = request.messages
        second = m.content[1]
        assert isinstance(second, hw.TextPart)
        new = hw.TextPart("new")
        return request.replace(messages=[m.replace(content=[new, second.replace(text="B!")])])

    parts = [{"type": "text", "text": "A"}, AUDIO, {"type": "text", "text": "B"}, FILE]
    given = call("sync", edit, [{"role": "user", "content": parts}])
    # "A" was replaced (the new part, of the same kind, is written over it), "B" edited
    assert given[0]["content"] == [
        {"type": "text", "text": "new"},
        AUDIO,
        {"type": "text", "text": "B!"},
        FILE,
    ]

    @hw.before_model
    def drop_first(request: hw.ModelRequest) -> hw.ModelRequest:
        (m,) = request.messages
        return request.replace(messages=[m.replace(content=m.content[1:])])

    given = call("sync", drop_first, [{"role": "user", "content": parts}])
    assert given[0]["content"] == [AUDIO, {"type": "text", "text": "B"}, FILE]
    assert given[0]["content"][1] is parts[2]


def test_a_message_of_parts_hooks_do_not_see_goes_back_as_it_was() -> None:
    seen.clear()
    messages: list[Any] = [
        {"role": "user", "content": [AUDIO]},
        {"role": "user", "content": "secret"},
    ]
    given = call("sync", redact, messages)
    assert given == [messages[0], {"role": "user", "content": "***"}]
    assert given[0]["content"] is messages[0]["content"]
    call("sync", log, messages)
    assert seen[0] == ((), "")


@pytest.mark.parametrize("kind", KINDS)
def test_message_objects_keep_working(kind: str) -> None:
    image = hw.ImagePart("https://example.com/a.png")
    messages = [hw.Message.user([hw.TextPart("read secret"), image])]
    assert call(kind, redact, messages) == [hw.Message.user("read ***")]
    given = call(kind, add_system, messages)
    assert given == [hw.Message.system("Be brief."), *messages]
    assert given[1] is messages[0]


def test_a_part_that_is_no_str_dict_or_part_is_still_refused() -> None:
    with pytest.raises(
        TypeError, match=r"a message part must be a str, a dict, a TextPart or an ImagePart.*42"
    ):
        call("sync", log, [{"role": "user", "content": ["hi", 42]}])


def test_an_answer_with_a_part_hookwrap_does_not_model_is_still_refused() -> None:
    """A hook's answer is read, not written back over the caller's: its audio would be lost."""

    @hw.before_model
    def answer(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond({"role": "assistant", "content": [AUDIO]})

    with pytest.raises(TypeError, match="must be text or an image"):
        call("sync", answer, [{"role": "user", "content": "hi"}])
