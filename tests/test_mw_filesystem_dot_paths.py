"""Filesystem resolves a path as the OS does: nothing is beneath a file, so `a.txt/.`
names a directory (refused for a file, as `a.txt/` is) and `a.txt/..` does not exist,
where pathlib, dropping the `.` and `..` after a file, would leave the file itself. And a
root holding a NUL byte is refused naming `Filesystem(root=...)`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hookwrap.middleware import _filesystem
from hookwrap.middleware._filesystem import Filesystem, FilesystemError

TEXT = "hello\n"


@pytest.fixture(params=[True, False], ids=["openat", "no openat"])
def fs(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(_filesystem, "_WALK", request.param and _filesystem._WALK)
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.txt").write_text("bee\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    return {t.name: t for t in Filesystem(tmp_path, allow_write=True).tools}


def refused(call: Any, message: str) -> None:
    with pytest.raises(FilesystemError) as caught:
        call()
    assert message in str(caught.value)


@pytest.mark.parametrize("path", ["a.txt/.", "a.txt/./.", "a.txt//.", "a.txt/"])
def test_a_file_followed_by_dot_names_a_directory_and_is_not_read_or_written(
    fs: Any, tmp_path: Path, path: str
) -> None:
    named = f"{path!r} names a directory, not a file"
    refused(lambda: fs["read_file"](path), named)
    refused(lambda: fs["write_file"](path, "overwritten"), named)
    refused(lambda: fs["edit_file"](path, "hello", "bye"), named)
    refused(lambda: fs["list_files"](path), f"{path!r} is a file, not a directory")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == TEXT


@pytest.mark.parametrize("path", ["a.txt/..", "a.txt/../b.txt", "a.txt/./../b.txt"])
def test_going_up_from_a_file_finds_nothing(fs: Any, tmp_path: Path, path: str) -> None:
    missing = f"no such file or directory: {path!r}"
    refused(lambda: fs["read_file"](path), missing)
    refused(lambda: fs["write_file"](path, "overwritten"), missing)
    refused(lambda: fs["list_files"](path), missing)
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "bee\n"


def test_dots_after_a_directory_still_work(fs: Any) -> None:
    assert fs["read_file"]("sub/../b.txt") == "bee\n"
    assert fs["read_file"]("./sub/./../b.txt") == "bee\n"
    assert fs["list_files"]("sub/.") == []
    assert fs["list_files"]("sub/..") == ["a.txt", "b.txt", "sub/"]
    refused(lambda: fs["read_file"]("sub/."), "directory, not a file")


@pytest.mark.skipif(os.name != "posix", reason="a symbolic link")
def test_a_link_to_a_file_followed_by_dot_is_refused_too(fs: Any, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("a.txt")
    refused(lambda: fs["read_file"]("link/."), "names a directory, not a file")
    refused(lambda: fs["read_file"]("link/../b.txt"), "no such file or directory")


@pytest.mark.parametrize("root", ["work\0space", Path("work\0space")])
def test_a_root_with_a_nul_byte_is_refused_naming_the_argument(root: str | Path) -> None:
    with pytest.raises(ValueError, match=r"Filesystem\(root=\.\.\.\) must not contain a NUL"):
        Filesystem(root)
