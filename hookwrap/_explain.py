"""`hw.explain`: the stages of a wrapped target and their hooks, in execution order."""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable
from typing import Any, Literal

from ._hooks import KINDS
from ._stack import MODEL_KINDS, RUN_KINDS, TERMINAL_KINDS, TOOL_KINDS, Chain, Hook

__all__ = ["explain"]

_ORDER = (
    "on_start",
    "before_agent",
    "on_iteration",
    "before_model",
    "wrap_model",
    "on_chunk",
    "on_usage",
    "after_model",
    "before_tool",
    "wrap_tool",
    "after_tool",
    "after_agent",
    "on_finish",
    "on_error",
    "on_abort",
)
assert set(_ORDER) == set(KINDS)


_MODEL_STAGES = frozenset((*MODEL_KINDS, *RUN_KINDS))
_TOOL_STAGES = frozenset((*TOOL_KINDS, *RUN_KINDS))

# stage, step, hook, layer, and where it runs ("layer 1", "tool add"; "" when plain)
Row = tuple[str, int, Hook, int, str]


def _is_tool(target: Any) -> bool:
    from ._engine import ToolEngine

    # a tool method read from an instance (`Bot().look`) keeps no engine of its own, only
    # its tool's runner: the engine's method
    runner = getattr(target, "_self_runner", None)
    engine = getattr(target, "_self_engine", getattr(runner, "__self__", None))
    return isinstance(engine, ToolEngine)


def _is_agent(target: Any) -> bool:
    agent = sys.modules.get("hookwrap._agent")
    return agent is not None and isinstance(target, agent.Agent)


def layers(target: Any) -> list[Chain]:
    """Chains from the outermost wrapper in."""
    kept = getattr(target, "_self_layers", None)  # an SDK client keeps its layers together
    if isinstance(kept, tuple) and kept:
        found: tuple[Any, ...] = kept  # pyright: ignore[reportUnknownVariableType]
        return [layer.chain for layer in reversed(found)]
    chains: list[Chain] = []
    seen = target
    if type(seen) is functools.partial:  # `hw.model` of an SDK method with keywords bound
        seen = seen.func
    while True:
        chain = getattr(seen, "_self_chain", None)
        if not isinstance(chain, Chain):
            break
        chains.append(chain)
        seen = getattr(seen, "__wrapped__", None)
        if seen is None:
            break
    return chains + _client_layers(seen)


def _client_layers(member: Any) -> list[Chain]:
    """The layers of the wrapped client an SDK resource or method (`member`) belongs to,
    outermost first: they run around its calls too."""
    if member is None:
        return []
    for name in ("hookwrap.adapters._apiclient", "hookwrap.adapters.google"):
        adapter = sys.modules.get(name)  # none imported: no client wrapped
        chains: list[Chain] = [] if adapter is None else adapter.chains_of(member)
        if chains:
            return chains
    return []


# the stages of one layer on the way in, up to where it calls its target, and on the way out
_OPENING_ORDER = ("before_agent", "on_start", "on_iteration")
_AROUND_TOOL = ((("before_tool", "wrap_tool"), ("after_tool",)),)
_AROUND_MODEL_THEN_TOOL = (
    (("before_model", "wrap_model"), ("on_chunk", "on_usage", "after_model")),
    *_AROUND_TOOL,
)


# `hw.patch` keys -> the SDK's name as `explain` shows it
_SDK_NAMES = {"google": "google-genai"}


def _patched(target: Any) -> list[Chain]:
    """The layer `hw.patch` put on the SDK `target` (a client, resource or method, wrapped
    or not) belongs to, if patched: the SDK's own request method runs it, so it is the
    innermost layer. Its hooks' origins name the patch."""
    patch = sys.modules.get("hookwrap._patch")  # not imported: nothing patched
    if patch is None:
        return []
    seen = target
    while isinstance(getattr(seen, "_self_chain", None), Chain):  # down to the SDK's object
        seen = getattr(seen, "__wrapped__", None)
    found: tuple[str, Chain] | None = patch.patch_of(seen)
    if found is None:
        return []
    sdk, chain = found
    where = f"via hw.patch({_SDK_NAMES.get(sdk, sdk)!r})"
    return [Chain(_relabelled(hook, f"{hook.origin} {where}") for hook in chain.hooks)]


_NO_SWITCHES = frozenset(("wrap_model", "wrap_tool", "on_finish", "on_error", "on_abort"))


def _relabelled(hook: Hook, origin: str) -> Hook:
    """`hook` with another origin, to be shown (never run)."""
    return Hook(
        hook.target,
        hook.spec,
        hook.priority,
        origin,
        hook.continue_on_error,
        hook.continue_on_response,
    )


def _rows(chains: list[Chain], tool: bool = False) -> list[Row]:
    """Every hook of every layer, in the order a call runs them.

    A wrapper's whole target, inner layers included (their `on_start` hooks too), runs
    where its `wrap_*` onion calls in: outer layers go first on the way in and last on the
    way out. An agent's hooks go around its model calls, then around its tool calls.
    """
    layers = list(enumerate(chains))
    plan: list[tuple[str, list[tuple[int, Chain]]]] = []
    opening: tuple[str, ...] = _OPENING_ORDER
    for inward, outward in _AROUND_TOOL if tool else _AROUND_MODEL_THEN_TOOL:
        for depth, chain in layers:
            plan.extend((kind, [(depth, chain)]) for kind in (*opening, *inward))
        opening = ()
        # a streamed answer's chunks pass every layer's `on_chunk` hooks, innermost first,
        # before any layer's end stages run (then those, a layer at a time)
        chunks = [kind for kind in outward if kind == "on_chunk"]
        plan.extend((kind, [(depth, chain)]) for kind in chunks for depth, chain in layers[::-1])
        for depth, chain in layers[::-1]:
            plan.extend((kind, [(depth, chain)]) for kind in outward if kind not in chunks)
    plan.extend(("after_agent", [(depth, chain)]) for depth, chain in layers[::-1])
    plan.extend((kind, layers) for kind in ("on_finish", "on_error", "on_abort"))
    rows: list[Row] = []
    steps: dict[str, int] = {}
    for kind, where in plan:
        found = [(hook, depth) for depth, chain in where for hook in chain[kind]]
        if len(where) > 1:  # one run: its terminal hooks merge, by priority, in join order
            found.sort(key=lambda item: -item[0].priority)
        for hook, depth in found:
            steps[kind] = steps.get(kind, 0) + 1
            rows.append(
                (kind, steps[kind], hook, depth, f"layer {depth}" if len(chains) > 1 else "")
            )
    return rows


def _joining(
    found: list[Chain], joined: list[Hook], origins: list[str], where: Callable[[int], str]
) -> list[Chain]:
    """The layers `found` (numbered from 1) as they run in an agent: a lifecycle hook the run
    has `joined` already left out, the others joining it (`origins` noting `where`)."""
    chains: list[Chain] = []
    for depth, layer in enumerate(found, 1):
        chains.append(
            Chain(h for h in layer.hooks if h.spec.kind not in RUN_KINDS or h not in joined)
        )
        for hook in chains[-1].hooks:
            if hook.spec.kind in RUN_KINDS:
                joined.append(hook)
                origins.append(where(depth))
    return chains


def _agent_rows(agent: Any) -> tuple[list[Row], list[tuple[str, list[Row]]], list[Row]]:
    """An agent's rows before its tool calls, those of its tool calls (`(tool, rows)`), and
    those after.

    A tool with hooks of its own has a section of its own: the rows of one call of it. The
    agent's `wrap_tool` onion calls in to the whole tool, so the tool's hooks (its
    `on_start` too, at its first call) run inside the agent's tool hooks. One more section
    holds the agent's tool hooks for the other tools. A hook the tool has already, or the
    run has already joined, runs once, where it is first (see `_Runner`, `RunState.join`).
    """
    from ._wrap import fresh_hooks

    chain: Chain = agent._chain
    around = [hook for hook in chain.hooks if hook.spec.kind in TOOL_KINDS]
    # the run's lifecycle hooks, in the order they join it, and where they come from
    joined = [hook for hook in chain.hooks if hook.spec.kind in RUN_KINDS]
    origins = [""] * len(joined)
    # The model's own layers (a patch's too) run inside the agent's model hooks as a tool's
    # run inside its tool hooks: a model hook both have runs where the model has it; the
    # model's lifecycle hooks join the run at its first call, before any tool's.
    model = _model_of(agent)
    model_layers = [
        Chain(h for h in layer.hooks if h.spec.kind in _MODEL_STAGES)
        for layer in layers(model)[1:] + _patched(model)
    ]
    held = [hook for layer in model_layers for hook in layer.hooks]

    def at(depth: int, many: bool = len(model_layers) > 1) -> str:
        if depth == 0:
            return ""
        return f"model, layer {depth - 1}" if many else "model"

    stages = [Chain(h for h in chain.hooks if h.spec.kind not in MODEL_KINDS or h not in held)]
    stages += _joining(model_layers, joined, origins, at)
    rows = [(kind, step, hook, depth, at(depth)) for kind, step, hook, depth, _ in _rows(stages)]
    calls: list[tuple[str, list[Row]]] = []
    for tool in agent.tools:
        name: str = tool.name
        # numbered as `hw.explain(tool)` numbers them, but for the layer without hooks that
        # `hw.Agent` puts around what it was given (a tool method read from an instance)
        found = layers(tool)
        if tool._self_by_agent:
            found = found[1:]

        def where(depth: int, name: str = name, many: bool = len(found) > 1) -> str:
            if depth == 0:
                return f"calling {name}"
            return f"tool {name}, layer {depth - 1}" if many else f"tool {name}"

        own = _joining(found, joined, origins, where)
        # the run's `on_start` steps (the model's too) count on
        started = sum(row[0] == "on_start" for row in rows)
        section = [
            (kind, step + started if kind == "on_start" else step, hook, depth, where(depth))
            for kind, step, hook, depth, _ in _rows([Chain(fresh_hooks(tool, around)), *own], True)
            if kind in (*TOOL_KINDS, "on_start")
        ]
        if any(row[3] for row in section):
            calls.append((name, section))
    if len(calls) < len(agent.tools) or not calls:
        other = "calling other tools" if calls else ""
        rest = [
            (kind, step, hook, depth, other)
            for kind, step, hook, depth, _ in _rows([Chain(around)], True)
            if kind in TOOL_KINDS
        ]
        if rest:
            calls.append(("other tools" if calls else "tool", rest))
    before = [row for row in rows if row[0] not in (*TOOL_KINDS, "after_agent", *TERMINAL_KINDS)]
    after = [row for row in rows if row[0] == "after_agent"]
    for kind in TERMINAL_KINDS:  # one run: they run by priority, in the order they joined it
        ends = [
            (hook, at) for hook, at in zip(joined, origins, strict=True) if hook.spec.kind == kind
        ]
        ends.sort(key=lambda end: -end[0].priority)
        after += [(kind, step, hook, 0, at) for step, (hook, at) in enumerate(ends, 1)]
    return before, calls, after


def _model_of(agent: Any) -> Any:
    """The agent's model as its `ModelCaller` wrapped it, the agent's model hooks its
    outermost layer."""
    return agent._caller.wrapped


def explain(target: Any, format: Literal["text", "mermaid"] = "text") -> str:
    """A table (or a Mermaid diagram) of every stage and its hooks in execution order.

    Columns: stage, step, hook, priority, origin, notes (the layer, when wrapped more than
    once; for an agent, which tool's calls a tool stage's hooks run in).
    """
    tool = _is_tool(target)
    if _is_agent(target):  # its hooks run around its run, model calls and tool calls
        before, calls, after = _agent_rows(target)
        rows = before + [row for _, section in calls for row in section] + after
    else:
        chains = layers(target)
        if not tool:
            chains += _patched(target)
        if not chains:
            raise TypeError(
                f"hw.explain expects a target wrapped by hookwrap or an hw.Agent (got {target!r})"
            )
        # a middleware may carry hooks for stages this target never has: those are not shown
        runs = _TOOL_STAGES if tool else _MODEL_STAGES
        rows = [row for row in _rows(chains, tool) if row[0] in runs]
        before, calls, after = ([], [("tool", rows)], []) if tool else (rows, [], [])
    if format == "mermaid":
        return _mermaid(before, calls, after)
    if format != "text":
        raise ValueError(f"explain(format=...) is 'text' or 'mermaid' (got {format!r})")
    table = [("stage", "step", "hook", "priority", "origin", "notes")]
    for kind, step, hook, _depth, where in rows:
        notes: list[str] = []
        if hook.spec.form == "generator":
            notes.append("generator")
        if hook.spec.is_async:
            notes.append("async")
        if hook.spec.fail_open:
            notes.append("fail-open")
        # a switch is shown where it changes something: not on an onion's layer, nor on a
        # terminal hook (they all run anyway), and `continue_on_response` on `before_model`
        if hook.continue_on_error and kind not in _NO_SWITCHES:
            notes.append("continue-on-error")
        if hook.continue_on_response and kind == "before_model":
            notes.append("continue-on-response")
        if where:
            notes.append(where)
        table.append(
            (kind, str(step), hook.spec.name, str(hook.priority), hook.origin, ", ".join(notes))
        )
    if len(table) == 1:
        return "no hooks: the target is called directly"
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


_OPENING = frozenset(("on_start", "before_agent", "on_iteration"))
_INWARD = frozenset(("before_model", "wrap_model", "before_tool", "wrap_tool"))
_OUTWARD = frozenset(("on_chunk", "on_usage", "after_model", "after_tool"))
_ENDS = {"on_finish": '-->|"finished"|', "on_error": '-.->|"error"|', "on_abort": '-.->|"aborted"|'}


# a node of the diagram: the id and title of its subgraph, its label and its shape
_Step = tuple[str, str, str, str]


def _mermaid(before: list[Row], calls: list[tuple[str, list[Row]]], after: list[Row]) -> str:
    """A flowchart: hooks linked in the order they run, in a subgraph per stage (and layer,
    when wrapped more than once). The rows `before` lead to the model, if they have model
    stages; then the path branches to the `calls` of tools, one branch each, which join
    again for the rows `after`. The terminal stages branch off the end, one of them per
    run."""
    out = ["flowchart TD", '    start(["call"])']
    edges: list[str] = []
    used: dict[str, int] = {}
    nodes = [0]

    def draw(steps: list[_Step], ends: list[str]) -> list[str]:
        """`steps` linked from each of `ends`; the new ends."""
        for (ident, title), group in itertools.groupby(steps, key=lambda step: step[:2]):
            used[ident] = used.get(ident, 0) + 1
            if used[ident] > 1:  # an outer layer's onion, going back out; another tool
                ident = f"{ident}_{used[ident]}"
            out.append(f'    subgraph {ident}["{title}"]')
            for _ident, _title, label, shape in group:
                nodes[0] += 1
                node = _node(out, nodes[0], label, shape)
                edges.extend(f"    {end} --> {node}" for end in ends)
                ends = [node]
            out.append("    end")
        return ends

    ends = draw(_onion(before, "model", "model"), ["start"])
    if calls:
        ends = [end for called, rows in calls for end in draw(_onion(rows, "tool", called), ends)]
    ends = draw([_step(row, _label(row[2])) for row in after if row[0] == "after_agent"], ends)
    for kind, arrow in _ENDS.items():  # one of them ends each run
        hooks = [row[2] for rows in (before, *(rows for _, rows in calls), after) for row in rows]
        hooks = [hook for hook in hooks if hook.spec.kind == kind]
        if not hooks:
            continue
        out.append(f'    subgraph {kind}["{kind}"]')
        chain = [_node(out, nodes[0] + i, _label(hook)) for i, hook in enumerate(hooks, 1)]
        nodes[0] += len(chain)
        out.append("    end")
        edges.extend(f"    {end} {arrow} {chain[0]}" for end in ends)
        edges += [f"    {a} --> {b}" for a, b in itertools.pairwise(chain)]
    return "\n".join(out + edges)


def _step(row: Row, label: str, shape: str = "[]") -> _Step:
    """A node in the subgraph of `row`'s stage (and layer, or tool)."""
    kind, _n, _hook, depth, where = row
    if not where:
        return (kind, kind, label, shape)
    return (f"{kind}_{depth}", f"{kind} ({where})", label, shape)


def _onion(rows: list[Row], target: str, called: str) -> list[_Step]:
    """The way through `rows` to the model or a tool (`target`, shown as `called`) and
    back: the onion drawn going in (first `wrap_*` hook outermost), each layer's whole
    target where its onion calls in, and back out, the innermost layer first."""
    around = frozenset(MODEL_KINDS if target == "model" else TOOL_KINDS)
    inward = [row for row in rows if row[0] in _INWARD and row[0] in around]
    outward = [row for row in rows if row[0] in _OUTWARD and row[0] in around]
    going_in = [row for row in rows if row[0] in _OPENING or row in inward]
    steps = [_step(row, _label(row[2])) for row in going_in]  # in the order they run
    if not (inward or outward):
        return steps
    wrap = f"wrap_{target}"
    if going_in and going_in[-1][0] == wrap:  # in the innermost onion, or a box of its own
        steps.append(_step(going_in[-1], called, "()"))
    else:
        steps.append((f"{target}_call", called, called, "()"))
    chunks = [row for row in outward if row[0] == "on_chunk"]  # in the order they run
    for depth in reversed(range(1 + max(row[3] for row in rows))):
        steps += [
            _step(row, f"{row[2].spec.name} returns")
            for row in reversed(inward)
            if row[0] == wrap and row[3] == depth
        ]
        steps += [_step(row, _label(row[2])) for row in chunks]
        chunks = []
        steps += [
            _step(row, _label(row[2]))
            for row in outward
            if row[3] == depth and row[0] != "on_chunk"
        ]
    return steps


def _label(hook: Hook) -> str:
    return f"{hook.spec.name} (priority {hook.priority}, {hook.origin})"


# Mermaid reads `#name;` in a label as an HTML entity and renders labels as HTML, and a
# backtick opens a Markdown string: these characters are written as entity codes, so that
# every name shows as written (`make.<locals>.hook`, `<lambda>`, a middleware's `name`)
_ESCAPES = str.maketrans(
    {
        "#": "#35;",
        '"': "#quot;",
        "&": "#amp;",
        "<": "#lt;",
        ">": "#gt;",
        "`": "#96;",
    }
)


def _node(out: list[str], n: int, label: str, shape: str = "[]") -> str:
    text = label.translate(_ESCAPES)
    out.append(f'        n{n}{shape[0]}"{text}"{shape[1]}')
    return f"n{n}"
