"""Hook order (SPEC §1, §3): priority first, registration order for ties, after_* mirrored,
the first wrap hook outermost, before/after outside the onion."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import hookwrap as hw

Log = list[str]


# -- hooks that record themselves ---------------------------------------------------------------


def _configure(deco: Any, label: str, priority: int | None) -> Any:
    return deco(name=label) if priority is None else deco(name=label, priority=priority)


def before_model(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(request: hw.ModelRequest) -> None:
        log.append(label)

    return _configure(hw.before_model, label, priority)(hook)  # type: ignore[no-any-return]


def wrap_model(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
        log.append(f"{label}:in")
        response = call_next(request)
        log.append(f"{label}:out")
        return response

    return _configure(hw.wrap_model, label, priority)(hook)  # type: ignore[no-any-return]


def wrap_model_generator(log: Log, label: str, priority: int | None = None) -> Any:
    def hook(request: hw.ModelRequest) -> Iterator[Any]:
        log.append(f"{label}:in")
        response = yield request
        log.append(f"{label}:out")
        return response

    return _configure(hw.wrap_model, label, priority)(hook)


def after_model(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append(label)

    return _configure(hw.after_model, label, priority)(hook)  # type: ignore[no-any-return]


def before_tool(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(call: hw.ToolCall) -> None:
        log.append(label)

    return _configure(hw.before_tool, label, priority)(hook)  # type: ignore[no-any-return]


def wrap_tool(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(call: hw.ToolCall, call_next: Callable[[Any], Any]) -> Any:
        log.append(f"{label}:in")
        result = call_next(call)
        log.append(f"{label}:out")
        return result

    return _configure(hw.wrap_tool, label, priority)(hook)  # type: ignore[no-any-return]


def after_tool(log: Log, label: str, priority: int | None = None) -> Callable[..., Any]:
    def hook(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        log.append(label)

    return _configure(hw.after_tool, label, priority)(hook)  # type: ignore[no-any-return]


def recording_llm(log: Log) -> Callable[[str], str]:
    def llm(prompt: str) -> str:
        log.append("model")
        return f"answer to {prompt}"

    return llm


def recording_tool(log: Log) -> Callable[[int, int], int]:
    def add(a: int, b: int) -> int:
        log.append("tool")
        return a + b

    return add


def in_order(items: list[tuple[str, int]]) -> list[str]:
    """The documented "in order": higher priority first, ties in registration order."""
    return [label for label, _ in sorted(items, key=lambda item: -item[1])]


# -- model calls --------------------------------------------------------------------------------


def test_one_model_call_runs_before_onion_model_onion_after() -> None:
    """before_model hooks, then the wraps inwards, the model, the wraps outwards, then
    after_model hooks (mirrored): before/after sit outside the onion."""
    log: Log = []
    use = [
        before_model(log, "b1"),
        wrap_model(log, "w1"),
        after_model(log, "a1"),
        before_model(log, "b2"),
        wrap_model(log, "w2"),
        after_model(log, "a2"),
    ]
    chat = hw.model(recording_llm(log), use=use)
    assert chat("hi") == "answer to hi"
    assert log == ["b1", "b2", "w1:in", "w2:in", "model", "w2:out", "w1:out", "a2", "a1"]


def test_higher_priority_first_and_ties_keep_registration_order() -> None:
    """In order means by priority, highest first; equal priorities run as registered."""
    log: Log = []
    priorities = [("p0-first", 0), ("p10", 10), ("p0-second", 0), ("p5", 5), ("m1", -1)]
    use = [before_model(log, label, p) for label, p in priorities]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["p10", "p5", "p0-first", "p0-second", "m1", "model"]


def test_after_model_runs_in_exact_reverse_order() -> None:
    """after_model is the mirror of "in order": the highest priority sees the response last,
    and of equal priorities the last registered runs first."""
    log: Log = []
    priorities = [("a0-first", 0), ("a10", 10), ("a0-second", 0), ("a5", 5)]
    use = [after_model(log, label, p) for label, p in priorities]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["model", "a0-second", "a0-first", "a5", "a10"]


def test_first_wrap_model_is_outermost_by_priority_then_registration() -> None:
    """The first wrap hook in order is the outermost layer of the onion."""
    log: Log = []
    use = [wrap_model(log, "w0"), wrap_model(log, "w9", 9), wrap_model_generator(log, "g0")]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["w9:in", "w0:in", "g0:in", "model", "g0:out", "w0:out", "w9:out"]


def test_before_and_after_stay_outside_the_onion_whatever_the_priorities() -> None:
    """A low-priority before_model still runs before the highest-priority wrap hook, and a
    low-priority after_model after it."""
    log: Log = []
    use = [
        wrap_model(log, "w100", 100),
        before_model(log, "b-100", -100),
        after_model(log, "a-100", -100),
    ]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["b-100", "w100:in", "model", "w100:out", "a-100"]


def test_async_call_keeps_the_same_order() -> None:
    """Sync before/after hooks and async wrap hooks run in the same order in an async call."""
    log: Log = []

    def async_wrap(label: str) -> Any:
        @hw.wrap_model(name=label)
        async def hook(request: hw.ModelRequest, call_next: Any) -> Any:
            log.append(f"{label}:in")
            response = await call_next(request)
            log.append(f"{label}:out")
            return response

        return hook

    async def allm(prompt: str) -> str:
        log.append("model")
        return "async answer"

    use = [
        after_model(log, "a1"),
        async_wrap("w1"),
        before_model(log, "b1"),
        wrap_model_generator(log, "g2"),
        before_model(log, "b2", 1),
        after_model(log, "a2", 1),
    ]
    assert asyncio.run(hw.model(allm, use=use)("x")) == "async answer"
    assert log == ["b2", "b1", "w1:in", "g2:in", "model", "g2:out", "w1:out", "a1", "a2"]


def test_on_chunk_hooks_run_in_order_for_every_chunk() -> None:
    """on_chunk is piped in order, chunk by chunk, as the caller pulls."""
    log: Log = []

    def chunk_hook(label: str, priority: int) -> Any:
        @hw.on_chunk(name=label, priority=priority)
        def hook(chunk: hw.Chunk) -> None:
            log.append(f"{label}({chunk.text})")

        return hook

    def stream(prompt: str) -> Iterator[str]:
        log.append("model")
        yield "a"
        yield "b"

    chat = hw.model(stream, use=[chunk_hook("c0", 0), chunk_hook("c7", 7), chunk_hook("c0b", 0)])
    received = []
    for piece in chat("x"):
        log.append(f"caller({piece})")
        received.append(piece)
    assert received == ["a", "b"]
    assert log == [
        "model",
        "c7(a)",
        "c0(a)",
        "c0b(a)",
        "caller(a)",
        "c7(b)",
        "c0(b)",
        "c0b(b)",
        "caller(b)",
    ]


# -- the ordering law, for any hooks ------------------------------------------------------------

MODEL_FACTORIES = {"before": before_model, "wrap": wrap_model, "after": after_model}
TOOL_FACTORIES = {"before": before_tool, "wrap": wrap_tool, "after": after_tool}

hook_lists = st.lists(
    st.tuples(st.sampled_from(["before", "wrap", "after"]), st.integers(min_value=-2, max_value=2)),
    max_size=8,
)


def expected_sequence(hooks: list[tuple[str, int]], target: str) -> Log:
    """The documented sequence for these hooks, labelled `<kind><index>`."""
    labelled = [(f"{kind}{i}", kind, p) for i, (kind, p) in enumerate(hooks)]
    before = in_order([(label, p) for label, kind, p in labelled if kind == "before"])
    wraps = in_order([(label, p) for label, kind, p in labelled if kind == "wrap"])
    after = in_order([(label, p) for label, kind, p in labelled if kind == "after"])
    return [
        *before,
        *(f"{w}:in" for w in wraps),
        target,
        *(f"{w}:out" for w in reversed(wraps)),
        *reversed(after),
    ]


@settings(max_examples=150, deadline=None)
@given(hooks=hook_lists)
def test_any_model_hooks_run_in_the_documented_order(hooks: list[tuple[str, int]]) -> None:
    """Law: for any hooks with any priorities, a model call runs the documented sequence."""
    log: Log = []
    use = [MODEL_FACTORIES[kind](log, f"{kind}{i}", p) for i, (kind, p) in enumerate(hooks)]
    assert hw.model(recording_llm(log), use=use)("q") == "answer to q"
    assert log == expected_sequence(hooks, "model")


@settings(max_examples=100, deadline=None)
@given(hooks=hook_lists)
def test_any_tool_hooks_run_in_the_documented_order(hooks: list[tuple[str, int]]) -> None:
    """Law: the same order for before_tool / wrap_tool / after_tool around a tool."""
    log: Log = []
    use = [TOOL_FACTORIES[kind](log, f"{kind}{i}", p) for i, (kind, p) in enumerate(hooks)]
    assert hw.tool(recording_tool(log), use=use)(2, 3) == 5
    assert log == expected_sequence(hooks, "tool")


# -- flattening ----------------------------------------------------------------------------------


def test_stacks_nested_in_lists_and_stacks_keep_registration_order() -> None:
    """use= flattens lists and Stacks (at any depth) into one registration order."""
    log: Log = []
    h = {label: before_model(log, label) for label in "abcdefgh"}
    inner = hw.Stack(h["d"], [h["e"]])
    use = [h["a"], hw.Stack(h["b"], [h["c"], inner]), [h["f"], [hw.Stack(h["g"])]], h["h"]]
    hw.model(recording_llm(log), use=use)("x")
    assert log == [*"abcdefgh", "model"]


def test_priority_orders_across_stacks() -> None:
    """Priorities compare across every stack of one target: a stack is not a sorting unit."""
    log: Log = []
    use = [
        hw.Stack(before_model(log, "s1-p0"), before_model(log, "s1-p5", 5)),
        hw.Stack(before_model(log, "s2-p0"), hw.Stack(before_model(log, "s3-p9", 9))),
        before_model(log, "loose-p5", 5),
    ]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["s3-p9", "s1-p5", "loose-p5", "s1-p0", "s2-p0", "model"]


def test_nested_stacks_order_wraps_and_afters_too() -> None:
    """Flattened stacks give the onion and the mirrored after stage their order as well."""
    log: Log = []
    use = [
        hw.Stack(wrap_model(log, "w1"), after_model(log, "a1")),
        [hw.Stack(wrap_model(log, "w2")), after_model(log, "a2")],
    ]
    hw.model(recording_llm(log), use=use)("x")
    assert log == ["w1:in", "w2:in", "model", "w2:out", "w1:out", "a2", "a1"]


# -- tools -------------------------------------------------------------------------------------


def test_one_tool_call_runs_before_onion_tool_onion_after() -> None:
    """A wrapped tool runs before_tool hooks, the wrap_tool onion, the tool, then after_tool
    hooks mirrored."""
    log: Log = []
    use = [
        before_tool(log, "b1"),
        wrap_tool(log, "w1"),
        after_tool(log, "a1"),
        before_tool(log, "b2", 3),
        wrap_tool(log, "w2", 3),
        after_tool(log, "a2", 3),
        hw.Stack(before_tool(log, "b3"), wrap_tool(log, "w3"), after_tool(log, "a3")),
    ]
    add = hw.tool(recording_tool(log), use=use)
    assert add(2, 3) == 5
    assert log == [
        "b2",
        "b1",
        "b3",
        "w2:in",
        "w1:in",
        "w3:in",
        "tool",
        "w3:out",
        "w1:out",
        "w2:out",
        "a3",
        "a1",
        "a2",
    ]


def test_a_stack_adds_to_a_hook_or_list_on_either_side() -> None:
    """`a + b` is `hw.Stack(a, b)` whichever side the stack is on, in that order."""
    order: list[str] = []

    def noted(name: str) -> Any:
        @hw.before_model(name=name)
        def hook(request: hw.ModelRequest) -> None:
            order.append(name)

        return hook

    a, b, c = noted("a"), noted("b"), noted("c")
    for use in (a + hw.Stack(b) + c, [a] + hw.Stack(b, c), hw.Stack(a) + [b, c]):  # noqa: RUF005
        order.clear()
        assert isinstance(use, hw.Stack)
        hw.model(lambda prompt: prompt, use=use)("hi")
        assert order == ["a", "b", "c"]
