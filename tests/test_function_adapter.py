"""The plain-function adapter (SPEC §6, §4): `messages` or `prompt` in, str / dict / Message
out; hook changes written back in the caller's own format; clear errors for what does not
fit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

import hookwrap as hw

SYSTEM = "Be brief."


def fresh_add_system() -> Callable[..., Any]:
    """A before_model hook putting a system message first."""

    @hw.before_model
    def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.system(SYSTEM), *request.messages))

    return add_system


def fresh_redact(word: str) -> Callable[..., Any]:
    """A before_model hook replacing the messages that mention `word`, keeping the others
    as the very same Message objects."""

    @hw.before_model
    def redact(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(
            messages=tuple(
                m.replace(content="[redacted]") if word in m.text else m for m in request.messages
            )
        )

    return redact


# -- messages and prompt in, written back in the caller's format -------------------------------


@pytest.mark.parametrize("by_keyword", [False, True], ids=("positional", "keyword"))
def test_dict_messages_stay_dicts_and_unchanged_ones_are_the_same_objects(
    by_keyword: bool,
) -> None:
    received: list[list[Any]] = []

    def llm(messages: list[dict[str, Any]]) -> str:
        received.append(messages)
        return "ok"

    original: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]
    wrapped = hw.model(llm, use=[fresh_add_system()])
    result = wrapped(messages=original) if by_keyword else wrapped(original)
    assert result == "ok"
    got = received[0]
    assert got == [{"role": "system", "content": SYSTEM}, *original]
    assert type(got[0]) is dict
    assert all(a is b for a, b in zip(got[1:], original, strict=True))
    assert len(original) == 3  # the caller's own list is not changed


def test_a_changed_dict_message_becomes_a_new_dict_the_others_stay_the_same() -> None:
    received: list[list[Any]] = []

    def llm(messages: list[dict[str, Any]]) -> str:
        received.append(messages)
        return "ok"

    original: list[dict[str, Any]] = [
        {"role": "user", "content": "my password is hunter2"},
        {"role": "assistant", "content": "noted"},
    ]
    hw.model(llm, use=[fresh_redact("password")])(original)
    got = received[0]
    assert got == [
        {"role": "user", "content": "[redacted]"},
        {"role": "assistant", "content": "noted"},
    ]
    assert type(got[0]) is dict
    assert got[1] is original[1]
    assert original[0] == {"role": "user", "content": "my password is hunter2"}


def test_message_lists_stay_message_lists() -> None:
    received: list[list[Any]] = []

    def llm(messages: list[hw.Message]) -> str:
        received.append(messages)
        return "ok"

    original = [hw.Message.user("hi"), hw.Message.assistant("hello"), hw.Message.user("bye")]
    hw.model(llm, use=[fresh_add_system()])(original)
    got = received[0]
    assert got == [hw.Message.system(SYSTEM), *original]
    assert all(type(m) is hw.Message for m in got)
    assert all(a is b for a, b in zip(got[1:], original, strict=True))


def test_prompt_stays_a_str_joining_the_messages_texts_with_blank_lines() -> None:
    received: list[Any] = []

    def llm(prompt: str) -> str:
        received.append(prompt)
        return "ok"

    seen: list[tuple[tuple[str, str], ...]] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        seen.append(tuple((m.role, m.text) for m in request.messages))

    assert hw.model(llm, use=[look, fresh_add_system()])("What is 2+2?") == "ok"
    assert seen == [(("user", "What is 2+2?"),)]
    assert received == [f"{SYSTEM}\n\nWhat is 2+2?"]
    assert type(received[0]) is str


def test_an_unchanged_request_passes_the_original_arguments_untouched() -> None:
    """Hooks that change nothing (None, or an equal copy of the request): the target gets
    the caller's very objects."""
    received: list[tuple[Any, Any]] = []

    def llm(messages: list[dict[str, Any]], *, metadata: Any = None) -> str:
        received.append((messages, metadata))
        return "ok"

    @hw.before_model
    def nothing(request: hw.ModelRequest) -> None:
        return None

    @hw.before_model
    def equal_copy(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(
            messages=tuple(request.messages), options=dict(request.options), model=request.model
        )

    @hw.wrap_model
    def passthrough(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    metadata = {"trace": [1, 2]}
    for use in ([nothing], [equal_copy], [passthrough], [nothing, equal_copy, passthrough]):
        received.clear()
        assert hw.model(llm, use=use)(messages, metadata=metadata) == "ok"
        assert len(received) == 1
        assert received[0][0] is messages
        assert received[0][1] is metadata


# -- options and model -------------------------------------------------------------------------


def _options_target(received: list[dict[str, Any]]) -> Callable[..., str]:
    def llm(
        messages: list[dict[str, Any]],
        model: str = "small",
        temperature: float = 1.0,
        top_p: float | None = None,
    ) -> str:
        received.append({"model": model, "temperature": temperature, "top_p": top_p})
        return "ok"

    return llm


def test_other_keyword_arguments_appear_in_request_options() -> None:
    seen: list[tuple[str | None, dict[str, Any]]] = []

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        seen.append((request.model, dict(request.options)))

    received: list[dict[str, Any]] = []
    messages = [{"role": "user", "content": "hi"}]
    hw.model(_options_target(received), use=[look])(messages, model="large", temperature=0.5)
    assert seen == [("large", {"temperature": 0.5})]
    assert received == [{"model": "large", "temperature": 0.5, "top_p": None}]


@pytest.mark.parametrize(
    ("model", "options", "expected"),
    [
        ("tiny", {"temperature": 0.5}, {"model": "tiny", "temperature": 0.5, "top_p": None}),
        ("large", {"temperature": 0.0}, {"model": "large", "temperature": 0.0, "top_p": None}),
        (
            "large",
            {"temperature": 0.5, "top_p": 0.9},
            {"model": "large", "temperature": 0.5, "top_p": 0.9},
        ),
        ("large", {}, {"model": "large", "temperature": 1.0, "top_p": None}),
    ],
    ids=("model", "changed", "added", "removed"),
)
def test_a_hook_changing_options_or_model_writes_them_back_as_kwargs(
    model: str, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    @hw.before_model
    def tune(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(model=model, options=options)

    received: list[dict[str, Any]] = []
    messages = [{"role": "user", "content": "hi"}]
    hw.model(_options_target(received), use=[tune])(messages, model="large", temperature=0.5)
    assert received == [expected]


@pytest.mark.parametrize("shape", ["sync", "async"])
def test_a_model_a_hook_sets_for_a_function_that_cannot_take_one_is_refused(shape: str) -> None:
    """As an option the function does not take: a `TypeError` naming it, and the function
    is not called without the model the hook asked for."""
    called: list[str] = []

    @hw.before_model
    def route(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(model="cheap")

    def llm(messages: list[Any]) -> str:
        called.append("llm")
        return "ok"

    async def allm(messages: list[Any]) -> str:
        called.append("llm")
        return "ok"

    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(TypeError, match=r"set the model to 'cheap', which .*llm .*cannot take"):
        if shape == "sync":
            hw.model(llm, use=[route])(messages)
        else:
            asyncio.run(hw.model(allm, use=[route])(messages))
    assert called == []


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"temperature": 0.9, "top_p": 0.5}, (0.9, 0.5, {})),
        ({"temperature": 0.1, "top_p": 0.5, "seed": 7}, (0.1, 0.5, {"seed": 7})),
        ({}, (1.0, None, {})),
    ],
    ids=("changed", "added", "removed"),
)
def test_options_given_by_position_are_options_written_back_in_place(
    options: dict[str, Any], expected: tuple[Any, Any, dict[str, Any]]
) -> None:
    """An argument given by position (other than the messages) is an option as one given
    by keyword is; a hook's change goes back in its place, and a removed one takes its
    default."""
    seen: list[dict[str, Any]] = []
    received: list[tuple[Any, Any, dict[str, Any]]] = []

    def llm(
        messages: list[Any], temperature: float = 1.0, top_p: float | None = None, **more: Any
    ) -> str:
        received.append((temperature, top_p, more))
        return "ok"

    @hw.before_model
    def tune(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(dict(request.options))
        return request.replace(options=options)

    messages = [{"role": "user", "content": "hi"}]
    assert hw.model(llm, use=[tune])(messages, 0.1, 0.5) == "ok"
    assert seen == [{"temperature": 0.1, "top_p": 0.5}]
    assert received == [expected]


def test_removing_a_positional_option_with_no_default_is_a_clear_type_error() -> None:
    def llm(messages: list[Any], temperature: float) -> str:
        return "ok"

    @hw.before_model
    def drop(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(options={})

    with pytest.raises(TypeError, match=r"removed option 'temperature'.*by position"):
        hw.model(llm, use=[drop])([{"role": "user", "content": "hi"}], 0.1)


# -- results -----------------------------------------------------------------------------------

ANSWERS: dict[str, Any] = {
    "str": "hi there",
    "dict": {"role": "assistant", "content": "hi there"},
    "Message": hw.Message.assistant("hi there"),
}
CHANGED: dict[str, Any] = {
    "str": "changed",
    "dict": {"role": "assistant", "content": "changed"},
    "Message": hw.Message.assistant("changed"),
}


def _answering(value: Any) -> Callable[..., Any]:
    def llm(prompt: str) -> Any:
        return value

    return llm


@pytest.mark.parametrize("form", list(ANSWERS))
def test_an_unchanged_result_is_the_targets_own_object(form: str) -> None:
    seen: list[str] = []

    @hw.after_model
    def look(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    answer = ANSWERS[form]
    assert hw.model(_answering(answer), use=[look])("hi") is answer
    assert seen == ["hi there"]


@pytest.mark.parametrize("form", list(ANSWERS))
def test_a_changed_result_keeps_the_targets_form(form: str) -> None:
    """str stays str, a dict stays a chat dict, a Message stays a Message."""

    @hw.after_model
    def change(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant("changed"))

    result = hw.model(_answering(ANSWERS[form]), use=[change])("hi")
    assert type(result) is type(CHANGED[form])
    assert result == CHANGED[form]


@pytest.mark.parametrize("form", list(ANSWERS))
def test_a_wrap_hook_changing_the_result_keeps_the_targets_form(form: str) -> None:
    @hw.wrap_model
    def change(request: hw.ModelRequest) -> Any:
        response = yield request
        return response.replace(message=hw.Message.assistant("changed"))

    result = hw.model(_answering(ANSWERS[form]), use=[change])("hi")
    assert type(result) is type(CHANGED[form])
    assert result == CHANGED[form]


def _respond_to_str(prompt: str) -> str:
    raise AssertionError("the model must not run")


def _respond_to_dict(prompt: str) -> dict[str, Any]:
    raise AssertionError("the model must not run")


def _respond_to_bare_dict(prompt: str) -> dict:  # type: ignore[type-arg]
    raise AssertionError("the model must not run")


def _respond_to_message(prompt: str) -> hw.Message:
    raise AssertionError("the model must not run")


def _respond_to_unannotated(prompt):  # type: ignore[no-untyped-def]
    raise AssertionError("the model must not run")


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (_respond_to_str, "cached"),
        (_respond_to_unannotated, "cached"),
        (_respond_to_dict, {"role": "assistant", "content": "cached"}),
        (_respond_to_bare_dict, {"role": "assistant", "content": "cached"}),
        (_respond_to_message, hw.Message.assistant("cached")),
    ],
    ids=("str", "unannotated", "dict[str, Any]", "dict", "Message"),
)
def test_respond_returns_a_str_unless_the_return_annotation_names_dict_or_message(
    fn: Callable[..., Any], expected: Any
) -> None:
    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("cached")

    result = hw.model(fn, use=[cached])("hi")
    assert type(result) is type(expected)
    assert result == expected


def test_a_request_function_gets_the_model_request_itself() -> None:
    received: list[Any] = []

    def llm(request: hw.ModelRequest) -> str:
        received.append(request)
        return "ok"

    request = hw.ModelRequest(messages=(hw.Message.user("hi"),))
    assert hw.model(llm, use=[fresh_add_system()])(request) == "ok"
    assert isinstance(received[0], hw.ModelRequest)
    assert [(m.role, m.text) for m in received[0].messages] == [
        ("system", SYSTEM),
        ("user", "hi"),
    ]


REQUEST_ANSWERS: dict[str, Any] = {
    "str": "hi there",
    "Message": hw.Message.assistant("hi there"),
    "ModelResponse": hw.ModelResponse(message=hw.Message.assistant("hi there")),
}


@pytest.mark.parametrize("form", list(REQUEST_ANSWERS))
@pytest.mark.parametrize("is_async", [False, True])
def test_a_request_functions_changed_result_keeps_its_form(form: str, is_async: bool) -> None:
    """As for the other forms: a function taking the request answers as it answered when a
    hook changes the answer (not the hooks' `ModelResponse`)."""

    @hw.after_model
    def change(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant("changed"))

    def llm(request: hw.ModelRequest) -> Any:
        return REQUEST_ANSWERS[form]

    async def allm(request: hw.ModelRequest) -> Any:
        return REQUEST_ANSWERS[form]

    request = hw.ModelRequest(messages=(hw.Message.user("hi"),))
    made = hw.model(allm if is_async else llm, use=[change])(request)
    result = asyncio.run(made) if is_async else made
    assert type(result) is type(REQUEST_ANSWERS[form])
    text = result if isinstance(result, str) else result.text
    assert text == "changed"


def _respond_with_response(request: hw.ModelRequest) -> hw.ModelResponse:
    raise AssertionError("the model must not run")


def _respond_with_text(request: hw.ModelRequest) -> str:
    raise AssertionError("the model must not run")


@pytest.mark.parametrize(
    ("fn", "kind"), [(_respond_with_response, hw.ModelResponse), (_respond_with_text, str)]
)
def test_respond_to_a_request_function_takes_its_return_annotations_form(
    fn: Callable[..., Any], kind: type
) -> None:
    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("cached")

    result = hw.model(fn, use=[cached])(hw.ModelRequest(messages=(hw.Message.user("hi"),)))
    assert type(result) is kind
    assert (result if isinstance(result, str) else result.text) == "cached"


def _respond_unannotated(request):  # type: ignore[no-untyped-def]
    raise AssertionError("the model must not run")


def test_respond_to_an_unannotated_request_function_keeps_the_whole_response() -> None:
    """The agent's kind of model function: an answer it did not give itself keeps its tool
    calls (as one more layer of hooks around it, or an agent, reads it)."""
    answer = hw.ModelResponse(
        message=hw.Message.assistant("", [hw.ToolCall("c1", "look", {})]), usage=hw.Usage(1, 2)
    )

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(answer)

    result = hw.model(_respond_unannotated, use=[cached])(
        hw.ModelRequest(messages=(hw.Message.user("hi"),))
    )
    assert result == answer


def test_chunks_a_hook_makes_in_an_unannotated_request_functions_stream_are_text() -> None:
    def llm(request):  # type: ignore[no-untyped-def]
        yield "Hello "
        yield "there"

    @hw.on_chunk
    def louder(chunk: hw.Chunk) -> hw.Chunk:
        return hw.Chunk("text", chunk.text.upper())

    request = hw.ModelRequest(messages=(hw.Message.user("hi"),))
    assert list(hw.model(llm, use=[louder])(request)) == ["HELLO ", "THERE"]


def test_respond_to_a_request_function_that_streams_is_a_stream() -> None:
    def unannotated(request):  # type: ignore[no-untyped-def]
        yield "never"

    def annotated(request: hw.ModelRequest) -> Iterator[str]:
        yield "never"

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("canned")

    request = hw.ModelRequest(messages=(hw.Message.user("hi"),))
    for fn in (unannotated, annotated):
        assert list(hw.model(fn, use=[cached])(request)) == ["canned"]
        assert hw.Agent(fn, use=[cached]).run("hi").text == "canned"


def test_a_streamed_respond_to_a_model_response_iterator_function_is_text() -> None:
    def stream(prompt: str) -> Iterator[hw.ModelResponse]:
        raise AssertionError("the model must not run")

    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("cached")

    assert list(hw.model(stream, use=[cached])("hi")) == ["cached"]


def test_a_positional_only_messages_function_is_an_agents_and_a_fallbacks_model() -> None:
    from hookwrap.middleware import Fallback

    def llm(messages: Any, /) -> str:
        return "ok"

    def down(messages: Any, /) -> str:
        raise ConnectionError("down")

    assert hw.Agent(llm).run("hi").text == "ok"
    assert hw.model(down, use=[Fallback(models=[llm])])([{"role": "user", "content": "hi"}]) == "ok"


# -- errors ----------------------------------------------------------------------------------


def test_a_function_without_messages_prompt_or_request_is_a_wrap_time_type_error() -> None:
    def summarize(text: str, style: str = "short") -> str:
        return text

    with pytest.raises(TypeError) as excinfo:
        hw.model(summarize, use=[fresh_add_system()])
    message = str(excinfo.value)
    assert "summarize" in message
    assert "messages" in message
    assert "prompt" in message
    assert "ModelRequest" in message


def test_messages_given_as_a_str_is_a_clear_type_error() -> None:
    called: list[Any] = []

    def llm(messages: list[dict[str, Any]]) -> str:
        called.append(messages)
        return "ok"

    with pytest.raises(TypeError) as excinfo:
        hw.model(llm, use=[fresh_add_system()])("hello")
    message = str(excinfo.value)
    assert "`messages`" in message
    assert "str" in message
    assert "llm" in message
    assert called == []


def test_a_function_returning_an_int_is_a_clear_type_error_naming_it() -> None:
    def count_tokens_llm(prompt: str) -> int:
        return 42

    with pytest.raises(TypeError) as excinfo:
        hw.model(count_tokens_llm, use=[fresh_add_system()])("hi")
    message = str(excinfo.value)
    assert "count_tokens_llm" in message
    assert "int" in message


def test_a_positional_model_argument_is_read_and_written_back_in_place() -> None:
    seen: list[str | None] = []

    @hw.before_model
    def upgrade(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append(request.model)
        return request.replace(model="large")

    def ask(prompt: str, model: str) -> str:
        return f"{model}: {prompt}"

    assert hw.model(ask, use=[upgrade])("hi", "small") == "large: hi"
    assert hw.model(ask, use=[upgrade])("hi", model="small") == "large: hi"
    assert seen == ["small", "small"]


def test_a_function_taking_messages_and_prompt_uses_the_one_each_call_gives() -> None:
    forms: list[tuple[str, ...]] = []

    @hw.before_model
    def brief(request: hw.ModelRequest) -> hw.ModelRequest:
        forms.append(tuple(m.role for m in request.messages))
        return request.replace(messages=(hw.Message.system("Brief."), *request.messages))

    def ask(messages: list[dict[str, str]] | None = None, prompt: str | None = None) -> str:
        if messages is not None:
            return " | ".join(m["content"] for m in messages)
        return f"prompt: {prompt}"

    wrapped = hw.model(ask, use=[brief])
    assert wrapped(prompt="hi") == "prompt: Brief.\n\nhi"
    assert wrapped([{"role": "user", "content": "yo"}]) == "Brief. | yo"
    assert forms == [("user",), ("user",)]


@pytest.mark.parametrize("answer", ["text", {"role": "assistant", "content": "hi", "id": 7}])
def test_an_answer_no_hook_sees_reaches_the_caller_as_the_very_object(answer: Any) -> None:
    def llm(prompt: str) -> Any:
        return answer

    assert hw.model(llm, use=[fresh_add_system()])("hi") is answer


def test_an_answer_no_hook_sees_is_still_refused_when_it_is_no_message() -> None:
    def llm(prompt: str) -> dict[str, Any]:
        return {"role": "robot", "content": 3}

    with pytest.raises((TypeError, ValueError)):
        hw.model(llm, use=[fresh_add_system()])("hi")


def test_an_answer_inside_a_run_is_seen_for_its_usage() -> None:
    finished: list[hw.Usage] = []

    @hw.on_finish
    def done(info: Any) -> None:
        finished.append(info.usage)

    def llm(prompt: str) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message("assistant", "hi"), usage=hw.Usage(3, 2, 5))

    wrapped = hw.model(llm, use=[fresh_add_system()])
    with hw.run(use=[done]):
        wrapped("one")
        wrapped("two")
    assert finished == [hw.Usage(6, 4, 10)]


def test_what_a_partial_binds_is_given_hooks_see_and_change_it() -> None:
    import functools

    def llm(messages: list[dict[str, str]], model: str = "default", temperature: float = 0) -> str:
        return f"{model}/{temperature}"

    seen: list[tuple[str | None, dict[str, Any]]] = []

    @hw.before_model
    def cooler(request: hw.ModelRequest) -> hw.ModelRequest:
        seen.append((request.model, dict(request.options)))
        return request.replace(model="gpt-y", options={**request.options, "temperature": 0.1})

    chat = hw.model(functools.partial(llm, model="gpt-x", temperature=0.9), use=[cooler])
    assert chat([{"role": "user", "content": "hi"}]) == "gpt-y/0.1"
    assert seen == [("gpt-x", {"temperature": 0.9})]

    @hw.before_model
    def remove(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(options={})

    bound = hw.model(functools.partial(llm, temperature=0.9), use=[remove])
    with pytest.raises(TypeError, match=r"removed option 'temperature', which .* binds"):
        bound([{"role": "user", "content": "hi"}])


def test_a_partial_of_an_async_function_or_generator_is_an_async_target() -> None:
    import asyncio
    import functools
    from collections.abc import AsyncIterator

    seen: list[str | None] = []

    @hw.before_model
    async def look(request: hw.ModelRequest) -> None:  # an async hook: allowed
        seen.append(request.model)

    async def llm(messages: list[dict[str, str]], model: str = "default") -> str:
        return f"answer from {model}"

    async def pieces(messages: list[dict[str, str]], model: str = "default") -> AsyncIterator[str]:
        yield model
        yield "!"

    chat = hw.model(functools.partial(llm, model="m"), use=[look])
    streamed = hw.model(functools.partial(functools.partial(pieces), model="s"), use=[look])

    async def main() -> list[str]:
        said = [{"role": "user", "content": "hi"}]
        return [await chat(said), "".join([c async for c in streamed(said)])]

    assert asyncio.run(main()) == ["answer from m", "s!"]
    assert seen == ["m", "s"]


def test_call_next_kept_past_its_call_is_a_clear_error() -> None:
    """A hook that keeps `call_next` and calls it once the call is over (as a retry left
    running in a sync Timeout's worker would) gets an error saying so, not an assertion."""
    kept: list[Any] = []

    @hw.wrap_model
    def keep(request: hw.ModelRequest, call_next: Callable[..., Any]) -> Any:
        kept.append((request, call_next))
        return call_next(request)

    def model(prompt: str) -> str:
        return prompt

    assert hw.model(model, use=[keep])("hi") == "hi"
    request, call_next = kept[0]
    for late in (request, request.replace(messages=(hw.Message.user("again"),))):
        with pytest.raises(RuntimeError, match="for a call that is over"):
            call_next(late)


def test_a_function_annotated_iterable_may_return_a_list_it_streams() -> None:
    """`-> Iterable[str]` says the function streams (docs/streams.md); a list is such an
    iterable: its items are the chunks, as when the function is called unwrapped."""

    @hw.on_chunk
    def shout(chunk: hw.Chunk) -> hw.Chunk:
        return chunk.replace(text=chunk.text.upper())

    def words(messages: list[dict[str, str]]) -> Iterable[str]:
        return ["one ", "two"]

    def pairs(messages: list[dict[str, str]]) -> Iterable[dict[str, str]]:
        return ({"kind": "text", "text": "a"}, {"kind": "text", "text": "b"})

    asked = [{"role": "user", "content": "x"}]
    assert list(hw.model(words, use=[shout])(asked)) == ["ONE ", "TWO"]
    seen: list[str] = []

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    assert list(hw.model(words, use=[keep])(asked)) == ["one ", "two"]
    assert seen == ["one two"]
    assert [c["text"] for c in hw.model(pairs, use=[shout])(asked)] == ["A", "B"]


def test_a_model_a_hook_unsets_is_removed_as_an_option_is() -> None:
    """`request.replace(model=None)`: the function's default model, not a `None`, however
    the caller gave it; a `model` with no default is a TypeError naming the function."""

    @hw.before_model
    def unset(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(model=None)

    def llm(prompt: str, model: str = "default-model") -> str:
        return model

    def strict(prompt: str, model: str) -> str:
        return model

    assert hw.model(llm, use=[unset])("hi", model="m") == "default-model"
    assert hw.model(llm, use=[unset])("hi", "m") == "default-model"
    assert hw.model(llm, use=[unset])("hi") == "default-model"
    with pytest.raises(TypeError, match=r"a hook removed the model, which .*strict .* no default"):
        hw.model(strict, use=[unset])("hi", "m")
