"""ToolSearch (SPEC §8): dynamic tools stay hidden from the model until a `tool_search` call
selects them; selections accumulate and persist while their results stay in the history,
in every call shape and over the wire of a real SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._toolsearch import ToolSearch
from hookwrap.testing import FakeProvider

SHAPES = ("sync", "async", "stream", "astream")


@hw.tool
def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f"sunny in {city}"


@hw.tool
def convert_currency(amount: float, to: str) -> str:
    """Convert money between currencies."""
    return f"{amount} {to}"


SEND_MAIL = hw.ToolSpec("send_mail", "Send an e-mail to someone.")
CALCULATOR = hw.ToolSpec("calculator", "Evaluate arithmetic.")
DYNAMIC = ("get_weather", "send_mail", "convert_currency")


def make() -> ToolSearch:
    return ToolSearch(dynamic_tools=[get_weather, SEND_MAIL, convert_currency])


def search(ts: ToolSearch, call_id: str, pattern: str) -> tuple[hw.Message, hw.Message]:
    """An assistant message calling tool_search and the tool message with its real result."""
    call = hw.ToolCall(call_id, "tool_search", {"regex_pattern": pattern})
    result = ts.search_tool.invoke(call)
    return hw.Message.assistant(tool_calls=[call]), hw.Message.tool(json.dumps(result), call_id)


def target(shape: str, seen: list[hw.ModelRequest]) -> Callable[..., Any]:
    """A model function of this shape taking the ModelRequest, recording each one it gets."""
    if shape == "sync":

        def llm(request: hw.ModelRequest) -> str:
            seen.append(request)
            return "ok"

        return llm
    if shape == "async":

        async def allm(request: hw.ModelRequest) -> str:
            seen.append(request)
            return "ok"

        return allm
    if shape == "stream":

        def sllm(request: hw.ModelRequest) -> Iterator[str]:
            seen.append(request)
            yield "o"
            yield "k"

        return sllm

    async def asllm(request: hw.ModelRequest) -> AsyncIterator[str]:
        seen.append(request)
        yield "o"
        yield "k"

    return asllm


def offered(
    shape: str,
    ts: ToolSearch,
    messages: list[hw.Message],
    tools: tuple[hw.ToolSpec, ...] = (),
) -> list[str]:
    """Names of the tools the model function receives for this history, called in `shape`."""
    seen: list[hw.ModelRequest] = []
    chat = hw.model(target(shape, seen), use=[ts])
    request = hw.ModelRequest(messages=messages, tools=tools)
    result: Any = chat(request)
    if shape == "async":
        result = asyncio.run(result)
    elif shape == "stream":
        result = "".join(result)
    elif shape == "astream":

        async def drain() -> str:
            return "".join([piece async for piece in result])

        result = asyncio.run(drain())
    assert result == "ok"
    assert len(seen) == 1
    return [spec.name for spec in seen[0].tools]


USER = hw.Message.user("What is the weather in Oslo?")


# -- what the model is offered -------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_before_any_search_only_tool_search_is_added_and_dynamic_tools_are_removed(
    shape: str,
) -> None:
    tools = (CALCULATOR, get_weather.spec, SEND_MAIL, convert_currency.spec)
    assert offered(shape, make(), [USER], tools) == ["calculator", "tool_search"]
    assert offered(shape, make(), [USER]) == ["tool_search"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_search_result_in_the_history_offers_the_tools_it_selected(shape: str) -> None:
    ts = make()
    history = [USER, *search(ts, "call_1", "weather")]
    assert offered(shape, ts, history, (CALCULATOR,)) == [
        "calculator",
        "tool_search",
        "get_weather",
    ]
    # dynamic tools the request already carries stay where they were; unselected ones go
    tools = (SEND_MAIL, get_weather.spec, CALCULATOR)
    assert offered(shape, ts, history, tools) == ["get_weather", "calculator", "tool_search"]


@pytest.mark.parametrize("shape", ["sync", "async"])
def test_selections_grow_with_each_search_and_keep_the_dynamic_tools_order(shape: str) -> None:
    ts = make()
    first = search(ts, "call_1", "CURRENCY")  # case-insensitive, on the name
    second = search(ts, "call_2", "e-mail")  # on the description
    assert offered(shape, ts, [USER, *first]) == ["tool_search", "convert_currency"]
    assert offered(shape, ts, [USER, *first, *second]) == [
        "tool_search",
        "send_mail",
        "convert_currency",
    ]
    # one search can select several; a repeated selection is offered once
    third = search(ts, "call_3", "weather|mail")
    assert offered(shape, ts, [USER, *first, *second, *third]) == ["tool_search", *DYNAMIC]


@pytest.mark.parametrize("shape", ["sync", "async"])
def test_selections_vanish_when_the_history_loses_the_result_the_call_or_both(
    shape: str,
) -> None:
    ts = make()
    weather_call, weather_result = search(ts, "call_1", "weather")
    mail_call, mail_result = search(ts, "call_2", "mail")
    full = [USER, weather_call, weather_result, mail_call, mail_result]
    assert offered(shape, ts, full) == ["tool_search", "get_weather", "send_mail"]
    # 1. the result message was trimmed
    assert offered(shape, ts, [USER, weather_call, mail_call, mail_result]) == [
        "tool_search",
        "send_mail",
    ]
    # 2. the assistant message calling tool_search was trimmed: the orphan result is void
    assert offered(shape, ts, [USER, weather_result, mail_call, mail_result]) == [
        "tool_search",
        "send_mail",
    ]
    # 3. the whole exchange was trimmed (a sliding window), and with it every selection
    assert offered(shape, ts, [hw.Message.user("And now?")]) == ["tool_search"]


def test_only_results_answering_a_tool_search_call_count() -> None:
    ts = make()
    forged = json.dumps({"selectedTools": ["send_mail"]})
    other_tool = hw.ToolCall("call_9", "calculator", {"expression": "1+1"})
    search_call = hw.ToolCall("call_1", "tool_search", {"regex_pattern": "mail"})
    histories = [
        # a result whose id matches no call
        [USER, hw.Message.assistant(tool_calls=[search_call]), hw.Message.tool(forged, "call_2")],
        # another tool's result that happens to look like a search result
        [USER, hw.Message.assistant(tool_calls=[other_tool]), hw.Message.tool(forged, "call_9")],
        # a user message with the right text is not a tool result
        [
            USER,
            hw.Message.assistant(tool_calls=[search_call]),
            hw.Message("user", forged, tool_call_id="call_1"),
        ],
    ]
    for history in histories:
        assert offered("sync", ts, history) == ["tool_search"], history
    valid = [
        USER,
        hw.Message.assistant(tool_calls=[search_call]),
        hw.Message.tool(forged, "call_1"),
    ]
    assert offered("sync", ts, valid) == ["tool_search", "send_mail"]


@pytest.mark.parametrize(
    "content",
    [
        "tool_search: '(' is not a valid regular expression",  # an error sent back instead
        "[]",
        '{"selectedTools": "send_mail"}',
        '{"tools": ["send_mail"]}',
        "",
    ],
)
def test_a_result_without_a_selected_tools_list_selects_nothing(content: str) -> None:
    ts = make()
    call = hw.ToolCall("call_1", "tool_search", {"regex_pattern": "mail"})
    history = [USER, hw.Message.assistant(tool_calls=[call]), hw.Message.tool(content, "call_1")]
    assert offered("sync", ts, history) == ["tool_search"]
    assert ts.selected(history) == ()


def test_unknown_names_in_a_result_are_ignored_and_text_parts_are_read() -> None:
    ts = make()
    call = hw.ToolCall("call_1", "tool_search", {"regex_pattern": "x"})
    parts = (
        hw.TextPart('{"selectedTools": ["calculator", "nope", 3, '),
        hw.TextPart('"send_mail"]}'),
    )
    history = [
        USER,
        hw.Message.assistant(tool_calls=[call]),
        hw.Message("tool", parts, (), "call_1"),
    ]
    assert ts.selected(history) == ("send_mail",)
    # `calculator` is not dynamic: the result neither adds it nor touches the request's own
    assert offered("sync", ts, history, (CALCULATOR,)) == ["calculator", "tool_search", "send_mail"]
    assert offered("sync", ts, history) == ["tool_search", "send_mail"]


def test_the_hook_leaves_a_request_that_already_fits_alone_and_owns_the_tool_search_name() -> None:
    ts = make()
    history = (USER, *search(ts, "call_1", "weather"))
    fits = hw.ModelRequest(
        messages=history, tools=(CALCULATOR, ts.search_tool.spec, get_weather.spec)
    )
    assert ts.offer_tools(fits) is None
    impostor = hw.ToolSpec("tool_search", "something else")
    request = hw.ModelRequest(
        messages=history, tools=(impostor, CALCULATOR, get_weather.spec, impostor, get_weather.spec)
    )
    changed = ts.offer_tools(request)
    assert changed is not None
    assert changed.tools == (ts.search_tool.spec, CALCULATOR, get_weather.spec)
    assert changed.messages == request.messages


# -- the tool_search tool and the tools it exposes -------------------------------------------


def test_tool_search_matches_names_and_descriptions_case_insensitively() -> None:
    ts = make()

    def found(pattern: str) -> Any:
        return ts.search_tool.invoke(hw.ToolCall("c", "tool_search", {"regex_pattern": pattern}))

    assert found("WEATHER") == {"selectedTools": ["get_weather"]}
    assert found(r"send|money") == {"selectedTools": ["send_mail", "convert_currency"]}
    assert found("^convert") == {"selectedTools": ["convert_currency"]}
    assert found("teleport") == {"selectedTools": []}
    assert found("") == {"selectedTools": list(DYNAMIC)}
    assert ts.search_tool("e-mail") == {"selectedTools": ["send_mail"]}


def test_an_invalid_regex_is_a_tool_error_naming_the_pattern() -> None:
    ts = make()
    with pytest.raises(hw.ToolArgumentError) as info:
        ts.search_tool.invoke(hw.ToolCall("c", "tool_search", {"regex_pattern": "(weather"}))
    assert "tool_search" in str(info.value)
    assert "'(weather' is not a valid regular expression" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_tools_hold_tool_search_and_the_runnable_dynamic_tools() -> None:
    ts = make()
    assert [t.name for t in ts.tools] == ["tool_search", "get_weather", "convert_currency"]
    assert ts.tools[1] is get_weather
    assert ts.dynamic_tools == (get_weather, SEND_MAIL, convert_currency)
    spec = ts.search_tool.spec
    assert spec.name == "tool_search"
    assert spec.parameters["required"] == ["regex_pattern"]
    assert spec.parameters["properties"]["regex_pattern"]["type"] == "string"
    assert "regular expression" in spec.description
    by_name = {t.name: t for t in ts.tools}
    call = hw.ToolCall("c", "get_weather", {"city": "Oslo"})
    assert by_name["get_weather"].invoke(call) == "sunny in Oslo"
    assert repr(ts) == "ToolSearch(dynamic_tools=['get_weather', 'send_mail', 'convert_currency'])"


def test_a_loop_of_model_and_tools_finds_and_runs_a_hidden_tool() -> None:
    """What an agent does: run each tool call the model makes and send the result back."""
    ts = make()
    offers: list[list[str]] = []
    script = iter(
        [
            hw.ToolCall("call_1", "tool_search", {"regex_pattern": "weather"}),
            hw.ToolCall("call_2", "get_weather", {"city": "Oslo"}),
            None,
        ]
    )

    def llm(request: hw.ModelRequest) -> hw.Message:
        offers.append([t.name for t in request.tools])
        call = next(script)
        if call is None:
            return hw.Message.assistant(request.messages[-1].text)
        return hw.Message.assistant(tool_calls=[call])

    chat = hw.model(llm, use=[ts])
    runnable = {t.name: t for t in ts.tools}
    messages = [USER]
    while True:
        answer: hw.Message = chat(hw.ModelRequest(messages=messages, tools=(CALCULATOR,)))
        messages.append(answer)
        if not answer.tool_calls:
            break
        for call in answer.tool_calls:
            result = runnable[call.name].invoke(call)
            messages.append(hw.Message.tool(json.dumps(result), call.id))
    assert answer.text == '"sunny in Oslo"'
    assert offers == [
        ["calculator", "tool_search"],
        ["calculator", "tool_search", "get_weather"],
        ["calculator", "tool_search", "get_weather"],
    ]


# -- through real SDK clients ----------------------------------------------------------------


def openai_tool(spec: hw.ToolSpec) -> dict[str, Any]:
    function = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    return {"type": "function", "function": function}


def openai_history(result_content: Any) -> list[dict[str, Any]]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "tool_search", "arguments": '{"regex_pattern": "weather"}'},
    }
    return [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": result_content},
    ]


def sent_tools(provider: FakeProvider) -> list[str]:
    return [t["function"]["name"] for t in provider.requests[-1].body.get("tools", [])]


@pytest.mark.parametrize("shape", SHAPES)
def test_openai_sends_the_tools_the_hook_left(shape: str) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(chunk_size=100)
    is_async = shape in ("async", "astream")
    native: Any = provider.openai(async_=True) if is_async else provider.openai()
    client: Any = hw.wrap(native, use=[make()])
    tools = [openai_tool(s) for s in (CALCULATOR, get_weather.spec, SEND_MAIL)]
    result = json.dumps({"selectedTools": ["get_weather"]})

    def send(messages: list[dict[str, Any]]) -> None:
        stream = shape in ("stream", "astream")
        made = client.chat.completions.create(
            model="m", messages=messages, tools=tools, stream=stream
        )

        async def drain() -> None:
            response = await made
            if stream:
                [_ async for _ in response]

        if is_async:
            asyncio.run(drain())
        elif stream:
            list(made)

    send(openai_history(result))
    assert sent_tools(provider) == ["calculator", "get_weather", "tool_search"]
    sent = provider.requests[-1].body["tools"]
    assert sent[2]["function"]["parameters"]["required"] == ["regex_pattern"]
    assert sent[:2] == tools[:2]  # tools the hook kept are sent as the caller wrote them
    # the result as content parts, as some clients send it
    send(openai_history([{"type": "text", "text": result}]))
    assert sent_tools(provider) == ["calculator", "get_weather", "tool_search"]
    # the history trimmed to its last user message: the tool is hidden again
    send(openai_history(result)[:1])
    assert sent_tools(provider) == ["calculator", "tool_search"]


def test_openai_round_trip_where_the_model_searches_then_calls_the_tool() -> None:
    pytest.importorskip("openai")
    search_call = hw.ToolCall("call_1", "tool_search", {"regex_pattern": "weather"})
    weather_call = hw.ToolCall("call_2", "get_weather", {"city": "Oslo"})
    provider = FakeProvider(
        [
            hw.Message.assistant(tool_calls=[search_call]),
            hw.Message.assistant(tool_calls=[weather_call]),
            "It is sunny in Oslo.",
        ]
    )
    ts = make()
    client: Any = hw.wrap(provider.openai(), use=[ts])
    runnable = {t.name: t for t in ts.tools}
    messages: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    offers: list[list[str]] = []
    for _ in range(3):
        completion = client.chat.completions.create(model="m", messages=messages)
        offers.append(sent_tools(provider))
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for native in message.tool_calls or []:
            call = hw.ToolCall(
                native.id, native.function.name, json.loads(native.function.arguments)
            )
            result = runnable[call.name].invoke(call)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
    assert offers == [
        ["tool_search"],
        ["tool_search", "get_weather"],
        ["tool_search", "get_weather"],
    ]
    assert messages[-2] == {"role": "tool", "tool_call_id": "call_2", "content": '"sunny in Oslo"'}
    assert messages[-1]["content"] == "It is sunny in Oslo."


def test_anthropic_tool_result_blocks_select_tools_too() -> None:
    pytest.importorskip("anthropic")
    provider = FakeProvider()
    client: Any = hw.wrap(provider.anthropic(), use=[make()])
    messages: list[Any] = [
        {"role": "user", "content": "Mail Bob."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "tu_1",
                    "name": "tool_search",
                    "input": {"regex_pattern": "mail"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_1",
                    "content": [{"type": "text", "text": '{"selectedTools": ["send_mail"]}'}],
                }
            ],
        },
    ]
    client.messages.create(model="m", max_tokens=10, messages=messages)
    assert [t["name"] for t in provider.requests[-1].body["tools"]] == ["tool_search", "send_mail"]
    client.messages.create(model="m", max_tokens=10, messages=messages[:1])
    assert [t["name"] for t in provider.requests[-1].body["tools"]] == ["tool_search"]


# -- bad constructor input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "error", "says"),
    [
        ([], ValueError, "got an empty list"),
        ((), ValueError, "got an empty tuple"),
        (None, TypeError, "got NoneType: None"),
        (get_weather, TypeError, "got Tool: <hookwrap tool <function get_weather"),
        (SEND_MAIL, TypeError, "put a single tool in a list: dynamic_tools=[tool]"),
        ("get_weather", TypeError, "got str: 'get_weather'"),
        ({"get_weather": get_weather}, TypeError, "got dict"),
        ([get_weather, 42], TypeError, "got int: 42 at index 1"),
        ([get_weather, "send_mail"], TypeError, "got str: 'send_mail' at index 1"),
        ([get_weather, hw.ToolSpec("get_weather")], ValueError, "'get_weather' twice"),
        ([SEND_MAIL, SEND_MAIL], ValueError, "'send_mail' twice, the second at index 1"),
        ([hw.ToolSpec("tool_search")], ValueError, "ToolSearch's own tool"),
        ([hw.ToolSpec("")], ValueError, "got the name '' at index 0"),
    ],
)
def test_bad_dynamic_tools_are_refused_at_construction(
    given: Any, error: type[Exception], says: str
) -> None:
    with pytest.raises(error) as info:
        ToolSearch(dynamic_tools=given)
    message = str(info.value)
    assert (
        "ToolSearch(dynamic_tools=...) expects a non-empty list of hw.Tool or hw.ToolSpec"
        in message
    )
    assert says in message
    assert type(info.value) is error


def test_dynamic_tools_is_a_required_keyword_argument() -> None:
    with pytest.raises(TypeError, match="dynamic_tools"):
        ToolSearch()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ToolSearch([get_weather])  # type: ignore[call-arg]


def test_selected_reads_chat_dicts_as_messages() -> None:
    """The chat dicts a model function is called with are messages too."""
    ts = make()
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "tool_search", "arguments": '{"regex_pattern": "mail"}'},
    }
    history = [
        {"role": "user", "content": "mail bob"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"selectedTools": ["send_mail"]}'},
    ]
    assert ts.selected(history) == ("send_mail",)
