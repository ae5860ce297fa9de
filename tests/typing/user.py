"""Checked by mypy and pyright (strict), never run: what a checker of user code accepts and
what it refuses.

A line that must be an error ends in `# type: ignore[<mypy code>]`. Both checkers report
such a comment when nothing on its line is an error: mypy (strict: `warn_unused_ignores`)
and pyright (the rule turned on below), so an error that goes missing fails the check.
"""

# pyright: reportUnnecessaryTypeIgnoreComment=true

from __future__ import annotations

from typing_extensions import assert_type

import hookwrap as hw
from hookwrap.middleware import Fallback

# -- `replace` takes the fields, typed as the constructor takes them -------------------------

message = hw.Message.user("hi")
request = hw.ModelRequest(messages=[message])
assert_type(request.replace(messages=[message], model="m", stream=True), hw.ModelRequest)
assert_type(
    request.replace(messages=(hw.Message.system("Be brief."), *request.messages)), hw.ModelRequest
)
request.replace(mesages=())  # type: ignore[call-arg]
request.replace(model=3)  # type: ignore[arg-type]
request.replace(messages=[{"role": "user", "content": "hi"}])  # type: ignore[list-item]

assert_type(message.replace(content=[hw.TextPart("a")], tool_calls=None), hw.Message)
message.replace(role="robot")  # type: ignore[arg-type]
message.replace(content=3)  # type: ignore[arg-type]

response = hw.ModelResponse()
assert_type(
    response.replace(message=hw.Message.assistant("x"), usage=hw.Usage(1)), hw.ModelResponse
)
response.replace(message="oops")  # type: ignore[arg-type]

chunk = hw.Chunk(kind="text", text="a")
assert_type(chunk.replace(kind="reasoning", text=chunk.text.upper()), hw.Chunk)
chunk.replace(kind="bogus")  # type: ignore[arg-type]
chunk.replace(txt="a")  # type: ignore[call-arg]

call = hw.ToolCall("c1", "add", {"a": 1})
assert_type(call.replace(arguments={"a": 2}), hw.ToolCall)
call.replace(arguments=[1])  # type: ignore[arg-type]
assert_type(hw.ToolSpec("add").replace(description="Add."), hw.ToolSpec)
hw.ToolSpec("add").replace(parameters="{}")  # type: ignore[arg-type]
assert_type(hw.Usage(1, 2, 3).replace(total_tokens=4), hw.Usage)
hw.Usage().replace(total_tokens="4")  # type: ignore[arg-type]
outcome = hw.ToolOutcome(ok=False, error=ValueError("x"))
assert_type(outcome.replace(ok=True, result=1, error=None), hw.ToolOutcome)
outcome.replace(error="x")  # type: ignore[arg-type]
assert_type(hw.TextPart("a").replace(text="b"), hw.TextPart)
assert_type(hw.ImagePart("https://x").replace(media_type="image/png"), hw.ImagePart)
assert_type(hw.AgentSetup().replace(instructions="Be brief.", tools=[]), hw.AgentSetup)
assert_type(hw.IterationInfo(1).replace(iteration=2), hw.IterationInfo)
result = hw.RunResult("finished")
assert_type(result.replace(status="aborted", usage=hw.Usage()), hw.RunResult)
result.replace(status="done")  # type: ignore[arg-type]
finish = hw.FinishInfo("run", 1.0, hw.Usage())
assert_type(finish.replace(reason="closed"), hw.FinishInfo)


# -- a tool or model made of a method keeps its parameters on an instance ---------------------


@hw.before_model
def add_system(request: hw.ModelRequest) -> hw.ModelRequest:
    return request


class Service:
    @hw.tool
    def double(self, x: int) -> int:
        """Double a number."""
        return x * 2

    @hw.tool
    async def adouble(self, x: int) -> int:
        return x * 2

    @hw.model(use=[add_system])
    def ask(self, prompt: str) -> str:
        return prompt


service = Service()
assert_type(service.double(3), int)
assert_type(service.double(x=3), int)
service.double("3")  # type: ignore[arg-type]
service.double(3, 4)  # type: ignore[call-arg]
service.double(y=3)  # type: ignore[call-arg]
spec: hw.ToolSpec = Service.double.spec  # on the class: the tool itself
bound_spec: hw.ToolSpec = service.double.spec  # on an instance: the tool's too
assert_type(hw.wrap(service.double)(3), int)
assert_type(service.ask("hi"), str)
service.ask(1)  # type: ignore[arg-type]


async def awaits() -> None:
    assert_type(await service.adouble(3), int)
    await service.adouble("3")  # type: ignore[arg-type]


# -- a tool taking `ctx`: a default of None lets your own code call it -----------------------


@hw.tool
def slow_add(a: int, b: int, ctx: hw.RunContext) -> int:
    return a + b


@hw.tool
def quick_add(a: int, b: int, ctx: hw.RunContext | None = None) -> int:
    return a + b


slow_add(1, 2)  # type: ignore[call-arg]
assert_type(quick_add(1, 2), int)


# -- `Fallback(on=...)` takes exception types or a predicate of the error --------------------

Fallback(models=["backup"], on=lambda exc: isinstance(exc, ConnectionError))
Fallback(models=["backup"], on=ConnectionError)
Fallback(models=["backup"], on=(ConnectionError, TimeoutError))
Fallback(models=["backup"], on="ConnectionError")  # type: ignore[arg-type]

# -- a Middleware's `tools` may be a list, as agent.md says ------------------------------------


@hw.tool
def lookup(query: str) -> str:
    """Look a word up."""
    return query


class Lookup(hw.Middleware):
    tools = [lookup]  # noqa: RUF012 - the list agent.md shows, never mutated


class LookupTuple(hw.Middleware):
    tools = (lookup,)


def answer(request: hw.ModelRequest) -> str:
    return "done"


hw.Agent(answer, use=[Lookup(), LookupTuple()])
