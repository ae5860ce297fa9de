"""Fallback across providers, streamed: an OpenAI caller keeps its own kind of stream, chunk
by chunk, while Claude answers.

Run: `python examples/fallback_stream.py` (offline: both providers are hookwrap's fake one).
"""

from __future__ import annotations

import logging
import sys

from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

logging.basicConfig(format="[log] %(message)s", stream=sys.stdout)  # Fallback logs a warning

openai_side = FakeProvider(["never sent"])
openai_side.fail(503)  # the primary model is down
anthropic_side = FakeProvider(["Paris is the capital of France."], chunk_size=8)
claude = anthropic_side.anthropic(max_retries=0)


@hw.after_model
def who(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
    print(f"[after_model] answered by {ctx.call_state['fallback']}: {response.text!r}")


client = hw.wrap(
    openai_side.openai(max_retries=0),
    use=[who, Fallback(models=[(claude, "claude-sonnet-4-5")])],
)

question: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "What is the capital of France?"}
]
with client.chat.completions.stream(model="gpt-4o", messages=question) as stream:
    pieces = [event.delta for event in stream if event.type == "content.delta"]
    final = stream.get_final_completion()

print("pieces:", pieces)
print("a ChatCompletion:", isinstance(final, ChatCompletion), "-", final.choices[0].message.content)
sent = anthropic_side.requests[0].body
print("sent to Claude:", sent["model"], "streamed" if sent.get("stream") else "whole")
