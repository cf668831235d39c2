"""Opening a path beneath a directory descriptor, atomically, whatever links lie on the way.

:func:`open_beneath` resolves a path relative to an open directory with the kernel's
``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` (Linux >= 5.6): a resolution that would leave
the directory (``..`` above it, an absolute symlink, a symlink pointing out, a ``/proc`` magic
link) fails with ``EXDEV`` or ``ELOOP``, checked by the kernel at the moment of the open, so no
rename racing the caller can slip a link in between a check and the open. Where ``openat2`` is
missing (an older kernel, or a seccomp filter refusing it: ``ENOSYS``/``EPERM``) every component
is opened with ``O_NOFOLLOW`` from its parent's descriptor instead (no link is followed at all).
Used by :class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles`.
"""

from __future__ import annotations

import ctypes
import errno
import os

__all__ = ["open_beneath"]

_SYS_OPENAT2 = 437  # the same number on every architecture (new syscalls are numbered in common)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_RETRIES = 8
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


def open_beneath(dirfd: int, path: str, flags: int, mode: int = 0) -> int:
    """Open ``path`` relative to ``dirfd`` with ``flags`` (``O_CLOEXEC`` added), never leaving
    ``dirfd``'s tree: ``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)``, or every component
    with ``O_NOFOLLOW`` where ``openat2`` is missing.

    Raises:
        OSError: ``EXDEV`` or ``ELOOP`` when the resolution would leave the tree; as ``openat``.
    """
    global _openat2_works
    if _openat2_works is not False:
        for attempt in range(_RETRIES):
            try:
                fd = _openat2(dirfd, path, flags, mode)
                _openat2_works = True
                return fd
            except OSError as exc:
                # EAGAIN: a rename raced a '..' of the resolution (the kernel refuses to guess).
                if exc.errno == errno.EAGAIN and attempt + 1 < _RETRIES:
                    continue
                if exc.errno not in (errno.ENOSYS, errno.EPERM) or _openat2_works:  # EPERM: a seccomp filter
                    raise
                _openat2_works = False
                break
    return _open_nofollow(dirfd, path, flags, mode)
