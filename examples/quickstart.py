"""Quickstart: four hooks around an existing model function and a tool, offline.

Run: python examples/quickstart.py
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import hookwrap as hw

# -- the code you already have ---------------------------------------------------------------


def local_model(messages: list[dict[str, str]]) -> Iterator[str]:
    """A stand-in for an LLM: streams a reply word by word (no network, no key)."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    question = messages[-1]["content"]
    reply = f"({system}) You asked: {question}. The deploy key is sk-live-4f9a2b7c, keep it safe."
    for word in reply.split(" "):
        yield word + " "


def get_weather(city: str, unit: str = "c") -> str:
    """Current weather for a city."""
    return f"18°{unit.upper()} and clear in {city}"


# -- hooks: plain functions, testable on their own ---------------------------------------------


@hw.before_model
def add_system_prompt(request: hw.ModelRequest) -> hw.ModelRequest:
    system = hw.Message.system("Answer in one sentence.")
    return request.replace(messages=(system, *request.messages))


SECRET = re.compile(r"sk-live-[0-9a-f]+")


@hw.on_chunk
def redact_secrets(chunk: hw.Chunk) -> hw.Chunk:
    return chunk.replace(text=SECRET.sub("[redacted]", chunk.text))


@hw.wrap_model
def timed(request: hw.ModelRequest) -> Any:
    start = time.perf_counter()
    response = yield request  # the model runs here, whatever the call shape
    print(f"  [timed] inner call returned in {(time.perf_counter() - start) * 1000:.2f} ms")
    return response


@hw.after_model
def log_answer(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    print(f"  [after_model] {len(response.text)} characters delivered")


@hw.before_tool
def only_known_cities(call: hw.ToolCall) -> hw.Abort | None:
    if call.arguments.get("city") not in {"Paris", "Lisbon"}:
        return hw.Abort(f"city {call.arguments.get('city')!r} is not allowed")
    return None


# -- wrap once, call as before -----------------------------------------------------------------

chat = hw.model(local_model, use=[add_system_prompt, redact_secrets, timed, log_answer])
weather = hw.tool(get_weather, use=[only_known_cities])


def main() -> None:
    print("Streaming a reply through the hooks:")
    words = chat([{"role": "user", "content": "what is the deploy key"}])
    print("  " + "".join(words).strip())

    print("\nCalling a guarded tool:")
    print("  " + weather("Paris"))
    try:
        weather("Atlantis")
    except hw.Aborted as exc:
        print(f"  aborted: {exc.reason}")

    print("\nThe onion of `chat`:")
    print(hw.explain(chat))


if __name__ == "__main__":
    main()
