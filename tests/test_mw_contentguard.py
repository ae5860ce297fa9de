"""ContentGuard (SPEC §8): rules on whole answers and streams in every call shape, buffered
streams equal to the rules applied to the whole text (hypothesis laws, for regex and
function rules), what each rule holds back, the chunk strategy, non-text chunks in order,
early close, block, on_filtered, a real SDK stream, bad constructor input and the docs
page."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hookwrap as hw
from hookwrap._run import RunContext
from hookwrap.middleware._contentguard import ContentGuard, Filtered
from hookwrap.testing import FakeProvider

KINDS = ("sync", "async")
KEY = (r"sk-[a-z0-9]{6,20}", "[key]")
USER = [{"role": "user", "content": "hi"}]
Log = list[str]


def streamer(kind: str, items: Sequence[Any], log: Log | None = None) -> Callable[..., Any]:
    """A generator function (sync or async) yielding `items`, noting when its body ends."""
    log = [] if log is None else log
    if kind == "sync":

        def llm(prompt: str) -> Iterator[Any]:
            try:
                yield from items
            finally:
                log.append("target closed")

        return llm

    async def allm(prompt: str) -> AsyncIterator[Any]:
        try:
            for item in items:
                yield item
        finally:
            log.append("target closed")

    return allm


def marker(kind: str, items: Sequence[Any], log: Log) -> Callable[..., Any]:
    """A generator function (sync or async) yielding `items`, noting `|` each time the
    caller asks for more: what the caller received before it came with that item."""
    if kind == "sync":

        def llm(prompt: str) -> Iterator[Any]:
            for item in items:
                yield item
                log.append("|")

        return llm

    async def allm(prompt: str) -> AsyncIterator[Any]:
        for item in items:
            yield item
            log.append("|")

    return allm


def answerer(kind: str, answer: Any) -> Callable[..., Any]:
    if kind == "sync":

        def llm(prompt: str) -> Any:
            return answer

        return llm

    async def allm(prompt: str) -> Any:
        return answer

    return allm


def consume(kind: str, fn: Callable[..., Any], into: list[Any] | None = None) -> list[Any]:
    """What `fn("hi")` streams; `into` gets each item as it comes (kept if the stream fails)."""
    received = [] if into is None else into
    if kind == "sync":
        received.extend(fn("hi"))
        return received

    async def main() -> list[Any]:
        async for item in fn("hi"):
            received.append(item)
        return received

    return asyncio.run(main())


def call(kind: str, fn: Callable[..., Any]) -> Any:
    return fn("hi") if kind == "sync" else asyncio.run(fn("hi"))


def reference(rules: Sequence[Any], text: str) -> str:
    """The rules applied to the whole text with `re.sub` (never to an empty text)."""
    for rule in rules:
        if not text:
            break
        text = re.sub(rule[0], rule[1], text) if isinstance(rule, tuple) else rule(text)
    return text


# -- whole answers and streams, every shape --------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_whole_answer_is_filtered_in_after_model(kind: str) -> None:
    records: list[Filtered] = []
    mail = (r"(\w+)@example\.com", r"\1@…")
    same = (r"key", "key")  # matches, but changes nothing: not reported
    guard = ContentGuard(rules=[KEY, mail, same], on_filtered=records.append)
    fn = hw.model(answerer(kind, "key sk-abc123def, mail ann@example.com"), use=[guard])
    assert call(kind, fn) == "key [key], mail ann@…"
    assert records == [
        Filtered(KEY, "sk-abc123def", "[key]"),
        Filtered(mail, "ann@example.com", "ann@…"),
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_a_match_split_over_chunks_is_caught_in_a_stream(kind: str) -> None:
    pieces = ["the key is s", "k-ab", "c123", "def ok", ", bye"]
    guard = ContentGuard(rules=[KEY], window=24)
    out = consume(kind, hw.model(streamer(kind, pieces), use=[guard]))
    assert "".join(out) == "the key is [key] ok, bye"
    assert "" not in out  # a chunk whose text is all held back is not handed out


@pytest.mark.parametrize("kind", KINDS)
def test_text_that_cannot_be_part_of_a_match_is_released_before_the_end(kind: str) -> None:
    log: Log = []
    pieces = ["abcdefgh", "ijklmnop", "qrstuvwx"]

    @hw.on_chunk
    def arrived(chunk: hw.Chunk) -> None:
        log.append(chunk.text)

    guard = ContentGuard(rules=[(r"zz", "")], window=2)
    consume(kind, hw.model(streamer(kind, pieces, log), use=[arrived, guard]))
    # all but the last window + 1 characters go out with the chunk that brought them; the
    # tail when the stream has ended
    assert log == ["abcde", "fghijklm", "nopqrstu", "target closed", "vwx"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("rules", "log"),
    [
        # each regex rule holds back the last window + 1 characters of what the rule before
        # it released: two hold back 2 * (window + 1) when neither changes the text
        ([(r"zz", "Z"), (r"yy", "Y")], ["|", "abcde", "|", "f", "|", "ghijklmnop"]),
        # a function rule at least window + 1: every cut fits upper()
        ([str.upper], ["ABCDE", "|", "FGHIJ", "|", "K", "|", "LMNOP"]),
        ([(r"zz", "Z"), str.upper], ["|", "ABCDE", "|", "F", "|", "GHIJKLMNOP"]),
        # more where a change straddles the cut: "efg" (4 to 7) moves it from 5 back to 4
        ([lambda text: text.replace("efg", "!")], ["abcd", "|", "!hij", "|", "k", "|", "lmnop"]),
    ],
)
def test_each_rule_holds_back_its_own_tail_of_what_the_rule_before_released(
    kind: str, rules: list[Any], log: Log
) -> None:
    seen: Log = []

    @hw.on_chunk
    def arrived(chunk: hw.Chunk) -> None:
        seen.append(chunk.text)

    guard = ContentGuard(rules=rules, window=4)
    out = consume(
        kind, hw.model(marker(kind, ["abcdefghij", "klmno", "p"], seen), use=[arrived, guard])
    )
    assert seen == log
    assert "".join(out) == reference(rules, "abcdefghijklmnop")


@given(
    data=st.data(),
    picks=st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=4),
    window=st.integers(min_value=5, max_value=8),
)
@settings(max_examples=400, deadline=None)
def test_buffered_output_equals_the_rules_on_the_whole_text(
    data: st.DataObject, picks: list[int], window: int
) -> None:
    """However the text is split, for regexes whose matches (lookarounds included) fit in
    the window; the rules include anchors, lookarounds, empty matches and a function that
    maps each character on its own (so pieces and the whole agree)."""
    pool: list[Any] = [
        (r"ab{1,3}a", "<\\g<0>>"),
        (r"\bcab\b", "[cab]"),
        (r"(?<=a)bb", "B"),
        (r"a{2,4}", lambda m: str(len(m.group()))),
        (r"c$", "$"),
        (r"^b", "^"),
        (r"(?m)^a", "M"),
        (r"x?", "-"),
        (r"(?=b)|b", "|"),
        lambda s: s.replace("c", "C"),
    ]
    rules = [pool[i] for i in picks]
    text = data.draw(st.text(alphabet="ab cx\n", min_size=1, max_size=80), label="text")
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=len(text)), max_size=20))
    bounds = sorted(cuts | {0, len(text)})
    pieces = [text[i:j] for i, j in itertools.pairwise(bounds)]

    @hw.model(use=[ContentGuard(rules=rules, window=window)])
    def llm(prompt: str) -> Iterator[str]:
        yield from pieces

    assert "".join(llm("hi")) == reference(rules, text)


@pytest.mark.parametrize(
    ("rule", "pieces"),
    [
        ((r"ab$", "X"), ["ab\n", "c"]),  # `$` matches before a last newline: not the last
        ((r"a(?=bc)", "X"), ["ab", "c"]),
        ((r"ab(?!c)", "X"), ["ab", "c"]),
        ((r"(?<=ab)c", "X"), ["xxxxabcx", "x"]),  # released text is kept for lookbehinds
        ((r"^b", "X"), ["aabxx", "y"]),  # and for `^`, which matches at the start only
    ],
)
def test_what_a_full_window_match_looks_at_just_past_it_is_seen(
    rule: tuple[str, str], pieces: list[str]
) -> None:
    """With `window` characters from a match's start, the character after them is held back
    too (for `$`, `\\b` or a lookahead just past the match), and `window` characters before
    the text still scanned are kept for lookbehinds."""

    @hw.model(use=[ContentGuard(rules=[rule], window=2)])
    def llm(prompt: str) -> Iterator[str]:
        yield from pieces

    assert "".join(llm("hi")) == reference([rule], "".join(pieces))


@pytest.mark.parametrize("kind", KINDS)
def test_the_chunk_strategy_filters_each_chunk_alone_and_holds_nothing_back(kind: str) -> None:
    guard = ContentGuard(rules=[KEY], strategy="chunk")
    pieces = ["one sk-abc123def ", "two s", "k-abc123def"]
    out = consume(kind, hw.model(streamer(kind, pieces), use=[guard]))
    assert out == ["one [key] ", "two s", "k-abc123def"]  # the split one is missed


# -- chunks that are not text ----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_held_back_text_goes_out_before_a_chunk_that_is_not_text(kind: str) -> None:
    call_start = {"kind": "tool_call_start", "tool_call_id": "c1", "tool_name": "f", "text": "{}"}
    items = [
        {"text": "call sk-abc"},
        {"text": "123def now"},
        call_start,
        {"text": "after sk-"},
        {"text": "abc123def", "finish_reason": "stop"},
        {"kind": "usage", "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}},
    ]
    guard = ContentGuard(rules=[KEY], window=24)
    out = consume(kind, hw.model(streamer(kind, items), use=[guard]))
    first = out.index(call_start)
    assert "".join(o.get("text", "") for o in out[:first]) == "call [key] now"
    # a text chunk with a finish reason ends the text: its tail goes out on it
    assert out[first + 1 :] == [
        {"kind": "text", "text": "after [key]", "finish_reason": "stop"},
        items[-1],
    ]


def test_a_run_of_text_after_a_non_text_chunk_is_a_new_text() -> None:
    """`^` matches at the start of each run: each run is guarded as a whole text."""
    items = [{"text": "ab"}, {"kind": "custom", "name": "mark"}, {"text": "ab"}]
    guard = ContentGuard(rules=[(r"^a", "A")])
    out = consume("sync", hw.model(streamer("sync", items), use=[guard]))
    assert [o.get("text") for o in out] == ["Ab", None, "Ab"]


# -- after_model sees what the caller received, once -----------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_is_filtered_once_and_after_model_sees_what_the_caller_got(kind: str) -> None:
    records: list[Filtered] = []
    seen: Log = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.text)

    # a rule whose replacement matches again: a second pass would show
    guard = ContentGuard(rules=[(r"a", "aa")], on_filtered=records.append)
    out = consume(kind, hw.model(streamer(kind, ["a b", " a"]), use=[record, guard]))
    assert "".join(out) == "aa b aa"
    assert seen == ["aa b aa"]
    assert len(records) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_text_part_answer_is_filtered_part_by_part(kind: str) -> None:
    image = hw.ImagePart("https://example.com/cat.png")
    answer = hw.Message.assistant([hw.TextPart("a sk-abc123def"), image, hw.TextPart("sk-zzz999x")])

    def llm(prompt: str) -> hw.Message:
        return answer

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.message.content)

    seen: list[Any] = []
    hw.model(llm, use=[record, ContentGuard(rules=[KEY])])("hi")
    assert seen == [(hw.TextPart("a [key]"), image, hw.TextPart("[key]"))]


@pytest.mark.parametrize("kind", KINDS)
def test_a_streamed_respond_answer_is_filtered_once_chunk_by_chunk(kind: str) -> None:
    """`hw.Respond` skips wrap_model hooks: its chunks are filtered by the on_chunk hook, and
    after_model neither reports nor blocks what the caller already has."""
    records: list[Filtered] = []

    @hw.before_model
    def canned(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("the key is sk-abc123def")

    guard = ContentGuard(rules=[KEY], on_filtered=records.append)
    out = consume(kind, hw.model(streamer(kind, ["unused"]), use=[canned, guard]))
    assert out == ["the key is [key]"]
    assert len(records) == 1


# -- function rules --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_function_rule_catches_a_word_split_over_chunks(kind: str) -> None:
    def redact(text: str) -> str:
        return text.replace("secret", "[x]")

    guard = ContentGuard(rules=[redact])
    out = consume(kind, hw.model(streamer(kind, ["my sec", "ret is 42"]), use=[guard]))
    assert "".join(out) == "my [x] is 42"


@pytest.mark.parametrize("kind", KINDS)
def test_function_rules_see_the_whole_answer_or_pieces_reported_as_released(kind: str) -> None:
    """In a stream a function is also tried on pieces of the held-back text, to find where
    to cut; `on_filtered` hears only of the pieces that go out changed."""
    records: list[Filtered] = []

    def redact(text: str) -> str:
        return text.replace("secret", "[x]")

    guard = ContentGuard(rules=[(r"bad", "ok"), redact], window=6, on_filtered=records.append)
    answer = "a bad secret, another secret"
    assert call(kind, hw.model(answerer(kind, answer), use=[guard])) == "a ok [x], another [x]"
    assert [(r.rule, r.matched) for r in records] == [
        (guard.rules[0], "bad"),
        (redact, "a ok secret, another secret"),
    ]
    records.clear()
    pieces = ["a ba", "d sec", "ret, then a long pause, then another s", "ecret and more text"]
    out = consume(kind, hw.model(streamer(kind, pieces), use=[guard]))
    assert out == ["a ok [x], then a long pause, ", "then another [x]", " and more text"]
    assert records == [
        Filtered(guard.rules[0], "bad", "ok"),
        Filtered(redact, "a ok secret, then a long pause, ", "a ok [x], then a long pause, "),
        Filtered(redact, "then another secret", "then another [x]"),
    ]


@given(data=st.data(), window=st.integers(min_value=5, max_value=7))
@settings(max_examples=150, deadline=None)
def test_function_rules_in_a_buffered_stream_equal_the_rules_on_the_whole_text(
    data: st.DataObject, window: int
) -> None:
    """However the text is split, sync and async, for functions replacing words of at most
    `window` characters that cannot overlap themselves, alone and among regex rules."""

    def overlaps_itself(word: str) -> bool:
        return any(word[:k] == word[-k:] for k in range(1, len(word)))

    def replacer(word: str, new: str) -> Callable[[str], str]:
        return lambda text: text.replace(word, new)

    word = st.text(alphabet="abc", min_size=1, max_size=window).filter(
        lambda w: not overlaps_itself(w)
    )
    pairs = st.tuples(word, st.sampled_from(["", "#", "[x]", "a", "ba", "c c"]))
    swaps = data.draw(st.lists(pairs, min_size=1, max_size=3), label="words")
    regexes = data.draw(
        st.lists(
            st.sampled_from(
                [(r"ab{1,3}a", "<\\g<0>>"), (r"\bcab\b", "[cab]"), (r"(?<=a)bb", "B"), (r"c$", "$")]
            ),
            max_size=3,
        ),
        label="regexes",
    )
    rules = data.draw(
        st.permutations([*(replacer(*swap) for swap in swaps), *regexes]), label="rules"
    )
    # the words themselves, between bits of other text
    bits = st.sampled_from([w for w, _ in swaps]) | st.text(alphabet="ab c\n", max_size=3)
    text = data.draw(st.lists(bits, min_size=1, max_size=16).map("".join), label="text")
    assume(text)
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=len(text)), max_size=20))
    bounds = sorted(cuts | {0, len(text)})
    pieces = [text[i:j] for i, j in itertools.pairwise(bounds)]
    guard = ContentGuard(rules=rules, window=window)
    for kind in KINDS:
        out = consume(kind, hw.model(streamer(kind, pieces), use=[guard]))
        assert "".join(out) == reference(rules, text)


def test_a_word_that_overlaps_itself_is_caught_in_any_split_as_a_regex_rule() -> None:
    """Which "aa" in a run of a's are replaced depends on where the run began: a regex
    rule's scan follows it across cuts (the docs point such words to regex rules)."""
    rule = (r"aa", "")
    guard = ContentGuard(rules=[rule], window=3)
    for k in range(1, 9):
        pieces = ["a" * k, "a" * (9 - k), "a"]
        out = consume("sync", hw.model(streamer("sync", pieces), use=[guard]))
        assert "".join(out) == reference([rule], "a" * 10) == ""


def test_a_rule_returning_something_else_than_a_str_is_a_type_error_naming_it() -> None:
    def broken(text: str) -> str:
        return None  # type: ignore[return-value]

    guard = ContentGuard(rules=[(r"x", lambda m: 1), broken])
    with pytest.raises(TypeError, match=r"rule 0 \('x'\) returned int"):
        hw.model(answerer("sync", "x"), use=[guard])("hi")
    with pytest.raises(TypeError, match=r"rule 1 \(.*broken.*\) returned NoneType"):
        hw.model(answerer("sync", "y"), use=[guard])("hi")


# -- early close -----------------------------------------------------------------------------


def test_closing_the_guarded_stream_closes_the_inner_one_at_once() -> None:
    """The hook called directly: its stream closes what it was given."""
    log: Log = []

    def inner() -> Iterator[hw.Chunk]:
        try:
            for text in ("aaaa", "bbbb", "cccc"):
                yield hw.Chunk("text", text)
        finally:
            log.append("inner closed")

    guard = ContentGuard(rules=[(r"zz", "")], window=2)
    source = inner()
    hook = guard.guard_stream(hw.ModelRequest(stream=True), ctx=RunContext(None, "model"))
    next(hook)
    with pytest.raises(StopIteration) as done:
        hook.send(source)
    stream = done.value.value
    assert next(stream).text == "a"
    stream.close()
    assert log == ["inner closed"]


def test_closing_the_guarded_async_stream_closes_the_inner_one_at_once() -> None:
    log: Log = []

    async def inner() -> AsyncIterator[hw.Chunk]:
        try:
            for text in ("aaaa", "bbbb", "cccc"):
                yield hw.Chunk("text", text)
        finally:
            log.append("inner closed")

    async def main() -> None:
        guard = ContentGuard(rules=[(r"zz", "")], window=2)
        source = inner()
        hook = guard.guard_stream(hw.ModelRequest(stream=True), ctx=RunContext(None, "model"))
        next(hook)
        with pytest.raises(StopIteration) as done:
            hook.send(source)
        stream = done.value.value
        assert (await stream.__anext__()).text == "a"
        await stream.aclose()
        assert log == ["inner closed"]
        await source.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("kind", KINDS)
def test_a_caller_stopping_early_closes_the_model_stream_at_once(kind: str) -> None:
    log: Log = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append(f"on_abort {info.reason}")

    guard = ContentGuard(rules=[(r"zz", "")], window=2)
    fn = hw.model(streamer(kind, ["aaaa", "bbbb", "cccc"], log), use=[guard, aborted])
    if kind == "sync":
        stream = fn("hi")
        assert next(stream) == "a"
        stream.close()
    else:

        async def main() -> None:
            stream = fn("hi")
            assert await stream.__anext__() == "a"
            await stream.aclose()

        asyncio.run(main())
    assert log == ["target closed", "on_abort closed by consumer"]


# -- block -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_block_ends_a_whole_answer_with_aborted_naming_the_rule(kind: str) -> None:
    records: list[Filtered] = []
    guard = ContentGuard(rules=[(r"x", "y"), KEY], block=True, on_filtered=records.append)
    fn = hw.model(answerer(kind, "here: sk-abc123def"), use=[guard])
    with pytest.raises(hw.Aborted) as err:
        call(kind, fn)
    assert err.value.reason == (
        "ContentGuard blocked the model's output: rule 1 ('sk-[a-z0-9]{6,20}') matched"
    )
    assert "abc123" not in err.value.reason  # the matched text is not repeated in the reason
    assert records == [Filtered(KEY, "sk-abc123def", "[key]")]
    assert call(kind, hw.model(answerer(kind, "clean"), use=[guard])) == "clean"


@pytest.mark.parametrize("kind", KINDS)
def test_block_ends_a_stream_and_hands_out_nothing_after_the_match(kind: str) -> None:
    log: Log = []
    received: Log = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        log.append(f"on_abort {info.reason}")

    pieces = ["hello ", "world ", "ba", "d rest", " more", " and more"]
    guard = ContentGuard(rules=[(r"bad", "")], window=4, block=True)
    fn = hw.model(streamer(kind, pieces, log), use=[guard, aborted])
    with pytest.raises(hw.Aborted, match=r"ContentGuard blocked .* rule 0 \('bad'\) matched"):
        consume(kind, fn, received)
    text = "".join(received)
    assert text  # released before the match: it stays released
    assert "hello world ".startswith(text)
    assert log[0] == "target closed"
    assert log[1].startswith("on_abort ContentGuard blocked")


@pytest.mark.parametrize("kind", KINDS)
def test_block_with_a_function_rule_hands_out_no_part_of_a_split_word(kind: str) -> None:
    received: Log = []

    def redact(text: str) -> str:
        return text.replace("secret", "")

    pieces = ["hello world ", "my sec", "ret rest", " and more text after it"]
    guard = ContentGuard(rules=[redact], window=6, block=True)
    fn = hw.model(streamer(kind, pieces), use=[guard])
    with pytest.raises(hw.Aborted, match=r"ContentGuard blocked .* rule 0 \(.*redact.*\) matched"):
        consume(kind, fn, received)
    text = "".join(received)
    assert text.startswith("hello world")
    assert "hello world my ".startswith(text)


# -- a real SDK ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_an_openai_stream_carries_the_redacted_text_in_its_own_chunks(kind: str) -> None:
    openai = pytest.importorskip("openai")
    answer = hw.Message.assistant(
        "call sk-abc123def now",
        [hw.ToolCall("call_1", "lookup", {"q": "sk-abc123def"})],  # arguments are not text
    )
    provider = FakeProvider([answer], chunk_size=3)
    client = hw.wrap(provider.openai(async_=kind == "async"), use=[ContentGuard(rules=[KEY])])

    async def read_async() -> list[Any]:
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        return [item async for item in stream]

    if kind == "sync":
        items = list(client.chat.completions.create(model="m", messages=USER, stream=True))
    else:
        items = asyncio.run(read_async())
    assert all(type(c) is openai.types.chat.ChatCompletionChunk for c in items)
    deltas = [c.choices[0].delta for c in items if c.choices]
    texts = [d.content for d in deltas if d.content]
    first_call = next(i for i, d in enumerate(deltas) if d.tool_calls)
    assert "".join(texts) == "call [key] now"
    assert all(not d.content for d in deltas[first_call:])  # the text came before the call
    arguments = "".join(d.tool_calls[0].function.arguments or "" for d in deltas if d.tool_calls)
    assert "sk-abc123def" in arguments


def test_an_anthropic_message_stream_and_its_final_message_are_redacted() -> None:
    pytest.importorskip("anthropic")
    provider = FakeProvider(["the key is sk-abc123def, keep it"], chunk_size=3)
    client = hw.wrap(provider.anthropic(), use=[ContentGuard(rules=[KEY])])
    with client.messages.stream(model="m", max_tokens=64, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == "the key is [key], keep it"
    assert [block.text for block in final.content] == ["the key is [key], keep it"]


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"rules": "sk-"}, TypeError, "rules=...) expects a list of (regex, replacement) pairs"),
        ({"rules": []}, ValueError, "expects at least one rule (got [])"),
        ({"rules": [("a", "b", "c")]}, TypeError, "rule 0 must be a (regex, replacement) pair"),
        ({"rules": [KEY, 42]}, TypeError, "rule 1 must be a (regex, replacement) pair"),
        ({"rules": [("(", "x")]}, ValueError, "rule 0: '(' is not a valid regex"),
        ({"rules": [(b"a", "x")]}, TypeError, "the regex must be a str or a compiled str"),
        ({"rules": [(re.compile(b"a"), "x")]}, TypeError, "compiled str pattern"),
        ({"rules": [("a", 1)]}, TypeError, "the replacement must be a str or a plain function"),
        ({"rules": [("a", r"\1")]}, ValueError, "the replacement '\\\\1' does not fit the regex"),
        (
            {"rules": [(r"(?P<x>a)", r"\g<nope>")]},
            ValueError,
            "rule 0: the replacement '\\\\g<nope>' does not fit the regex (unknown group name",
        ),
        (
            {"rules": [KEY, ("a", r"\g<x>")]},
            ValueError,
            "rule 1: the replacement '\\\\g<x>' does not fit the regex (unknown group name",
        ),
        ({"rules": [KEY], "strategy": "lines"}, ValueError, "'buffered' or 'chunk' (got 'lines')"),
        ({"rules": [KEY], "window": 0}, ValueError, "window=...) expects an int >= 1 (got 0)"),
        ({"rules": [KEY], "window": 2.5}, TypeError, "expects an int >= 1 (got float: 2.5)"),
        ({"rules": [KEY], "window": True}, TypeError, "expects an int >= 1 (got bool: True)"),
        ({"rules": [KEY], "block": "yes"}, TypeError, "block=...) expects True or False"),
        ({"rules": [KEY], "on_filtered": "log"}, TypeError, "on_filtered=...) expects a plain"),
    ],
)
def test_bad_constructor_input_is_refused_at_once(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as err:
        ContentGuard(**options)
    assert message in str(err.value)


def test_async_functions_are_refused_as_rules_replacements_and_on_filtered() -> None:
    async def afn(value: Any) -> str:
        return ""

    for options in (
        {"rules": [afn]},
        {"rules": [("a", afn)]},
        {"rules": [KEY], "on_filtered": afn},
    ):
        with pytest.raises(TypeError, match="plain"):
            ContentGuard(**options)  # type: ignore[arg-type]


def test_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ContentGuard([KEY])  # type: ignore[misc]


@pytest.mark.parametrize("made_by", ["Respond", "Fallback"])
def test_an_answer_a_hook_made_is_guarded_in_an_openai_stream(made_by: str) -> None:
    """A whole answer put into a streamed call by a hook (a `Respond`, a fallback model)
    becomes the SDK's chunks; a secret in it must not slip through between them."""
    pytest.importorskip("openai")
    from hookwrap.middleware import Fallback

    said = "the key is sk-SECRET123 ok"

    @hw.before_model
    def respond(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(said)

    def backup(prompt: str) -> str:
        return said

    provider = FakeProvider(["unused"])
    provider.fail(503)
    guard = ContentGuard(rules=[(r"sk-[A-Z0-9]+", "[redacted]")])
    other = respond if made_by == "Respond" else Fallback(models=[backup])
    client = hw.wrap(provider.openai(max_retries=0), use=[guard, other])
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "the key is [redacted] ok"


@pytest.mark.parametrize("sdk", ["anthropic", "genai"])
def test_a_responded_answer_comes_whole_in_other_sdk_streams(sdk: str) -> None:
    """The docs say a `Respond` answer is one text chunk in every SDK's stream, so a rule
    matching across what would be the SDK's pieces still matches."""
    pytest.importorskip("google.genai" if sdk == "genai" else sdk)
    said = "the key is sk-SECRET123 ok " * 40  # far longer than any piece of a stream

    @hw.before_model
    def respond(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond(said)

    guard = ContentGuard(rules=[(r"sk-[A-Z0-9]+", "[redacted]")], strategy="chunk")
    provider = FakeProvider(chunk_size=3)
    if sdk == "anthropic":
        client: Any = hw.wrap(provider.anthropic(), use=[guard, respond])
        events = client.messages.create(model="m", max_tokens=9, messages=USER, stream=True)
        text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    else:
        gclient: Any = hw.wrap(provider.genai(), use=[guard, respond])
        text = "".join(
            r.text or "" for r in gclient.models.generate_content_stream(model="m", contents="hi")
        )
    assert text == said.replace("sk-SECRET123", "[redacted]")
