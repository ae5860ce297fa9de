"""A sync `Timeout` limit longer than one thread wait (`threading.TIMEOUT_MAX`) is waited
out in turns up to the limit itself, not cut at the first turn; a RedisStore option in
seconds past `threading.TIMEOUT_MAX`, which no wait takes, is refused at construction."""

from __future__ import annotations

import threading

import pytest

import hookwrap as hw
from hookwrap.middleware import Timeout


def test_a_call_longer_than_one_wait_turn_still_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    # as if a thread waited at most 10 ms at a time: the call takes at least 100 ms, well
    # under its 60 s limit
    monkeypatch.setattr(threading, "TIMEOUT_MAX", 0.01)

    @hw.tool(use=[Timeout(tool=60)])
    def slow() -> str:
        """Take a while."""
        threading.Event().wait(0.1)
        return "done"

    assert slow() == "done"


def test_the_limit_itself_still_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "TIMEOUT_MAX", 0.01)
    gate = threading.Event()

    @hw.tool(use=[Timeout(tool=0.05)])
    def stuck() -> str:
        """Wait for the gate."""
        gate.wait(30)
        return "late"

    try:
        with pytest.raises(TimeoutError):
            stuck()
    finally:
        gate.set()


@pytest.mark.parametrize(
    "query",
    ["socket_timeout=1e10", "socket_connect_timeout=1e10", "timeout=1e10&max_connections=1"],
)
def test_redis_seconds_past_timeout_max_are_refused(query: str) -> None:
    pytest.importorskip("redis")
    from hookwrap.stores import RedisStore

    name = query.partition("=")[0]
    with pytest.raises(ValueError, match=f"the option '{name}' expects .*TIMEOUT_MAX"):
        RedisStore(f"redis://127.0.0.1:1/0?{query}")
