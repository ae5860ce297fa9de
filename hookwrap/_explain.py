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

    return isinstance(getattr(target, "_self_engine", None), ToolEngine)


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


def _rows(chains: list[Chain]) -> list[tuple[str, int, Hook, int]]:
    """Every hook of every layer, in the order a call runs them.

    A wrapper's whole target, inner layers included, runs where its `wrap_*` onion calls
    in: outer layers go first on the way in and last on the way out.
    """
    layers = list(enumerate(chains))
    outward = layers[::-1]
    plan: list[tuple[str, list[tuple[int, Chain]]]] = []
    for kinds, way in (
        (("on_start", "before_agent", "on_iteration"), layers),
        (("before_model", "wrap_model"), layers),
        (("on_chunk", "on_usage", "after_model"), outward),
        (("before_tool", "wrap_tool"), layers),
        (("after_tool",), outward),
        (("after_agent",), outward),
    ):
        for depth, chain in way:
            plan.extend((kind, [(depth, chain)]) for kind in kinds)
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
    chains = layers(target)
    if not chains:
        raise TypeError(f"hw.explain expects a target wrapped by hookwrap (got {target!r})")
    # a middleware may carry hooks for stages this target never has: those are not shown
    runs = _TOOL_STAGES if _is_tool(target) else _MODEL_STAGES
    rows = [row for row in _rows(chains) if row[0] in runs]
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

    inward = [row for row in rows if row[0] in _INWARD]
    outward = [row for row in rows if row[0] in _OUTWARD]
    tool = any("tool" in row[0] for row in (*inward, *outward))
    target = "tool" if tool else "model"
    for kind, _step, hook, depth in rows:
        if kind in _OPENING:
            add(kind, depth, hook)
    for kind, _step, hook, depth in inward:
        add(kind, depth, hook)
    if inward or outward:
        wrap = f"wrap_{target}"
        if inward and inward[-1][0] == wrap:  # in the innermost onion, or a box of its own
            steps.append((wrap, inward[-1][3], target, "()"))
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
        title = target if kind == "call" else kind if layers == 1 else f"{kind} (layer {depth})"
        out.append(f'    subgraph {f"{target}_call" if kind == "call" else ident}["{title}"]')
        for _kind, _depth, label, shape in group:
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


def _node(out: list[str], n: int, label: str, shape: str = "[]") -> str:
    text = label.replace('"', "'")
    out.append(f'        n{n}{shape[0]}"{text}"{shape[1]}')
    return f"n{n}"
