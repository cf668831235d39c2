"""The env's home as the host-side setup and evaluate functions see it: no link leads out of it.

These functions run as this process's user (root, often), while the home belongs to the sandbox,
where the task's and the agent's programs can create a symlink at any moment. A path checked once
(:meth:`~hud_gym.controllers.ubuntu.controller.UbuntuController.resolve_path`) could be swapped
for ``~/x -> /etc/shadow`` before it is opened. So every access below resolves the path relative
to an open descriptor of the home with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)``: the
kernel refuses, atomically, a resolution that leaves the home (``..`` above it, an absolute
symlink, a symlink pointing out). Where ``openat2`` is missing (Linux < 5.6) every component is
opened with ``O_NOFOLLOW`` from its parent's descriptor instead (no link is followed at all).

Files are opened non-blocking and read only when regular (a FIFO planted in the home cannot hang
an evaluator). What is created for the task (files, folders) is given to the sandbox's uid
(``owner``), so the task's programs can change it. Paths outside the home (an env made with
``allow_absolute_paths=True``) are the user's own choice and use the ordinary file calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

__all__ = ["HomeFiles"]

_SYS_OPENAT2 = 437  # the same number on every architecture (new syscalls are numbered in common)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_libc = ctypes.CDLL(None, use_errno=True)
_openat2_works: bool | None = None


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _openat2(dirfd: int, path: str, flags: int, mode: int = 0) -> int:
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = _libc.syscall(
        _SYS_OPENAT2,
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


def _open_nofollow(dirfd: int, path: str, flags: int, mode: int = 0) -> int:
    """The fallback: every component opened with ``O_NOFOLLOW`` from its parent."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "'..' in a path", path)
    current = os.dup(dirfd)
    try:
        for part in parts[:-1]:
            following = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            os.close(current)
            current = following
        return os.open(parts[-1] if parts else ".", flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=current)
    finally:
        os.close(current)


def _open_beneath(dirfd: int, path: str, flags: int, mode: int = 0) -> int:
    global _openat2_works
    if _openat2_works is not False:
        try:
            fd = _openat2(dirfd, path, flags, mode)
            _openat2_works = True
            return fd
        except OSError as exc:
            if exc.errno not in (errno.ENOSYS, errno.EPERM) or _openat2_works:  # EPERM: a seccomp filter
                raise
            _openat2_works = False
    return _open_nofollow(dirfd, path, flags, mode)


class HomeFiles:
    """Safe access to the files under ``root`` (the env's home); see the module docstring.

    Args:
        root: the home.
        owner: ``(uid, gid)`` to give what is created, or ``None``.
    """

    def __init__(self, root: Path, owner: tuple[int, int] | None = None) -> None:
        self.root = root
        self.owner = owner

    def _relative(self, path: Path) -> str | None:
        """``path`` relative to the home ('.' for the home), ``None`` when outside it."""
        try:
            return str(Path(os.path.normpath(path)).relative_to(self.root)) or "."
        except ValueError:
            return None

    @contextlib.contextmanager
    def _open(self, path: Path, flags: int, mode: int = 0) -> Iterator[int]:
        relative = self._relative(path)
        if relative is None:
            fd = os.open(path, flags | os.O_CLOEXEC, mode)
        else:
            home = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                fd = _open_beneath(home, relative, flags, mode)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.ELOOP):
                    raise PermissionError(errno.EACCES, "a link leads out of the env's home", str(path)) from None
                raise
            finally:
                os.close(home)
        try:
            yield fd
        finally:
            os.close(fd)

    def kind(self, path: Path) -> Literal["file", "dir", "other"] | None:
        """What ``path`` is (links inside the home followed); ``None`` when it does not exist."""
        try:
            with self._open(path, os.O_PATH) as fd:
                mode = os.fstat(fd).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"

    def read_bytes(self, path: Path, limit: int) -> bytes:
        """The first ``limit`` bytes of the regular file ``path``.

        Raises:
            IsADirectoryError, PermissionError (not a regular file, or a link out of the home).
        """
        with self._open(path, os.O_RDONLY | os.O_NONBLOCK) as fd:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
            if not stat.S_ISREG(mode):
                raise PermissionError(errno.EACCES, "not a regular file", str(path))
            chunks, size = [], 0
            while size < limit:
                chunk = os.read(fd, min(1 << 20, limit - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks)

    def listdir(self, path: Path) -> list[str]:
        """The entries of the directory ``path``."""
        with self._open(path, os.O_RDONLY | os.O_DIRECTORY) as fd:
            return os.listdir(fd)

    def _give(self, fd: int) -> None:
        if self.owner is not None:
            os.fchown(fd, *self.owner)

    def mkdir(self, path: Path) -> None:
        """Create the directory ``path`` and its missing parents (each given to the owner)."""
        relative = self._relative(path)
        if relative is None:
            path.mkdir(parents=True, exist_ok=True)
            return
        current = self.root
        for part in Path(relative).parts:
            current = current / part
            if self.kind(current) == "dir":
                continue
            parent = current.parent
            with self._open(parent, os.O_RDONLY | os.O_DIRECTORY) as fd:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            with self._open(current, os.O_RDONLY | os.O_DIRECTORY) as fd:
                self._give(fd)

    def write_bytes(self, path: Path, data: bytes, mode: int = 0o644) -> None:
        """Write ``data`` to ``path`` (created, or truncated), creating its parents."""
        self.mkdir(path.parent)
        with self._open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, mode) as fd:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PermissionError(errno.EACCES, "not a regular file", str(path))
            self._give(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]

    def copy(self, source: Path, target: Path) -> None:
        """Copy the file or tree ``source`` to ``target`` (links inside a tree are copied as links;
        existing directories are merged), keeping permission bits and times."""
        if self._relative(source) is None and self._relative(target) is None:
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
            return
        kind = self.kind(source)
        if kind == "dir":
            self.mkdir(target)
            for name in self.listdir(source):
                self._copy_entry(source / name, target / name)
        else:
            self._copy_file(source, target)

    def _copy_entry(self, source: Path, target: Path) -> None:
        with self._open(source.parent, os.O_RDONLY | os.O_DIRECTORY) as fd:
            info = os.stat(source.name, dir_fd=fd, follow_symlinks=False)
            link = os.readlink(source.name, dir_fd=fd) if stat.S_ISLNK(info.st_mode) else None
        if link is not None:
            self.mkdir(target.parent)
            with self._open(target.parent, os.O_RDONLY | os.O_DIRECTORY) as fd:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target.name, dir_fd=fd)
                os.symlink(link, target.name, dir_fd=fd)
                if self.owner is not None:
                    os.chown(target.name, *self.owner, dir_fd=fd, follow_symlinks=False)
        elif stat.S_ISDIR(info.st_mode):
            self.copy(source, target)
        elif stat.S_ISREG(info.st_mode):
            self._copy_file(source, target)

    def _copy_file(self, source: Path, target: Path) -> None:
        with self._open(source, os.O_RDONLY | os.O_NONBLOCK) as fd:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise PermissionError(errno.EACCES, "not a regular file", str(source))
            data = b""
            while chunk := os.read(fd, 1 << 20):
                data += chunk
        self.write_bytes(target, data, stat.S_IMODE(info.st_mode))
        with self._open(target, os.O_RDONLY | os.O_NONBLOCK) as fd:
            os.fchmod(fd, stat.S_IMODE(info.st_mode))
            os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))
