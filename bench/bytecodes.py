"""SDK overhead in Python bytecodes executed: a count that does not move between runs.

Wall-clock figures (`python -m bench.sdk`) move by several per cent from run to run on a
shared machine, and instruction counts (`python -m bench.instructions`) take many minutes.
This counts, with `sys.settrace`, the bytecodes one call executes, SDK alone and wrapped,
in a few seconds, and the same figures every time for the same code and SDK releases. It
leaves out what runs in C (JSON parsing, allocation, hashing), so it is a proxy: it shows
where hookwrap's own Python work goes and whether a change made it smaller, not the
wall-clock ratio.

Run: `python -m bench.bytecodes` (`--top 20` lists the functions hookwrap's calls spend
most bytecodes in).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

Where = tuple[str, int, str]


def _short(filename: str) -> str:
    for marker in ("site-packages/", "hookwrap/", "bench/"):
        _, found, tail = filename.rpartition(marker)
        if found:
            return tail if marker == "site-packages/" else marker + tail
    return filename


def count(call: Callable[[], Any], streamed: bool) -> Counter[Where]:
    """Bytecodes per function of one call (after a few calls that fill the SDK's caches)."""

    def once() -> None:
        made = call()
        if streamed:
            for _ in made:
                pass

    for _ in range(5):
        once()
    counts: Counter[Where] = Counter()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            code = frame.f_code
            counts[code.co_filename, code.co_firstlineno, code.co_name] += 1
        return local

    def start(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    sys.settrace(start)
    try:
        once()
    finally:
        sys.settrace(None)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="only the SDK calls whose name contains this")
    parser.add_argument("--top", type=int, default=0, help="list the costliest functions")
    opts = parser.parse_args()
    from bench.sdk import WRAPPED, clients

    variants = {n: v for n, v in clients().items() if (opts.only or "") in n}
    print(f"{'SDK call (canned HTTP transport)':<52} {'bytecodes':>10} {'vs SDK':>8} {'added':>7}")
    alone: dict[str, Counter[Where]] = {}
    for name, (call, streamed) in variants.items():
        if "hand-written" in name:
            continue
        counts = count(call, streamed)
        group = name.split(":")[0]
        total = sum(counts.values())
        if name.endswith("SDK alone"):
            alone[group] = counts
            print(f"{name:<52} {total:>10,}")
            continue
        base = sum(alone[group].values())
        print(f"{name:<52} {total:>10,} {100 * (total / base - 1):>+7.1f}% {total - base:>+7,}")
        if opts.top and WRAPPED in name:
            added = Counter(counts)
            added.subtract(alone[group])
            for (file, line, fn), n in added.most_common(opts.top):
                print(f"{'':>8}{n:>+7,}  {_short(file)}:{line} {fn}")


if __name__ == "__main__":
    main()
