"""`Skills`: instructions kept in `SKILL.md` files, listed for the model in a system prompt
and read on demand with a `use_skill` tool."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Union, cast

import attrs

from .._hooks import Middleware, before_model
from .._tool import ToolArgumentError
from .._types import Message, ModelRequest
from .._wrap import tool

__all__ = ["Skill", "Skills"]

PathArg = Union[str, "os.PathLike[str]"]

_BLOCK = re.compile(r"[|>][+-]?")  # a YAML block scalar's indicator: the text follows


@attrs.frozen
class Skill:
    """One skill: its `name`, `description`, the `body` of its SKILL.md (front matter
    removed) and the `path` of that file."""

    name: str
    description: str
    body: str
    path: str


def _front_matter(text: str, path: str) -> tuple[dict[str, str], str]:
    """The ``key: value`` pairs between the opening and closing ``---`` lines, and the rest.

    Only the simple form is read: one key per line, an indented line continuing the value
    before it, quotes around a value dropped, ``#`` comments and blank lines skipped.
    Multi-line values are joined with spaces (they are names and one-line descriptions).
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise ValueError(f"Skills: {path} opens its front matter with '---' but never closes it")
    fields: dict[str, str] = {}
    key: str | None = None
    for number, line in enumerate(lines[1:end], start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t":
            if key is not None:
                fields[key] = f"{fields[key]} {stripped}".strip()
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise ValueError(
                f"Skills: {path}, line {number}: expected 'key: value' in the front matter "
                f"(got {line.rstrip()!r})"
            )
        key = name.strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()  # as in YAML: " #" starts a comment
            if _BLOCK.fullmatch(value):
                value = ""
        fields[key] = value
    return fields, "".join(lines[end + 1 :])


def _first_line(body: str) -> str:
    """The first non-empty line, without a Markdown heading's leading ``#``s."""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def _read(directory: str) -> Skill:
    path = os.path.join(directory, "SKILL.md")
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise ValueError(f"Skills: {path} is not UTF-8 text") from None
    fields, body = _front_matter(text.lstrip("\ufeff"), path)
    body = body.strip()
    name = fields.get("name") or os.path.basename(directory)
    description = fields.get("description") or _first_line(body)
    return Skill(name, " ".join(description.split()), body, path)


def _fspath(value: object) -> str | None:
    if not isinstance(value, (str, os.PathLike)):
        return None
    path: object = os.fspath(cast("os.PathLike[Any]", value))
    return path if isinstance(path, str) else None


def _paths(paths: object) -> tuple[str, ...]:
    expected = "Skills(paths=...) expects a str or os.PathLike, or a list or tuple of them"
    items: tuple[object, ...]
    if _fspath(paths) is not None:
        items = (paths,)
    elif isinstance(paths, (list, tuple)):
        items = tuple(cast("Iterable[object]", paths))
    else:
        raise TypeError(f"{expected} (got {type(paths).__name__}: {paths!r})")
    out: list[str] = []
    for item in items:
        location = _fspath(item)
        if location is None:
            raise TypeError(f"{expected} (got the item {type(item).__name__}: {item!r})")
        out.append(os.path.abspath(location))
    return tuple(out)


def _discover(paths: Iterable[str]) -> dict[str, Skill]:
    """The skills in the subdirectories of `paths`, by name, in the order found."""
    skills: dict[str, Skill] = {}
    for root in paths:
        if not os.path.exists(root):
            continue
        if not os.path.isdir(root):
            raise ValueError(f"Skills(paths=...): {root} is not a directory")
        for entry in sorted(os.listdir(root)):
            directory = os.path.join(root, entry)
            if not os.path.isfile(os.path.join(directory, "SKILL.md")):
                continue
            skill = _read(directory)
            twin = skills.get(skill.name)
            if twin is not None:
                raise ValueError(
                    f"Skills: two skills are named {skill.name!r}: {twin.path} and {skill.path}"
                )
            skills[skill.name] = skill
    return skills


class Skills(Middleware):
    """Skills: instructions for particular tasks, each in a ``SKILL.md`` file, which the
    model reads when it needs them.

    Every subdirectory of each of `paths` (relative ones to the current directory) that
    holds a ``SKILL.md`` is a skill. Its optional front matter, between ``---`` lines,
    gives ``name`` (else the directory's name) and ``description`` (else the first line of
    the text). Skills are found once, when `Skills` is made: two with one name are a
    `ValueError`, a path that does not exist gives none.

    A `before_model` hook adds a system message listing the skills, after the request's
    own system messages; the `use_skill(name)` tool returns a skill's text. With no skills
    found, there is neither prompt (`prompt` is ``""``) nor tool.

    Args:
        paths: directories holding one subdirectory per skill.
    """

    name = "Skills"

    def __init__(self, *, paths: PathArg | Sequence[PathArg] = ("skills",)) -> None:
        self.paths = _paths(paths)
        #: Every skill found, by name.
        self.skills: Mapping[str, Skill] = MappingProxyType(_discover(self.paths))
        listing = "\n".join(
            f"- {s.name}: {s.description}" if s.description else f"- {s.name}"
            for s in self.skills.values()
        )
        #: The system prompt's text; empty when no skill was found.
        self.prompt = (
            "You have skills: instructions for particular tasks. When a task matches a "
            "skill's description, first call use_skill with its name, then follow what it "
            f"says.\n\nSkills:\n{listing}"
            if self.skills
            else ""
        )
        self._message = Message.system(self.prompt)
        self.tools = (tool(self._use_skill, name="use_skill"),) if self.skills else ()

    def __repr__(self) -> str:
        return f"Skills(paths={self.paths!r})"

    @before_model
    def add_prompt(self, request: ModelRequest) -> ModelRequest | None:
        """Insert the list of skills after the request's leading system messages, unless a
        system message already holds it."""
        if not self.skills:
            return None
        messages = request.messages
        at = 0
        for message in messages:
            if message.role != "system":
                break
            at += 1
        if any(m.role == "system" and self.prompt in m.text for m in messages):
            return None
        return request.replace(messages=(*messages[:at], self._message, *messages[at:]))

    def _use_skill(self, name: str) -> str:
        """Read a skill: the instructions to follow for the task it describes.

        Args:
            name: the skill's name, as listed in the system prompt.
        """
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills)
            raise ToolArgumentError(f"no skill is named {name!r}; the skills are: {known}")
        return skill.body
