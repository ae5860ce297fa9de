"""`hw.patch`: hooks on every OpenAI and Anthropic client in the program, including clients
made by code you do not control, before or after the patch. Runs offline.

Run: python examples/patch_everything.py
"""

from __future__ import annotations

from typing import Any

import hookwrap as hw
from hookwrap.testing import FakeProvider

calls: list[str] = []


@hw.wrap_model
def audit(request: hw.ModelRequest) -> Any:
    """Generator form: a patched SDK serves sync and async clients with the same hook."""
    calls.append(f"{request.model}: {request.messages[-1].text}")
    response = yield request
    return response


@hw.after_model
def tag(request: hw.ModelRequest, response: hw.ModelResponse) -> hw.ModelResponse:
    return response.replace(message=hw.Message.assistant(f"{response.text} [audited]"))


def third_party_code(openai_client: Any, anthropic_client: Any) -> list[str]:
    """Code you cannot edit: it made its own clients and calls them directly."""
    question = [{"role": "user", "content": "ping"}]
    a = openai_client.chat.completions.create(model="gpt-4o-mini", messages=question)
    b = anthropic_client.messages.create(model="claude-haiku-4-5", max_tokens=16, messages=question)
    return [str(a.choices[0].message.content), b.content[0].text]


def main() -> None:
    provider = FakeProvider()
    openai_client = provider.openai()  # made before the patch
    anthropic_client = provider.anthropic()

    hw.patch("openai", use=[audit, tag])
    hw.patch("anthropic", use=[audit, tag])
    try:
        for answer in third_party_code(openai_client, anthropic_client):
            print("answer:", answer)
        print("audited calls:", calls)
    finally:
        hw.unpatch()

    answer = openai_client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "after unpatch"}]
    )
    print("after unpatch:", answer.choices[0].message.content)


if __name__ == "__main__":
    main()
