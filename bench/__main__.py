"""Hot-path costs of hookwrap, in "closure layers" measured in the same run.

Run: `python -m bench` (add `--quick` for a short run). Every variant is timed round after
round, interleaved, and each keeps its best round, so a noisy machine moves all of them
together. One "layer" is the cost of one hand-written pass-through function. The "floor"
rows are a hand-written minimum engine (`bench/floor.py`): what any engine pays for the
same hooks before it does what hookwrap promises.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

import hookwrap as hw
from bench import floor
from hookwrap._types import new_chunk, new_message, new_request, new_response


def plain(prompt: str) -> str:
    return prompt


def _closure(fn: Callable[[str], str]) -> Callable[[str], str]:
    def layer(prompt: str) -> str:
        return fn(prompt)

    return layer


def closures(n: int) -> Callable[[str], str]:
    fn: Callable[[str], str] = plain
    for _ in range(n):
        fn = _closure(fn)
    return fn


def noop_hooks(before: int, after: int, wraps: int) -> list[Any]:
    hooks: list[Any] = []
    for _ in range(before):

        @hw.before_model
        def b(request: hw.ModelRequest) -> None:
            return None

        hooks.append(b)
    for _ in range(wraps):

        @hw.wrap_model
        def w(request: hw.ModelRequest, call_next: Callable[[Any], Any]) -> Any:
            return call_next(request)

        hooks.append(w)
    for _ in range(after):

        @hw.after_model
        def a(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
            return None

        hooks.append(a)
    return hooks


def views(prompt: str) -> Any:
    """What the views of a call of `plain` cost once a hook reads them: a frozen
    `ModelRequest` with one `Message`, a `ModelResponse` with one `Message` (hooks that do
    not look at them, as the no-op hooks here, leave them unread)."""
    request = new_request((new_message("user", prompt),), (), None, {}, False, None)
    new_response(new_message("assistant", prompt), None, None, None, prompt)
    return request


def chunk_view(prompt: str) -> Iterator[Any]:
    """What a hooked stream must build at least: one frozen `Chunk` view per chunk."""
    for _ in range(CHUNKS):
        yield new_chunk("text", prompt, prompt)


def chunk_hooks(n: int) -> list[Any]:
    hooks: list[Any] = []
    for _ in range(n):

        @hw.on_chunk
        def c(chunk: hw.Chunk) -> None:
            return None

        hooks.append(c)
    return hooks


CHUNKS = 200


def stream(prompt: str) -> Iterator[str]:
    for _ in range(CHUNKS):
        yield prompt


def _time_calls(fn: Callable[[str], Any], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn("hi")
    return (time.perf_counter() - start) / n


def _time_stream(fn: Callable[[str], Iterator[str]], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        for _ in fn("hi"):
            pass
    return (time.perf_counter() - start) / (n * CHUNKS)


def measure(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Each variant's best round; every round starts from a collected heap and runs with
    the garbage collector on, so a variant pays for the collections its own garbage causes."""
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(rounds):
        for name, run in variants.items():
            gc.collect()
            best[name] = min(best[name], run())
    return best


def core_variants() -> dict[str, Callable[[str], Any]]:
    """The plain-function calls `main` times, for `bench.instructions --core`."""
    return {
        "plain call": plain,
        "1 closure layer": closures(1),
        "floor, 5 hooks (2 before, 2 after, 1 wrap)": floor.model(plain, **floor.hooks(2, 2, 1)),
        "floor, 25 hooks (10 before, 10 after, 5 wrap)": floor.model(
            plain, **floor.hooks(10, 10, 5)
        ),
        "hookwrap, 1 before hook": hw.model(plain, use=noop_hooks(1, 0, 0)),
        "hookwrap, 5 hooks (2 before, 2 after, 1 wrap)": hw.model(plain, use=noop_hooks(2, 2, 1)),
        "hookwrap, 25 hooks (10 before, 10 after, 5 wrap)": hw.model(
            plain, use=noop_hooks(10, 10, 5)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    opts = parser.parse_args()
    rounds, n, ns = (5, 5_000, 20) if opts.quick else (25, 20_000, 100)

    calls: dict[str, Callable[[str], Any]] = {
        "plain call": plain,
        "the neutral views of one call, read, alone": views,
        "1 closure layer": closures(1),
        "5 closure layers": closures(5),
        "floor, 5 hooks (2 before, 2 after, 1 wrap)": floor.model(plain, **floor.hooks(2, 2, 1)),
        "floor, 25 hooks (10 before, 10 after, 5 wrap)": floor.model(
            plain, **floor.hooks(10, 10, 5)
        ),
        "hookwrap, 0 hooks": hw.model(plain),
        "hookwrap, 1 before hook": hw.model(plain, use=noop_hooks(1, 0, 0)),
        "hookwrap, 5 hooks (2 before, 2 after, 1 wrap)": hw.model(plain, use=noop_hooks(2, 2, 1)),
        "hookwrap, 25 hooks (10 before, 10 after, 5 wrap)": hw.model(
            plain, use=noop_hooks(10, 10, 5)
        ),
    }
    streams: dict[str, Callable[[str], Iterator[str]]] = {
        "raw generator, per chunk": stream,
        "a Chunk view per chunk, alone": chunk_view,
        "floor, 3 on_chunk hooks, per chunk": floor.stream(stream, floor.chunk_hooks(3)),
        "hookwrap, 0 on_chunk hooks, per chunk": hw.model(stream, use=noop_hooks(0, 1, 0)),
        "hookwrap, 3 on_chunk hooks, per chunk": hw.model(stream, use=chunk_hooks(3)),
    }
    variants: dict[str, Callable[[], float]] = {
        name: (lambda fn=fn: _time_calls(fn, n)) for name, fn in calls.items()
    }
    variants.update({name: (lambda fn=fn: _time_stream(fn, ns)) for name, fn in streams.items()})
    best = measure(variants, rounds)
    layer = best["1 closure layer"] - best["plain call"]
    print(f"one closure layer = {layer * 1e6:.4f} us (best of {rounds} rounds)\n")
    print(f"{'variant':<52} {'us':>9} {'x base':>8} {'layers over base':>17}")
    for name, seconds in best.items():
        base = best["raw generator, per chunk"] if "per chunk" in name else best["plain call"]
        over = (seconds - base) / layer if layer > 0 else float("nan")
        print(f"{name:<52} {seconds * 1e6:>9.3f} {seconds / base:>8.1f} {over:>17.1f}")
    per_hook = (
        best["hookwrap, 25 hooks (10 before, 10 after, 5 wrap)"]
        - best["hookwrap, 5 hooks (2 before, 2 after, 1 wrap)"]
    ) / 20
    floor_per_hook = (
        best["floor, 25 hooks (10 before, 10 after, 5 wrap)"]
        - best["floor, 5 hooks (2 before, 2 after, 1 wrap)"]
    ) / 20
    print(
        f"\neach further no-op hook (25 vs 5): {per_hook / layer:.2f} layers "
        f"(floor: {floor_per_hook / layer:.2f})"
    )
    sdk(rounds, 200 if opts.quick else 1_000)


def sdk(rounds: int, n: int) -> None:
    """Wrapped vs. unwrapped SDK calls, when the SDK is installed."""
    try:
        from bench.sdk import clients, timer
    except ImportError:  # pragma: no cover - the SDK is an optional extra
        print("\n(openai is not installed: no SDK figures)")
        return
    variants = {name: timer(fn, streamed, n) for name, (fn, streamed) in clients().items()}
    best = measure(variants, rounds)
    print(f"\n{'SDK call (canned HTTP transport)':<52} {'us':>9} {'vs SDK':>8}")
    for name, seconds in best.items():
        base = best[name.split(":")[0] + ": SDK alone"]
        print(f"{name:<52} {seconds * 1e6:>9.1f} {100 * (seconds / base - 1):>+7.1f}%")


if __name__ == "__main__":
    main()
