"""A function declaration a hook changes keeps what the hook did not change: its other keys
(`response`, `behavior`) and its parameters in their own form (a Gemini `Schema`, upper
case types), as OpenAI keeps `strict` and Anthropic `cache_control` on a changed tool.
Through the real `google-genai` SDK against the fake provider, as the body reaches the wire."""

from __future__ import annotations

from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytest.importorskip("google.genai")
from google.genai import types as gt

SCHEMA = {"type": "OBJECT", "properties": {"x": {"type": "STRING"}}}
RESPONSE = {"type": "OBJECT", "properties": {"r": {"type": "STRING"}}}


@hw.before_model
def edit_description(request: hw.ModelRequest) -> hw.ModelRequest:
    return request.replace(
        tools=[t.replace(description=t.description + "!") for t in request.tools]
    )


@hw.before_model
def edit_parameters(request: hw.ModelRequest) -> hw.ModelRequest:
    params = {"type": "object", "properties": {"y": {"type": "integer"}}}
    return request.replace(tools=[t.replace(parameters=params) for t in request.tools])


def declarations(hook: Any, **declared: Any) -> list[dict[str, Any]]:
    """The function declarations sent for one declaration `f` after `hook`."""
    provider = FakeProvider(["fine"])
    decl = gt.FunctionDeclaration(
        name="f", description="d", behavior=gt.Behavior.NON_BLOCKING, **declared
    )
    config = gt.GenerateContentConfig(
        tools=[gt.Tool(function_declarations=[decl]), gt.Tool(google_search=gt.GoogleSearch())],
        automatic_function_calling=gt.AutomaticFunctionCallingConfig(disable=True),
    )
    client = hw.wrap(provider.genai(), use=[hook])
    client.models.generate_content(model="gemini-2.0-flash", contents="hi", config=config)
    tools = provider.requests[0].body["tools"]
    assert {"googleSearch": {}} in tools
    return [d for t in tools for d in t.get("functionDeclarations", ())]


@hw.before_model
def look(request: hw.ModelRequest) -> None:
    assert [t.name for t in request.tools] == ["f"]


def test_a_changed_description_keeps_the_other_keys_and_the_schema_form() -> None:
    sent = declarations(look, parameters=SCHEMA, response=RESPONSE)
    assert sent[0]["parameters"] == SCHEMA  # the caller's own form, as the SDK sends it
    found = declarations(edit_description, parameters=SCHEMA, response=RESPONSE)
    assert found == [{**sent[0], "description": "d!"}]


def test_a_changed_description_keeps_a_json_schema_as_given() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    sent = declarations(look, parameters_json_schema=schema)
    found = declarations(edit_description, parameters_json_schema=schema)
    assert found == [{**sent[0], "description": "d!"}]


def test_changed_parameters_are_written_as_json_schema_and_the_other_keys_stay() -> None:
    found = declarations(edit_parameters, parameters=SCHEMA, response=RESPONSE)
    assert found == [
        {
            "name": "f",
            "description": "d",
            "parametersJsonSchema": {"type": "object", "properties": {"y": {"type": "integer"}}},
            "response": RESPONSE,
            "behavior": "NON_BLOCKING",
        }
    ]
