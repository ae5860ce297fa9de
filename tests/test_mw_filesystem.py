"""Filesystem (SPEC §8): list/read (and with writes, write/edit) tools confined to a root;
`..`, absolute paths, symbolic links out of the root, NUL bytes and device files, FIFOs and
sockets are refused with a `FilesystemError`, also when the tree changes under a call."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import socket
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import _filesystem
from hookwrap.middleware._filesystem import Filesystem, FilesystemError
from hookwrap.testing import FakeProvider

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, FIFOs, sockets")

SECRET = "the secret outside the root\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text(SECRET, encoding="utf-8")
    return directory


@pytest.fixture
def root(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A root with files, links inside and out, a FIFO, a socket and a looping link."""
    root = tmp_path / "root"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (root / "sub" / "inner.txt").write_text("inner\n", encoding="utf-8")
    (root / "sub" / "deeper" / "x.txt").write_text("x", encoding="utf-8")
    (root / "in_link").symlink_to("notes.txt")
    (root / "in_dir").symlink_to("sub", target_is_directory=True)
    (root / "out_file").symlink_to(outside / "secret.txt")
    (root / "out_dir").symlink_to(outside, target_is_directory=True)
    (root / "out_rel").symlink_to("../outside/secret.txt")
    (root / "devnull").symlink_to("/dev/null")
    (root / "loop").symlink_to("loop")
    os.mkfifo(root / "fifo")
    monkeypatch.chdir(root)  # a relative name keeps the socket's path short enough
    server = socket.socket(socket.AF_UNIX)
    server.bind("sock")
    server.close()
    return root


def tools(fs: Filesystem) -> dict[str, Any]:
    return {t.name: t for t in fs.tools}


def refused(fn: Callable[[], object], *fragments: str) -> str:
    with pytest.raises(FilesystemError) as info:
        fn()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# -- construction ------------------------------------------------------------------------


def test_root_is_resolved_and_may_be_a_str_or_a_path(root: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(root, target_is_directory=True)
    assert Filesystem(root=str(root)).root == str(root)
    assert Filesystem(root=tmp_path / "alias").root == os.path.realpath(root)
    assert isinstance(Filesystem(root=root), hw.Middleware)
    assert repr(Filesystem(root=root, prefix="fs_")) == (
        f"Filesystem(root={str(root)!r}, allow_write=False, prefix='fs_')"
    )


def test_bad_arguments_are_refused_at_construction(root: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Filesystem\(root=...\).*which does not exist"):
        Filesystem(root=tmp_path / "missing")
    with pytest.raises(ValueError, match=r"Filesystem\(root=...\).*which is not a directory"):
        Filesystem(root=root / "notes.txt")
    with pytest.raises(TypeError, match=r"Filesystem\(root=...\) must be a str or os.PathLike"):
        Filesystem(root=123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got bytes"):
        Filesystem(root=bytes(root))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Filesystem\(allow_write=...\) must be True or False"):
        Filesystem(root=root, allow_write=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Filesystem\(prefix=...\) must be a str"):
        Filesystem(root=root, prefix=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Filesystem\(prefix=...\) may hold only .*'fs\.'"):
        Filesystem(root=root, prefix="fs.")
    with pytest.raises(TypeError):
        Filesystem(str(root), False)  # type: ignore[misc]
    assert Filesystem(str(root)).root == Filesystem(root=root).root  # root: either way


# -- the tools and their specs -----------------------------------------------------------


def test_writes_exist_only_with_allow_write(root: Path) -> None:
    assert list(tools(Filesystem(root=root))) == ["list_files", "read_file"]
    assert list(tools(Filesystem(root=root, allow_write=True))) == [
        "list_files",
        "read_file",
        "write_file",
        "edit_file",
    ]


def test_prefix_names_every_tool_and_the_hints_in_refusals(root: Path) -> None:
    fs = tools(Filesystem(root=root, allow_write=True, prefix="fs_"))
    assert list(fs) == ["fs_list_files", "fs_read_file", "fs_write_file", "fs_edit_file"]
    assert [t.spec.name for t in fs.values()] == list(fs)
    refused(lambda: fs["fs_read_file"]("sub"), "'sub' is a directory", "use fs_list_files")
    refused(lambda: fs["fs_list_files"]("notes.txt"), "is a file", "use fs_read_file")


def test_specs_carry_json_schemas_from_the_signatures(root: Path) -> None:
    fs = tools(Filesystem(root=root, allow_write=True))
    params = {name: json.loads(json.dumps(t.spec.parameters)) for name, t in fs.items()}
    path = {"type": "string", "description": "the file, relative to the root."}
    assert params["list_files"] == {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": 'the directory, relative to the root ("." is the root itself).',
                "default": ".",
            }
        },
    }
    assert params["read_file"] == {
        "type": "object",
        "properties": {
            "path": path,
            "offset": {
                "type": "integer",
                "description": "how many lines to skip from the start.",
                "default": 0,
            },
            "limit": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "description": "the most lines to return (all the rest when not given).",
                "default": None,
            },
        },
        "required": ["path"],
    }
    assert params["write_file"]["required"] == ["path", "content"]
    assert params["write_file"]["properties"]["path"] == path
    assert params["edit_file"]["required"] == ["path", "old", "new"]
    assert set(params["edit_file"]["properties"]) == {"path", "old", "new"}
    for tool in fs.values():
        assert tool.spec.description
        assert "self" not in tool.spec.parameters["properties"]
    assert fs["read_file"].spec.description.startswith("Read a UTF-8 text file.")


# -- list_files ----------------------------------------------------------------------------


def test_list_files_shows_what_the_other_tools_can_open(root: Path) -> None:
    list_files = tools(Filesystem(root=root))["list_files"]
    # out_*, devnull and loop lead nowhere usable; fifo and sock are not regular files
    assert list_files() == ["in_dir/", "in_link", "notes.txt", "sub/"]
    assert list_files(".") == list_files("") == list_files("sub/..") == list_files()
    assert list_files("sub") == ["deeper/", "inner.txt"]
    assert list_files("in_dir/deeper") == ["x.txt"]
    refused(lambda: list_files("missing"), "no such file or directory: 'missing'")
    refused(lambda: list_files("out_dir"), "outside the root (through a symbolic link)")
    refused(lambda: list_files(".."), "path '..' is outside the root")
    refused(lambda: list_files("fifo"), "'fifo' is a FIFO")


# -- read_file -----------------------------------------------------------------------------


def test_read_file_reads_text_whole_or_in_parts(root: Path) -> None:
    read_file = tools(Filesystem(root=root))["read_file"]
    assert read_file("notes.txt") == "one\ntwo\nthree\n"
    assert read_file("notes.txt", offset=1) == "two\nthree\n"
    assert read_file("notes.txt", offset=1, limit=1) == "two\n"
    assert read_file("notes.txt", limit=5) == "one\ntwo\nthree\n"
    assert read_file("./sub/../notes.txt") == "one\ntwo\nthree\n"
    assert read_file("in_link") == "one\ntwo\nthree\n"
    assert read_file("in_dir/inner.txt") == "inner\n"
    refused(lambda: read_file("notes.txt", offset=3), "has 3 lines; offset=3 leaves no line")
    refused(lambda: read_file("notes.txt", offset=-1), "offset must be 0 or more")
    refused(lambda: read_file("notes.txt", limit=0), "limit must be 1 or more")


def test_an_offset_that_skips_every_line_says_how_many_lines_there_are(root: Path) -> None:
    (root / "one.txt").write_text("only line\n", encoding="utf-8")
    (root / "empty.txt").write_text("", encoding="utf-8")
    read_file = tools(Filesystem(root=root))["read_file"]
    assert read_file("one.txt", offset=0) == "only line\n"
    assert read_file("empty.txt") == ""
    message = refused(lambda: read_file("one.txt", offset=1), "'one.txt' has 1 line; offset=1")
    assert message.endswith("(expected an offset below 1)")
    message = refused(lambda: read_file("notes.txt", offset=7, limit=1), "has 3 lines; offset=7")
    assert message.endswith("(expected an offset below 3)")
    message = refused(lambda: read_file("empty.txt", offset=1), "'empty.txt' has 0 lines")
    assert message.endswith("(expected offset=0)")


def test_read_file_keeps_line_endings_and_unicode(root: Path) -> None:
    (root / "crlf.txt").write_bytes("é\r\nü\r\n".encode())
    read_file = tools(Filesystem(root=root))["read_file"]
    assert read_file("crlf.txt") == "é\r\nü\r\n"
    assert read_file("crlf.txt", offset=1) == "ü\r\n"


def test_binary_and_undecodable_files_are_refused(root: Path) -> None:
    (root / "zeros.bin").write_bytes(b"abc\0def")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    read_file = tools(Filesystem(root=root))["read_file"]
    refused(lambda: read_file("zeros.bin"), "'zeros.bin' is a binary file")
    refused(lambda: read_file("latin1.txt"), "'latin1.txt' is not UTF-8 text")


def test_a_file_too_long_to_read_at_once_is_refused_with_a_way_out(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {i:03}\n" for i in range(100)), "utf-8")
    fs = Filesystem(root=root)
    fs.max_chars = 50  # five lines of 9 characters fit
    read_file = tools(fs)["read_file"]
    refused(lambda: read_file("long.txt"), "too long to read at once", "offset=0, limit=5")
    assert read_file("long.txt", offset=95, limit=5) == "".join(
        f"line {i:03}\n" for i in range(95, 100)
    )
    (root / "wide.txt").write_text("x" * 51, "utf-8")
    refused(lambda: read_file("wide.txt", limit=1), "line 1 of 'wide.txt' is longer than 50")


# -- refusals ----------------------------------------------------------------------------

OUTSIDE = "outside the root"
THROUGH_LINK = "outside the root (through a symbolic link)"
REFUSALS = [
    ("../outside/secret.txt", "path '../outside/secret.txt' is " + OUTSIDE),
    ("sub/../../outside/secret.txt", OUTSIDE),  # a/../../x
    ("sub/deeper/../../../outside/secret.txt", OUTSIDE),
    ("out_file", THROUGH_LINK),  # a link to a file outside
    ("out_rel", THROUGH_LINK),  # a relative link climbing out
    ("out_dir/secret.txt", THROUGH_LINK),  # a linked directory pointing out
    ("in_dir/../out_dir/secret.txt", THROUGH_LINK),
    ("devnull", THROUGH_LINK),  # a device, through a link
    ("/etc/passwd", "path '/etc/passwd' is absolute"),
    ("notes.txt\0.png", "contains a NUL byte"),
    ("fifo", "'fifo' is a FIFO"),
    ("sock", "'sock' is a socket"),
    ("loop", "symbolic link"),
    ("missing.txt", "no such file or directory: 'missing.txt'"),
    ("notes.txt/x", "no such file or directory"),
    ("sub", "'sub' is a directory, not a file"),
    (".", "names a directory"),
    ("notes.txt/", "names a directory"),
]


@pytest.mark.parametrize(("path", "message"), REFUSALS)
def test_read_file_refuses(root: Path, path: str, message: str) -> None:
    read_file = tools(Filesystem(root=root))["read_file"]
    refused(lambda: read_file(path), message)


@pytest.mark.parametrize("walk", [True, False], ids=["openat", "no openat"])
def test_a_path_through_a_link_out_of_the_root_is_refused_even_if_it_comes_back(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, walk: bool
) -> None:
    """Only the end of `sub/up/root/notes.txt` is inside; had it been read, the model could
    learn what lies outside (`sub/up/outside/../root/notes.txt` works only if it exists)."""
    monkeypatch.setattr(_filesystem, "_WALK", walk and _filesystem._WALK)
    (root / "sub" / "up").symlink_to("../..", target_is_directory=True)  # the root's parent
    (root / "here").symlink_to(".", target_is_directory=True)  # the root itself
    (root / "abs_sub").symlink_to(root / "sub", target_is_directory=True)
    fs = tools(Filesystem(root=root, allow_write=True))
    for path in (
        "sub/up/root/notes.txt",
        "sub/up/outside/../root/notes.txt",
        "sub/up/missing/../root/notes.txt",
        "in_dir/up/root/notes.txt",
        "here/../root/notes.txt",  # `..` from the root, through a link to it
        "here/sub/up/root/sub/inner.txt",
    ):
        refused(functools.partial(fs["read_file"], path), f"path {path!r} is {THROUGH_LINK}")
        refused(functools.partial(fs["edit_file"], path, "one", "1"), THROUGH_LINK)
    refused(lambda: fs["list_files"]("sub/up/root"), THROUGH_LINK)
    refused(lambda: fs["list_files"]("here/.."), THROUGH_LINK)
    refused(lambda: fs["write_file"]("sub/up/root/new.txt", "x"), THROUGH_LINK)
    refused(lambda: fs["write_file"]("sub/up/outside/new.txt", "x"), THROUGH_LINK)
    assert not (root / "new.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (root / "notes.txt").read_text("utf-8") == "one\ntwo\nthree\n"
    # links that stay inside, relative or absolute, still work
    assert fs["list_files"]("sub") == ["deeper/", "inner.txt"]  # `up` is left out
    assert fs["read_file"]("here/notes.txt") == "one\ntwo\nthree\n"
    assert fs["read_file"]("here/in_dir/../notes.txt") == "one\ntwo\nthree\n"
    assert fs["read_file"]("abs_sub/inner.txt") == "inner\n"
    assert fs["write_file"]("here/abs_sub/made.txt", "made") == (
        "wrote 4 characters to 'here/abs_sub/made.txt'"
    )
    assert (root / "sub" / "made.txt").read_text("utf-8") == "made"


@pytest.mark.parametrize("path", ["../root/notes.txt", "sub/../../root/notes.txt", "../root"])
def test_dotdot_out_of_the_root_and_back_in_is_refused_without_naming_a_link(
    root: Path, path: str
) -> None:
    """The path leaves the root as written, whose directory is named `root`; no link is
    involved, so the message must not blame one."""
    fs = tools(Filesystem(root=root))
    expected = f"path {path!r} is outside the root"
    assert refused(lambda: fs["read_file"](path)) == expected
    assert refused(lambda: fs["list_files"](path)) == expected


def test_a_missing_file_is_refused_with_the_listing_tool_to_use(root: Path) -> None:
    plain = tools(Filesystem(root=root))
    prefixed = tools(Filesystem(root=root, prefix="fs_"))
    assert refused(lambda: plain["read_file"]("x")) == (
        "no such file or directory: 'x'; list_files shows what exists"
    )
    assert refused(lambda: prefixed["fs_read_file"]("x")) == (
        "no such file or directory: 'x'; fs_list_files shows what exists"
    )


def test_an_absolute_path_into_the_root_is_refused_too(root: Path) -> None:
    read_file = tools(Filesystem(root=root))["read_file"]
    refused(lambda: read_file(str(root / "notes.txt")), "is absolute")


def test_a_device_file_inside_the_root_is_refused() -> None:
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    assert "null" not in tools(Filesystem(root="/dev"))["list_files"]()
    refused(lambda: tools(Filesystem(root="/dev"))["read_file"]("null"), "is a device file")
    refused(lambda: tools(Filesystem(root="/"))["read_file"]("dev/null"), "is a device file")


def test_refusals_carry_no_path_of_the_machine(root: Path) -> None:
    read_file = tools(Filesystem(root=root))["read_file"]
    for path, _ in REFUSALS:
        with pytest.raises(FilesystemError) as info:
            read_file(path)
        # neither the message nor a chained OSError (whose text holds the full path)
        shown = "".join(traceback.format_exception(info.value))
        assert str(root) not in shown


# -- write_file and edit_file --------------------------------------------------------------


def test_write_file_creates_parents_and_replaces_whole_files(root: Path) -> None:
    fs = tools(Filesystem(root=root, allow_write=True))
    assert fs["write_file"]("a/b/c.txt", "héllo\r\n") == "wrote 7 characters to 'a/b/c.txt'"
    assert (root / "a" / "b" / "c.txt").read_bytes() == "héllo\r\n".encode()
    fs["write_file"]("notes.txt", "short")
    assert (root / "notes.txt").read_text("utf-8") == "short"
    fs["write_file"]("in_link", "through an inside link")  # writes the link's target
    assert (root / "notes.txt").read_text("utf-8") == "through an inside link"
    assert (root / "in_link").is_symlink()
    fs["write_file"]("in_dir/new.txt", "new")
    assert (root / "sub" / "new.txt").read_text("utf-8") == "new"


WRITE_REFUSALS = [
    ("../outside/new.txt", OUTSIDE),
    ("sub/../../outside/new.txt", OUTSIDE),
    ("out_dir/new.txt", THROUGH_LINK),
    ("out_dir/deep/new.txt", THROUGH_LINK),
    ("out_file", THROUGH_LINK),
    ("devnull", THROUGH_LINK),
    ("fifo", "'fifo' is a FIFO"),  # and does not wait for a reader
    ("sock", "'sock' is a socket"),
    ("sub", "is a directory"),
    ("new/", "names a directory"),
    ("", "names a directory"),
    ("x\0y", "NUL"),
]


@pytest.mark.parametrize(("path", "message"), WRITE_REFUSALS)
def test_write_file_refuses(root: Path, outside: Path, path: str, message: str) -> None:
    write_file = tools(Filesystem(root=root, allow_write=True))["write_file"]
    before = sorted(p.name for p in outside.rglob("*"))
    refused(lambda: write_file(path, "pwned"), message)
    assert sorted(p.name for p in outside.rglob("*")) == before
    assert (outside / "secret.txt").read_text("utf-8") == SECRET


def test_write_file_refuses_an_absolute_path(root: Path, outside: Path) -> None:
    write_file = tools(Filesystem(root=root, allow_write=True))["write_file"]
    refused(lambda: write_file(str(outside / "new.txt"), "pwned"), "is absolute")
    assert not (outside / "new.txt").exists()


def test_edit_file_replaces_exactly_one_occurrence(root: Path) -> None:
    edit_file = tools(Filesystem(root=root, allow_write=True))["edit_file"]
    assert edit_file("notes.txt", "two\n", "2\n") == "replaced 1 occurrence in 'notes.txt'"
    assert (root / "notes.txt").read_text("utf-8") == "one\n2\nthree\n"
    edit_file("notes.txt", "three\n", "")  # shorter: the rest is cut off
    assert (root / "notes.txt").read_text("utf-8") == "one\n2\n"
    edit_file("in_link", "one", "один")
    assert (root / "notes.txt").read_text("utf-8") == "один\n2\n"


def test_edit_file_refuses_missing_repeated_or_empty_old_text(root: Path) -> None:
    (root / "twice.txt").write_text("a-b-a", "utf-8")
    (root / "zeros.bin").write_bytes(b"a\0a")
    fs = Filesystem(root=root, allow_write=True)
    edit_file = tools(fs)["edit_file"]
    refused(lambda: edit_file("notes.txt", "four", "4"), "occurs 0 times in 'notes.txt'")
    refused(lambda: edit_file("twice.txt", "a", "c"), "occurs 2 times", "exactly once")
    refused(lambda: edit_file("twice.txt", "", "c"), "old must not be empty")
    refused(lambda: edit_file("zeros.bin", "a", "c"), "binary")
    refused(lambda: edit_file("out_file", "secret", "x"), THROUGH_LINK)
    refused(lambda: edit_file("missing.txt", "a", "c"), "no such file")
    fs.max_chars = 3
    refused(lambda: edit_file("notes.txt", "one", "1"), "too large to edit")
    assert (root / "twice.txt").read_text("utf-8") == "a-b-a"
    assert (root / "notes.txt").read_text("utf-8") == "one\ntwo\nthree\n"


# -- a tree that changes between the check and the open ------------------------------------


@pytest.fixture
def swap(root: Path, outside: Path) -> Callable[[Path], None]:
    """Replace a file or directory in the root with a link out, as a racing process would."""

    def replace(path: Path) -> None:
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
            path.symlink_to(outside, target_is_directory=True)
        else:
            path.unlink()
            path.symlink_to(outside / "secret.txt")

    return replace


def _racing(fs: Filesystem, monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> None:
    """Run `act` once, after the next path is checked and just before it is opened."""
    check = fs._precheck  # pyright: ignore[reportPrivateUsage]

    def late(*args: Any, **kwargs: Any) -> None:
        check(*args, **kwargs)
        monkeypatch.setattr(fs, "_precheck", check)
        act()

    monkeypatch.setattr(fs, "_precheck", late)


needs_openat = pytest.mark.skipif(
    not _filesystem._WALK,  # pyright: ignore[reportPrivateUsage]
    reason="needs openat (dir_fd) and O_NOFOLLOW",
)


@needs_openat
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "list_files"])
def test_a_directory_swapped_for_a_link_out_after_the_check_is_not_followed(
    root: Path,
    outside: Path,
    swap: Callable[[Path], None],
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
) -> None:
    (root / "race").mkdir()
    (root / "race" / "secret.txt").write_text("inside\n", "utf-8")
    fs = Filesystem(root=root, allow_write=True)
    _racing(fs, monkeypatch, lambda: swap(root / "race"))
    arguments = {
        "read_file": ("race/secret.txt",),
        "write_file": ("race/secret.txt", "pwned"),
        "edit_file": ("race/secret.txt", "secret", "pwned"),
        "list_files": ("race",),
    }[tool]
    refused(lambda: tools(fs)[tool](*arguments), "symbolic link that loops, or changed")
    assert (root / "race").is_symlink()  # the swap did happen
    assert (outside / "secret.txt").read_text("utf-8") == SECRET


@needs_openat
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
def test_a_file_swapped_for_a_link_out_after_the_check_is_not_followed(
    root: Path,
    outside: Path,
    swap: Callable[[Path], None],
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
) -> None:
    (root / "victim.txt").write_text("inside secret\n", "utf-8")
    fs = Filesystem(root=root, allow_write=True)
    _racing(fs, monkeypatch, lambda: swap(root / "victim.txt"))
    arguments = {
        "read_file": ("victim.txt",),
        "write_file": ("victim.txt", "pwned"),
        "edit_file": ("victim.txt", "secret", "pwned"),
    }[tool]
    refused(lambda: tools(fs)[tool](*arguments), "symbolic link")
    assert (root / "victim.txt").is_symlink()
    assert (outside / "secret.txt").read_text("utf-8") == SECRET


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "pipe").write_text("inside\n", "utf-8")
    fs = Filesystem(root=root, allow_write=True)

    def to_fifo() -> None:
        (root / "pipe").unlink()
        os.mkfifo(root / "pipe")

    _racing(fs, monkeypatch, to_fifo)
    refused(lambda: tools(fs)["read_file"]("pipe"), "'pipe' is a FIFO")


def test_without_openat_the_resolved_path_check_still_confines(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_filesystem, "_WALK", False)
    fs = tools(Filesystem(root=root, allow_write=True))
    assert fs["list_files"]() == ["in_dir/", "in_link", "notes.txt", "sub/"]
    assert fs["read_file"]("in_dir/inner.txt") == "inner\n"
    fs["write_file"]("made/here.txt", "ok")
    assert (root / "made" / "here.txt").read_text("utf-8") == "ok"
    fs["edit_file"]("made/here.txt", "ok", "fine")
    assert (root / "made" / "here.txt").read_text("utf-8") == "fine"
    for path, message in REFUSALS:
        refused(lambda path=path: fs["read_file"](path), message)  # type: ignore[misc]
    refused(lambda: fs["write_file"]("out_dir/x.txt", "pwned"), THROUGH_LINK)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


# -- calls from a model ----------------------------------------------------------------------


def test_invoke_structures_json_arguments(root: Path) -> None:
    fs = tools(Filesystem(root=root, allow_write=True))

    def call(name: str, **arguments: Any) -> Any:
        return fs[name].invoke(hw.ToolCall(id="call_1", name=name, arguments=arguments))

    assert call("list_files", path="sub") == ["deeper/", "inner.txt"]
    assert call("read_file", path="notes.txt", offset=2) == "three\n"
    assert call("write_file", path="w.txt", content="w") == "wrote 1 characters to 'w.txt'"
    assert call("edit_file", path="w.txt", old="w", new="v") == "replaced 1 occurrence in 'w.txt'"
    assert (root / "w.txt").read_text("utf-8") == "v"
    with pytest.raises(FilesystemError, match="outside the root"):
        call("read_file", path="../outside/secret.txt")
    with pytest.raises(hw.ToolArgumentError, match="argument 'offset' of read_file"):
        call("read_file", path="notes.txt", offset="two")
    with pytest.raises(hw.ToolArgumentError, match="missing argument"):
        call("write_file", path="w.txt")


def test_ainvoke_runs_the_tools_for_async_callers(root: Path) -> None:
    read_file = tools(Filesystem(root=root, prefix="fs_"))["fs_read_file"]

    async def main() -> tuple[Any, BaseException]:
        text = await read_file.ainvoke(
            hw.ToolCall(id="1", name="fs_read_file", arguments={"path": "in_link", "limit": 1})
        )
        try:
            await read_file.ainvoke(
                hw.ToolCall(id="2", name="fs_read_file", arguments={"path": "fifo"})
            )
        except FilesystemError as exc:
            return text, exc
        raise AssertionError("not refused")

    text, error = asyncio.run(main())
    assert text == "one\n"
    assert "'fifo' is a FIFO" in str(error)


def test_a_tool_call_from_a_real_sdk_client_runs_against_the_root(root: Path) -> None:
    openai = pytest.importorskip("openai")
    fs = Filesystem(root=root, prefix="fs_")
    by_name = tools(fs)
    asked = hw.ToolCall(id="call_7", name="fs_read_file", arguments={"path": "sub/inner.txt"})
    provider = FakeProvider([hw.Message.assistant(tool_calls=[asked])])
    client = provider.openai()
    specs = [
        {
            "type": "function",
            "function": {
                "name": t.spec.name,
                "description": t.spec.description,
                "parameters": dict(t.spec.parameters),
            },
        }
        for t in fs.tools
    ]
    completion = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "what is inside?"}], tools=specs
    )
    assert isinstance(completion, openai.types.chat.ChatCompletion)
    sent = provider.requests[0].body["tools"]
    assert [t["function"]["name"] for t in sent] == ["fs_list_files", "fs_read_file"]
    assert sent[1]["function"]["parameters"]["required"] == ["path"]
    (wanted,) = completion.choices[0].message.tool_calls
    call = hw.ToolCall(
        id=wanted.id, name=wanted.function.name, arguments=json.loads(wanted.function.arguments)
    )
    assert by_name[call.name].invoke(call) == "inner\n"
