"""Debug (SPEC §8): one readable line per stage it sees, in every call shape, written to `out`
(default: `sys.stderr` at call time); the call is never changed, and a broken `out` never
breaks it."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._debug import MAX_LINE, Debug
from hookwrap.testing import FakeProvider

SHAPES = ("sync", "async", "stream", "astream")
USAGE = {"kind": "usage", "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}
LINE = re.compile(r"^\[hookwrap (?P<run>[0-9a-f]{8})\] (?P<stage>\w+)")

# Made before any test runs: its stderr must be the one current at each call (capsys).
AT_IMPORT = Debug()


def model_target(shape: str) -> Callable[..., Any]:
    """A model function of this shape answering "Hello world" (streams: in two chunks and a
    usage chunk)."""
    if shape == "sync":

        def llm(prompt: str) -> str:
            return "Hello world"

        return llm
    if shape == "async":

        async def allm(prompt: str) -> str:
            return "Hello world"

        return allm
    if shape == "stream":

        def sllm(prompt: str) -> Iterator[Any]:
            yield "Hello"
            yield " world"
            yield USAGE

        return sllm

    async def asllm(prompt: str) -> AsyncIterator[Any]:
        yield "Hello"
        yield " world"
        yield USAGE

    return asllm


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` and read all of its answer, in an event loop when it is async."""

    async def read() -> Any:
        result = fn(*args)
        if inspect.isawaitable(result):
            return await result
        if hasattr(result, "__aiter__"):
            return [item async for item in result]
        return result

    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return asyncio.run(read())
    result = fn(*args)
    return result if isinstance(result, str) else list(result)


def stages(text: str) -> list[str]:
    return [m["stage"] for m in map(LINE.match, text.splitlines()) if m]


def run_ids(text: str) -> set[str]:
    return {m["run"] for m in map(LINE.match, text.splitlines()) if m}


def line_of(text: str, stage: str) -> str:
    """The first line of this stage."""
    return next(line for line in text.splitlines() if f"] {stage} " in line)


# -- every shape ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_one_line_per_stage_in_every_shape_and_the_answer_is_unchanged(shape: str) -> None:
    out = io.StringIO()
    plain = call(hw.model(model_target(shape)), "hi")
    debugged = call(hw.model(model_target(shape), use=[Debug(out=out)]), "hi")
    assert debugged == plain
    text = out.getvalue()
    lines = text.splitlines()
    assert all(LINE.match(line) for line in lines), text
    assert len(run_ids(text)) == 1
    streamed = shape in ("stream", "astream")
    middle = ["on_chunk"] * 3 + ["on_usage"] if streamed else []
    assert stages(text) == ["on_start", "before_model", *middle, "after_model", "on_finish"]
    assert "Message(role='user', content='hi')" in line_of(text, "before_model")
    assert "content='Hello world'" in line_of(text, "after_model")
    if streamed:
        assert "on_chunk #0 chunk: Chunk(kind='text', text='Hello')" in text
        assert "on_chunk #1 chunk: Chunk(kind='text', text=' world')" in text
        assert "on_usage usage: Usage(input_tokens=3, output_tokens=2, total_tokens=5)" in text
    assert "run_id" not in line_of(text, "on_finish")


def test_default_out_is_the_stderr_of_the_moment(capsys: pytest.CaptureFixture[str]) -> None:
    chat = hw.model(model_target("sync"), use=[AT_IMPORT])
    assert chat("hi") == "Hello world"
    captured = capsys.readouterr()
    assert stages(captured.err) == ["on_start", "before_model", "after_model", "on_finish"]
    assert captured.out == ""


def test_lines_show_the_request_as_it_reaches_debug_and_the_response_as_it_leaves() -> None:
    """Before hooks run in order and after hooks in reverse: Debug after `shout` sees the
    changed request, and sees the response before `shout` changes it."""

    @hw.before_model
    def system(request: hw.ModelRequest) -> hw.ModelRequest:
        return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))

    @hw.after_model
    def shout(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
        return response.replace(message=hw.Message.assistant(response.text.upper()))

    out = io.StringIO()
    chat = hw.model(model_target("sync"), use=[system, shout, Debug(out=out)])
    assert chat("hi") == "HELLO WORLD"
    assert "Message(role='system', content='Be brief.')" in line_of(out.getvalue(), "before_model")
    assert "content='Hello world'" in line_of(out.getvalue(), "after_model")


# -- every other hook: what it received and returned ----------------------------------------


@hw.before_model(name="system")
def system_hook(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Be brief."), *request.messages))


@hw.wrap_model(name="timed")
def timed_hook(request: hw.ModelRequest) -> Any:
    response = yield request
    return response


@hw.on_chunk(name="shout")
def shout_hook(chunk: hw.Chunk) -> hw.Chunk | None:
    return chunk.replace(text=chunk.text.upper()) if chunk.text else None


@hw.after_model(name="audit")
def audit_hook(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    return None


@hw.on_finish(name="done")
def done_hook(info: hw.FinishInfo) -> None:
    return None


def hook_lines(text: str, name: str) -> list[str]:
    """What the lines about the hook named `name` say after its name."""
    head = f"] hook {name!r} "
    return [line.split(head, 1)[1] for line in text.splitlines() if head in line]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_other_hook_shows_what_it_received_and_returned(shape: str) -> None:
    out = io.StringIO()
    hooks = [system_hook, timed_hook, shout_hook, audit_hook, done_hook]
    answer = call(hw.model(model_target(shape), use=[*hooks, Debug(out=out)]), "hi")
    text = out.getvalue()
    streamed = shape in ("stream", "astream")
    assert answer == (["HELLO", " WORLD", USAGE] if streamed else "Hello world")
    asked = f"stream={streamed})"
    user = "Message(role='user', content='hi')"
    system = "Message(role='system', content='Be brief.')"
    assert hook_lines(text, "system") == [
        f"received request: ModelRequest(messages=({user},), {asked}",
        f"returned ModelRequest(messages=({system}, {user}), {asked}",
    ]
    said = "ModelResponse(message=Message(role='assistant', content="
    if streamed:
        assert hook_lines(text, "timed") == [
            f"received request: ModelRequest(messages=({system}, {user}), {asked}",
            "returned a stream",
        ]
        usage = "Chunk(kind='usage', usage=Usage(input_tokens=3, output_tokens=2, total_tokens=5))"
        assert hook_lines(text, "shout") == [
            "received chunk: Chunk(kind='text', text='Hello')",
            "returned Chunk(kind='text', text='HELLO')",
            "received chunk: Chunk(kind='text', text=' world')",
            "returned Chunk(kind='text', text=' WORLD')",
            f"received chunk: {usage}",
            "returned None",
        ]
        assert hook_lines(text, "audit")[0].startswith(f"received response: {said}'HELLO WORLD'")
    else:
        assert hook_lines(text, "timed") == [
            f"received request: ModelRequest(messages=({system}, {user}), {asked}",
            f"returned {said}'Hello world'))",
        ]
        assert hook_lines(text, "shout") == []  # no chunks: never called
        assert hook_lines(text, "audit") == [
            f"received response: {said}'Hello world'))",
            "returned None",
        ]
    assert hook_lines(text, "audit")[1:] == ["returned None"]
    finish = hook_lines(text, "done")
    assert finish[0].startswith("received info: FinishInfo(duration=")
    assert "run_id" not in finish[0]
    assert finish[1:] == ["returned None"]
    # the stage lines stay one per stage; each hook's lines come when it runs
    lines = text.splitlines()
    assert stages(text).count("before_model") == 1
    returned = next(i for i, line in enumerate(lines) if "hook 'system' returned" in line)
    assert returned < lines.index(line_of(text, "before_model"))
    assert not any("hook 'Debug." in line for line in lines)  # its own hooks only print


def test_a_hook_that_raises_shows_its_error_which_goes_on_unchanged() -> None:
    bad = ValueError("bad input")

    @hw.before_model(name="strict")
    def strict(request: hw.ModelRequest) -> None:
        raise bad

    @hw.on_chunk(name="flaky", fail_open=True)
    def flaky(chunk: hw.Chunk) -> None:
        raise RuntimeError("flaky")

    out = io.StringIO()
    with pytest.raises(ValueError) as caught:
        hw.model(model_target("sync"), use=[strict, Debug(out=out)])("hi")
    assert caught.value is bad
    assert hook_lines(out.getvalue(), "strict")[1:] == ["raised ValueError('bad input')"]
    out = io.StringIO()
    chat = hw.model(model_target("stream"), use=[flaky, Debug(out=out)])
    assert list(chat("hi")) == ["Hello", " world", USAGE]  # fail-open: skipped
    assert hook_lines(out.getvalue(), "flaky")[1::2] == ["raised RuntimeError('flaky')"] * 3


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_hooks_show_calls_skips_and_outcomes(is_async: bool) -> None:
    @hw.before_tool(name="cached")
    def cached(call: hw.ToolCall) -> hw.Skip | None:
        return hw.Skip("from cache") if call.arguments["city"] == "Paris" else None

    @hw.wrap_tool(name="timed_tool")
    def timed_tool(call: hw.ToolCall) -> Any:
        result = yield call
        return result

    @hw.after_tool(name="audit_tool")
    async def audit_tool(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        return None

    async def aweather(city: str) -> str:
        return f"{city}: 20c"

    def weather(city: str) -> str:
        return f"{city}: 20c"

    out = io.StringIO()
    use: list[Any] = [Debug(out=out), cached, timed_tool]
    if is_async:  # an async hook too, in the call shape that allows it
        use.append(audit_tool)
    else:
        use.append(hw.after_tool(name="audit_tool")(lambda call, outcome: None))
    tool = hw.tool(aweather if is_async else weather, use=use, name="weather")
    assert call(tool, "Paris") == "from cache"
    assert call(tool, "Rome") == "Rome: 20c"
    text = out.getvalue()
    skip, rome = hook_lines(text, "cached")[:2], hook_lines(text, "cached")[2:]
    assert skip[0].startswith("received call: ToolCall(id='call_")
    assert "{'city': 'Paris'}" in skip[0]
    assert skip[1] == "returned Skip(result='from cache')"
    assert rome[1] == "returned None"
    assert hook_lines(text, "timed_tool")[1:] == ["returned 'Rome: 20c'"]  # not for the skip
    outcomes = hook_lines(text, "audit_tool")[0::2]
    assert "outcome: ToolOutcome(ok=True, result='from cache'" in outcomes[0]
    assert "outcome: ToolOutcome(ok=True, result='Rome: 20c'" in outcomes[1]


def test_two_debugs_each_show_the_other_hooks_once() -> None:
    first, second = io.StringIO(), io.StringIO()
    chat = hw.model(model_target("sync"), use=[Debug(out=first), system_hook, Debug(out=second)])
    assert chat("hi") == "Hello world"
    for out in (first, second):
        assert len(hook_lines(out.getvalue(), "system")) == 2
        assert "hook 'Debug." not in out.getvalue()


def test_one_debug_given_to_two_layers_shows_the_outer_layers_hooks_too() -> None:
    """The outer layer runs only the hooks the inner one has not (`Debug`'s own among
    them): the `Debug` given with its hooks watches them all the same."""
    out = io.StringIO()
    debug = Debug(out=out)
    chat = hw.model(hw.model(model_target("sync"), use=[debug]), use=[debug, system_hook])
    assert chat("hi") == "Hello world"
    assert len(hook_lines(out.getvalue(), "system")) == 2

    @hw.before_tool(name="outer_guard")
    def outer_guard(call: hw.ToolCall) -> None:
        return None

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    out.truncate(0)
    tool = hw.tool(hw.tool(add, use=[debug]), use=[debug, outer_guard])
    assert tool(1, 2) == 3
    assert len(hook_lines(out.getvalue(), "outer_guard")) == 2

    def model(request: hw.ModelRequest) -> hw.ModelResponse:
        if request.messages[-1].role == "tool":
            return hw.ModelResponse(hw.Message.assistant("3"))
        called = hw.ToolCall("c1", "add", {"a": 1, "b": 2})
        return hw.ModelResponse(hw.Message.assistant("", tool_calls=(called,)))

    out.truncate(0)
    agent = hw.Agent(model, tools=[hw.tool(add, use=[debug])], use=[debug, outer_guard])
    assert agent.run("go").text == "3"
    assert len(hook_lines(out.getvalue(), "outer_guard")) == 2


def test_a_stack_without_debug_calls_its_hooks_as_they_are() -> None:
    """Watching costs nothing where no `Debug` is: the stage calls the function itself."""
    from hookwrap._stack import Chain, flatten

    assert Chain(flatten([system_hook]))["before_model"][0].fn is system_hook
    watched = Chain(flatten([system_hook, Debug()]))["before_model"]
    assert watched[0].fn is not system_hook
    assert watched[1].trace == ()  # Debug's own hooks


def test_an_agent_shows_its_hooks_but_not_hookwraps_own() -> None:
    @hw.before_agent(name="setup")
    def setup(agent: hw.AgentSetup) -> None:
        return None

    @hw.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def model(request: hw.ModelRequest) -> hw.ModelResponse:
        if request.messages[-1].role == "tool":
            return hw.ModelResponse(hw.Message.assistant("3"))
        called = hw.ToolCall("c1", "add", {"a": 1, "b": 2})
        return hw.ModelResponse(hw.Message.assistant("", tool_calls=(called,)))

    out = io.StringIO()
    agent = hw.Agent(model, tools=[add], use=[Debug(out=out), setup, system_hook])
    assert agent.run("go").text == "3"
    text = out.getvalue()
    assert hook_lines(text, "setup")[0].startswith("received agent: AgentSetup(tools=")
    assert len(hook_lines(text, "system")) == 4  # two model calls
    assert "hook 'hookwrap." not in text


def test_every_hook_returns_none() -> None:
    out = io.StringIO()
    debug = Debug(out=out)
    request = hw.ModelRequest(messages=[hw.Message.user("hi")])
    response = hw.ModelResponse(hw.Message.assistant("yo"))
    call_ = hw.ToolCall("c1", "search", {"q": "x"})
    info = hw.FinishInfo("run", 0.5, hw.Usage(1, 2, 3), reason="stop")
    results = [
        debug.show_request(request),
        debug.show_chunk(hw.Chunk(text="a")),
        debug.show_usage(hw.Usage(1, 2, 3)),
        debug.show_response(request, response),
        debug.show_call(call_),
        debug.show_outcome(call_, hw.ToolOutcome(True, "r")),
        debug.show_start(),
        debug.show_finish(info),
        debug.show_error(info.replace(error=ValueError("boom"))),
        debug.show_abort(info),
        debug.show_agent(hw.AgentSetup("Be brief.")),
        debug.show_iteration(hw.IterationInfo(2)),
        debug.show_result(hw.RunResult("finished", "done", iterations=2)),
    ]
    assert results == [None] * len(results)
    text = out.getvalue()
    assert len(text.splitlines()) == len(results)
    assert "[hookwrap] before_agent agent: AgentSetup(instructions='Be brief.')" in text
    assert "[hookwrap] on_iteration info: IterationInfo(iteration=2)" in text
    assert "after_agent result: RunResult(status='finished', text='done'," in text
    assert "on_error info: FinishInfo(duration=0.5, usage=Usage(" in text
    assert "error=ValueError('boom')" in text


# -- tools, errors, aborts ------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_calls_show_arguments_results_and_errors(is_async: bool) -> None:
    out = io.StringIO()
    if is_async:

        async def weather(city: str) -> str:
            if city == "Atlantis":
                raise LookupError(city)
            return f"{city}: 20c"

    else:

        def weather(city: str) -> str:
            if city == "Atlantis":
                raise LookupError(city)
            return f"{city}: 20c"

    tool = hw.tool(weather, use=[Debug(out=out)])
    assert call(tool, "Paris") == "Paris: 20c"
    with pytest.raises(LookupError):
        call(tool, "Atlantis")
    text = out.getvalue()
    one_run = ["on_start", "before_tool", "after_tool"]
    assert stages(text) == [*one_run, "on_finish", *one_run, "on_error"]
    assert "name='weather', arguments={'city': 'Paris'})" in text
    assert "after_tool weather outcome: ToolOutcome(ok=True, result='Paris: 20c'," in text
    assert "outcome: ToolOutcome(ok=False, error=LookupError('Atlantis')," in text
    assert "error=LookupError('Atlantis')" in line_of(text, "on_error")


def test_aborts_and_early_closes_show_the_reason() -> None:
    @hw.before_model
    def refuse(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
        if request.messages[-1].text == "no":
            ctx.abort("not today")

    out = io.StringIO()
    chat = hw.model(model_target("stream"), use=[refuse, Debug(out=out)])
    with pytest.raises(hw.Aborted):
        call(chat, "no")
    assert "on_abort info: FinishInfo(duration=" in out.getvalue()
    assert "reason='not today'" in out.getvalue()
    stream = chat("hi")
    assert next(stream) == "Hello"
    stream.close()
    assert "reason='closed by consumer'" in out.getvalue()


def test_in_one_run_the_run_starts_and_ends_once() -> None:
    out = io.StringIO()
    debug = Debug(out=out)
    chat = hw.model(model_target("sync"), use=[debug])
    tool = hw.tool(lambda q: q, use=[debug], name="echo")
    with pytest.raises(RuntimeError), hw.run():
        chat("a")
        tool("b")
        raise RuntimeError("after the calls")
    text = out.getvalue()
    assert stages(text) == [
        "on_start",
        "before_model",
        "after_model",
        "before_tool",
        "after_tool",
        "on_error",
    ]
    assert len(run_ids(text)) == 1
    assert "error=RuntimeError('after the calls')" in text


# -- readable and fail-open -----------------------------------------------------------------


def test_long_values_are_shortened() -> None:
    out = io.StringIO()
    chat = hw.model(lambda prompt: "ok", use=[Debug(out=out)])
    chat("x" * 10_000)
    tool = hw.tool(lambda items: len(items), use=[Debug(out=out)], name="count")
    tool(list(range(1000)))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= MAX_LINE
    request = line_of(out.getvalue(), "before_model")
    assert "xxx...xxx" in request
    assert len(request) < 300
    assert "[0, 1, 2, 3, 4, 5, 6, 7, ...]" in line_of(out.getvalue(), "before_tool")


def test_dicts_show_their_first_items_in_their_own_order() -> None:
    out = io.StringIO()

    @hw.tool(use=[Debug(out=out)])
    def lookup(x: int) -> dict[str, Any]:
        """Look up."""
        return {"f": 1, "nest": {"z": 0, "a": 1}, **{str(i): i for i in range(12)}}

    lookup(1)
    shown = "{'f': 1, 'nest': {'z': 0, 'a': 1}, '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, "
    assert f"result={shown}'5': 5, '6': 6, '7': 7, ...}}" in line_of(out.getvalue(), "after_tool")
    mixed = io.StringIO()  # keys reprlib could not sort
    hw.tool(lambda d: 0, use=[Debug(out=mixed)], name="small")({"b": 1, 2: "a", None: {}})
    assert "arguments={'d': {'b': 1, 2: 'a', None: {}}}" in line_of(mixed.getvalue(), "before_tool")


def test_nesting_is_cut_at_five_levels_in_dicts_too() -> None:
    out = io.StringIO()
    deep: dict[str, Any] = {"e": 1}
    for key in "dcba":
        deep = {key: deep}
    hw.tool(lambda d: 0, use=[Debug(out=out)], name="deep")(deep)
    assert "arguments={'d': {'a': {'b': {'c': {...}}}}}" in line_of(out.getvalue(), "before_tool")


def test_a_whole_line_is_capped() -> None:
    out = io.StringIO()
    messages = [{"role": "user", "content": "y" * 100} for _ in range(8)]
    hw.model(lambda messages: "ok", use=[Debug(out=out)])(messages)
    request = line_of(out.getvalue(), "before_model")
    cut = re.search(r"\.\.\. \(\+(\d+) chars\)$", request)
    assert cut
    assert MAX_LINE - 20 < len(request) <= MAX_LINE
    assert int(cut[1]) > 400  # eight 100-character messages do not fit: it says how much


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("the pipe is gone")


@pytest.mark.parametrize("shape", SHAPES)
def test_a_broken_out_never_breaks_the_call(shape: str, caplog: pytest.LogCaptureFixture) -> None:
    chat = hw.model(model_target(shape), use=[system_hook, timed_hook, Debug(out=Broken())])
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        assert call(chat, "hi") == call(hw.model(model_target(shape)), "hi")
    assert any("the pipe is gone" in r.exc_text for r in caplog.records if r.exc_text)
    assert any("fail-open" in r.getMessage() for r in caplog.records)
    # the lines of the other hooks too: logged, and the hooks' calls go on
    assert any("tracing wrap_model hook 'timed'" in r.getMessage() for r in caplog.records)


def test_a_value_whose_repr_raises_is_still_shown_and_returned() -> None:
    out = io.StringIO()
    value = Unprintable()
    tool = hw.tool(lambda: value, use=[Debug(out=out)], name="make")
    assert tool() is value
    assert "result=<Unprintable instance at 0x" in out.getvalue()


def test_threads_write_whole_lines() -> None:
    out = io.StringIO()
    chat = hw.model(model_target("sync"), use=[Debug(out=out)])
    threads = [threading.Thread(target=lambda: [chat("hi") for _ in range(20)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 * 20 * 4
    assert all(LINE.match(line) for line in lines)


# -- a real SDK client ----------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_openai_stream_lines_and_native_chunks_unchanged(is_async: bool) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["Hello there"] * 2, chunk_size=4)
    out = io.StringIO()
    options: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }

    def read(client: Any) -> list[Any]:
        async def aread() -> list[Any]:
            stream = await client.chat.completions.create(**options)
            return [chunk async for chunk in stream]

        if is_async:
            return asyncio.run(aread())
        return list(client.chat.completions.create(**options))

    plain = read(provider.openai(async_=is_async))
    debugged = read(hw.wrap(provider.openai(async_=is_async), use=[Debug(out=out)]))
    # ids and `created` (a clock second, which may tick between the two) differ
    assert [c.model_dump(exclude={"id", "created"}) for c in debugged] == [
        c.model_dump(exclude={"id", "created"}) for c in plain
    ]
    text = out.getvalue()
    assert "model='gpt-4o-mini'" in line_of(text, "before_model")
    assert "on_chunk #1 chunk: Chunk(kind='text', text='Hell')" in text  # #0: the role
    assert "on_usage usage: Usage(input_tokens=" in text
    assert "content='Hello there'" in line_of(text, "after_model")
    assert stages(text)[-1] == "on_finish"


# -- constructor and docs -------------------------------------------------------------------


def test_out_must_be_a_text_stream_given_by_keyword() -> None:
    with pytest.raises(TypeError, match=r"Debug\(out=\.\.\.\) expects a text stream .*got int: 3"):
        Debug(out=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Debug(io.StringIO())  # type: ignore[misc]
    assert isinstance(Debug(), hw.Middleware)


def test_docs_page_runs_and_prints_what_it_says() -> None:
    page = Path(__file__).parent.parent / "docs" / "middleware" / "debug.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert blocks
    namespace: dict[str, Any] = {"__name__": "docs"}
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for block in blocks:
            exec(compile(block, str(page), "exec"), namespace)
    assert out.getvalue() == "Hello, world\n"
    shown = re.sub(r"\[hookwrap [0-9a-f]{8}\]", "[hookwrap]", err.getvalue())
    assert "[hookwrap] on_chunk #1 chunk: Chunk(kind='text', text=', world')" in shown
    assert "after_tool get_weather outcome: ToolOutcome(ok=True, result='Paris: 20c'," in shown
    assert stages(err.getvalue()).count("on_finish") == 2
