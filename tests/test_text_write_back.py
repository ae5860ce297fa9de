"""`split_text`: a message's new text cut into the parts its old text came in, so each part
(a cited block, a signed Gemini part, an output text) gets back its own piece."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hookwrap.adapters._wire import split_text

_texts = st.text(alphabet="ab .", max_size=12)
_parts = st.lists(_texts, min_size=1, max_size=4)


@given(_parts, st.text(alphabet="abc .", max_size=30))
def test_law_the_pieces_are_the_new_text_one_per_part(old: list[str], new: str) -> None:
    pieces = split_text(old, new)
    assert len(pieces) == len(old)
    assert "".join(pieces) == new


@given(_parts)
def test_law_an_unchanged_text_keeps_its_split(old: list[str]) -> None:
    assert split_text(old, "".join(old)) == old


@given(_parts)
def test_law_an_edit_of_the_same_length_keeps_every_length(old: list[str]) -> None:
    new = "".join(old).upper()
    assert [len(p) for p in split_text(old, new)] == [len(p) for p in old]


_edits = st.text(alphabet="abc .", max_size=6)


@given(_texts, _edits, _edits, _texts, _texts)
def test_law_an_edit_inside_one_part_changes_that_part_only(
    first: str, was: str, now: str, rest: str, last: str
) -> None:
    """Whatever replaces `was` inside the brackets of the middle part, the parts around it
    are as they were (text added at a cut could belong to either side: not here)."""
    old = [first, f"<{was}>{rest}", last]
    assert split_text(old, f"{first}<{now}>{rest}{last}") == [first, f"<{now}>{rest}", last]


def test_a_redaction_stays_in_its_part() -> None:
    old = ["The sky is blue", " and Paris is rainy."]
    new = "The sky is blue and [city] is rainy."
    assert split_text(old, new) == ["The sky is blue", " and [city] is rainy."]


def test_a_word_changed_at_a_cut_stays_on_its_side() -> None:
    old = ["The sky is blue", " and Paris is rainy."]
    assert split_text(old, "The sky is grey and Paris is rainy.")[0] == "The sky is grey"
    assert split_text(old, "The sky is blue and Rome is rainy.")[0] == "The sky is blue"


def test_a_cut_whose_text_around_it_is_gone_sits_in_proportion() -> None:
    """Nothing of the old text is found again: the cut sits where the length says."""
    old = ["a" * 3000, "b" * 3000]
    assert [len(p) for p in split_text(old, "c" * 1000)] == [500, 500]
    assert split_text(old, "".join(old).upper()) == ["A" * 3000, "B" * 3000]


def test_one_part_takes_the_whole_text() -> None:
    assert split_text(["anything"], "new") == ["new"]


def test_a_long_text_with_edits_on_both_sides_of_a_cut_is_cut_between_them() -> None:
    words = "the quick brown fox jumps over the lazy dog; "
    old = [words * 40, words * 40]  # long: found again by the text around the cut

    def edit(text: str) -> str:
        return text.replace("fox", "cat").replace("the", "THE!")

    assert split_text(old, edit("".join(old))) == [edit(old[0]), edit(old[1])]


def test_a_cut_placed_in_proportion_falls_between_words() -> None:
    old = ["Only the first part. ", "And then the second part."]
    assert split_text(old, "Only this.") == ["Only ", "this."]
    new = "Sorry, I can't share that today at all."
    assert split_text(old, new) == ["Sorry, I can't ", "share that today at all."]
