"""SDK overhead in CPU instructions, counted by valgrind's callgrind. Wall-clock figures of
`python -m bench.sdk` move by several per cent from run to run on a shared machine, more
than the overhead being measured; instruction counts do not depend on how busy the
machine is. They still differ between runs of the same code (the google-genai SDK's own
count has moved by up to 15% between runs), so compare figures from one run only, and
repeat a run before trusting a small difference. The children run with a fixed hash seed.

Run: `python -m bench.instructions` (needs `valgrind`; slow: over ten minutes per SDK, so
`--only google` picks one). Each variant of `bench.sdk` runs in its own process under
callgrind twice, with `--calls` calls and with none, and the difference divided by
`--calls` is its cost per call. The collector is off
while calls are counted: a collection costs in proportion to the whole heap and would land
in one count and not the other (that a hooked call leaves no garbage cycles is a test).
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


def instructions(name: str, calls: int) -> int:
    done = subprocess.run(
        [*VALGRIND, sys.executable, "-c", CHILD, name, str(calls)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{done.stderr}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100, help="calls counted per variant")
    parser.add_argument("--only", help="only the SDK calls whose name contains this")
    opts = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    from bench.sdk import WRAPPED, clients

    names = [n for n in clients() if "hand-written" not in n and (opts.only or "") in n]
    runs = [(name, calls) for name in names for calls in (0, opts.calls)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(runs, pool.map(lambda run: instructions(*run), runs), strict=True))
    per_call = {name: (counts[name, opts.calls] - counts[name, 0]) / opts.calls for name in names}
    print(f"{'SDK call (canned HTTP transport)':<52} {'instructions':>13} {'vs SDK':>8}")
    for name in names:
        base = per_call[name.split(":")[0] + ": SDK alone"]
        mark = f"{100 * (per_call[name] / base - 1):+7.1f}%" if WRAPPED in name else ""
        print(f"{name:<52} {per_call[name]:>13,.0f} {mark:>8}")


if __name__ == "__main__":
    main()
