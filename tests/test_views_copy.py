"""A view is a frozen neutral value "like any other" (docs/performance.md): a hook may
deep-copy or pickle the request, also of an SDK call, whose `raw` record holds the SDK's
client (locks, sockets). A deep copy stands for the same call; a pickled one keeps its
values and reads its `raw` back as None."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

ASKED = [{"role": "user", "content": "hi"}]


def copier(kept: list[Any]) -> Any:
    @hw.before_model
    def keep_copies(request: hw.ModelRequest) -> hw.ModelRequest:
        unpickled = pickle.loads(pickle.dumps(request))
        kept.append((request, unpickled))
        assert unpickled == request
        assert unpickled.raw is None
        deep = copy.deepcopy(request)
        assert deep == request
        assert deep.raw is request.raw  # the same call: a changed copy is written back
        return deep.replace(messages=(*deep.messages, hw.Message.user("and more")))

    return keep_copies


def test_an_sdk_calls_request_copies_and_pickles() -> None:
    pytest.importorskip("openai")
    provider = FakeProvider()
    kept: list[Any] = []
    client = hw.wrap(provider.openai(), use=[copier(kept)])
    client.chat.completions.create(model="m", messages=ASKED)  # type: ignore[arg-type]
    assert len(kept) == 1
    assert provider.requests[0].body["messages"][-1] == {"role": "user", "content": "and more"}


def test_a_local_functions_request_copies_and_pickles() -> None:
    got: list[Any] = []

    def llm(messages: list[Any]) -> str:
        got.extend(messages)
        return "ok"

    kept: list[Any] = []
    assert hw.model(llm, use=[copier(kept)])(ASKED) == "ok"
    assert got[-1] == {"role": "user", "content": "and more"}
