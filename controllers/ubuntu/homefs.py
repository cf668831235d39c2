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
an evaluator). What is opened must be on the home's filesystem (the same device), and a file with
several hard links is read only when the sandbox's uid owns it (a link the sandbox made to a file
it cannot read itself is refused). Nothing existing is ever opened for writing: a file is written
as a fresh one (``O_CREAT | O_EXCL``, which never follows a link, dangling or not) in its folder,
given to the sandbox's uid (``owner``), then renamed over the target within that folder
(:meth:`HomeFiles.replace`); a link planted at the target, or at any temporary name, is replaced,
never followed. Folders created for the task are given to the owner too. Links inside the home
are followed (tasks use them; ``RESOLVE_BENEATH`` already refuses, atomically, every one that
leaves), so ``RESOLVE_NO_SYMLINKS`` is not asked for. Paths outside the home (an env made with
``allow_absolute_paths=True``) are the user's own choice and use the ordinary file calls.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from hud_gym.controllers.ubuntu.beneath import open_beneath

__all__ = ["HomeFiles"]


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
                fd = open_beneath(home, relative, flags, mode)
                if os.fstat(fd).st_dev != os.fstat(home).st_dev:
                    os.close(fd)
                    raise PermissionError(errno.EACCES, "not on the filesystem of the env's home", str(path))
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

    def mtime(self, path: Path) -> float | None:
        """When ``path`` was last modified (links inside the home followed); ``None`` when it does not exist."""
        try:
            with self._open(path, os.O_PATH) as fd:
                return os.fstat(fd).st_mtime
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _check_regular(self, fd: int, path: Path) -> os.stat_result:
        """``fd``'s status, when it is a regular file this process may read for the task.

        Raises:
            IsADirectoryError: a directory.
            PermissionError: not a regular file, or a hard link to a file the sandbox's uid does not own.
        """
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise PermissionError(errno.EACCES, "not a regular file", str(path))
        if self.owner is not None and info.st_nlink > 1 and info.st_uid != self.owner[0]:
            raise PermissionError(errno.EACCES, "a hard link to a file the sandbox's user does not own", str(path))
        return info

    def read_bytes(self, path: Path, limit: int) -> bytes:
        """The first ``limit`` bytes of the regular file ``path``.

        Raises:
            IsADirectoryError, PermissionError (not a regular file, a link out of the home, a hard
            link to another user's file).
        """
        with self._open(path, os.O_RDONLY | os.O_NONBLOCK) as fd:
            self._check_regular(fd, path)
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
        """Write ``data`` to ``path`` (replaced whole: see :meth:`replace`), creating its parents."""
        self.replace(path, [data], mode)

    def replace(self, path: Path, chunks: Iterable[bytes], mode: int = 0o644) -> int:
        """Write ``chunks`` as the new file ``path``, creating its parents; returns its size.

        The data goes to a fresh file of a random name in ``path``'s folder (``O_CREAT | O_EXCL |
        O_NOFOLLOW``: never an existing file, never through a link), given to the owner, then
        renamed over ``path`` in that same folder (a link at ``path`` is replaced, not followed).
        If ``chunks`` raises, the fresh file is removed and ``path`` is left as it was.

        Raises:
            IsADirectoryError: ``path`` names the home, or an existing directory.
            PermissionError: its folder is reached through a link out of the home.
        """
        if path.name in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        self.mkdir(path.parent)
        temporary = f".{path.name[:64]}.{secrets.token_hex(8)}.part"
        with self._open(path.parent, os.O_RDONLY | os.O_DIRECTORY) as folder:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temporary, flags, mode, dir_fd=folder)
            try:
                self._give(fd)
                size = 0
                for chunk in chunks:
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
                    size += len(chunk)
                os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
            finally:
                os.close(fd)
        return size

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
            info = self._check_regular(fd, source)
            self.replace(target, iter(lambda: os.read(fd, 1 << 20), b""), stat.S_IMODE(info.st_mode))
        with self._open(target, os.O_RDONLY | os.O_NONBLOCK) as fd:
            os.fchmod(fd, stat.S_IMODE(info.st_mode))
            os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))

    def status(self, path: Path) -> os.stat_result:
        """The status of ``path`` (links inside the home followed; none out of it).

        Raises:
            FileNotFoundError, NotADirectoryError: it does not exist; PermissionError: a link out
            of the home, or another filesystem.
        """
        with self._open(path, os.O_PATH) as fd:
            return os.fstat(fd)

    def set_attributes(self, path: Path, mode: int | None = None, mtime: float | None = None) -> None:
        """Set the permission bits ``mode`` and/or the modification (and access) time ``mtime``
        (seconds since the epoch) of the file or folder ``path`` (opened as :meth:`status` does)."""
        with self._open(path, os.O_RDONLY | os.O_NONBLOCK) as fd:
            if mode is not None:
                os.fchmod(fd, mode)
            if mtime is not None:
                os.utime(fd, (mtime, mtime))
