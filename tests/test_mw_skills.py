"""Skills (SPEC §8): subdirectories holding a SKILL.md are skills, found at construction; a
before_model hook lists them in a system message placed after the request's own, once; the
`use_skill(name)` tool returns a skill's text."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware._skills import Skill, Skills
from hookwrap.testing import FakeProvider

PDF = """---
name: pdf-forms
description: "Fill in PDF forms."
license: MIT   # keys other than name and description are ignored
---

# PDF forms

Use pypdf; never flatten the form.
"""
REVIEW = "\n\n# Code review\n\nRead the tests first.\n"


def write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """skills/pdf (front matter), skills/review (none), and two things that are no skill."""
    skills = tmp_path / "skills"
    write(skills / "pdf", PDF)
    write(skills / "review", REVIEW)
    (skills / "notes").mkdir()  # no SKILL.md
    (skills / "README.md").write_text("not a skill", encoding="utf-8")
    return skills


# -- discovery -----------------------------------------------------------------------------


def test_front_matter_names_and_describes_a_skill_else_defaults_apply(tree: Path) -> None:
    skills = Skills(paths=[tree])
    assert list(skills.skills) == ["pdf-forms", "review"]
    assert skills.skills["pdf-forms"] == Skill(
        "pdf-forms",
        "Fill in PDF forms.",
        "# PDF forms\n\nUse pypdf; never flatten the form.",
        str(tree / "pdf" / "SKILL.md"),
    )
    # no front matter: the directory's name, the first non-empty line without its `#`s
    assert skills.skills["review"] == Skill(
        "review",
        "Code review",
        "# Code review\n\nRead the tests first.",
        str(tree / "review" / "SKILL.md"),
    )


@pytest.mark.parametrize(
    ("first", "description"),
    [
        ("# Release notes", "Release notes"),
        ("## Release notes ##", "Release notes"),  # the closing `#`s are the heading's too
        ("###\tRelease notes #\t", "Release notes"),
        ("   # Three spaces in", "Three spaces in"),
        ("# C#", "C#"),  # a closing run follows a space
        ("# Issue ### 12", "Issue ### 12"),  # and ends the line
        ("#tag line", "#tag line"),  # no space after the `#`: no heading
        ("####### seven", "####### seven"),  # more than six: no heading
        ("#\n## ##\nThe text", "The text"),  # empty headings: the next line
    ],
)
def test_without_a_description_a_heading_gives_its_text_as_commonmark_reads_it(
    tmp_path: Path, first: str, description: str
) -> None:
    write(tmp_path / "x", f"{first}\n\nMore.\n")
    assert Skills(paths=tmp_path).skills["x"].description == description


def test_the_simple_front_matter_forms(tmp_path: Path) -> None:
    write(
        tmp_path / "a",
        "\ufeff---\n"
        "# a comment\n"
        "name: 'quoted'\n"
        "\n"
        "description: >  # folded\n"
        "  Folded over\n"
        "  two lines.\n"
        "metadata:\n"
        "  author: someone\n"
        "---\n"
        "Body.\n",
    )
    write(
        tmp_path / "b", "---\nname:\ndescription: spaced   out\t text # C#\n---\n\n\nFirst line\n"
    )
    write(tmp_path / "c", "---\n---\n")
    write(tmp_path / "d", "---\ndescription: 'Quoted # not a comment'\n---\nC# is fine\n")
    found = Skills(paths=str(tmp_path)).skills
    assert found["quoted"].description == "Folded over two lines."
    assert found["quoted"].body == "Body."
    assert found["b"].description == "spaced out text"  # an empty name is no name
    assert found["b"].body == "First line"
    assert found["c"] == Skill("c", "", "", str(tmp_path / "c" / "SKILL.md"))
    assert found["d"].description == "Quoted # not a comment"
    assert found["d"].body == "C# is fine"


@pytest.mark.parametrize(
    ("front", "name", "description"),
    [
        ('name: "pdf-forms"  # the id', "pdf-forms", "Body"),
        ("name: 'pdf'  # the id\ndescription: 'Fill forms.'\t# short", "pdf", "Fill forms."),
        ("name: 'it''s'\ndescription: 'Don''t flatten ''forms'''", "it's", "Don't flatten 'forms'"),
        ("name: ''''", "'", "Body"),
        ("name: \"a # b\" # c\ndescription: '#1 # not a comment'", "a # b", "#1 # not a comment"),
        (r'name: "say \"hi\" \\ \u00e9\x41\ttab\q"', 'say "hi" \\ \u00e9A\ttab\\q', "Body"),
        (
            'description: "Fill in\n  # quoted\n  PDF forms."  # c',
            "x",
            "Fill in # quoted PDF forms.",
        ),
        ("description:  # none on this line\n  # c\n  'on the next'", "x", "on the next"),
        ("description: |\n  # Heading\n  text # kept", "x", "# Heading text # kept"),
        ("description: one\n  # a comment\n  two", "x", "one two"),
        ("description: # only a comment", "x", "Body"),
        ("description: plain\n  and more # c", "x", "plain and more"),
        ('name: "not closed', '"not closed', "Body"),
        ("name: 'a' and more # c", "'a' and more", "Body"),
    ],
)
def test_quotes_comments_and_escapes_in_front_matter_as_in_yaml(
    tmp_path: Path, front: str, name: str, description: str
) -> None:
    write(tmp_path / "x", f"---\n{front}\n---\nBody\n")
    (skill,) = Skills(paths=[tmp_path]).skills.values()
    assert (skill.name, skill.description) == (name, description)


def test_paths_are_read_in_order_and_relative_ones_from_the_current_directory(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "more" / "zeta", "Zeta.")
    write(tmp_path / "more" / "alpha", "Alpha.")
    monkeypatch.chdir(tmp_path)
    skills = Skills(paths=("more", Path("skills"), "missing"))
    assert list(skills.skills) == ["alpha", "zeta", "pdf-forms", "review"]
    assert skills.paths == (str(tmp_path / "more"), str(tree), str(tmp_path / "missing"))
    assert list(Skills().skills) == ["pdf-forms", "review"]  # the default: ("skills",)
    monkeypatch.chdir(tree)  # later changes of directory do not matter
    assert skills.tools[0]("alpha") == "Alpha."


def test_skills_are_read_once_at_construction(tree: Path) -> None:
    skills = Skills(paths=[tree])
    write(tree / "pdf", "Changed.")
    write(tree / "later", "Later.")
    assert skills.tools[0]("pdf-forms").startswith("# PDF forms")
    assert "later" not in skills.skills
    assert "later" in Skills(paths=[tree]).skills


def test_no_skills_means_no_prompt_no_tool_and_an_untouched_request(tmp_path: Path) -> None:
    skills = Skills(paths=[tmp_path / "missing", tmp_path])
    assert dict(skills.skills) == {}
    assert skills.prompt == ""
    assert skills.tools == ()
    seen: list[Any] = []

    @hw.model(use=[skills])
    def llm(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return "ok"

    llm([{"role": "user", "content": "hi"}])
    assert seen == [[{"role": "user", "content": "hi"}]]


def test_no_skills_under_the_default_path_means_no_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    skills = Skills()
    assert (skills.prompt, skills.tools) == ("", ())
    write(tmp_path / "skills" / "review", REVIEW)
    assert Skills().prompt.startswith("You have skills")


def test_two_skills_with_one_name_are_an_error_naming_both_files(tmp_path: Path) -> None:
    first = write(tmp_path / "one" / "x", "---\nname: same\n---\nA")
    second = write(tmp_path / "two" / "same", "B")
    with pytest.raises(ValueError, match="two skills are named 'same'") as info:
        Skills(paths=[tmp_path / "one", tmp_path / "two"])
    assert str(first) in str(info.value)
    assert str(second) in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: x\n", "opens its front matter with '---' but never closes it"),
        ("---\nname: x\nnot a pair\n---\n", "line 3: expected 'key: value'"),
        ("---\n: no key\n---\n", "line 2: expected 'key: value'"),
    ],
)
def test_malformed_front_matter_is_an_error_at_construction(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "bad", text)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        Skills(paths=[tmp_path])
    assert str(path) in str(info.value)


def test_a_skill_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_bytes(b"caf\xe9")
    with pytest.raises(ValueError, match=r"SKILL\.md is not UTF-8 text"):
        Skills(paths=[tmp_path])


def test_bad_paths_are_refused_at_construction(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match=r"Skills\(paths=...\): .*file is not a directory"):
        Skills(paths=[tmp_path / "file"])
    with pytest.raises(TypeError, match=r"Skills\(paths=...\) expects .* \(got int: 3\)"):
        Skills(paths=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\(got the item bytes: b'skills'\)"):
        Skills(paths=[b"skills"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"\(got set"):
        Skills(paths={"skills"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Skills("skills")  # type: ignore[misc]


# -- the use_skill tool --------------------------------------------------------------------


def test_use_skill_returns_the_text_without_front_matter(tree: Path) -> None:
    (use_skill,) = Skills(paths=[tree]).tools
    assert use_skill.name == "use_skill"
    assert use_skill("pdf-forms") == "# PDF forms\n\nUse pypdf; never flatten the form."
    call = hw.ToolCall(id="call_1", name="use_skill", arguments={"name": "review"})
    assert use_skill.invoke(call) == "# Code review\n\nRead the tests first."
    assert asyncio.run(use_skill.ainvoke(call)) == "# Code review\n\nRead the tests first."


def test_use_skill_trims_only_the_blank_lines_around_the_text(tmp_path: Path) -> None:
    """Only whole blank (or whitespace-only) lines go: an indented first line is a code
    block in Markdown, and a line's own spaces are part of the text."""
    text = "---\nname: code\n---\n  \n\n    pip install x\n\nThen run it.  \n \t\n\n"
    write(tmp_path / "code", text)
    (use_skill,) = Skills(paths=[tmp_path]).tools
    assert use_skill("code") == "    pip install x\n\nThen run it.  "
    write(tmp_path / "code", "---\nname: code\n---\n \n\n")
    assert Skills(paths=[tmp_path]).skills["code"].body == ""


def test_an_unknown_skill_is_a_tool_error_listing_the_skills(tree: Path) -> None:
    (use_skill,) = Skills(paths=[tree]).tools
    with pytest.raises(hw.ToolArgumentError) as info:
        use_skill.invoke(hw.ToolCall(id="1", name="use_skill", arguments={"name": "pdf"}))
    assert str(info.value) == "no skill is named 'pdf'; the skills are: pdf-forms, review"
    with pytest.raises(hw.ToolArgumentError, match="missing argument"):
        use_skill.invoke(hw.ToolCall(id="2", name="use_skill", arguments={}))


def test_use_skill_spec(tree: Path) -> None:
    (use_skill,) = Skills(paths=[tree]).tools
    assert use_skill.spec.name == "use_skill"
    assert use_skill.spec.description.startswith("Read a skill")
    assert json.loads(json.dumps(use_skill.spec.parameters)) == {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "the skill's name, as listed in the system prompt.",
            }
        },
        "required": ["name"],
    }


# -- the system prompt ---------------------------------------------------------------------


def test_the_prompt_lists_every_skill_and_names_the_tool(tree: Path) -> None:
    prompt = Skills(paths=[tree]).prompt
    assert "use_skill" in prompt
    assert prompt.endswith("Skills:\n- pdf-forms: Fill in PDF forms.\n- review: Code review")


SHAPES = ("sync", "async", "stream", "astream")


def target(shape: str, seen: list[list[hw.Message]]) -> Callable[..., Any]:
    """A model function of this shape recording the messages it receives."""
    if shape == "sync":

        def llm(messages: list[hw.Message]) -> str:
            seen.append(list(messages))
            return "ok"

        return llm
    if shape == "async":

        async def allm(messages: list[hw.Message]) -> str:
            seen.append(list(messages))
            return "ok"

        return allm
    if shape == "stream":

        def sllm(messages: list[hw.Message]) -> Iterator[str]:
            seen.append(list(messages))
            yield "o"
            yield "k"

        return sllm

    async def asllm(messages: list[hw.Message]) -> AsyncIterator[str]:
        seen.append(list(messages))
        yield "o"
        yield "k"

    return asllm


def call(fn: Callable[..., Any], shape: str, messages: list[hw.Message]) -> str:
    if shape == "sync":
        return str(fn(messages))
    if shape == "async":
        return str(asyncio.run(fn(messages)))
    if shape == "stream":
        return "".join(fn(messages))

    async def read() -> str:
        return "".join([piece async for piece in fn(messages)])

    return asyncio.run(read())


@pytest.mark.parametrize("shape", SHAPES)
def test_the_prompt_goes_after_the_leading_system_messages_once(tree: Path, shape: str) -> None:
    skills = Skills(paths=[tree])
    seen: list[list[hw.Message]] = []
    llm = hw.model(target(shape, seen), use=[skills])
    own = [hw.Message.system("Be brief."), hw.Message.system("Use British English.")]
    later = [hw.Message.user("hi"), hw.Message.system("mid-conversation note")]
    asked = [*own, *later]
    assert call(llm, shape, asked) == "ok"
    assert call(llm, shape, asked) == "ok"  # a second call: again exactly one
    assert call(llm, shape, [hw.Message.user("no system message")]) == "ok"
    prompt = hw.Message.system(skills.prompt)
    assert seen[0] == [*own, prompt, *later]
    assert seen[1] == seen[0]
    assert seen[2] == [prompt, hw.Message.user("no system message")]
    assert len(asked) == 4  # the caller's list is left alone


@pytest.mark.parametrize("shape", SHAPES)
def test_a_prompt_already_in_a_system_message_is_not_added_again(tree: Path, shape: str) -> None:
    skills = Skills(paths=[tree])
    seen: list[list[hw.Message]] = []
    llm = hw.model(target(shape, seen), use=[skills])
    history = [hw.Message.system(skills.prompt), hw.Message.user("hi")]
    joined = [hw.Message.system(f"Be brief.\n\n{skills.prompt}"), hw.Message.user("hi")]
    as_user = [hw.Message.user(skills.prompt)]  # only a system message counts
    call(llm, shape, history)
    call(llm, shape, joined)
    call(llm, shape, as_user)
    assert seen[0] == history
    assert seen[1] == joined
    assert seen[2] == [hw.Message.system(skills.prompt), *as_user]


def test_two_skills_objects_each_add_their_own_prompt(tree: Path, tmp_path: Path) -> None:
    write(tmp_path / "other" / "extra", "Extra.")
    first, second = Skills(paths=[tree]), Skills(paths=[tmp_path / "other"])
    seen: list[list[hw.Message]] = []
    llm = hw.model(target("sync", seen), use=[first, second])
    llm([hw.Message.user("hi")])
    assert [m.text for m in seen[0]] == [first.prompt, second.prompt, "hi"]


def test_the_hook_shows_in_explain(tree: Path) -> None:
    llm = hw.model(target("sync", []), use=[Skills(paths=[tree])])
    table = hw.explain(llm)
    assert re.search(r"before_model\s+1\s+Skills\.add_prompt\s+0\s+Skills", table), table


# -- real SDK clients ------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
def test_the_prompt_reaches_openai_as_a_system_message(tree: Path, is_async: bool) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider(["ok"])
    skills = Skills(paths=[tree])
    client = hw.wrap(provider.openai(async_=is_async), use=[skills])
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    made = client.chat.completions.create(model="m", messages=messages)
    completion = asyncio.run(made) if is_async else made
    assert completion.choices[0].message.content == "ok"
    assert provider.requests[0].body["messages"] == [
        messages[0],
        {"role": "system", "content": skills.prompt},
        messages[1],
    ]


def test_the_prompt_joins_anthropics_system_in_a_stream(tree: Path) -> None:
    pytest.importorskip("anthropic")
    provider = FakeProvider(["streamed"])
    skills = Skills(paths=[tree])
    client = hw.wrap(provider.anthropic(), use=[skills])
    with client.messages.stream(
        model="m",
        max_tokens=64,
        system="Be brief.",
        messages=[{"role": "user", "content": "hi"}],
    ) as stream:
        assert "".join(stream.text_stream) == "streamed"
    assert provider.requests[0].body["system"] == f"Be brief.\n\n{skills.prompt}"
