"""ContentGuard: rewrite or block the model's output text by rules, in whole answers and in
streams, where a match may be split over several chunks."""

from __future__ import annotations

import functools
import inspect
import itertools
import re
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, Union, cast

import attrs

from .._convert import message_to_dict
from .._errors import Aborted, check_int
from .._hooks import Middleware, after_model, describe, on_chunk, wrap_model
from .._run import RunContext
from .._types import Chunk, Message, ModelRequest, ModelResponse, TextPart
from ._shared import is_async_callable

if TYPE_CHECKING:
    from ..adapters._wire import Wire

__all__ = ["ContentGuard", "Filtered"]

Replacement = Union[str, Callable[[re.Match[str]], str]]
Rule = Union[tuple[Union[str, re.Pattern[str]], Replacement], Callable[[str], str]]

_instances = itertools.count(1)
# What a guard notes in a call's state: its stream filters what the caller gets, or it
# filtered the chunks one by one.
_STREAM, _CHUNKS = "stream", "chunks"
# `guard_unseen`'s priority: outside every other `wrap_model` hook
_OUTSIDE = 1 << 62


@attrs.frozen(slots=True, weakref_slot=False)
class Filtered:
    """What `ContentGuard(on_filtered=...)` is called with each time a rule changes text.

    `rule` is the rule as it was given (the ``(regex, replacement)`` tuple or the function),
    `matched` the text it matched (for a function: the text it was given; in a buffered
    stream, a piece of text that goes out), `replacement` what that text became (with
    ``block=True``: would have become).
    """

    rule: Any
    matched: str
    replacement: str


class _Rule:
    """One rule, checked and compiled; `sub` applies it to a whole text."""

    __slots__ = ("given", "guard", "label")

    def __init__(self, given: Any, label: str, guard: ContentGuard) -> None:
        self.given = given
        self.label = label
        self.guard = guard

    def sub(self, text: str) -> str:
        raise NotImplementedError

    def stage(self, window: int) -> _Scan | _Cuts:
        """The rule in a buffered stream: text in pieces in, final text out."""
        raise NotImplementedError

    def _result(self, value: object) -> str:
        if not isinstance(value, str):
            raise TypeError(
                f"ContentGuard {self.label} returned {type(value).__name__} "
                f"({value!r:.80}); expected a str"
            )
        return value


class _Regex(_Rule):
    __slots__ = ("pattern", "repl")

    def __init__(
        self, given: Any, label: str, guard: ContentGuard, pattern: re.Pattern[str], repl: Any
    ) -> None:
        super().__init__(given, label, guard)
        self.pattern = pattern
        self.repl = repl

    def replace(self, match: re.Match[str]) -> str:
        """The replacement of one match, reported to the guard when it changes the text."""
        repl = self.repl
        new = match.expand(repl) if isinstance(repl, str) else self._result(repl(match))
        old = match.group()
        if new != old:
            self.guard._filtered(self, old, new)  # pyright: ignore[reportPrivateUsage]
        return new

    def sub(self, text: str) -> str:
        return self.pattern.sub(self.replace, text)

    def stage(self, window: int) -> _Scan:
        return _Scan(self, window)


class _Function(_Rule):
    __slots__ = ("fn",)

    def __init__(
        self, given: Any, label: str, guard: ContentGuard, fn: Callable[[str], str]
    ) -> None:
        super().__init__(given, label, guard)
        self.fn = fn

    def call(self, text: str) -> str:
        """The function's result, not reported: a buffered stream tries where to cut."""
        return self._result(self.fn(text))

    def report(self, text: str, new: str) -> str:
        """`new`, the function's result for `text`, reported to the guard if it differs."""
        if new != text:
            self.guard._filtered(self, text, new)  # pyright: ignore[reportPrivateUsage]
        return new

    def sub(self, text: str) -> str:
        return self.report(text, self.call(text))

    def stage(self, window: int) -> _Cuts:
        return _Cuts(self, window)


def _is_str_pattern(value: object) -> TypeGuard[re.Pattern[str]]:
    return isinstance(getattr(value, "pattern", None), str) and isinstance(value, re.Pattern)


def _takes_one(fn: Callable[..., object]) -> bool:
    """Whether `fn` can be called with one argument, as a rule calls it; a function whose
    signature cannot be read (some builtins) is given the benefit of the doubt."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(None)
    except TypeError:
        return False
    return True


def _rule(index: int, given: object, guard: ContentGuard) -> _Rule:
    where = f"ContentGuard(rules=...): rule {index}"
    if isinstance(given, tuple):
        pair = cast("tuple[object, ...]", given)
        if len(pair) != 2:
            raise TypeError(
                f"{where} must be a (regex, replacement) pair or a str -> str function "
                f"(got a tuple of {len(pair)}: {given!r:.80})"
            )
        regex, repl = pair
        if isinstance(regex, str):
            try:
                pattern = re.compile(regex)
            except re.error as exc:
                raise ValueError(f"{where}: {regex!r} is not a valid regex ({exc})") from None
        elif _is_str_pattern(regex):
            pattern = regex
        else:
            raise TypeError(
                f"{where}: the regex must be a str or a compiled str pattern "
                f"(got {type(regex).__name__}: {regex!r:.80})"
            )
        label = f"rule {index} ({pattern.pattern!r})"
        if isinstance(repl, str):
            try:
                pattern.sub(repl, "")  # checks group references such as \1 or \g<name>
            except (re.error, IndexError) as exc:  # IndexError: an unknown group name
                raise ValueError(
                    f"{where}: the replacement {repl!r} does not fit the regex ({exc})"
                ) from None
        elif not callable(repl) or is_async_callable(repl):
            raise TypeError(
                f"{where}: the replacement must be a str or a plain function of the match "
                f"returning a str, as re.sub takes (got {type(repl).__name__}: {repl!r:.80})"
            )
        elif not _takes_one(repl):
            raise TypeError(
                f"{where}: the replacement function {describe(repl)} must take one "
                f"argument, the re.Match (its signature: {inspect.signature(repl)})"
            )
        return _Regex(given, label, guard, pattern, repl)
    if callable(given) and not is_async_callable(given):
        fn = cast("Callable[[str], str]", given)
        if not _takes_one(fn):
            raise TypeError(
                f"{where} ({describe(fn)}) must take one argument, the text "
                f"(its signature: {inspect.signature(fn)})"
            )
        return _Function(given, f"rule {index} ({describe(fn)})", guard, fn)
    raise TypeError(
        f"{where} must be a (regex, replacement) pair or a plain str -> str function "
        f"(got {type(given).__name__}: {given!r:.80})"
    )


# -- streams -----------------------------------------------------------------------------------


class _Scan:
    """One regex rule applied to a text that arrives in pieces.

    `push` returns the output that is final: text before the last `window + 1` characters
    can no longer be where a match of at most `window` characters starts (or what such a
    match, `$` or a one-character lookahead at its end looks at). The scan restarts where
    it stopped, on the input it still holds plus `window` characters before it, so
    lookbehinds, `\\b` and `^` see what `re.sub` on the whole text would see.
    """

    __slots__ = ("buf", "pos", "rule", "seen", "window")

    def __init__(self, rule: _Regex, window: int) -> None:
        self.rule = rule
        self.window = window
        self.buf = ""
        self.pos = 0  # where the unscanned input starts in `buf`
        self.seen = False

    def push(self, text: str, final: bool) -> str:
        if text:
            self.seen = True
        elif not self.seen:  # no text yet: a rule is not applied to an empty text
            return ""
        buf = self.buf + text
        end = len(buf)
        limit = end + 1 if final else end - self.window - 1
        replace = self.rule.replace
        out: list[str] = []
        last = self.pos
        for match in self.rule.pattern.finditer(buf, last):
            start, stop = match.span()
            if start >= limit:
                break
            out.append(buf[last:start])
            out.append(replace(match))
            last = stop
        if final:
            out.append(buf[last:])
            self.buf, self.pos, self.seen = "", 0, False
            return "".join(out)
        # A match taken ends before `limit` and an empty one starts before it, so the scan
        # resumes past every match taken, as a scan of the whole text goes on from there.
        cut = max(last, limit)
        out.append(buf[last:cut])
        keep = max(0, cut - self.window)
        self.buf = buf[keep:]
        self.pos = cut - keep
        return "".join(out)


class _Cuts:
    """One function rule applied to a text that arrives in pieces.

    The function is taken to make changes that, with the text deciding them, span at most
    `window` characters (and one past them), as `_Scan` takes a regex's matches to. Text
    goes out up to a cut at least `window + 1` characters before the end of what is held,
    so whatever decides the text before the cut is held too, and only where the function
    gives the same on the text before the cut and after it as on the whole: no change
    straddles the cut. A change straddling the first cut tried starts at most `window`
    characters before it, and its start is a cut no other change straddles; if no cut
    fits, the text waits for more. The short side after the cut is tried first, so the
    long side costs a call only where a cut may fit.
    """

    __slots__ = ("buf", "rule", "window")

    def __init__(self, rule: _Function, window: int) -> None:
        self.rule = rule
        self.window = window
        self.buf = ""

    def push(self, text: str, final: bool) -> str:
        buf = self.buf + text
        rule = self.rule
        if final:
            self.buf = ""
            return rule.sub(buf) if buf else ""  # never applied to an empty text
        first = len(buf) - self.window - 1
        if first >= 1:
            whole = rule.call(buf)
            for cut in range(first, max(0, first - self.window - 1), -1):
                tail = rule.call(buf[cut:])
                if not whole.endswith(tail):
                    continue
                head = whole[: len(whole) - len(tail)]
                if rule.call(buf[:cut]) == head:
                    self.buf = buf[cut:]
                    return rule.report(buf[:cut], head)
        self.buf = buf  # no cut fits yet: wait for more text
        return ""


class _Buffered:
    """Chunks in, chunks out for one stream; each rule a stage feeding the next.

    A run of text chunks is guarded as one text. It ends at the end of the stream, at a
    text chunk with a finish reason, and before any other kind of chunk, which then
    follows the text released before it. Each stage hands on its rule applied to the whole
    of its input however that input was split, so the stages in a row hand on the rules
    applied in order to the whole text; each holds back its own tail.
    """

    __slots__ = ("last", "stages")

    def __init__(self, rules: tuple[_Rule, ...], window: int) -> None:
        self.stages = tuple(rule.stage(window) for rule in rules)
        self.last: Chunk | None = None  # the run's latest text chunk: the tail's template

    def _push(self, text: str, final: bool) -> str:
        for stage in self.stages:
            text = stage.push(text, final)
        return text

    def push(self, chunk: Chunk) -> list[Chunk]:
        if chunk.kind != "text":
            out = self.end()
            out.append(chunk)
            return out
        final = chunk.finish_reason is not None
        text = self._push(chunk.text, final)
        self.last = None if final else chunk
        if text == chunk.text:
            return [chunk]
        if not text and chunk.usage is None and not final:
            return []  # all held back, and nothing else on it
        return [chunk.replace(text=text)]

    def end(self) -> list[Chunk]:
        last = self.last
        if last is None:
            return []
        self.last = None
        tail = self._push("", True)
        return [last.replace(text=tail, usage=None, finish_reason=None)] if tail else []


class _PerChunk:
    """The `chunk` strategy: every text chunk on its own, nothing held back."""

    __slots__ = ("guard",)

    def __init__(self, guard: ContentGuard) -> None:
        self.guard = guard

    def push(self, chunk: Chunk) -> list[Chunk]:
        if chunk.kind != "text" or not chunk.text:
            return [chunk]
        text = self.guard.apply(chunk.text)
        return [chunk if text == chunk.text else chunk.replace(text=text)]

    def end(self) -> list[Chunk]:
        return []


_Driver = Union[_Buffered, _PerChunk]


def _guarded(
    driver: _Driver, chunks: Iterator[Chunk], state: dict[str, Any], key: str
) -> Iterator[Chunk]:
    """`chunks` through `driver`. When they fail, the guard's mark under `key` goes: this
    stream filters nothing the caller gets, and what the caller gets instead (a `Fallback`
    alternative's stream, say) is left to `guard_unseen` or `guard_responded`."""
    try:
        for chunk in chunks:
            yield from driver.push(chunk)
        yield from driver.end()
    except Exception:
        state.pop(key, None)
        raise
    finally:  # also when the caller stops early: the model's stream closes at once
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


async def _aguarded(
    driver: _Driver, chunks: AsyncIterator[Chunk], state: dict[str, Any], key: str
) -> AsyncIterator[Chunk]:
    try:
        async for chunk in chunks:
            for out in driver.push(chunk):
                yield out
        for out in driver.end():
            yield out
    except Exception:
        state.pop(key, None)
        raise
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


# -- the middleware ----------------------------------------------------------------------------


@functools.cache
def _answer_wires() -> tuple[Wire, ...]:
    """The wires of the SDKs' JSON answers (imported on first use)."""
    from ..adapters._anthropic_wire import MessagesWire
    from ..adapters._google_wire import GeminiWire
    from ..adapters._openai_wire import ChatCompletionsWire, CompletionsWire, ResponsesWire

    return MessagesWire(), ResponsesWire(), GeminiWire(), ChatCompletionsWire(), CompletionsWire()


def _wire_of(raw: object) -> Wire | None:
    """The wire of an SDK's JSON answer `raw`; None for any other answer."""
    if not isinstance(raw, Mapping):
        return None
    data = cast("Mapping[str, Any]", raw)
    return next((wire for wire in _answer_wires() if wire.answers(data)), None)


def _guarded_answer(response: ModelResponse, message: Message) -> ModelResponse:
    """`response` with the guarded `message`, in its `raw` too, so that a hook after the
    guard that reads `raw` (an audit log, say) finds no more of the model's text there than
    the caller gets. An SDK's JSON answer gets `message` written in as the SDK adapter
    writes the caller's answer (what described the old text, such as logprobs, goes as it
    goes there); a plain function's own answer (its text, `Message` or dict) takes the new
    text in the same form. A `raw` that does not hold the text the guard read is kept."""
    raw: Any = response.raw
    old = response.message
    new = response.replace(message=message)
    if isinstance(raw, Mapping):
        data = cast("Mapping[str, Any]", raw)
        wire = _wire_of(data)
        if wire is not None:
            return new.replace(raw=wire.write_response(new, data))
        if data.get("content") == message_to_dict(old)["content"]:  # a function's dict
            return new.replace(raw={**data, "content": message_to_dict(message)["content"]})
    if isinstance(raw, str) and raw == old.content:  # a function's text
        return new.replace(raw=message.content)
    if isinstance(raw, Message) and raw == old:
        return new.replace(raw=message)
    return new


class ContentGuard(Middleware):
    """Rewrite or block the model's output text by rules: whole answers and streams alike.

    A rule is a ``(regex, replacement)`` pair, applied as ``re.sub(regex, replacement,
    text)`` (the regex a str or compiled pattern, the replacement a str or a function of
    the match), or a ``str -> str`` function. Rules apply in order, each to the output of
    the one before, and never to an empty text. Only text is guarded: not reasoning, not
    tool-call arguments.

    In a stream, ``strategy="buffered"`` hands the caller the same text as applying the
    rules to the whole text, however it was split into chunks, for matches of up to
    `window` characters: a tail of the text is held back until it can no longer be part of
    a match, and released at the end of the stream or before a chunk that is not text.
    A function rule counts as a regex whose matches are the stretches it changes: text is
    cut where the function gives the same on either side as on the whole, so a function
    is called several times on pieces of the held-back text and must not depend on how
    often. ``strategy="chunk"`` applies the rules to each chunk's text on its own and holds
    nothing back; a match split over two chunks is missed.

    Args:
        rules: the rules, in the order they apply.
        strategy: ``"buffered"`` or ``"chunk"``.
        window: the longest match (lookarounds included) that buffered streams catch.
        block: end the call with `hw.Aborted` instead of replacing when a rule would
            change the text.
        on_filtered: a function called with a `Filtered` record each time a rule changes
            the text.
    """

    def __init__(
        self,
        *,
        rules: Sequence[Rule],
        strategy: Literal["buffered", "chunk"] = "buffered",
        window: int = 64,
        block: bool = False,
        on_filtered: Callable[[Filtered], object] | None = None,
    ) -> None:
        if not isinstance(rules, (list, tuple)):
            raise TypeError(
                "ContentGuard(rules=...) expects a list of (regex, replacement) pairs and "
                f"str -> str functions (got {type(rules).__name__}: {rules!r:.80})"
            )
        given = cast("Sequence[object]", rules)
        if not given:
            raise ValueError("ContentGuard(rules=...) expects at least one rule (got [])")
        if not isinstance(strategy, str):
            raise TypeError(
                "ContentGuard(strategy=...) expects 'buffered' or 'chunk' "
                f"(got {type(strategy).__name__}: {strategy!r:.80})"
            )
        if strategy not in ("buffered", "chunk"):
            raise ValueError(
                f"ContentGuard(strategy=...) expects 'buffered' or 'chunk' (got {strategy!r})"
            )
        check_int("ContentGuard(window=...)", window, 1)
        if not isinstance(block, bool):
            raise TypeError(f"ContentGuard(block=...) expects True or False (got {block!r})")
        if on_filtered is not None and (
            not callable(on_filtered) or is_async_callable(on_filtered)
        ):
            raise TypeError(
                "ContentGuard(on_filtered=...) expects a plain function taking a Filtered "
                f"record, or None (got {type(on_filtered).__name__}: {on_filtered!r:.80})"
            )
        self.rules: tuple[Rule, ...] = tuple(cast("Sequence[Rule]", given))
        self.strategy = strategy
        self.window = window
        self.block = block
        self.on_filtered = on_filtered
        self._rules = tuple(_rule(i, rule, self) for i, rule in enumerate(given))
        # Notes, in the call's state, how this guard filtered a streamed call.
        self._key = f"hookwrap.ContentGuard#{next(_instances)}"

    def __repr__(self) -> str:
        return f"<ContentGuard middleware: {len(self._rules)} rules, {self.strategy}>"

    def _filtered(self, rule: _Rule, matched: str, replacement: str) -> None:
        if self.on_filtered is not None:
            self.on_filtered(Filtered(rule.given, matched, replacement))
        if self.block:
            raise Aborted(f"ContentGuard blocked the model's output: {rule.label} matched")

    def apply(self, text: str) -> str:
        """`text` after every rule, each applied to the whole of it (as for a whole answer)."""
        for rule in self._rules:
            if not text:
                break
            text = rule.sub(text)
        return text

    def _guard(self, chunks: Any, state: dict[str, Any]) -> Any:
        """`chunks`, a sync or async stream, filtered as it is read (and marked so)."""
        state[self._key] = _STREAM
        driver: _Driver = (
            _Buffered(self._rules, self.window) if self.strategy == "buffered" else _PerChunk(self)
        )
        if hasattr(chunks, "__anext__"):
            return _aguarded(driver, chunks, state, self._key)
        return _guarded(driver, chunks, state, self._key)

    @wrap_model
    def guard_stream(
        self, request: ModelRequest, ctx: RunContext[Any]
    ) -> Generator[ModelRequest, Any, Any]:
        """Filter a streamed answer as it is read; a whole answer is left to `guard_answer`."""
        response = yield request
        if isinstance(response, ModelResponse):
            return response
        return self._guard(response, ctx.call_state)

    @wrap_model(priority=_OUTSIDE)
    def guard_unseen(
        self, request: ModelRequest, ctx: RunContext[Any]
    ) -> Generator[ModelRequest, Any, Any]:
        """Filter, as `guard_stream` does, a stream that reaches the caller without passing
        `guard_stream`: a `Fallback` placed before the guard calls its alternatives itself,
        outside the hooks after it. Outermost, so that it sees whatever the caller gets."""
        response = yield request
        state = ctx.call_state
        if isinstance(response, ModelResponse) or state.get(self._key) == _STREAM:
            return response
        return self._guard(response, state)

    @on_chunk
    def guard_responded(self, chunk: Chunk, ctx: RunContext[Any]) -> Chunk | None:
        """Filter, one by one, the chunks of a stream no `wrap_model` hook saw: a whole
        answer given to a streamed call (by `hw.Respond`, which skips `wrap_model` hooks,
        or by a `wrap_model` hook or `Fallback` alternative), which comes in one chunk."""
        state = ctx.call_state
        if state.get(self._key) == _STREAM:
            return None
        state[self._key] = _CHUNKS
        if chunk.kind != "text" or not chunk.text:
            return None
        text = self.apply(chunk.text)
        return None if text == chunk.text else chunk.replace(text=text)

    @after_model
    def guard_answer(
        self, request: ModelRequest, response: ModelResponse, ctx: RunContext[Any]
    ) -> ModelResponse | None:
        """Filter the text of a whole answer (a streamed one was filtered as it went), in
        `response.raw` too (see `_guarded_answer`)."""
        if self._key in ctx.call_state:
            return None  # applying the rules again could match their own replacements
        message = response.message
        content = message.content
        if isinstance(content, str):
            # an SDK's answer of several text blocks reads as one text: each block is
            # filtered on its own, as in a stream (a match across two would take of both),
            # and its text goes back into that block (as the answer's own JSON, `raw`)
            raw: Any = response.raw
            wire = _wire_of(raw)
            blocks = wire.texts(raw) if wire is not None else None
            if wire is None or blocks is None or len(blocks) < 2 or "".join(blocks) != content:
                text = self.apply(content)
                if text == content:
                    return None
                return _guarded_answer(response, message.replace(content=text))
            done = [self.apply(block) for block in blocks]
            if done == blocks:
                return None
            text = "".join(done)
            return response.replace(
                message=message.replace(content=text), raw=wire.with_texts(raw, done)
            )
        # parts are separate texts, as are the text blocks of a stream
        parts = tuple(
            part.replace(text=self.apply(part.text)) if isinstance(part, TextPart) else part
            for part in content
        )
        if parts == content:
            return None
        return _guarded_answer(response, message.replace(content=parts))
