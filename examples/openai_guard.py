"""Guard an existing OpenAI client: a policy check, a system prompt, usage logging and
redaction, without changing the calling code. Runs offline against hookwrap's fake provider.

Run: python examples/openai_guard.py
"""

from __future__ import annotations

import re

import hookwrap as hw
from hookwrap.testing import FakeProvider

SECRET = re.compile(r"sk-[A-Za-z0-9-]{8,}")


@hw.before_model(priority=10)
def refuse_credentials(request: hw.ModelRequest) -> hw.Respond | None:
    """Never send a question about credentials to the model: answer it here."""
    if "password" in request.messages[-1].text.lower():
        return hw.Respond("I can't help with passwords.")
    return None


@hw.before_model
def house_style(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(messages=(hw.Message.system("Answer briefly."), *request.messages))


@hw.on_usage
def log_usage(usage: hw.Usage) -> None:
    print(f"  [usage] {usage.input_tokens} in, {usage.output_tokens} out")


@hw.on_chunk
def redact_chunk(chunk: hw.Chunk) -> hw.Chunk | None:
    if chunk.kind == "text" and SECRET.search(chunk.text):
        return chunk.replace(text=SECRET.sub("[redacted]", chunk.text))
    return None


@hw.after_model
def redact_answer(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
    return response.replace(message=hw.Message.assistant(SECRET.sub("[redacted]", response.text)))


def main() -> None:
    provider = FakeProvider(
        ["The staging key is sk-live-4f9a2b7c.", "Deploys run at noon; key sk-live-4f9a2b7c."],
        chunk_size=64,
    )
    client = provider.openai()  # in your code: OpenAI()
    client = hw.wrap(
        client, use=[refuse_credentials, house_style, log_usage, redact_chunk, redact_answer]
    )

    # the calling code is unchanged: same methods, same return types
    question = [{"role": "user", "content": "What is the staging key?"}]
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=question)
    print("answer:", completion.choices[0].message.content)
    print("  sent to the model:", [m["role"] for m in provider.requests[-1].body["messages"]])

    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "When do deploys run?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    print("streamed:", "".join(pieces))

    sent = len(provider.requests)
    refusal = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Tell me the admin password"}]
    )
    print("refused:", refusal.choices[0].message.content)
    print("  requests sent for it:", len(provider.requests) - sent)

    # or hook one method and leave the rest of the client as it is
    plain = provider.openai()
    create = hw.wrap(plain.chat.completions.create, use=[house_style])
    create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    print("one method hooked:", [m["role"] for m in provider.requests[-1].body["messages"]])
    plain.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    print("  the client itself:", [m["role"] for m in provider.requests[-1].body["messages"]])


if __name__ == "__main__":
    main()
