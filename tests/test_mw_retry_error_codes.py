"""`Retry` reads an in-stream error's `code` as well as its `type`: OpenAI names a rate
limit inside a 200 stream as `"code": "rate_limit_exceeded"`, its `type` being "tokens" or
"requests"."""

from __future__ import annotations

import pytest
from test_mw_retry import Waits, sdk_streaming_model

import hookwrap as hw
from hookwrap.middleware._retry import Retry, is_transient

RATE_LIMITED = (
    b'data: {"error": {"message": "Rate limit reached for gpt-4o", "type": "tokens", '
    b'"param": null, "code": "rate_limit_exceeded"}}\n\n'
)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    return Waits(monkeypatch)


def test_an_openai_rate_limit_code_inside_a_200_stream_is_retried(waits: Waits) -> None:
    ask, status = sdk_streaming_model("openai", RATE_LIMITED)
    assert hw.model(ask, use=[Retry()])("hi") == "Hello!"
    assert len(status) == 2
    assert len(waits.seconds) == 1


def test_a_code_that_is_not_transient_is_not_retried(waits: Waits) -> None:
    openai = pytest.importorskip("openai")
    body = RATE_LIMITED.replace(b"rate_limit_exceeded", b"context_length_exceeded")
    ask, status = sdk_streaming_model("openai", body)
    with pytest.raises(openai.APIError):
        hw.model(ask, use=[Retry()])("hi")
    assert len(status) == 1
    assert waits.seconds == []


def test_is_transient_reads_the_code_of_an_sdk_error_body() -> None:
    from hookwrap.testing._fake import _httpx_module  # pyright: ignore[reportPrivateUsage]

    openai = pytest.importorskip("openai")
    httpx = _httpx_module(sdk_client=openai.DefaultHttpxClient)
    request = httpx.Request("POST", "http://x/v1/chat/completions")

    def error(code: object) -> BaseException:
        body = {"message": "m", "type": "requests", "param": None, "code": code}
        return openai.APIError("m", request, body=body)

    assert is_transient(error("rate_limit_exceeded"))
    assert not is_transient(error("invalid_api_key"))
    assert not is_transient(error(None))
    assert not is_transient(error(429))  # a code that is no name says nothing here
