"""SDK overhead: OpenAI, Anthropic and google-genai clients with and without hookwrap.

Every client talks to a canned HTTP transport that answers from bytes prepared once (a
stream's events one by one, as they arrive from a network), so the figures are the SDK's
own cost (building the request, httpx, parsing) against what hookwrap adds to it.

Run: `python -m bench.sdk` (`--quick` for a short run, `--repeat 3` to see how far runs
agree). `python -m bench` prints the same table at its end.

How it stays steady on a busy machine: each variant is timed in short blocks of calls,
the variants of one SDK call interleaved block by block, and each keeps its fastest block
(noise only ever adds time). Each block starts with the young garbage collected, so no
variant pays for another one's garbage, and runs with the garbage collector on, as
programs do: a variant that leaves reference cycles pays for the collections they cause.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import hookwrap as hw

STREAM_CHUNKS = 20
BLOCK = 10  # calls per timed block
ROUND = 100  # calls per round at most, when `python -m bench` asks for rounds of more
MESSAGES = [{"role": "user", "content": "hi"}]
WRAPPED = "hookwrap, 5 no-op hooks"


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {payload}\n\n".encode())
    return out


def _openai_answers() -> tuple[bytes, list[bytes]]:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hello there"},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    events: list[tuple[str | None, Any]] = []
    for i in range(STREAM_CHUNKS):
        choice = {"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}
        events.append((None, {**head, "choices": [choice]}))
    events.append((None, "[DONE]"))
    return json.dumps(completion).encode(), _sse(events)


def _anthropic_answers() -> tuple[bytes, list[bytes]]:
    usage = {"input_tokens": 3, "output_tokens": 2}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hello there"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for i in range(STREAM_CHUNKS - 4):
        delta = {"type": "text_delta", "text": f"w{i} "}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": STREAM_CHUNKS},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return json.dumps(message).encode(), _sse(events)


def _google_answers() -> tuple[bytes, list[bytes]]:
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}

    def answer(text: str, finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "index": 0,
        }
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "m"}

    events: list[tuple[str | None, Any]] = [
        (None, answer(f"w{i} ", "STOP" if i == STREAM_CHUNKS - 1 else None))
        for i in range(STREAM_CHUNKS)
    ]
    return json.dumps(answer("hello there", "STOP")).encode(), _sse(events)


def _transport(answers: tuple[bytes, list[bytes]], is_stream: Callable[[Any], bool]) -> Any:
    import httpx2

    body, events = answers

    class Events(httpx2.SyncByteStream):
        """Events arrive one by one, as from a network, not as one block."""

        def __iter__(self) -> Iterator[bytes]:
            return iter(events)

    def handle(request: Any) -> Any:
        if is_stream(request):
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, headers=headers, stream=Events())
        headers = {"content-type": "application/json"}
        return httpx2.Response(200, headers=headers, content=body)

    return httpx2.MockTransport(handle)


def _streams_in_body(request: Any) -> bool:
    return b'"stream":true' in request.content or b'"stream": true' in request.content


def _variants(
    sdk: str, call: Callable[[Any, bool], Any], plain: Any, wrapped: Any
) -> dict[str, tuple[Callable[[], Any], bool]]:
    out: dict[str, tuple[Callable[[], Any], bool]] = {}
    for streamed in (False, True):
        tag = "streamed" if streamed else "not streamed"

        def alone(streamed: bool = streamed) -> Any:
            return call(plain, streamed)

        def by_hand(streamed: bool = streamed) -> Any:  # a hand-written pass-through layer
            return alone(streamed)

        def hooked(streamed: bool = streamed) -> Any:
            return call(wrapped, streamed)

        out[f"{sdk} {tag}: SDK alone"] = (alone, streamed)
        out[f"{sdk} {tag}: hand-written wrapper"] = (by_hand, streamed)
        out[f"{sdk} {tag}: {WRAPPED}"] = (hooked, streamed)
    return out


def _openai() -> dict[str, tuple[Callable[[], Any], bool]]:
    import httpx2
    import openai

    transport = _transport(_openai_answers(), _streams_in_body)
    client = openai.OpenAI(
        api_key="k",
        base_url="http://bench.invalid/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )

    def call(client: Any, streamed: bool) -> Any:
        if streamed:
            return client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        return client.chat.completions.create(model="m", messages=MESSAGES)

    return _variants("openai", call, client, hw.wrap(client, use=_hooks()))


def _anthropic() -> dict[str, tuple[Callable[[], Any], bool]]:
    import anthropic
    import httpx2

    transport = _transport(_anthropic_answers(), _streams_in_body)
    client = anthropic.Anthropic(
        api_key="k",
        base_url="http://bench.invalid",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )

    def call(client: Any, streamed: bool) -> Any:
        if streamed:
            return client.messages.create(model="m", max_tokens=100, messages=MESSAGES, stream=True)
        return client.messages.create(model="m", max_tokens=100, messages=MESSAGES)

    return _variants("anthropic", call, client, hw.wrap(client, use=_hooks()))


def _google() -> dict[str, tuple[Callable[[], Any], bool]]:
    from google import genai
    from google.genai import types

    transport = _transport(_google_answers(), lambda r: "streamGenerateContent" in r.url.path)
    options = types.HttpOptions(
        base_url="http://bench.invalid/", client_args={"transport": transport}
    )
    client = genai.Client(api_key="k", http_options=options)

    def call(client: Any, streamed: bool) -> Any:
        if streamed:
            return client.models.generate_content_stream(model="m", contents="hi")
        return client.models.generate_content(model="m", contents="hi")

    return _variants("google-genai", call, client, hw.wrap(client, use=_hooks()))


def _hooks() -> list[Any]:
    from bench.__main__ import noop_hooks

    return noop_hooks(2, 2, 1)


def clients() -> dict[str, tuple[Callable[[], Any], bool]]:
    """name -> (one call, streamed?), for each SDK that is installed; names read
    "<sdk> <shape>: <variant>", the variants being "SDK alone", "hand-written wrapper"
    and the wrapped client."""
    out: dict[str, tuple[Callable[[], Any], bool]] = {}
    for make in (_openai, _anthropic, _google):
        try:
            out.update(make())
        except ImportError:  # pragma: no cover - every SDK is an optional extra
            continue
    if not out:
        raise ImportError("no SDK installed")
    return out


def timer(call: Callable[[], Any], streamed: bool, n: int) -> Callable[[], float]:
    """A round of `n` calls (at most `ROUND`), timed in blocks of `BLOCK`: the seconds per
    call of the fastest block (garbage collected before each block, outside the timing)."""
    n = min(n, ROUND)

    def block(k: int) -> float:
        gc.collect(1)  # the young garbage the previous block left, another variant's perhaps
        start = time.perf_counter()
        if streamed:
            for _ in range(k):
                for _ in call():
                    pass
        else:
            for _ in range(k):
                call()
        return (time.perf_counter() - start) / k

    warm: list[bool] = []

    def run() -> float:
        if not warm:  # the first calls fill the SDK's caches: not timed
            block(2)
            warm.append(True)
        best = float("inf")
        left = n
        while left > 0:
            k = min(BLOCK, left)
            best = min(best, block(k))
            left -= k
        return best

    run.block = block  # type: ignore[attr-defined]
    return run


def measure(variants: dict[str, tuple[Callable[[], Any], bool]], blocks: int) -> dict[str, float]:
    """Seconds per call of each variant: its fastest of `blocks` blocks, the variants of
    one SDK call taking turns block by block (the order rotating, so none always goes first).
    """
    timers = {name: timer(call, streamed, BLOCK) for name, (call, streamed) in variants.items()}
    groups: dict[str, list[str]] = {}
    for name in variants:
        groups.setdefault(name.split(":")[0], []).append(name)
    best = dict.fromkeys(variants, float("inf"))
    gc.collect()
    for names in groups.values():
        for name in names:  # warm up: first calls fill the SDK's caches
            timers[name].block(BLOCK)  # type: ignore[attr-defined]
        for i in range(blocks):
            turn = names[i % len(names) :] + names[: i % len(names)]
            for name in turn:
                best[name] = min(best[name], timers[name].block(BLOCK))  # type: ignore[attr-defined]
    return best


def report(best: dict[str, float]) -> None:
    print(f"\n{'SDK call (canned HTTP transport)':<52} {'us':>9} {'vs SDK':>8} {'us added':>9}")
    for name, seconds in best.items():
        base = best[name.split(":")[0] + ": SDK alone"]
        added = (seconds - base) * 1e6
        print(
            f"{name:<52} {seconds * 1e6:>9.1f} {100 * (seconds / base - 1):>+7.1f}% {added:>+9.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer blocks")
    parser.add_argument("--blocks", type=int, help=f"blocks of {BLOCK} calls per variant")
    parser.add_argument("--repeat", type=int, default=1, help="measure this many times")
    parser.add_argument("--only", help="only the SDK calls whose name contains this")
    opts = parser.parse_args()
    blocks = opts.blocks or (10 if opts.quick else 40)
    variants = clients()
    if opts.only:
        variants = {k: v for k, v in variants.items() if opts.only in k}
    print(f"fastest of {blocks} interleaved blocks of {BLOCK} calls, streams of {STREAM_CHUNKS}")
    for _ in range(opts.repeat):
        report(measure(variants, blocks))


if __name__ == "__main__":
    main()
