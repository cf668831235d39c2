"""MIT-MAGIC-COOKIE-1 authorisation of the X displays hud-gym starts.

Every display gets a fresh 128-bit cookie (:func:`new_cookie`). Two authority files carry it:

- the display's own file (:func:`write_display_authority`), one ``FamilyWild`` entry without a
  display number, mode 0600 in a private 0700 directory: Xvfb reads it (``-auth``), and the env's
  own processes (window manager, apps, task processes) get it as ``XAUTHORITY``;
- the process's file (:class:`ProcessAuthority`, one per Python process), ``FamilyLocal`` entries
  of every display this process runs, for this process's own connections (python-xlib, mss).

python-xlib and libxcb (mss) read ``$XAUTHORITY`` from the process environment when they connect,
so :meth:`ProcessAuthority.connecting` points it at the process's file for the duration of a
connect, under a lock, and puts the user's value back afterwards. The process's file also carries
the entries of the user's own authority file (merged at each change), so a connection another
thread of the program opens to the user's own display during that moment still finds its cookie.

The file format is libXau's: per entry, a big-endian ``u16`` family, then address, display
number, auth name and auth data, each a ``u16`` length and the bytes (``xauth`` reads it;
python-xlib's :class:`Xlib.xauth.Xauthority` parses it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import struct
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from hud_gym.controllers.temp_folders import make_temp_folder

__all__ = [
    "COOKIE_NAME",
    "FAMILY_LOCAL",
    "FAMILY_WILD",
    "ProcessAuthority",
    "encode_entry",
    "new_cookie",
    "process_authority",
    "write_authority",
    "write_display_authority",
]

COOKIE_NAME = b"MIT-MAGIC-COOKIE-1"
FAMILY_LOCAL = 256
"""libXau's family of a local (unix socket) connection; the address is the host name."""
FAMILY_WILD = 0xFFFF
"""libXau's wildcard family: the entry matches any address."""

Entry = tuple[int, bytes, bytes, bytes, bytes]
"""``(family, address, display number, auth name, auth data)``."""


def new_cookie() -> bytes:
    """A fresh random MIT-MAGIC-COOKIE-1 (16 bytes)."""
    return secrets.token_bytes(16)


def encode_entry(family: int, address: bytes, number: bytes, name: bytes, data: bytes) -> bytes:
    """One authority-file entry in libXau's format."""
    fields = b"".join(struct.pack(">H", len(part)) + part for part in (address, number, name, data))
    return struct.pack(">H", family) + fields


def write_authority(path: Path, entries: Iterable[Entry], owner: tuple[int, int] | None = None) -> None:
    """Write an authority file atomically, mode 0600 (owned by ``owner`` ``(uid, gid)`` if given)."""
    data = b"".join(encode_entry(*entry) for entry in entries)
    fd, temp = tempfile.mkstemp(prefix=".xauth-", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if owner is not None:
                os.fchown(handle.fileno(), *owner)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_display_authority(folder: Path, cookie: bytes, owner: tuple[int, int] | None = None) -> Path:
    """The display's own authority file, ``folder/Xauthority``: one ``FamilyWild`` entry for any
    display number (Xvfb ignores the address; clients inside a sandbox with another host name
    still match). ``folder`` is made mode 0700 (owned by ``owner``). Returns the file's path."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    if owner is not None:
        os.chown(folder, *owner)
    path = folder / "Xauthority"
    write_authority(path, [(FAMILY_WILD, b"", b"", COOKIE_NAME, cookie)], owner)
    return path


def _user_entries(path: str | None) -> list[Entry]:
    """The entries of the user's authority file (none when it is missing or unreadable)."""
    candidate = path or (os.path.join(os.path.expanduser("~"), ".Xauthority"))
    try:
        if os.path.getsize(candidate) == 0:  # python-xlib prints a warning for an empty file
            return []
        from Xlib import xauth

        return [tuple(entry) for entry in xauth.Xauthority(candidate).entries]
    except Exception:  # noqa: BLE001  (missing, unreadable or malformed: nothing to merge)
        return []


class ProcessAuthority:
    """The authority file of this process's own X connections; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._folder: Path | None = None
        self._cookies: dict[int, bytes] = {}
        self._swapped: list[str | None] = []  # the user's values while connecting() is active

    @property
    def path(self) -> Path:
        """The file (created on first use, in a private 0700 directory; removed at exit)."""
        with self._lock:
            if self._folder is None:
                self._folder = make_temp_folder("hud-gym-xauth-", self)
                self._write()
            return self._folder / "Xauthority"

    def _write(self) -> None:
        assert self._folder is not None
        host = socket.gethostname().encode()
        ours = [(FAMILY_LOCAL, host, str(n).encode(), COOKIE_NAME, c) for n, c in sorted(self._cookies.items())]
        numbers = {str(n).encode() for n in self._cookies}
        user = self._swapped[0] if self._swapped else os.environ.get("XAUTHORITY")
        theirs = [e for e in _user_entries(user) if e[2] not in numbers]
        write_authority(self._folder / "Xauthority", [*ours, *theirs])

    def add(self, number: int, cookie: bytes) -> None:
        """Authorise this process's connections to display ``:number`` with ``cookie``."""
        with self._lock:
            self._cookies[number] = cookie
            if self._folder is not None:
                self._write()
            else:
                _ = self.path

    def remove(self, number: int) -> None:
        """Forget display ``:number``."""
        with self._lock:
            if self._cookies.pop(number, None) is not None and self._folder is not None:
                self._write()

    @contextlib.contextmanager
    def connecting(self) -> Iterator[Path]:
        """``$XAUTHORITY`` points at :attr:`path` inside the block (under a process-wide lock);
        the user's value (or its absence) is put back at the end."""
        with self._lock:
            path = self.path
            before = os.environ.get("XAUTHORITY")
            self._swapped.append(before)
            os.environ["XAUTHORITY"] = str(path)
            try:
                yield path
            finally:
                self._swapped.pop()
                if before is None:
                    os.environ.pop("XAUTHORITY", None)
                else:
                    os.environ["XAUTHORITY"] = before


_process_authority = ProcessAuthority()


def process_authority() -> ProcessAuthority:
    """This process's :class:`ProcessAuthority`."""
    return _process_authority
