"""A fake LLM provider for tests and offline examples: it answers the OpenAI, Anthropic and
Gemini HTTP APIs from a script (or echoes), records what went over the wire, injects HTTP
errors, and plugs into the real SDKs as an httpx transport or a loopback server.

    from hookwrap.testing import FakeProvider

    provider = FakeProvider(["Hello!"])
    client = provider.openai()
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}])
    assert provider.requests[0].body["model"] == "gpt-4o"
"""

from ._fake import FakeProvider, Received, Reply

__all__ = [
    "FakeProvider",
    "Received",
    "Reply",
]
