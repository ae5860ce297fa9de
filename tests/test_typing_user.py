"""What the types that checkers see promise holds at run time (`tests/typing/user.py` is the
checkers' side): each class's typed `replace` takes exactly its constructor's parameters,
and a tool's `ctx` declared `hw.RunContext | None = None` still receives the run."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path
from typing import Any

import attrs
import pytest

import hookwrap as hw
from hookwrap import _types

SOURCE = Path(_types.__file__).read_text(encoding="utf-8")
REPLACEABLE = sorted(
    (
        cls
        for cls in vars(_types).values()
        if isinstance(cls, type) and issubclass(cls, _types._Replace) and attrs.has(cls)
    ),
    key=lambda cls: cls.__name__,
)


def typed_replace(name: str) -> ast.FunctionDef | None:
    """The `replace` class `name` declares for type checkers (under TYPE_CHECKING)."""
    for node in ast.parse(SOURCE).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for block in node.body:
                if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING":
                    for fn in block.body:
                        if isinstance(fn, ast.FunctionDef) and fn.name == "replace":
                            return fn
    return None


def test_the_public_types_with_replace_are_all_found() -> None:
    names = {cls.__name__ for cls in REPLACEABLE}
    assert {"Message", "ModelRequest", "ModelResponse", "Chunk", "ToolCall"} <= names
    assert {"ToolSpec", "Usage", "ToolOutcome", "RunResult", "FinishInfo"} <= names


@pytest.mark.parametrize("cls", REPLACEABLE, ids=lambda cls: cls.__name__)
def test_typed_replace_takes_the_constructors_parameters_by_keyword(cls: type[Any]) -> None:
    """Checkers see a `replace` whose keywords are the fields, each typed as the constructor
    takes it (a converter's input: a list of messages, say), returning the class."""
    fn = typed_replace(cls.__name__)
    assert fn is not None, f"{cls.__name__} declares no typed replace"
    assert [a.arg for a in fn.args.args] == ["self"]
    assert fn.args.vararg is None
    assert fn.args.kwarg is None
    assert fn.returns is not None
    assert ast.unparse(fn.returns) == "Self"
    typed = {a.arg: ast.unparse(a.annotation) if a.annotation else None for a in fn.args.kwonlyargs}
    assert all(isinstance(d, ast.Constant) and d.value is ... for d in fn.args.kw_defaults)
    init = inspect.signature(cls.__init__).parameters
    constructor = {name: p.annotation for name, p in init.items() if name != "self"}
    assert typed == constructor


def test_replace_at_run_time_is_the_one_shared_function() -> None:
    """The typed declarations are for checkers only: every class runs the same `replace`."""
    shared = _types._Replace.__dict__["replace"]
    for cls in REPLACEABLE:
        assert "replace" not in cls.__dict__
        assert cls.replace is shared
    request = hw.ModelRequest(messages=[hw.Message.user("hi")])
    assert request.replace(messages=[hw.Message.user("yo")]).messages[0].text == "yo"
    with pytest.raises(TypeError, match="mesages"):
        request.replace(mesages=())


# -- a tool's `ctx` with a default of None --------------------------------------------------


@hw.tool
def add(a: int, b: int, ctx: hw.RunContext | None = None) -> str:
    """Add two integers."""
    assert ctx is not None
    return f"{a + b} {ctx.phase}"


@hw.tool
async def aadd(a: int, b: int, ctx: hw.RunContext | None = None) -> str:
    assert ctx is not None
    return f"{a + b} {ctx.phase}"


class Calculator:
    @hw.tool
    def add(self, a: int, b: int, ctx: hw.RunContext | None = None) -> str:
        assert ctx is not None
        return f"{a + b} {ctx.phase}"


def test_a_ctx_defaulting_to_none_still_receives_the_run_and_stays_out_of_the_schema() -> None:
    assert add.spec.parameters["properties"].keys() == {"a", "b"}
    assert add.spec.parameters["required"] == ["a", "b"]
    assert add(1, 2) == "3 tool"
    assert add.invoke(hw.ToolCall("c1", "add", {"a": 2, "b": 3})) == "5 tool"
    assert asyncio.run(aadd(1, 2)) == "3 tool"
    assert Calculator().add(1, 2) == "3 tool"


def test_a_ctx_defaulting_to_none_receives_the_agents_run() -> None:
    def model(request: hw.ModelRequest) -> hw.Message:
        last = request.messages[-1]
        if last.role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "add", {"a": 20, "b": 22})])
        return hw.Message.assistant(last.text)

    assert hw.Agent(model, tools=[add]).run("20 + 22?").text == "42 tool"
