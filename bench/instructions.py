"""SDK overhead in CPU instructions, counted by valgrind's callgrind. Wall-clock figures of
`python -m bench.sdk` move by several per cent from run to run on a shared machine, more
than the overhead being measured; instruction counts do not depend on how busy the
machine is. They still differ between runs of the same code (the google-genai SDK's own
count has moved by up to 15% between runs), so compare figures from one run only, and
repeat a run before trusting a small difference. The children run with a fixed hash seed.

Run: `python -m bench.instructions` (needs `valgrind`; slow: over ten minutes per SDK,
so `--only google` picks one). `--core` counts the plain-function calls of `python -m
bench` instead (about a minute): the core's cost against the floor, without an SDK's
noise. `--cache` runs cachegrind instead, which simulates the CPU's caches: besides
instructions it counts the first-level instruction and data cache misses per call, which
is where a hooked SDK call's wall-clock cost goes beyond its instructions (hookwrap's
code and data are cold again after the SDK's own work of each call).

Each variant of `bench.sdk` runs in its own process under valgrind twice, with `--calls`
calls and with none, and the difference divided by `--calls` is its cost per call. The
collector is off while calls are counted: a collection costs in proportion to the whole
heap and would land in one count and not the other (that a hooked call leaves no garbage
cycles is a test).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
CACHEGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null")
# what cachegrind prints: its name here, and the pattern of the count in its summary
CACHE_COUNTS = {
    "instructions": r"I\s+refs:\s+([\d,]+)",
    "I1 misses": r"I1\s+misses:\s+([\d,]+)",
    "D1 misses": r"D1\s+misses:\s+([\d,]+)",
}
CHILD = """
import gc, sys
from bench.sdk import clients
call, streamed = clients()[sys.argv[1]]
def once():
    made = call()
    if streamed:
        for _ in made:
            pass
for _ in range(20):  # fill the SDK's caches
    once()
gc.collect()
gc.disable()
for _ in range(int(sys.argv[2])):
    once()
"""
# `--core`: the calls of `python -m bench`, on a plain function (no SDK imported)
CORE_CHILD = """
import gc, sys
from bench.__main__ import core_variants
call = core_variants()[sys.argv[1]]
for _ in range(50):
    call("hi")
gc.collect()
gc.disable()
for _ in range(int(sys.argv[2])):
    call("hi")
"""


def _valgrind(tool: tuple[str, ...], name: str, calls: int, child: str = CHILD) -> str:
    done = subprocess.run(
        [*tool, sys.executable, "-c", child, name, str(calls)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return done.stderr


def instructions(name: str, calls: int, child: str = CHILD) -> int:
    report = _valgrind(VALGRIND, name, calls, child)
    found = re.search(r"Collected : (\d+)", report)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{report}")
    return int(found.group(1))


def cache_counts(name: str, calls: int) -> dict[str, int]:
    """Instructions and first-level cache misses, as cachegrind simulates them."""
    report = _valgrind(CACHEGRIND, name, calls)
    counts: dict[str, int] = {}
    for what, pattern in CACHE_COUNTS.items():
        found = re.search(pattern, report)
        if found is None:
            raise RuntimeError(f"no {what} from cachegrind:\n{report}")
        counts[what] = int(found.group(1).replace(",", ""))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100, help="calls counted per variant")
    parser.add_argument("--only", help="only the SDK calls whose name contains this")
    parser.add_argument("--cache", action="store_true", help="cache misses too (cachegrind)")
    parser.add_argument("--core", action="store_true", help="the plain-function calls instead")
    opts = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    if opts.core:
        core(opts.calls * 20)
        return
    from bench.sdk import WRAPPED, clients

    names = [n for n in clients() if "hand-written" not in n and (opts.only or "") in n]
    runs = [(name, calls) for name in names for calls in (0, opts.calls)]

    def count(run: tuple[str, int]) -> dict[str, int]:
        if opts.cache:
            return cache_counts(*run)
        return {"instructions": instructions(*run)}

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(runs, pool.map(count, runs), strict=True))
    kinds = list(counts[runs[0]])
    print(f"{'SDK call (canned HTTP transport), per call':<52}", end="")
    print("".join(f" {kind:>13} {'vs SDK':>7}" for kind in kinds))
    for name in names:
        base = name.split(":")[0] + ": SDK alone"
        print(f"{name:<52}", end="")
        for kind in kinds:
            mine = (counts[name, opts.calls][kind] - counts[name, 0][kind]) / opts.calls
            sdk = (counts[base, opts.calls][kind] - counts[base, 0][kind]) / opts.calls
            mark = f"{100 * (mine / sdk - 1):+6.1f}%" if WRAPPED in name else ""
            print(f" {mine:>13,.0f} {mark:>7}", end="")
        print()


def core(calls: int) -> None:
    """The calls of `python -m bench` on a plain function, in instructions per call, and
    in closure layers (the instructions one hand-written pass-through function adds)."""
    from bench.__main__ import core_variants

    names = list(core_variants())
    runs = [(name, n) for name in names for n in (0, calls)]

    def counted(run: tuple[str, int]) -> int:
        return instructions(run[0], run[1], CORE_CHILD)

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(runs, pool.map(counted, runs), strict=True))
    per = {name: (counts[name, calls] - counts[name, 0]) / calls for name in names}
    plain = per["plain call"]
    layer = per["1 closure layer"] - plain
    print(f"one closure layer = {layer:,.0f} instructions\n")
    print(f"{'variant (plain function)':<52} {'instructions':>13} {'layers over plain':>18}")
    for name, count in per.items():
        print(f"{name:<52} {count:>13,.0f} {(count - plain) / layer:>18.1f}")


if __name__ == "__main__":
    main()
