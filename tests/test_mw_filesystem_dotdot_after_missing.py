"""Filesystem goes up with `..` only from an existing directory, as the OS does: after a
missing component (`missing/../a.txt`, `a.txt/x/..`) or a file, the path names nothing, so
it is neither read, edited nor written, and `write_file` makes no directory on the way.
Paths whose `..` follows a directory (or a link to one) still work."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hookwrap.middleware import _filesystem
from hookwrap.middleware._filesystem import Filesystem, FilesystemError

TEXT = "original\n"
MISSING = "no such file or directory"


@pytest.fixture(params=[True, False], ids=["openat", "no openat"])
def fs(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(_filesystem, "_WALK", request.param and _filesystem._WALK)
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "b.txt").write_text("bee\n", encoding="utf-8")
    os.symlink("dir", tmp_path / "link")
    return {t.name: t for t in Filesystem(tmp_path, allow_write=True).tools}


def refused(call: Any) -> None:
    with pytest.raises(FilesystemError) as caught:
        call()
    assert MISSING in str(caught.value)


def entries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "path", ["a.txt/x/..", "a.txt/x/y/..", "missing/../a.txt", "dir/missing/../b.txt"]
)
def test_dotdot_after_a_missing_component_is_refused_and_the_file_is_untouched(
    fs: Any, tmp_path: Path, path: str
) -> None:
    before = entries(tmp_path)
    refused(lambda: fs["read_file"](path))
    refused(lambda: fs["edit_file"](path, "original", "edited"))
    refused(lambda: fs["write_file"](path, "clobbered\n"))
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == TEXT
    assert (tmp_path / "dir" / "b.txt").read_text(encoding="utf-8") == "bee\n"
    assert entries(tmp_path) == before


@pytest.mark.parametrize("path", ["missing/..", "a.txt/x/..", "dir/missing/.."])
def test_listing_dotdot_after_a_missing_component_is_refused(fs: Any, path: str) -> None:
    refused(lambda: fs["list_files"](path))


@pytest.mark.parametrize("path", ["newdir/../n3.txt", "new/deeper/../../n3.txt", "a.txt/new/.."])
def test_write_through_a_missing_directory_and_dotdot_makes_nothing(
    fs: Any, tmp_path: Path, path: str
) -> None:
    before = entries(tmp_path)
    refused(lambda: fs["write_file"](path, "x"))
    assert entries(tmp_path) == before
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == TEXT


def test_dotdot_after_a_directory_or_a_link_to_one_still_works(fs: Any, tmp_path: Path) -> None:
    assert fs["read_file"]("dir/../a.txt") == TEXT
    assert fs["read_file"]("link/../a.txt") == TEXT
    assert fs["read_file"]("dir/sub/../b.txt") == "bee\n"
    assert fs["list_files"]("dir/sub/..") == ["b.txt", "sub/"]
    assert fs["list_files"]("link/sub/..") == ["b.txt", "sub/"]
    assert fs["list_files"]("dir/..") == ["a.txt", "dir/", "link/"]
    fs["write_file"]("dir/../new.txt", "n\n")
    assert (tmp_path / "new.txt").read_text(encoding="utf-8") == "n\n"


def test_write_still_makes_missing_directories_of_a_plain_path(fs: Any, tmp_path: Path) -> None:
    fs["write_file"]("new/dir/f.txt", "f\n")
    assert (tmp_path / "new" / "dir" / "f.txt").read_text(encoding="utf-8") == "f\n"
