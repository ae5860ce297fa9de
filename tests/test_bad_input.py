"""Every error hookwrap raises for bad input: as early as it can (decoration, then wrapping,
then the call), a `TypeError` (or `ValueError`) that names what was wrong and what was
expected."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, ClassVar

import pytest

import hookwrap as hw


def answer(prompt: str) -> str:
    return f"echo: {prompt}"


def streamed(prompt: str) -> Iterator[str]:
    yield "a"
    yield "b"


async def astreamed(prompt: str) -> AsyncIterator[str]:
    yield "a"


# -- decoration time --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"priority": "high"}, "priority=...) must be an int (got 'high')"),
        ({"priority": True}, "priority=...) must be an int (got True)"),
        ({"name": 1}, "name=...) must be a str (got 1)"),
        ({"fail_open": "yes"}, "fail_open=...) must be True or False (got 'yes')"),
    ],
)
def test_bad_decorator_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError) as err:

        @hw.before_model(**options)
        def hook(request: hw.ModelRequest) -> None:
            return None

    assert message in str(err.value)


def test_a_positional_only_ctx_is_refused() -> None:
    with pytest.raises(TypeError, match="`ctx` must be passable by keyword"):

        @hw.before_model
        def hook(request: hw.ModelRequest, ctx: Any, /) -> None:
            return None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("before_model", "(request, ctx)"),
        ("after_model", "(request, response, ctx)"),
        ("wrap_model", "(request, call_next, ctx)"),
        ("wrap_model generator", "(request, ctx)"),
        ("on_chunk", "(chunk, ctx)"),
    ],
)
def test_a_ctx_before_the_stages_arguments_is_refused_when_decorated(
    kind: str, expected: str
) -> None:
    """The stage passes its arguments by position and `ctx` by keyword: a `ctx` before them
    would take one of them, so it is refused at decoration, saying where it goes."""

    def hook(ctx: Any, request: Any, response: Any = None, call_next: Any = None) -> None:
        return None

    def generator(ctx: Any, request: Any) -> Any:
        yield request

    decorator = getattr(hw, kind.split()[0])
    with pytest.raises(TypeError) as err:
        decorator(generator if "generator" in kind else hook)
    assert "`ctx` comes before the stage's arguments" in str(err.value)
    assert f"put it last: {expected}" in str(err.value)


def test_a_hook_decorator_above_classmethod_says_where_it_goes() -> None:
    with pytest.raises(TypeError, match="put @before_model below @classmethod"):

        class Above(hw.Middleware):
            @hw.before_model
            @classmethod
            def add(cls, request: hw.ModelRequest) -> None:
                return None

    class Below(hw.Middleware):
        seen: ClassVar[list[Any]] = []

        @classmethod
        @hw.before_model
        def add(cls, request: hw.ModelRequest) -> None:
            cls.seen.append(request.messages[0].text)

    assert hw.model(lambda prompt: prompt, use=[Below()])("hi") == "hi"
    assert Below.seen == ["hi"]


def test_a_hook_decorator_above_staticmethod_marks_what_the_class_gives() -> None:
    seen: list[str] = []

    class Above:
        @hw.before_model
        @staticmethod
        def add(request: hw.ModelRequest) -> None:
            seen.append(request.messages[0].text)

    for use in ([Above()], [Above.add], [Above().add]):
        assert hw.model(lambda prompt: prompt, use=use)("hi") == "hi"
    assert seen == ["hi"] * 3


def test_a_hook_with_no_parameters_shows_empty_parentheses() -> None:
    """The error shows what the function takes as the docs show it: `()` when nothing."""
    with pytest.raises(TypeError) as err:

        @hw.on_finish
        def finished() -> None:
            return None

    assert str(err.value).endswith("found:    ()")


def test_a_method_missing_the_stage_argument_shows_all_its_parameters() -> None:
    with pytest.raises(TypeError) as err:

        class Bad(hw.Middleware):
            @hw.after_model
            def hook(self) -> None:
                return None

    text = str(err.value)
    assert "after_model hook" in text
    assert "expected: (request, response, ctx=None)" in text
    assert "found:    (self)" in text


def test_a_keyword_only_stage_argument_is_shown_as_such_and_explained() -> None:
    with pytest.raises(TypeError) as err:

        @hw.before_model
        def guard(*, request: Any) -> None:
            return None

    text = str(err.value)
    assert "found:    (*, request: 'Any')" in text
    assert text.endswith("(the stage passes request by position, not by keyword)")


def test_bad_stack_switches() -> None:
    with pytest.raises(TypeError, match=r"continue_on_error=\.\.\.\) must be True or False"):
        hw.Stack(continue_on_error="yes")
    with pytest.raises(TypeError, match=r"continue_on_response=\.\.\.\) must be True or False"):
        hw.Stack(continue_on_response=1)


def test_a_non_int_middleware_priority() -> None:
    class Loud(hw.Middleware):
        priority = "high"  # type: ignore[assignment]

        @hw.before_model
        def hook(self, request: hw.ModelRequest) -> None:
            return None

    with pytest.raises(TypeError, match=r"Loud\.priority must be an int \(got 'high'\)"):
        hw.model(answer, use=[Loud()])


def test_a_bad_chunk_kind() -> None:
    with pytest.raises(ValueError, match="Chunk kind must be one of"):
        hw.Chunk("bogus")  # type: ignore[arg-type]


# -- wrap time --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: hw.Message("wizard", "x"), ValueError, "role must be one of"),
        (lambda: hw.Message("user", 5), TypeError, "content must be a str or a sequence of"),
        (lambda: hw.Message.user(["a", "b"]), TypeError, r"content\[0\] must be a TextPart"),
        (lambda: hw.Message.assistant("", [{"id": "c"}]), TypeError, r"tool_calls\[0\]"),
        (lambda: hw.ModelRequest(messages="hi"), TypeError, "messages must be a sequence"),  # type: ignore[arg-type]
        (
            lambda: hw.ModelRequest(messages=[{"role": "user", "content": "hi"}]),  # type: ignore[list-item]
            TypeError,
            r"messages\[0\] must be a Message \(got dict.*hw\.Message",
        ),
        (lambda: hw.ModelRequest(tools=["search"]), TypeError, r"tools\[0\] must be a ToolSpec"),  # type: ignore[list-item]
        (
            lambda: hw.ModelRequest(model=42),
            TypeError,
            r"ModelRequest model must be a str or None \(got int: 42\)",
        ),  # type: ignore[arg-type]
        (lambda: hw.ModelRequest(options=None), TypeError, "ModelRequest options must be a dict"),  # type: ignore[arg-type]
        (
            lambda: hw.ModelRequest(stream="yes"),
            TypeError,
            "ModelRequest stream must be True or False",
        ),  # type: ignore[arg-type]
        (
            lambda: hw.Message("user", "x", tool_call_id=5),
            TypeError,
            "Message tool_call_id must be a str or None",
        ),  # type: ignore[arg-type]
        (
            lambda: hw.Message("tool", "x", name=5),
            TypeError,
            r"Message name must be a str or None \(got int: 5\)",
        ),  # type: ignore[arg-type]
        (lambda: hw.ToolCall("1", 42), TypeError, "ToolCall name must be a str"),  # type: ignore[arg-type]
        (
            lambda: hw.ToolCall("1", "f", "x=1"),
            TypeError,
            r"ToolCall arguments must be a dict \(got str: 'x=1'\)",
        ),  # type: ignore[arg-type]
        (
            lambda: hw.ToolSpec("f", parameters=None),
            TypeError,
            "ToolSpec parameters must be a dict",
        ),  # type: ignore[arg-type]
        (
            lambda: hw.ModelResponse(message="oops"),
            TypeError,
            "ModelResponse message must be a Message",
        ),  # type: ignore[arg-type]
        (
            lambda: hw.ModelResponse(usage=(1, 2, 3)),
            TypeError,
            "ModelResponse usage must be a Usage or None",
        ),  # type: ignore[arg-type]
        (lambda: hw.Usage("5"), TypeError, r"Usage input_tokens must be an int \(got str: '5'\)"),  # type: ignore[arg-type]
        (lambda: hw.Usage(1, True), TypeError, r"Usage output_tokens must be an int \(got bool"),
        (lambda: hw.Chunk("text", text=42), TypeError, r"Chunk text must be a str \(got int: 42\)"),  # type: ignore[arg-type]
        (lambda: hw.Chunk("text", "x").replace(text=None), TypeError, "Chunk text must be a str"),
        (lambda: hw.Chunk("finish", finish_reason=1), TypeError, "Chunk finish_reason must be"),  # type: ignore[arg-type]
        (lambda: hw.TextPart(3), TypeError, r"TextPart text must be a str \(got int: 3\)"),  # type: ignore[arg-type]
        (lambda: hw.ToolOutcome("yes"), TypeError, "ToolOutcome ok must be True or False"),  # type: ignore[arg-type]
    ],
)
def test_neutral_types_refuse_what_they_cannot_hold_when_made(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    """A neutral type made with a value it cannot hold says so at once, naming the field
    (and the item), rather than keeping a str's characters as messages or failing later."""
    with pytest.raises(error, match=message):
        make()


def test_a_hook_replacing_messages_with_dicts_is_told_at_its_replace() -> None:
    @hw.before_model
    def add(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=[{"role": "system", "content": "Be brief."}])  # type: ignore[list-item]

    with pytest.raises(TypeError, match=r"messages\[0\] must be a Message") as err:
        hw.model(answer, use=[add])("hi")
    assert any("add" in note for note in getattr(err.value, "__notes__", []))


def test_a_hook_building_a_bad_neutral_value_is_named() -> None:
    """The value is refused where the hook builds it, so the error carries the hook's note
    (it used to fail later, inside hookwrap, as an AttributeError)."""

    @hw.after_model
    def oops(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message="oops")

    @hw.on_chunk
    def number(chunk: hw.Chunk) -> hw.Chunk:
        return chunk.replace(text=42)

    with pytest.raises(TypeError, match="ModelResponse message must be a Message") as err:
        hw.model(answer, use=[oops])("hi")
    assert any("oops" in note for note in getattr(err.value, "__notes__", []))
    with pytest.raises(TypeError, match="Chunk text must be a str") as err:
        "".join(hw.model(streamed, use=[number])("hi"))
    assert any("number" in note for note in getattr(err.value, "__notes__", []))


def test_a_target_returning_a_stream_of_the_other_shape_is_told_so() -> None:
    """An `async def` returning a sync iterator, or a `def` returning an async one: the
    stream cannot go back as the same kind of object through hooks of the target's shape,
    so the call says which shape to give the target."""

    @hw.before_model
    def look(request: hw.ModelRequest) -> None:
        return None

    async def pieces(prompt: str) -> AsyncIterator[str]:
        yield prompt

    async def returns_sync(prompt: str) -> Any:
        return iter([prompt])

    def returns_async(prompt: str) -> Any:
        return pieces(prompt)

    with pytest.raises(TypeError, match=r"is an `async def` but returned a sync iterator"):
        asyncio.run(hw.model(returns_sync, use=[look])("hi"))
    with pytest.raises(TypeError, match=r"is a plain `def` but returned an async iterator"):
        hw.model(returns_async, use=[look])("hi")


@pytest.mark.parametrize(
    "make",
    [
        lambda: hw.model(answer, use=[None]),
        lambda: hw.model(answer, use=[[hw.before_model(lambda request: None), None]]),
        lambda: hw.Stack(None),
        lambda: hw.Stack() + None,
        lambda: hw.run(use=[None]),
    ],
)
def test_none_among_the_hooks_is_refused(make: Callable[[], Any]) -> None:
    with pytest.raises(TypeError, match=r"use= got None among its items"):
        make()


def test_use_none_itself_means_no_hooks() -> None:
    assert hw.model(answer, use=None)("hi") == answer("hi")


def test_a_target_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match=r"hw.model expects a callable \(got int: 3\)"):
        hw.model(3)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"hw.tool expects a callable"):
        hw.tool("read_file")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"hw.model expects a callable \(got NoneType: None\)"):
        hw.model(None)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"hw.tool expects a callable \(got NoneType: None\)"):
        hw.tool(None)  # type: ignore[call-overload]


def test_a_function_without_a_model_argument() -> None:
    def nothing(x: int) -> str:
        return str(x)

    with pytest.raises(TypeError, match="expected a parameter named `messages`"):
        hw.model(nothing, use=[hw.before_model(lambda request: None)])
    with pytest.raises(TypeError, match="expected a parameter named `messages`"):
        hw.model(nothing)  # no hooks yet: refused all the same, when wrapped


def add(a: int, b: int) -> int:
    return a + b


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"name": 42}, TypeError, r"hw.tool\(name=...\) expects a str or None \(got int: 42\)"),
        ({"name": ""}, ValueError, r"hw.tool\(name=...\) is '': a tool name is 1 to 64 letters"),
        ({"name": "get weather!"}, ValueError, "is 'get weather!': a tool name is 1 to 64"),
        ({"name": "x" * 65}, ValueError, "a tool name is 1 to 64 letters, digits"),
        ({"description": 42}, TypeError, r"description=...\) expects a str or None \(got int"),
    ],
)
def test_bad_tool_names_and_descriptions(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        hw.tool(add, **options)
    with pytest.raises(error, match=message):  # renaming a tool is checked the same way
        hw.tool(hw.tool(add), **options)


def test_a_lambda_tool_needs_a_name() -> None:
    with pytest.raises(ValueError, match=r"'<lambda>'.*give the tool one with hw.tool\(name="):
        hw.tool(lambda x: x)
    assert hw.tool(lambda x: x, name="identity").spec.name == "identity"
    assert hw.tool(add, name="plus-2_b").name == "plus-2_b"


def test_a_hook_function_for_a_stage_the_target_never_has() -> None:
    @hw.before_tool
    def guard(call: hw.ToolCall) -> None:
        return None

    @hw.before_model
    def prompt(request: hw.ModelRequest) -> None:
        return None

    with pytest.raises(TypeError, match=r"before_tool hook '.*guard'.*can never run on answer"):
        hw.model(answer, use=[guard])
    with pytest.raises(TypeError, match=r"before_model hook '.*prompt'.*can never run on tool"):
        hw.tool(answer, use=[prompt])


def test_a_middleware_may_carry_hooks_for_other_targets() -> None:
    seen: list[str] = []

    class Both(hw.Middleware):
        @hw.before_model
        def model_side(self, request: hw.ModelRequest) -> None:
            seen.append("model")

        @hw.before_tool
        def tool_side(self, call: hw.ToolCall) -> None:
            seen.append("tool")

    both = Both()
    assert hw.model(answer, use=[both])("x") == "echo: x"
    assert hw.tool(answer, use=[both])("y") == "echo: y"
    assert seen == ["model", "tool"]


def test_a_middleware_that_only_provides_tools_is_taken_one_with_nothing_is_not() -> None:
    def lookup(word: str) -> str:
        """Look a word up."""
        return word

    class OnlyTools(hw.Middleware):
        tools = (hw.tool(lookup),)

    class Nothing(hw.Middleware):
        pass

    assert [t.name for t in hw.Agent(answer, use=[OnlyTools()]).tools] == ["lookup"]
    with pytest.raises(TypeError, match=r"only tools \(lookup\); tools are for an hw.Agent"):
        hw.model(answer, use=[OnlyTools()])
    with pytest.raises(TypeError, match=r"Nothing.*has no hook methods"):
        hw.model(answer, use=[Nothing()])


def test_explain_of_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="dot"):
        hw.explain(hw.model(answer), format="dot")  # type: ignore[arg-type]


def test_a_proxy_cannot_be_pickled() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(hw.model(answer, use=[hw.before_model(lambda request: None)]))


# -- call time --------------------------------------------------------------------------------


def test_wrap_model_returning_nothing() -> None:
    @hw.wrap_model
    def forgot(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
        call_next(request)

    with pytest.raises(TypeError) as err:
        hw.model(answer, use=[forgot])("x")
    assert "wrap_model hook 'test_wrap_model_returning_nothing.<locals>.forgot'" in str(err.value)
    assert "returned NoneType" in str(err.value)
    assert "return call_next(request)" in str(err.value)


def test_wrap_model_returning_a_number() -> None:
    @hw.wrap_model
    def number(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
        return 7

    with pytest.raises(TypeError, match=r"returned int \(7\); expected a ModelResponse"):
        hw.model(answer, use=[number])("x")


def test_generator_form_yielding_something_else_than_the_request() -> None:
    @hw.wrap_model
    def odd(request: hw.ModelRequest) -> Iterator[Any]:
        yield "not a request"

    with pytest.raises(TypeError, match=r"wrap_model hook .*odd.* yielded str .*yield the request"):
        hw.model(answer, use=[odd])("x")


def test_an_async_generator_form_that_never_yields() -> None:
    @hw.wrap_model
    async def empty(request: hw.ModelRequest) -> AsyncIterator[Any]:
        if False:
            yield request

    async def aanswer(prompt: str) -> str:
        return prompt

    with pytest.raises(TypeError, match=r"empty.*returned NoneType.*`response = yield request`"):
        asyncio.run(hw.model(aanswer, use=[empty])("x"))


def test_a_generator_form_that_ends_with_no_call_and_no_response_says_what_it_lacks() -> None:
    @hw.wrap_model
    def forgot(request: hw.ModelRequest) -> Iterator[Any]:
        if False:
            yield request

    with pytest.raises(TypeError) as err:
        hw.model(lambda prompt: prompt, use=[forgot])("x")
    assert "forgot" in str(err.value)
    assert "expected `response = yield request` (or a response of its own)" in str(err.value)
    assert "call_next" not in str(err.value)  # the other form's advice


def test_a_respond_with_no_answer_names_its_hook() -> None:
    @hw.before_model
    def weird(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(42)

    with pytest.raises(TypeError) as err:
        hw.model(answer, use=[weird])("x")
    assert "before_model hook" in str(err.value)
    assert "weird" in str(err.value)
    assert "hw.Respond(42) (int)" in str(err.value)


def test_a_wrap_hook_stream_of_strings_names_the_hooks() -> None:
    @hw.wrap_model
    def texts(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
        return (chunk.text for chunk in call_next(request))

    with pytest.raises(TypeError) as err:
        list(hw.model(streamed, use=[texts])("x"))
    assert "wrap_model hooks ('test_a_wrap_hook_stream_of_strings_names_the_hooks" in str(err.value)
    assert "yielded str ('a'); expected Chunk objects" in str(err.value)


def test_a_sync_iterator_from_an_async_wrap_hook() -> None:
    @hw.wrap_model
    async def sync_stream(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
        await call_next(request)
        return iter([hw.Chunk("text", "z")])

    async def main() -> list[Any]:
        return [c async for c in hw.model(astreamed, use=[sync_stream])("x")]

    with pytest.raises(TypeError, match=r"sync_stream.*expected an async iterator of Chunks"):
        asyncio.run(main())


def test_a_bad_argument_type_for_the_prompt() -> None:
    chat = hw.model(answer, use=[hw.before_model(lambda request: None)])
    with pytest.raises(TypeError, match=r"`prompt` must be a str \(got int\)"):
        chat(3)  # type: ignore[arg-type]


def test_a_non_str_state_key_and_bad_defer() -> None:
    with hw.run() as run:
        with pytest.raises(TypeError, match=r"state keys are str \(got 1\)"):
            run.state.set(1, "x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"ctx.defer\(\) takes a callable or an awaitable"):
            run.defer(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (True, TypeError, r"Agent\(max_iterations=...\) expects an int >= 1 \(got bool: True\)"),
        (2.0, TypeError, r"expects an int >= 1 \(got float: 2.0\)"),
        ("3", TypeError, r"expects an int >= 1 \(got str: '3'\)"),
        (0, ValueError, r"Agent\(max_iterations=...\) expects an int >= 1 \(got 0\)"),
    ],
)
def test_every_int_setting_is_checked_with_one_wording(
    value: object, error: type[Exception], message: str
) -> None:
    from hookwrap.middleware import ContentGuard, Retry, ToolCache
    from hookwrap.testing import FakeProvider

    with pytest.raises(error, match=message):
        hw.Agent(FakeProvider().openai().chat.completions.create, max_iterations=value)  # type: ignore[arg-type]
    tail = message.split(r"expects", 1)[1]
    with pytest.raises(error, match=r"ToolCache\(max_size=...\) expects" + tail):
        ToolCache(max_size=value)  # type: ignore[arg-type]
    with pytest.raises(error, match=r"ContentGuard\(window=...\) expects" + tail):
        ContentGuard(rules=["secret"], window=value)  # type: ignore[arg-type]
    if value != 0:  # 0 retries is a fine setting
        with pytest.raises(error, match=r"Retry\(max_retries=...\) expects"):
            Retry(max_retries=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", [{"city": "Oslo"}, None, "Oslo"])
def test_invoke_takes_a_tool_call_only(call: object) -> None:
    @hw.tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    made_as = r"expects an hw.ToolCall, made as hw.ToolCall\(id, name, arguments\)"
    with pytest.raises(TypeError, match=r"Tool.invoke " + made_as):
        get_weather.invoke(call)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Tool.ainvoke " + made_as):
        asyncio.run(get_weather.ainvoke(call))  # type: ignore[arg-type]
    if isinstance(call, dict):
        with pytest.raises(TypeError, match=r"ToolCall\('call_1', 'get_weather', \{'city'"):
            get_weather.invoke(call)  # type: ignore[arg-type]


def test_an_sdk_client_class_is_not_a_client() -> None:
    from openai import OpenAI

    from hookwrap.middleware import Fallback

    hook = hw.before_model(lambda request: None)
    client = r"got the class OpenAI; pass a client \(OpenAI\(...\)\)"
    with pytest.raises(TypeError, match=r"hw.wrap: " + client):
        hw.wrap(OpenAI, use=[hook])
    with pytest.raises(TypeError, match=r"hw.model: " + client):
        hw.model(OpenAI, use=[hook])
    with pytest.raises(TypeError, match=client):
        hw.Agent((OpenAI, "gpt-4o"))  # type: ignore[arg-type]
    for alternative in [(OpenAI, "gpt-4o"), OpenAI]:  # a pair or alone, said alike
        with pytest.raises(TypeError, match=r"^Fallback\(models=\.\.\.\) takes .*" + client):
            Fallback(models=[alternative])


def test_a_hook_method_taken_from_its_class_needs_an_instance() -> None:
    class Audit(hw.Middleware):
        @hw.before_model
        def log(self, request: hw.ModelRequest) -> None:
            return None

    with pytest.raises(TypeError, match=r"Audit.log .*the class Audit .*\(use=\[Audit\(\)\]\)"):
        hw.model(answer, use=[Audit.log])
    assert hw.model(answer, use=[Audit().log])("x") == "echo: x"


def test_a_tool_of_only_star_args_cannot_take_arguments() -> None:
    def anything(*args: Any) -> Any:
        """Anything."""
        return args

    def keywords(**kwargs: Any) -> Any:
        """Keywords."""
        return kwargs

    with pytest.raises(TypeError, match=r"parameters need names: \*args cannot take"):
        hw.tool(anything)
    assert hw.tool(keywords).invoke(hw.ToolCall("1", "keywords", {"x": 1})) == {"x": 1}


def test_a_middleware_none_of_whose_hooks_run_here_is_refused(tmp_path: Any) -> None:
    from hookwrap.middleware import Filesystem, Retry, ToolApproval, ToolCache
    from hookwrap.testing import FakeProvider

    @hw.tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    only_tools = r"which a model call never has; give it to an hw.Agent\(use=...\) or hw.tool"
    with pytest.raises(
        TypeError, match=r"ToolApproval has hooks only for before_tool, before_agent, " + only_tools
    ):
        hw.model(answer, use=[ToolApproval(allowed_tools=["search"])])
    with pytest.raises(
        TypeError, match=r"ToolCache has hooks only for wrap_tool, before_agent, " + only_tools
    ):
        hw.wrap(FakeProvider().openai(), use=[ToolCache(ttl=60)])
    with pytest.raises(TypeError, match=r"ToolApproval has hooks only for before_tool"):
        hw.model(answer, use=[ToolApproval(allowed_tools=["search"]).approve])
    with pytest.raises(TypeError, match=r"only tools \(list_files, read_file\); tools are for"):
        hw.tool(get_weather, use=[Filesystem(tmp_path)])
    # hooks for several targets: those for other stages are left for them, as before
    assert hw.tool(get_weather, use=[Retry(tools=True)])("Oslo") == "Oslo"
    approval = ToolApproval(allowed_tools=["get_weather"])
    agent = hw.Agent(answer, tools=[get_weather], use=[approval, ToolCache()])
    assert agent.run("hi").text == "echo: hi"


def test_a_middleware_of_only_tools_is_refused_by_patch_and_run_too(tmp_path: Any) -> None:
    from hookwrap.middleware import Filesystem

    only_tools = r"which has no hooks, only tools \(list_files, read_file\); tools are for"
    with pytest.raises(TypeError, match=r"hw.run\(use=...\) got Filesystem.*" + only_tools):
        hw.run(use=[Filesystem(tmp_path)])
    with pytest.raises(TypeError, match=r"hw.patch\(use=...\) got Filesystem.*" + only_tools):
        hw.patch("openai", use=[hw.Stack(Filesystem(tmp_path))])
    from hookwrap._patch import _patched  # pyright: ignore[reportPrivateUsage]

    assert "openai" not in _patched  # nothing was patched


def test_async_and_generator_hooks_above_staticmethod_are_read_as_what_they_wrap() -> None:
    seen: list[str] = []

    class Above:
        @hw.before_model
        @staticmethod
        async def add(request: hw.ModelRequest) -> None:
            seen.append("async")

        @hw.wrap_model
        @staticmethod
        def timed(request: hw.ModelRequest) -> Any:
            response = yield request
            seen.append("generator form")
            return response

    async def llm(prompt: str) -> str:
        return prompt

    assert asyncio.run(hw.model(llm, use=[Above()])("hi")) == "hi"
    assert seen == ["async", "generator form"]
