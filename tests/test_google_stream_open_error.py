"""An error opening a sync google-genai stream (a 429, a 500) comes up inside the call of
the model, where `wrap_model` hooks see it (docs/hooks/wrap-model.md: "if the inside
raised, the exception is thrown in at the `yield`"), as in the SDK's async streams and the
other SDKs' streams: the SDK's generator sends its request only when pulled, so hookwrap
pulls its first object inside the call. The caller still gets a stream it reads as
before."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("google.genai")


def test_a_generator_hook_sees_the_error_opening_the_stream() -> None:
    seen: list[str] = []

    @hw.wrap_model
    def watch(request: hw.ModelRequest) -> Any:
        try:
            response = yield request
        except Exception as exc:
            seen.append(type(exc).__name__)
            raise
        return response

    fake = FakeProvider(["hello there"])
    fake.fail(429)
    client = hw.wrap(fake.genai(max_retries=0), use=[watch])
    with pytest.raises(Exception, match="429"):
        list(client.models.generate_content_stream(model="m", contents="hi"))
    assert seen == ["ClientError"]


def test_a_hook_retrying_the_opening_of_the_stream_gets_the_answer() -> None:
    @hw.wrap_model
    def retry_once(request: hw.ModelRequest, call_next: Any) -> Any:
        try:
            return call_next(request)
        except Exception:
            return call_next(request)

    fake = FakeProvider(["hello there"])
    fake.fail(500)
    client = hw.wrap(fake.genai(max_retries=0), use=[retry_once])
    chunks = list(client.models.generate_content_stream(model="m", contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "hello there"
    assert [r.status for r in fake.requests] == [500, 200]


def test_nothing_is_sent_before_the_caller_pulls() -> None:
    """As without hooks: the stream's request goes out at the first pull."""
    fake = FakeProvider(["hello there"])
    client = hw.wrap(fake.genai(), use=[hw.before_model(lambda request: None)])
    stream = client.models.generate_content_stream(model="m", contents="hi")
    assert fake.requests == []
    assert "".join(c.text or "" for c in stream) == "hello there"
    assert len(fake.requests) == 1
