"""Streams made of new chunks (a wrap hook's own, a fallback's) reach the caller framed as
each API frames its streams: whatever chunks a hook makes, the SDK's own stream helper
builds the final message from them (a hypothesis law, with the real SDKs)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]

texts = st.text(alphabet="abc xyz.", min_size=1, max_size=8)


@st.composite
def tool_call(draw: st.DrawFn, n: int) -> list[hw.Chunk]:
    """One whole tool call: its arguments in the start chunk, or streamed after it."""
    arguments = json.dumps({"n": draw(st.integers(0, 99))})
    call_id, name = f"call_{n}", f"tool_{n}"
    if draw(st.booleans()):
        return [hw.Chunk("tool_call_start", arguments, call_id, name)]
    cut = draw(st.integers(1, len(arguments) - 1))
    return [
        hw.Chunk("tool_call_start", "", call_id, name),
        hw.Chunk("tool_call_args", arguments[:cut]),
        hw.Chunk("tool_call_args", arguments[cut:]),
    ]


@st.composite
def streams(draw: st.DrawFn) -> list[hw.Chunk]:
    """Reasoning, text pieces and tool calls in the order models send them, and perhaps a
    usage report anywhere among them."""
    chunks = [hw.Chunk("reasoning", t) for t in draw(st.lists(texts, max_size=2))]
    chunks += [hw.Chunk("text", t) for t in draw(st.lists(texts, max_size=4))]
    for n in range(draw(st.integers(0, 2))):
        chunks += draw(tool_call(n))
    if draw(st.booleans()):  # a usage report, anywhere
        at = draw(st.integers(0, len(chunks)))
        chunks.insert(at, hw.Chunk("usage", usage=hw.Usage(3, 4, 7)))
    return chunks


def answering(chunks: list[hw.Chunk]) -> Any:
    @hw.wrap_model
    def own(request: hw.ModelRequest) -> Any:
        inner = yield request
        for _ in inner:  # the model's own stream, read and left out
            pass
        return iter(chunks)

    return own


def expected(chunks: list[hw.Chunk]) -> tuple[str, list[tuple[str, str, Any]]]:
    text = "".join(c.text for c in chunks if c.kind == "text")
    calls: list[tuple[str, str, str]] = []
    for c in chunks:
        if c.kind == "tool_call_start":
            calls.append((c.tool_call_id or "", c.tool_name or "", c.text))
        elif c.kind == "tool_call_args":
            call_id, name, args = calls[-1]
            calls[-1] = (call_id, name, args + c.text)
    return text, [(i, n, json.loads(a)) for i, n, a in calls]


law = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
every_api = pytest.mark.parametrize("api", ["messages", "responses", "chat"])


@law
@given(streams())
def test_anthropic_messages_stream_helper(chunks: list[hw.Chunk]) -> None:
    pytest.importorskip("anthropic")
    client = hw.wrap(FakeProvider(["x"]).anthropic(), use=[answering(chunks)])
    with client.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        final = stream.get_final_message()
    text, calls = expected(chunks)
    assert "".join(b.text for b in final.content if b.type == "text") == text
    assert [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"] == calls
    assert final.stop_reason == ("tool_use" if calls else "end_turn")
    reasoning = "".join(c.text for c in chunks if c.kind == "reasoning")
    assert "".join(b.thinking for b in final.content if b.type == "thinking") == reasoning


@law
@given(streams())
def test_openai_responses_stream_helper(chunks: list[hw.Chunk]) -> None:
    pytest.importorskip("openai")
    client = hw.wrap(FakeProvider(["x"]).openai(), use=[answering(chunks)])
    with client.responses.stream(model="m", input="hi") as stream:
        final = stream.get_final_response()
    text, calls = expected(chunks)
    assert final.output_text == text
    found = [
        (item.call_id, item.name, json.loads(item.arguments))
        for item in final.output
        if item.type == "function_call"
    ]
    assert found == calls
    if any(c.kind == "usage" for c in chunks):
        assert final.usage is not None
        assert (final.usage.input_tokens, final.usage.output_tokens) == (3, 4)


@law
@given(streams())
def test_openai_chat_stream_helper(chunks: list[hw.Chunk]) -> None:
    pytest.importorskip("openai")
    client = hw.wrap(FakeProvider(["x"]).openai(), use=[answering(chunks)])
    with client.chat.completions.stream(model="m", messages=USER) as stream:
        final = stream.get_final_completion()
    text, calls = expected(chunks)
    message = final.choices[0].message
    assert (message.content or "") == text
    found = [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
    ]
    assert found == calls
    assert final.choices[0].finish_reason == ("tool_calls" if calls else "stop")


@hw.on_chunk
def only_text(chunk: hw.Chunk) -> Any:
    """Keeps text and leaves out everything else, the API's opening and closing events too."""
    return None if chunk.kind == "text" else hw.DROP


@hw.on_chunk
def no_custom(chunk: hw.Chunk) -> Any:
    """Leaves out custom chunks: Anthropic's block starts and stops and `message_stop`."""
    return hw.DROP if chunk.kind == "custom" else None


@hw.on_chunk
def no_usage(chunk: hw.Chunk) -> Any:
    """Leaves out usage chunks: Anthropic's `message_start`."""
    return hw.DROP if chunk.kind == "usage" else None


@hw.on_chunk
def no_finish(chunk: hw.Chunk) -> Any:
    """Leaves out the end: Anthropic's `message_delta`, the Responses `response.completed`."""
    return hw.DROP if chunk.kind == "finish" else None


def helper_read(api: str, hook: Any) -> tuple[list[str], str, Any]:
    """A native stream of "hello there, world" through `hook`, read by the SDK's helper:
    the text pieces, the final text, and the final answer."""
    pytest.importorskip("anthropic" if api == "messages" else "openai")
    provider = FakeProvider(["hello there, world"], chunk_size=4)
    if api == "messages":
        client = hw.wrap(provider.anthropic(), use=[hook])
        with client.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            pieces = list(stream.text_stream)
            final = stream.get_final_message()
            return pieces, stream.get_final_text(), final
    client = hw.wrap(provider.openai(), use=[hook])
    if api == "responses":
        with client.responses.stream(model="m", input="hi") as stream:
            pieces = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
            return pieces, final.output_text, final
    with client.chat.completions.stream(model="m", messages=USER) as stream:
        pieces = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
        return pieces, final.choices[0].message.content or "", final


@every_api
def test_a_stream_whose_opening_a_hook_left_out_is_framed_again(api: str) -> None:
    pieces, text, _ = helper_read(api, only_text)
    assert "".join(pieces) == text == "hello there, world"
    assert len(pieces) > 1


@pytest.mark.parametrize(
    "hook", [no_custom, no_usage, no_finish], ids=["no custom", "no usage", "no finish"]
)
@pytest.mark.parametrize("api", ["messages", "responses"])
def test_a_stream_a_hook_dropped_structural_events_from_is_framed_again(
    api: str, hook: Any
) -> None:
    pieces, text, final = helper_read(api, hook)
    assert "".join(pieces) == text == "hello there, world"
    if api == "responses" and hook is no_finish:
        assert final.usage is None  # the dropped usage stays left out


class Final(NamedTuple):
    """A stream's final answer as the SDK's helper reads it."""

    text: str
    calls: list[Any]  # each tool call's arguments
    stop: Any  # the stop reason, finish reason or status
    usage: Any


def _final(api: str, hooks: list[Any], reply: hw.Message | str = "hello there") -> Final:
    """A native stream of `reply` through `hooks`, read by the SDK's helper."""
    pytest.importorskip("anthropic" if api == "messages" else "openai")
    provider = FakeProvider([reply], chunk_size=4)
    if api == "messages":
        client = hw.wrap(provider.anthropic(), use=hooks)
        with client.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            message = stream.get_final_message()
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = [b.input for b in message.content if b.type == "tool_use"]
        return Final(text, calls, message.stop_reason, message.usage)
    wrapped = hw.wrap(provider.openai(), use=hooks)
    if api == "chat":
        usage = {"include_usage": True}
        with wrapped.chat.completions.stream(
            model="m", messages=USER, stream_options=usage
        ) as chat:
            completion = chat.get_final_completion()
        choice = completion.choices[0]
        calls = [json.loads(c.function.arguments) for c in choice.message.tool_calls or []]
        return Final(choice.message.content or "", calls, choice.finish_reason, completion.usage)
    with wrapped.responses.stream(model="m", input="hi") as responses:
        answer = responses.get_final_response()
    calls = [json.loads(i.arguments) for i in answer.output if i.type == "function_call"]
    return Final(answer.output_text, calls, answer.status, answer.usage)


def _chunks(api: str, reply: hw.Message | str = "hello there") -> list[hw.Chunk]:
    """The chunks of the API's own stream of `reply`, as hooks see them."""
    chunks: list[hw.Chunk] = []

    @hw.on_chunk
    def count(chunk: hw.Chunk) -> None:
        chunks.append(chunk)

    _final(api, [count], reply)
    return chunks


@law
@given(st.data())
@every_api
def test_usage_a_hook_adds_to_the_apis_own_stream_reaches_the_final_answer(
    api: str, data: st.DataObject
) -> None:
    """A usage chunk added after any chunk of the API's own stream (whose only usage
    carriers are its opening and closing events, or its last chunk): the caller's final
    answer keeps the text
    and the stop reason, and has the usage the response view of `after_model` has (the
    highest of the counts reported)."""
    at = data.draw(st.integers(0, len(_chunks(api)) - 1), label="after chunk")
    usage = hw.Usage(data.draw(st.integers(0, 9)), data.draw(st.integers(0, 9)))
    seen: list[Any] = []

    @hw.on_chunk
    def add(chunk: hw.Chunk, ctx: hw.RunContext[Any]) -> Any:
        return [chunk, hw.Chunk("usage", usage=usage)] if ctx.chunk_index == at else None

    @hw.after_model
    def keep(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.usage)

    plain, final = _final(api, []), _final(api, [add, keep])
    assert (final.text, final.stop) == (plain.text, plain.stop) == ("hello there", plain.stop)
    assert _output_tokens(final.usage) == seen[0].output_tokens
    assert _output_tokens(final.usage) == max(usage.output_tokens, _output_tokens(plain.usage))


def _output_tokens(usage: Any) -> int:
    """A native usage's output count (Chat Completions calls it `completion_tokens`)."""
    count = getattr(usage, "output_tokens", None)
    return usage.completion_tokens if count is None else count  # type: ignore[no-any-return]


PARTS = ["content_part.added", "output_text.done", "content_part.done"]


@pytest.mark.parametrize("part", PARTS)
def test_a_responses_stream_reframed_inside_an_item_sends_each_of_its_parts_once(
    part: str,
) -> None:
    """A hook drops one of a message item's part events, so the framer takes over inside
    the item, after some of its parts went out: each part goes out once, in order."""

    @hw.on_chunk
    def drop(chunk: hw.Chunk) -> Any:
        return hw.DROP if chunk.name == f"openai.responses.response.{part}" else None

    pieces, text, _ = helper_read("responses", drop)
    assert "".join(pieces) == text == "hello there, world"
    client = hw.wrap(FakeProvider(["hi there"]).openai(), use=[drop])
    kinds = [e.type for e in client.responses.create(model="m", input="hi", stream=True)]
    sent = [k.removeprefix("response.") for k in kinds if k.removeprefix("response.") in PARTS]
    assert sent == PARTS
    assert kinds.index("response.content_part.added") < kinds.index("response.output_text.delta")


CALLING = hw.Message(
    "assistant", "hello there", tool_calls=(hw.ToolCall("call_1", "lookup", {"q": 1}),)
)


@law
@given(st.data())
@pytest.mark.parametrize("reply", ["hello there", CALLING], ids=["text", "tool call"])
@every_api
def test_whatever_chunks_a_hook_drops_the_helper_reads_the_text_kept(
    api: str, reply: Any, data: st.DataObject
) -> None:
    """Any chunks dropped from the API's own stream (its opening, parts, closing, text;
    not a tool call's pieces): the SDK's helper still reads it, and its text is that of
    the text chunks kept."""
    chunks = _chunks(api, reply)
    droppable = [i for i, c in enumerate(chunks) if not c.kind.startswith("tool_call")]
    dropped = data.draw(st.sets(st.sampled_from(droppable)), label="dropped")

    @hw.on_chunk
    def drop(chunk: hw.Chunk, ctx: hw.RunContext[Any]) -> Any:
        return hw.DROP if ctx.chunk_index in dropped else None

    kept = [c.text for i, c in enumerate(chunks) if c.kind == "text" and i not in dropped]
    assert _final(api, [drop], reply).text == "".join(kept)


def test_an_async_stream_a_hook_dropped_every_choice_from_still_finishes() -> None:
    """The async client's stream goes through the same framing (one chat case here)."""
    pytest.importorskip("openai")

    @hw.on_chunk
    def keep_only_the_end(chunk: hw.Chunk) -> Any:
        return None if chunk.name == "openai.chat.done" else hw.DROP

    async def main() -> Any:
        client = hw.wrap(FakeProvider(["hello there"]).openai(async_=True), use=[keep_only_the_end])
        async with client.chat.completions.stream(model="m", messages=USER) as stream:
            return await stream.get_final_completion()

    completion = asyncio.run(main())
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.content is None


REWRITES = ["keep", "upper", "empty", "split", "new", "drop"]


@law
@given(st.data())
@pytest.mark.parametrize("reply", ["hello there, world", CALLING], ids=["text", "tool call"])
@every_api
def test_whatever_a_hook_makes_of_the_text_the_helper_reads_it(
    api: str, reply: Any, data: st.DataObject
) -> None:
    """Each text chunk of the API's own stream kept, changed, emptied, split in two (the
    second a new chunk), replaced by a new chunk or dropped: the SDK's helper reads the
    text the hook gave, and the tool call as the API sent it."""
    given: list[str] = []

    @hw.on_chunk
    def rewrite(chunk: hw.Chunk) -> Any:
        if chunk.kind != "text":
            return None
        what = data.draw(st.sampled_from(REWRITES), label=repr(chunk.text))
        made = {
            "keep": chunk.text,
            "upper": chunk.text.upper(),
            "empty": "",
            "split": chunk.text,
            "new": "XY",
            "drop": "",
        }[what]
        given.append(made)
        if what == "split":
            return [chunk.replace(text=chunk.text[:1]), hw.Chunk("text", chunk.text[1:])]
        if what == "new":
            return hw.Chunk("text", made)
        if what == "drop":
            return hw.DROP
        return None if what == "keep" else chunk.replace(text=made)

    final = _final(api, [rewrite], reply)
    assert (final.text, final.calls) == ("".join(given), _final(api, [], reply).calls)


@law
@given(st.data())
@every_api
def test_a_tool_call_a_hook_rewrites_reaches_the_final_answer_as_delivered(
    api: str, data: st.DataObject
) -> None:
    """A hook changes a tool call's arguments as they stream (each piece kept, rewritten
    or split in two, the second a new chunk): the final answer has the arguments the
    caller read, also where the API's closing events repeat the call (Responses)."""
    digit = data.draw(st.sampled_from("0123456789"), label="digit")

    @hw.on_chunk
    def rewrite(chunk: hw.Chunk) -> Any:
        if not chunk.kind.startswith("tool_call") or not chunk.text:
            return None
        text = chunk.text.replace("1", digit)
        if len(text) > 1 and data.draw(st.booleans(), label=f"split {chunk.text!r}"):
            return [chunk.replace(text=text[:1]), hw.Chunk(chunk.kind, text[1:], value=chunk.value)]
        return chunk.replace(text=text)

    final = _final(api, [rewrite], CALLING)
    assert (final.text, final.calls) == ("hello there", [{"q": int(digit)}])


@every_api
def test_a_tool_call_a_hook_renames_reaches_the_final_answer_renamed(api: str) -> None:

    @hw.on_chunk
    def rename(chunk: hw.Chunk) -> Any:
        return chunk.replace(tool_name="other") if chunk.kind == "tool_call_start" else None

    provider = FakeProvider([CALLING])
    if api == "messages":
        client = hw.wrap(provider.anthropic(), use=[rename])
        with client.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            final = stream.get_final_message()
        names = [b.name for b in final.content if b.type == "tool_use"]
    elif api == "chat":
        wrapped = hw.wrap(provider.openai(), use=[rename])
        with wrapped.chat.completions.stream(model="m", messages=USER) as chat:
            message = chat.get_final_completion().choices[0].message
        names = [c.function.name for c in message.tool_calls or []]
    else:
        wrapped = hw.wrap(provider.openai(), use=[rename])
        with wrapped.responses.stream(model="m", input="hi") as responses:
            answer = responses.get_final_response()
        names = [i.name for i in answer.output if i.type == "function_call"]
    assert names == ["other"]


@law
@given(st.data())
@pytest.mark.parametrize("reply", ["hello there", CALLING], ids=["text", "tool call"])
@every_api
def test_a_chunk_a_hook_adds_anywhere_in_the_apis_stream_reaches_the_final_answer(
    api: str, reply: Any, data: st.DataObject
) -> None:
    """A new text or reasoning chunk added after any chunk of the API's own stream (before
    its first block, inside a tool call, after its end): the SDK's helper reads the text
    in order, and the tool call whole."""
    chunks = _chunks(api, reply)
    at = data.draw(st.integers(0, len(chunks) - 1), label="after chunk")
    kind = data.draw(st.sampled_from(["text", "reasoning"]), label="kind")

    @hw.on_chunk
    def add(chunk: hw.Chunk, ctx: hw.RunContext[Any]) -> Any:
        return [chunk, hw.Chunk(kind, "!!")] if ctx.chunk_index == at else None

    before = "".join(c.text for c in chunks[: at + 1] if c.kind == "text")
    after = "".join(c.text for c in chunks[at + 1 :] if c.kind == "text")
    final = _final(api, [add], reply)
    assert final.text == before + ("!!" if kind == "text" else "") + after
    assert final.calls == _final(api, [], reply).calls


OPS = ["keep", "drop", "upper", "split", "add text", "add reasoning", "add usage"]


@law
@given(st.data())
@pytest.mark.parametrize("reply", ["hello there, world", CALLING], ids=["text", "tool call"])
@every_api
def test_any_mix_of_drops_changes_and_additions_reads_as_the_hook_gave_it(
    api: str, reply: Any, data: st.DataObject
) -> None:
    """Each chunk of the API's own stream kept, dropped, changed, split, or followed by a
    new text, reasoning or usage chunk (a tool call's pieces kept, perhaps followed by
    one): the SDK's helper reads the text the hook gave, and the tool call whole."""
    given: list[str] = []

    @hw.on_chunk
    def mix(chunk: hw.Chunk) -> Any:
        ops = [*OPS[4:], "keep"] if chunk.kind.startswith("tool_call") else OPS
        op = data.draw(st.sampled_from(ops), label=f"{chunk.kind} {chunk.text!r}")
        text = chunk.text if chunk.kind == "text" else ""
        given.append({"drop": "", "upper": text.upper(), "add text": text + "!"}.get(op, text))
        if op == "drop":
            return hw.DROP
        if op == "upper":
            return chunk.replace(text=chunk.text.upper())
        if op == "split" and chunk.kind == "text" and len(chunk.text) > 1:
            return [chunk.replace(text=chunk.text[:1]), hw.Chunk("text", chunk.text[1:])]
        added = {
            "add text": hw.Chunk("text", "!"),
            "add reasoning": hw.Chunk("reasoning", "hmm"),
            "add usage": hw.Chunk("usage", usage=hw.Usage(2, 50)),
        }.get(op)
        return None if added is None else [chunk, added]

    final = _final(api, [mix], reply)
    assert (final.text, final.calls) == ("".join(given), [] if reply is not CALLING else [{"q": 1}])


@pytest.mark.parametrize("where", ["before", "after"])
@every_api
def test_a_hook_that_adds_text_at_the_finish_chunk_works_on_every_streaming_api(
    api: str, where: str
) -> None:
    """Each of these APIs ends its answer with a `finish` chunk, which a portable hook may
    add to (a disclaimer here), before or after it."""

    @hw.on_chunk
    def disclaim(chunk: hw.Chunk) -> Any:
        if chunk.kind != "finish":
            return None
        note = hw.Chunk("text", " (AI)")
        return [note, chunk] if where == "before" else [chunk, note]

    final = _final(api, [disclaim], CALLING)
    assert (final.text, final.calls) == ("hello there (AI)", [{"q": 1}])
    assert final.stop == _final(api, [], CALLING).stop
