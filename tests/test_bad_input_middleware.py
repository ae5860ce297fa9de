"""Bad input refused when built-in middleware is made, by argument: ToolApproval, ToolCache,
Retry, Fallback, ContentGuard, Telemetry, Debug and Skills."""

from __future__ import annotations

import io
import re
import tempfile
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import (
    ContentGuard,
    Debug,
    Fallback,
    Retry,
    Skills,
    Telemetry,
    ToolApproval,
    ToolCache,
)


@hw.tool
def search(q: str) -> str:
    """Search."""
    return q


HI = [{"role": "user", "content": "hi"}]


def numbers(messages: Any) -> str:
    return " call 555 "


def hello(messages: Any) -> str:
    return "hello"


def backup(messages: Any) -> str:
    return "from backup"


# -- a single tool where a list is expected -----------------------------------------------


def test_tool_approval_refuses_one_tool_not_in_a_list() -> None:
    with pytest.raises(TypeError, match=r"ToolApproval\(allowed_tools=\.\.\.\).*got Tool") as e:
        ToolApproval(allowed_tools=search)
    assert "allowed_tools=[tool]" in str(e.value)


def test_tool_approval_refuses_one_name_not_in_a_list() -> None:
    with pytest.raises(TypeError, match=r"allowed_tools=\.\.\.\).*got str: 'search'"):
        ToolApproval(allowed_tools="search")


def test_tool_cache_refuses_one_tool_not_in_a_list() -> None:
    with pytest.raises(TypeError, match=r"ToolCache\(tools=\.\.\.\).*got Tool") as e:
        ToolCache(tools=search)
    assert "tools=[tool]" in str(e.value)


def test_a_list_of_one_tool_is_still_taken() -> None:
    assert ToolApproval(allowed_tools=[search]).allowed_tools == frozenset({"search"})
    assert ToolCache(tools=[search]).cached_tools == frozenset({"search"})


# -- async predicates ---------------------------------------------------------------------


async def only_timeouts(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError)


def test_retry_refuses_an_async_predicate() -> None:
    with pytest.raises(TypeError, match=r"Retry\(retry_on=\.\.\.\).*not an async one"):
        Retry(retry_on=only_timeouts)  # type: ignore[arg-type]


def test_fallback_refuses_an_async_predicate() -> None:
    with pytest.raises(TypeError, match=r"Fallback\(on=\.\.\.\).*not an async one"):
        Fallback(models=[backup], on=only_timeouts)  # type: ignore[arg-type]


def test_a_plain_predicate_is_still_taken() -> None:
    retry = Retry(retry_on=lambda exc: isinstance(exc, TimeoutError))
    assert retry.retry_on(TimeoutError())
    assert not retry.retry_on(ValueError())


# -- ContentGuard rules that cannot take their argument -----------------------------------


def test_a_rule_function_taking_no_text_is_refused_by_index() -> None:
    def redact() -> str:
        return "[redacted]"

    with pytest.raises(
        TypeError, match=r"rules=\.\.\.\): rule 1 \(.*redact .*one argument, the text"
    ):
        ContentGuard(rules=[(r"x", "y"), redact])  # type: ignore[list-item]


def two(text: str, extra: str) -> str:
    return text


def sharp() -> str:
    return "#"


def test_a_rule_function_needing_two_arguments_is_refused() -> None:
    with pytest.raises(TypeError, match=r"rule 0 .*one argument, the text"):
        ContentGuard(rules=[two])  # type: ignore[list-item]


def test_a_replacement_function_taking_no_match_is_refused_by_index() -> None:
    with pytest.raises(TypeError, match=r"rule 0: the replacement function .*the re\.Match"):
        ContentGuard(rules=[(r"\d+", sharp)])  # type: ignore[list-item]


def test_rule_functions_of_one_argument_are_still_taken() -> None:
    def masked(match: re.Match[str], fill: str = "#") -> str:
        return fill * len(match.group())

    def upper(text: str, *rest: object) -> str:
        return text.upper()

    guard = ContentGuard(rules=[(r"\d", masked), upper, str.strip])
    assert hw.model(numbers, use=[guard])(HI) == "CALL ###"


# -- Telemetry: a provider class for an instance -------------------------------------------


def test_telemetry_refuses_provider_classes() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    with pytest.raises(TypeError, match=r"tracer_provider=\.\.\.\).*TracerProvider\(\)"):
        Telemetry(tracer_provider=TracerProvider)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"meter_provider=\.\.\.\).*MeterProvider\(\)"):
        Telemetry(meter_provider=MeterProvider)  # type: ignore[arg-type]


# -- Debug: a stream class, a binary stream ----------------------------------------------


def test_debug_refuses_a_stream_class() -> None:
    with pytest.raises(TypeError, match=r"Debug\(out=\.\.\.\).*class StringIO.*StringIO\(\)"):
        Debug(out=io.StringIO)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [io.BytesIO, tempfile.TemporaryFile, tempfile.NamedTemporaryFile])
def test_debug_refuses_a_binary_stream(make: Any) -> None:
    with make() as out, pytest.raises(TypeError, match=r"Debug\(out=\.\.\.\).*not a binary"):
        Debug(out=out)


def test_debug_still_takes_text_streams() -> None:
    out = io.StringIO()
    hw.model(hello, use=[Debug(out=out)])(HI)
    assert "hello" in out.getvalue()
    with tempfile.NamedTemporaryFile("w") as text_file:
        Debug(out=text_file)  # type: ignore[arg-type]


# -- Skills: an empty path -------------------------------------------------------------------


@pytest.mark.parametrize("paths", ["", [""], [".", ""]])
def test_skills_refuses_an_empty_path(paths: Any) -> None:
    with pytest.raises(ValueError, match=r"Skills\(paths=\.\.\.\).*got ''.*pass '\.'"):
        Skills(paths=paths)


@pytest.mark.parametrize("paths", [[], ()])
def test_skills_refuses_an_empty_list_of_paths(paths: Any) -> None:
    """No place to look is a mistake (every skill would be missing, silently), as an
    empty `ToolSearch` or `Fallback` list is."""
    with pytest.raises(ValueError, match=r"Skills\(paths=\.\.\.\) needs at least one directory"):
        Skills(paths=paths)
