"""`Fallback(models=...)` takes a list: a tuple is refused, since `(client, "model")` is how
one alternative is written and a pair given without its list would be read as two."""

from __future__ import annotations

from typing import Any

import pytest

from hookwrap.middleware import Fallback


def backup(prompt: str) -> str:
    return "backup"


def test_a_client_model_pair_without_its_list_is_refused_with_the_list_to_write() -> None:
    with pytest.raises(TypeError) as caught:
        Fallback(models=(backup, "gpt-4o-mini"))
    message = str(caught.value)
    assert message.startswith("Fallback(models=...) must be a list, not a tuple")
    assert "models=[(client, 'gpt-4o-mini')]" in message


@pytest.mark.parametrize("models", [("gpt-4o", "gpt-4o-mini"), (backup,), (backup, backup)])
def test_any_tuple_is_refused_with_a_list_asked_for(models: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError, match=r"must be a list, not a tuple.*models=\[\.\.\.\]"):
        Fallback(models=models)


def test_the_same_pair_in_a_list_is_one_alternative() -> None:
    fallback = Fallback(models=[(backup, "gpt-4o-mini")])
    assert len(fallback.models) == 1
    assert fallback.models[0].model == "gpt-4o-mini"
