"""`Filesystem`: tools that let a model list, read and (optionally) write files beneath one
directory, and nowhere else."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any

from .._hooks import Middleware
from .._wrap import Tool, tool

__all__ = ["Filesystem", "FilesystemError"]


class FilesystemError(ValueError):
    """A `Filesystem` tool refused a path or an edit; the message tells the model why."""


# Where the OS has openat(2), a file is opened one directory at a time from the root,
# never through a symbolic link, so a link swapped in after the path was checked cannot
# lead outside. Elsewhere (Windows) the check on the resolved path is the guard.
_WALK = (
    os.open in os.supports_dir_fd
    and os.scandir in os.supports_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
_FLAGS: int = _NOFOLLOW | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DIR_FLAGS: int = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _FLAGS
_PREFIX = re.compile(r"[A-Za-z0-9_-]*")
_PREFIX_MAX = 64 - len("list_files")  # a tool name is at most 64 characters
_SEPARATOR = re.compile("[" + re.escape(os.sep + (os.altsep or "")) + "]")


def _names_directory(path: str) -> bool:
    """Whether `path` as written can only name a directory: it ends in a separator or in a
    `.` component, as `a.txt/` and `a.txt/.` do (the OS refuses both for a file, while
    pathlib drops them and would leave `a.txt`)."""
    return _SEPARATOR.split(path)[-1] in ("", ".")


def _require_directory(real: str) -> None:
    """Refuse to go up from `real` unless it is an existing directory, as the OS does:
    `a.txt/..` is "not a directory", and `missing/..` and `a.txt/x/..` are "no such file
    or directory". Going up by the name alone would let `missing/../a.txt` read `a.txt`,
    and `new/../f.txt` make the directory `new` on the way to writing `f.txt`."""
    if not stat.S_ISDIR(os.stat(real).st_mode):  # OSError (ENOENT, ELOOP, ...) as the OS's
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))


def _special(mode: int) -> str | None:
    """What a file that is neither a regular file nor a directory is, for a refusal."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISLNK(mode):
        return "a symbolic link that cannot be followed (it loops, or changed meanwhile)"
    return "not a regular file"


class Filesystem(Middleware):
    """Tools for the files beneath `root`: `list_files` and `read_file`, and with
    `allow_write=True` also `write_file` and `edit_file`, each name after `prefix`.

    Paths from the model are relative to `root`. Absolute paths, `..` leading out, paths
    through a symbolic link that leads outside (even if the rest comes back in), NUL
    bytes, and FIFOs, sockets and device files are refused with a `FilesystemError` whose
    message tells the model what went wrong. Text is UTF-8; a read returns at most
    `max_chars` characters (longer files are read in parts, with `offset` and `limit`).

    Args:
        root: the directory the tools see (`str` or `os.PathLike`); it must exist.
        allow_write: also provide `write_file` and `edit_file`.
        prefix: put before each tool's name, e.g. ``"fs_"`` gives ``fs_read_file``.
    """

    name = "Filesystem"
    #: The most characters one `read_file` returns, and the largest file `edit_file` edits.
    max_chars: int = 262_144

    def __init__(
        self, root: str | os.PathLike[str], *, allow_write: bool = False, prefix: str = ""
    ) -> None:
        location: object = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
        if not isinstance(location, str):
            raise TypeError(
                "Filesystem(root=...) must be a str or os.PathLike naming a directory "
                f"(got {type(root).__name__}: {root!r})"
            )
        if not location:  # realpath("") is the current directory, chosen by no one
            raise ValueError(
                "Filesystem(root=...) must name a directory (got ''); for the current "
                "directory, pass '.'"
            )
        if "\0" in location:  # else os.path.realpath's bare "embedded null byte"
            raise ValueError(f"Filesystem(root=...) must not contain a NUL byte (got {root!r})")
        real = os.path.realpath(location)
        if not os.path.isdir(real):
            found = "is not a directory" if os.path.exists(real) else "does not exist"
            raise ValueError(
                f"Filesystem(root=...) must be an existing directory (got {root!r}, which {found})"
            )
        if not isinstance(allow_write, bool):
            raise TypeError(
                f"Filesystem(allow_write=...) must be True or False (got {allow_write!r})"
            )
        if not isinstance(prefix, str):
            raise TypeError(f"Filesystem(prefix=...) must be a str (got {prefix!r})")
        if not _PREFIX.fullmatch(prefix):
            raise ValueError(
                "Filesystem(prefix=...) may hold only letters, digits, '_' and '-', which "
                f"every provider accepts in a tool name (got {prefix!r})"
            )
        if len(prefix) > _PREFIX_MAX:
            raise ValueError(
                f"Filesystem(prefix=...) may hold at most {_PREFIX_MAX} characters, so that "
                f"'<prefix>list_files' is a tool name of at most 64, as every provider "
                f"requires (got {len(prefix)}: {prefix!r:.80})"
            )
        self.root = real
        self.allow_write = allow_write
        self.prefix = prefix
        tools: list[Tool[..., Any]] = [
            tool(self._list_files, name=f"{prefix}list_files"),
            tool(self._read_file, name=f"{prefix}read_file"),
        ]
        if allow_write:
            tools.append(tool(self._write_file, name=f"{prefix}write_file"))
            tools.append(tool(self._edit_file, name=f"{prefix}edit_file"))
        self.tools = tuple(tools)

    def __repr__(self) -> str:
        return (
            f"Filesystem(root={self.root!r}, allow_write={self.allow_write}, "
            f"prefix={self.prefix!r})"
        )

    # -- the tools (their docstrings are what the model reads) -----------------------------

    def _list_files(self, path: str = ".") -> list[str]:
        """List a directory: the names in it, sorted, directories ending with "/".

        Args:
            path: the directory, relative to the root ("." is the root itself).
        """
        with self._errors(path):
            parts = self._locate(path)
            self._precheck(path, parts, directory=True)
            if _WALK:
                fd = self._walk(parts)
                try:
                    with os.scandir(fd) as found:  # an entry's stat needs `fd` still open
                        names = [self._listed(parts, entry) for entry in found]
                finally:
                    os.close(fd)
            else:
                with os.scandir(self._full(parts)) as named:
                    names = [self._listed(parts, entry) for entry in named]
        return sorted(name for name in names if name is not None)

    def _read_file(self, path: str, offset: int = 0, limit: int | None = None) -> str:
        """Read a UTF-8 text file. Read a long file in parts: skip `offset` lines, return at
        most `limit` lines.

        Args:
            path: the file, relative to the root.
            offset: how many lines to skip from the start.
            limit: the most lines to return (all the rest when not given).
        """
        if offset < 0:
            raise FilesystemError(f"offset must be 0 or more (got {offset})")
        if limit is not None and limit < 1:
            raise FilesystemError(f"limit must be 1 or more (got {limit})")
        with (
            self._errors(path),
            open(self._open(path, os.O_RDONLY), encoding="utf-8", newline="") as file,
        ):
            return self._lines(path, file, offset, limit)

    def _write_file(self, path: str, content: str) -> str:
        """Write a UTF-8 text file, replacing it if it exists; missing directories are made.

        Args:
            path: the file, relative to the root.
            content: the whole new text of the file.
        """
        with self._errors(path):
            fd = self._open(path, os.O_WRONLY | os.O_CREAT, create=True)
            try:
                os.ftruncate(fd, 0)  # only now that it is known to be a regular file
            except BaseException:
                os.close(fd)
                raise
            with open(fd, "w", encoding="utf-8", newline="") as file:
                file.write(content)
        return f"wrote {len(content)} characters to {path!r}"

    def _edit_file(self, path: str, old: str, new: str) -> str:
        """Edit a UTF-8 text file: replace the text `old`, which must occur exactly once, by
        `new`. Include enough of the surrounding text in `old` to make it unique.

        Args:
            path: the file, relative to the root.
            old: the exact text to replace, whitespace included.
            new: the text to put in its place.
        """
        if not old:
            raise FilesystemError("old must not be empty: give the exact text to replace")
        with self._errors(path):
            fd = self._open(path, os.O_RDWR)
            with open(fd, "r+", encoding="utf-8", newline="") as file:
                text = self._decoded(path, lambda: file.read(self.max_chars + 1))
                if len(text) > self.max_chars:
                    raise FilesystemError(
                        f"{path!r} is too large to edit (over {self.max_chars} characters)"
                    )
                count = text.count(old)
                if count != 1:
                    raise FilesystemError(
                        f"the old text occurs {count} times in {path!r}; it must occur exactly "
                        "once (match it exactly, whitespace included, with enough of the "
                        "surrounding text to make it unique)"
                    )
                file.seek(0)
                file.write(text.replace(old, new, 1))
                file.truncate()
        return f"replaced 1 occurrence in {path!r}"

    # -- confinement ---------------------------------------------------------------------

    def _locate(self, path: str) -> tuple[str, ...]:
        """The components of `path` beneath the root, symbolic links resolved as they are
        now; a path leading anywhere else is refused."""
        if not isinstance(path, str):
            raise FilesystemError(f"a path must be a string (got {type(path).__name__})")
        if "\0" in path:
            raise FilesystemError(f"path {path!r} contains a NUL byte")
        if os.path.isabs(path):
            raise FilesystemError(
                f"path {path!r} is absolute; paths are relative to the root, e.g. 'notes.txt'"
            )
        joined = os.path.join(self.root, path)
        if not Path(os.path.normpath(joined)).is_relative_to(self.root):
            raise FilesystemError(f"path {path!r} is outside the root")
        # Resolve the path as the OS would, one component at a time (`..` after a symbolic
        # link leaves the link's target, not the link), and refuse it as soon as it is
        # outside: checking only where it ends up would let `up/<root's name>/x`, through a
        # link `up` to the root's parent, tell the model what lies outside. `depth` is how
        # deep the path is as written: a `..` taking it below the root leaves with no link
        # involved (`../<root's name>/x`), so any later step outside is through a link.
        real = self.root
        depth = 0
        for name in Path(joined).relative_to(self.root).parts:
            if name == "..":
                _require_directory(real)
                depth -= 1
                if depth < 0:
                    raise FilesystemError(f"path {path!r} is outside the root")
                real = os.path.dirname(real)
            elif name != ".":
                depth += 1
                real = os.path.join(real, name)
                if os.path.islink(real):
                    real = os.path.realpath(real)
            if not Path(real).is_relative_to(self.root):
                raise FilesystemError(
                    f"path {path!r} is outside the root (through a symbolic link)"
                )
        return Path(real).relative_to(self.root).parts

    def _full(self, parts: tuple[str, ...]) -> str:
        return os.path.join(self.root, *parts)

    def _precheck(
        self, path: str, parts: tuple[str, ...], *, directory: bool, create: bool = False
    ) -> None:
        """Refuse the wrong kind of file before opening it (opening a device or a FIFO can
        do things of its own); `_check` on the opened file settles any race."""
        try:
            mode = os.lstat(self._full(parts)).st_mode
        except FileNotFoundError:
            if create:
                return
            raise
        self._check(path, mode, directory=directory)

    def _check(self, path: str, mode: int, *, directory: bool) -> None:
        prefix = self.prefix
        if directory and stat.S_ISREG(mode):
            raise FilesystemError(f"{path!r} is a file, not a directory; use {prefix}read_file")
        if not directory and stat.S_ISDIR(mode):
            raise FilesystemError(f"{path!r} is a directory, not a file; use {prefix}list_files")
        kind = _special(mode)
        if kind is not None:
            raise FilesystemError(
                f"{path!r} is {kind}; only regular files and directories can be used"
            )

    def _walk(self, parts: tuple[str, ...], create: bool = False) -> int:
        """A descriptor of the directory `parts` names, opened one component at a time
        from the root without following symbolic links (made if missing, with `create`)."""
        fd = os.open(self.root, _DIR_FLAGS)
        for name in parts:
            try:
                if create:
                    try:
                        os.mkdir(name, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except NotADirectoryError:  # Linux's answer for a link under O_DIRECTORY
                    if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        raise OSError(errno.ELOOP, "a symbolic link in the way") from None
                    raise
            finally:
                os.close(fd)
            fd = child
        return fd

    def _open(self, path: str, flags: int, *, create: bool = False) -> int:
        """A descriptor of the regular file `path`, opened beneath the root."""
        parts = self._locate(path)
        if not parts or _names_directory(path):
            raise FilesystemError(f"{path!r} names a directory, not a file")
        self._precheck(path, parts, directory=False, create=create)
        if _WALK:
            parent = self._walk(parts[:-1], create)
            try:
                fd = os.open(parts[-1], flags | _FLAGS, 0o666, dir_fd=parent)
            finally:
                os.close(parent)
        else:
            if create:
                os.makedirs(self._full(parts[:-1]), exist_ok=True)
            fd = os.open(self._full(parts), flags | _FLAGS, 0o666)
        try:
            self._check(path, os.fstat(fd).st_mode, directory=False)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def _errors(self, path: str) -> Generator[None, None, None]:
        """OS errors as refusals the model can act on (and without the machine's paths)."""
        try:
            yield
        except OSError as exc:
            raise FilesystemError(self._explain(path, exc)) from None

    def _explain(self, path: str, exc: OSError) -> str:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"no such file or directory: {path!r}; {self.prefix}list_files shows what exists"
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: O_NOFOLLOW on BSDs
            return f"{path!r} goes through a symbolic link that loops, or changed meanwhile"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"permission denied: {path!r}"
        if exc.errno == errno.EISDIR:
            return f"{path!r} is a directory, not a file; use {self.prefix}list_files"
        if exc.errno == errno.ENXIO:
            return f"{path!r} is not a regular file"
        return f"cannot use {path!r}: {exc.strerror or type(exc).__name__}"

    def _listed(self, parts: tuple[str, ...], entry: os.DirEntry[str]) -> str | None:
        """How `list_files` shows an entry; None for one the other tools would refuse."""
        try:
            if entry.is_symlink():
                target = self._locate("/".join((*parts, entry.name)))
                mode = os.stat(self._full(target)).st_mode
            else:
                mode = entry.stat(follow_symlinks=False).st_mode
        except (OSError, FilesystemError):
            return None
        if stat.S_ISDIR(mode):
            return f"{entry.name}/"
        return entry.name if stat.S_ISREG(mode) else None

    # -- text ----------------------------------------------------------------------------

    def _decoded(self, path: str, read: Callable[[], str]) -> str:
        try:
            text = read()
        except UnicodeDecodeError:
            raise FilesystemError(f"{path!r} is not UTF-8 text (a binary file?)") from None
        if "\0" in text:
            raise FilesystemError(f"{path!r} is a binary file, not text")
        return text

    def _lines(self, path: str, file: IO[str], offset: int, limit: int | None) -> str:
        cap = self.max_chars
        out: list[str] = []
        size = 0
        seen = 0
        while limit is None or len(out) < limit:
            line = self._decoded(path, lambda: file.readline(cap + 1))
            if not line:
                break
            seen += 1
            if len(line) > cap:
                raise FilesystemError(
                    f"line {seen} of {path!r} is longer than {cap} characters; not readable"
                )
            if seen <= offset:
                continue
            size += len(line)
            if size > cap:
                raise FilesystemError(
                    f"{path!r} is too long to read at once (over {cap} characters); read it "
                    f"in parts with offset and limit, e.g. offset={offset}, limit={len(out)}"
                )
            out.append(line)
        if offset and seen <= offset:
            count = "1 line" if seen == 1 else f"{seen} lines"
            expected = f"an offset below {seen}" if seen else "offset=0"
            raise FilesystemError(
                f"{path!r} has {count}; offset={offset} leaves no line to read "
                f"(expected {expected})"
            )
        return "".join(out)
