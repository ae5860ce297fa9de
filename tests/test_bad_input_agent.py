"""Bad arguments to the agent's entry points and to `FakeProvider`, refused when given, with
an error naming what was wrong: a resumed run's id (checked before any store is read), an
empty model name beside a client, and a reply function the fake cannot call."""

from __future__ import annotations

import asyncio
import functools
import gc
import warnings
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.stores import MemoryStore
from hookwrap.testing import FakeProvider

openai = pytest.importorskip("openai")

USER = [{"role": "user", "content": "hi"}]


def say_hi(request: hw.ModelRequest) -> str:
    return "hi"


# -- resume: the run id ------------------------------------------------------------------------


async def _drain(events: Any) -> None:
    async for _ in events:
        pass


def _resume(agent: hw.Agent, how: str, run_id: Any) -> None:
    """Resume `run_id` through one of the four entry points, to its end."""
    if how == "resume":
        agent.resume(run_id)
    elif how == "aresume":
        asyncio.run(agent.aresume(run_id))
    elif how == "resume_stream":
        list(agent.resume_stream(run_id))
    else:
        asyncio.run(_drain(agent.aresume_stream(run_id)))


HOW = ["resume", "aresume", "resume_stream", "aresume_stream"]


@pytest.fixture(params=["default store", "given store"])
def agent(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An agent whose store is the default one, not made yet (no file in the working
    directory), or one it was given: a bad run id fails the same way with both."""
    monkeypatch.chdir(tmp_path)
    if request.param == "default store":
        return hw.Agent(say_hi)
    return hw.Agent(say_hi, store=MemoryStore())


@pytest.mark.parametrize("how", HOW)
def test_resume_given_the_run_result_says_to_pass_its_run_id(agent: Any, how: str) -> None:
    result = agent.run("hello")
    with pytest.raises(TypeError, match=r"not a RunResult: pass result\.run_id"):
        _resume(agent, how, result)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("run_id", [None, 7, b"run"])
def test_resume_refuses_a_run_id_that_is_not_a_str(agent: Any, how: str, run_id: Any) -> None:
    with pytest.raises(TypeError, match=r"the run id, a str \(got "):
        _resume(agent, how, run_id)


@pytest.mark.parametrize("how", HOW)
def test_resume_refuses_an_empty_run_id(agent: Any, how: str) -> None:
    with pytest.raises(ValueError, match=r"a non-empty str \(got ''\)"):
        _resume(agent, how, "")


def test_a_bad_run_id_makes_no_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError):
        hw.Agent(say_hi).resume(None)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


# -- a (client, model) pair: the model name ----------------------------------------------------


def test_agent_refuses_an_empty_model_name_beside_a_client() -> None:
    client = FakeProvider().openai()
    with pytest.raises(ValueError, match="a model name must be a non-empty str"):
        hw.Agent((client, ""))
    with pytest.raises(ValueError, match="a model name must be a non-empty str"):
        hw.Agent(functools.partial(client.chat.completions.create, model=""))


def test_fallback_refuses_an_empty_model_name_beside_a_client() -> None:
    client = FakeProvider().openai()
    with pytest.raises(ValueError, match="a model name must be a non-empty str"):
        Fallback(models=[(client, "")])


# -- FakeProvider: reply functions -------------------------------------------------------------


async def async_reply(request: hw.ModelRequest) -> str:
    return "hello"


def test_fake_provider_refuses_an_async_reply_function() -> None:
    with pytest.raises(TypeError, match=r"replies=\.\.\.\)\[0\] \(async_reply .*\) is async"):
        FakeProvider(async_reply)
    with pytest.raises(TypeError, match=r"replies=\.\.\.\)\[1\] \(async_reply .*\) is async"):
        FakeProvider(["hi", async_reply])


@pytest.mark.parametrize(
    "reply", [lambda: "hi", lambda request, more: "hi", lambda *, request: "hi"]
)
def test_fake_provider_refuses_a_reply_function_of_other_arguments(reply: Any) -> None:
    with pytest.raises(TypeError, match=r"\[1\] \(<lambda> .*\) must be a function of one"):
        FakeProvider(["hi", reply])


class Replier:
    def __call__(self, request: hw.ModelRequest) -> str:
        return "from an object"


@pytest.mark.parametrize(
    "reply",
    [
        say_hi,
        lambda request, extra=1: "hi",
        lambda *args: "hi",
        functools.partial(lambda prefix, request: prefix, "hi"),
        Replier(),
    ],
)
def test_fake_provider_takes_a_function_of_the_request(reply: Any) -> None:
    provider = FakeProvider(reply)
    completion = provider.openai().chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content in ("hi", "from an object")


def test_an_async_reply_appended_later_is_refused_unawaited_when_its_call_comes() -> None:
    provider = FakeProvider()
    provider.replies.append(async_reply)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(openai.BadRequestError, match=r"FakeProvider\.replies .* is async"):
            provider.openai(max_retries=0).chat.completions.create(model="m", messages=USER)
        gc.collect()
    assert [w for w in caught if "never awaited" in str(w.message)] == []
