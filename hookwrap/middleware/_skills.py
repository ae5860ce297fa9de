"""`Skills`: instructions kept in `SKILL.md` files, listed for the model in a system prompt
and read on demand with a `use_skill` tool."""

from __future__ import annotations

import itertools
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
_COMMENT = re.compile(r"(?:^|\s)#")  # as in YAML: "#" after a space (or first) starts a comment
# A value in single quotes ('' is one quote) or double quotes (backslash escapes), followed
# by nothing but an optional comment.
_QUOTED = re.compile(r"""(?:'((?:[^']|'')*)'|"((?:[^"\\]|\\.)*)")(?:\s+#.*)?""", re.DOTALL)
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}


@attrs.frozen
class Skill:
    """One skill: its `name`, `description`, the `body` of its SKILL.md (front matter
    removed) and the `path` of that file."""

    name: str
    description: str
    body: str
    path: str


def _unescape(match: re.Match[str]) -> str:
    code = match[1]
    if len(code) > 1:
        number = int(code[1:], 16)
        return chr(number) if number <= 0x10FFFF else match[0]
    return _ESCAPES.get(code, match[0])  # an escape YAML does not know stays as written


def _uncomment(line: str) -> str:
    found = _COMMENT.search(line)
    return (line if found is None else line[: found.start()]).strip()


def _value(lines: list[str]) -> str:
    """A key's value from the text after its colon and its continuation lines (stripped)."""
    first = _uncomment(lines[0])
    if _BLOCK.fullmatch(first):
        return " ".join(lines[1:])  # a block scalar's lines are text, "#" included
    if not first:  # no value on the key's line (or only a comment): it starts below
        lines = list(itertools.dropwhile(lambda line: line.startswith("#"), lines[1:]))
    quoted = _QUOTED.fullmatch(" ".join(lines))
    if quoted is None:
        return " ".join(filter(None, map(_uncomment, lines)))
    single, double = quoted.groups()
    if single is not None:
        return single.replace("''", "'")
    return _ESCAPE.sub(_unescape, double)


def _front_matter(text: str, path: str) -> tuple[dict[str, str], str]:
    """The ``key: value`` pairs between the opening and closing ``---`` lines, and the rest.

    Only the simple form is read: one key per line, an indented line continuing the value
    before it, ``#`` comments and blank lines skipped. A value in single quotes (``''``
    for a quote) or double quotes (YAML's backslash escapes) loses its quotes; ``#`` in
    quotes is text. Multi-line values are joined with spaces (they are names and one-line
    descriptions).
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise ValueError(f"Skills: {path} opens its front matter with '---' but never closes it")
    raw: dict[str, list[str]] = {}
    key: str | None = None
    for number, line in enumerate(lines[1:end], start=2):
        stripped = line.strip()
        if not stripped:
            continue
        if line[0] in " \t":  # kept even when it starts with "#": in quotes, that is text
            if key is not None:
                raw[key].append(stripped)
            continue
        if stripped.startswith("#"):
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise ValueError(
                f"Skills: {path}, line {number}: expected 'key: value' in the front matter "
                f"(got {line.rstrip()!r})"
            )
        key = name.strip()
        raw[key] = [value.strip()]
    return {key: _value(values) for key, values in raw.items()}, "".join(lines[end + 1 :])


# CommonMark's ATX heading: up to 3 spaces, 1 to 6 `#`s, then a space, a tab or the end of
# the line; the heading's text may end in a closing run of `#`s after a space or a tab.
_HEADING = re.compile(r" {0,3}#{1,6}(?=[ \t]|$)")
_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")


def _first_line(body: str) -> str:
    """The first non-empty line; of a Markdown heading, its text (`#tag` is no heading)."""
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading is not None:
            line = _CLOSING.sub("", line[heading.end() :].strip(" \t"))
        line = line.strip()
        if line:
            return line
    return ""


def _trimmed(text: str) -> str:
    """`text` without its leading and trailing blank (or whitespace-only) lines. Unlike
    `str.strip`, this keeps the first line's indentation, which may begin a code block."""
    lines = text.split("\n")
    kept = [i for i, line in enumerate(lines) if line.strip()]
    return "\n".join(lines[kept[0] : kept[-1] + 1]) if kept else ""


def _read(directory: str) -> Skill:
    path = os.path.join(directory, "SKILL.md")
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise ValueError(f"Skills: {path} is not UTF-8 text") from None
    fields, body = _front_matter(text.lstrip("\ufeff"), path)
    body = _trimmed(body)
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
    if not items:  # no place to look: every skill would be missing, and nothing would say so
        raise ValueError(
            f"Skills(paths=...) needs at least one directory (got {paths!r}); to use no "
            "skills, leave Skills out"
        )
    out: list[str] = []
    for item in items:
        location = _fspath(item)
        if location is None:
            raise TypeError(f"{expected} (got the item {type(item).__name__}: {item!r})")
        if not location:  # abspath("") is the current directory, chosen by no one
            raise ValueError(
                "Skills(paths=...) must name directories (got ''); for the current "
                "directory, pass '.'"
            )
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
