"""`hw.explain`: the stages of a wrapped target and their hooks, in execution order."""

from __future__ import annotations

import itertools
import sys
from typing import Any, Literal

from ._hooks import KINDS
from ._stack import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Chain, Hook

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


def _is_tool(target: Any) -> bool:
    from ._engine import ToolEngine

    # a tool method read from an instance (`Bot().look`) keeps no engine of its own, only
    # its tool's runner: the engine's method
    runner = getattr(target, "_self_runner", None)
    engine = getattr(target, "_self_engine", getattr(runner, "__self__", None))
    return isinstance(engine, ToolEngine)


def _agent_chain(target: Any) -> Chain | None:
    agent = sys.modules.get("hookwrap._agent")
    if agent is None or not isinstance(target, agent.Agent):
        return None
    chain: Chain = target._chain  # pyright: ignore[reportPrivateUsage]
    return chain


def layers(target: Any) -> list[Chain]:
    """Chains from the outermost wrapper in."""
    kept = getattr(target, "_self_layers", None)  # an SDK client keeps its layers together
    if isinstance(kept, tuple) and kept:
        found: tuple[Any, ...] = kept  # pyright: ignore[reportUnknownVariableType]
        return [layer.chain for layer in reversed(found)]
    chains: list[Chain] = []
    seen = target
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


def _rows(chains: list[Chain], tool: bool = False) -> list[tuple[str, int, Hook, int]]:
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
        for depth, chain in layers[::-1]:
            plan.extend((kind, [(depth, chain)]) for kind in outward)
    plan.extend(("after_agent", [(depth, chain)]) for depth, chain in layers[::-1])
    plan.extend((kind, layers) for kind in ("on_finish", "on_error", "on_abort"))
    rows: list[tuple[str, int, Hook, int]] = []
    steps: dict[str, int] = {}
    for kind, where in plan:
        found = [(hook, depth) for depth, chain in where for hook in chain[kind]]
        if len(where) > 1:  # one run: its terminal hooks merge, by priority, in join order
            found.sort(key=lambda item: -item[0].priority)
        for hook, depth in found:
            steps[kind] = steps.get(kind, 0) + 1
            rows.append((kind, steps[kind], hook, depth))
    return rows


def explain(target: Any, format: Literal["text", "mermaid"] = "text") -> str:
    """A table (or a Mermaid diagram) of every stage and its hooks in execution order.

    Columns: stage, step, hook, priority, origin (and layer, when wrapped more than once).
    """
    tool = _is_tool(target)
    agent = _agent_chain(target)
    if agent is not None:  # its hooks run around its run, model calls and tool calls
        chains, runs = [agent], frozenset(KINDS)
    else:
        chains = layers(target)
        if not tool:
            chains += _patched(target)
        # a middleware may carry hooks for stages this target never has: those are not shown
        runs = _TOOL_STAGES if tool else _MODEL_STAGES
    if not chains:
        raise TypeError(
            f"hw.explain expects a target wrapped by hookwrap or an hw.Agent (got {target!r})"
        )
    rows = [row for row in _rows(chains, tool) if row[0] in runs]
    if format == "mermaid":
        return _mermaid(rows, len(chains))
    if format != "text":
        raise ValueError(f"explain(format=...) is 'text' or 'mermaid' (got {format!r})")
    table = [("stage", "step", "hook", "priority", "origin", "notes")]
    for kind, step, hook, depth in rows:
        notes: list[str] = []
        if hook.spec.form == "generator":
            notes.append("generator")
        if hook.spec.is_async:
            notes.append("async")
        if hook.spec.fail_open:
            notes.append("fail-open")
        if hook.continue_on_error:
            notes.append("continue-on-error")
        if hook.continue_on_response:
            notes.append("continue-on-response")
        if len(chains) > 1:
            notes.append(f"layer {depth}")
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
_AROUND = {"model": frozenset(MODEL_KINDS), "tool": frozenset(TOOL_KINDS)}
_ENDS = {"on_finish": '-->|"finished"|', "on_error": '-.->|"error"|', "on_abort": '-.->|"aborted"|'}


def _mermaid(rows: list[tuple[str, int, Hook, int]], layers: int) -> str:
    """A flowchart: hooks linked in the order they run, in a subgraph per stage (and layer,
    when wrapped more than once). The onion is drawn going in (first `wrap_*` hook
    outermost), through the model or tool, and back out, each layer's whole target where
    its onion calls in; the terminal stages branch off the end, one of them per run.
    """
    # (stage, layer, label, shape) in the order a call runs them
    steps: list[tuple[str, int, str, str]] = []

    def add(kind: str, depth: int, hook: Hook) -> None:
        steps.append((kind, depth, _label(hook), "[]"))

    targets = [t for t in ("model", "tool") if any(row[0] in _AROUND[t] for row in rows)]
    # an agent's hooks go around its model calls, then its tool calls, a box for each
    for target in targets or ["model"]:
        inward = [row for row in rows if row[0] in _INWARD and row[0] in _AROUND[target]]
        outward = [row for row in rows if row[0] in _OUTWARD and row[0] in _AROUND[target]]
        going_in = [row for row in rows if row[0] in _OPENING or row in inward]
        if target == "tool" and len(targets) > 1:
            going_in = inward  # the opening stages were drawn before the model's
        for kind, _step, hook, depth in going_in:  # in the order they run, layer by layer
            add(kind, depth, hook)
        if not (inward or outward):
            continue
        wrap = f"wrap_{target}"
        if going_in and going_in[-1][0] == wrap:  # in the innermost onion, or a box of its own
            steps.append((wrap, going_in[-1][3], target, "()"))
        else:
            steps.append(("call", 0, target, "()"))
        for depth in reversed(range(layers)):  # back out, the innermost layer first
            for kind, _step, hook, at in reversed(inward):
                if kind == wrap and at == depth:
                    steps.append((kind, depth, f"{hook.spec.name} returns", "[]"))
            for kind, _step, hook, at in outward:
                if at == depth:
                    add(kind, depth, hook)
    for kind, _step, hook, depth in rows:
        if kind == "after_agent":
            add(kind, depth, hook)

    out = ["flowchart TD", '    start(["call"])']
    names = ["start"]
    used: dict[str, int] = {}
    for (kind, depth), group in itertools.groupby(steps, key=lambda step: step[:2]):
        ident = kind if layers == 1 else f"{kind}_{depth}"
        used[ident] = used.get(ident, 0) + 1
        if used[ident] > 1:  # an outer layer's onion, going back out
            ident = f"{ident}_{used[ident]}"
        steps_of = list(group)
        called = steps_of[0][2]  # the model or the tool, in a box of its own
        title = called if kind == "call" else kind if layers == 1 else f"{kind} (layer {depth})"
        out.append(f'    subgraph {f"{called}_call" if kind == "call" else ident}["{title}"]')
        for _kind, _depth, label, shape in steps_of:
            names.append(_node(out, len(names), label, shape))
        out.append("    end")
    edges = [f"    {a} --> {b}" for a, b in itertools.pairwise(names)]
    end = names[-1]
    for kind, arrow in _ENDS.items():  # one of them ends each run
        hooks = [row[2] for row in rows if row[0] == kind]
        if not hooks:
            continue
        out.append(f'    subgraph {kind}["{kind}"]')
        chain = [_node(out, len(names) + i, _label(hook)) for i, hook in enumerate(hooks)]
        names += chain
        out.append("    end")
        edges.append(f"    {end} {arrow} {chain[0]}")
        edges += [f"    {a} --> {b}" for a, b in itertools.pairwise(chain)]
    return "\n".join(out + edges)


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
