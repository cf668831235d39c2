"""Who may connect to a private Xvfb: the uid it runs as, never another local uid.

The display's cookie (``-auth``) keeps clients without it out, but a client of the display may turn
that check off (``xhost +``, ``XSetAccessControl``): the agent can, from the xterm of its desktop.
What then still keeps other local users out is who may reach the server's sockets at all:

- **the filesystem socket** ``/tmp/.X11-unix/X<n>``: X servers make it mode 0777. As soon as Xvfb
  is ready, :func:`restrict_socket` makes it 0600: only its owner (the uid Xvfb runs as: the env's
  sandbox uid, or this process's user) connects, and root through ``CAP_DAC_OVERRIDE``. In the
  desktop's sandboxes the socket is bound read-only, so the agent, which runs as its owner, cannot
  change its mode back. A sandboxed Xvfb makes its socket in a :class:`PrivateSocketDir` (its
  ``/tmp/.X11-unix``, in a 0700 folder of its uid), and the socket is linked to its public path only
  once it is 0600: no other uid can connect in between and wait, past the cookie check of its
  connection's setup, for the agent to turn the check off. (An unsandboxed Xvfb, the headed
  browser's, makes its socket in place: a connection made in the moment before the ``chmod`` still
  needs the cookie, and no client of that display can turn the check off.)
- **the abstract socket** ``@/tmp/.X11-unix/X<n>``: an abstract name has no permissions, and is
  reachable from every process of the host's network namespace. Xvfb is started with ``-nolisten
  local`` (no abstract socket), and :class:`AbstractNameHold` binds the name first, without listening
  on it, for the display's life: nobody else can take it (pose as the display to clients, which try
  the abstract name first), and a client trying it is refused and falls back to the file.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
from pathlib import Path

from hud_gym.controllers.base import ControllerError

__all__ = ["AbstractNameHold", "PrivateSocketDir", "restrict_socket", "socket_path"]

SOCKET_DIR = "/tmp/.X11-unix"


def socket_path(number: int) -> str:
    """The filesystem socket of display ``number``."""
    return f"{SOCKET_DIR}/X{number}"


class AbstractNameHold:
    """The abstract socket name of display ``number``, bound (not listening) by this process."""

    def __init__(self, number: int) -> None:
        self.number = number
        self._socket: socket.socket | None = None

    def acquire(self) -> bool:
        """Bind the name; False when another process holds it (the display number is in use)."""
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            holder.bind("\0" + socket_path(self.number))
        except OSError:
            holder.close()
            return False
        self._socket = holder
        return True

    def release(self) -> None:
        """Free the name (idempotent)."""
        holder, self._socket = self._socket, None
        if holder is not None:
            holder.close()


def restrict_socket(number: int, owner: int, path: str | None = None) -> None:
    """Make display ``number``'s filesystem socket (at ``path``, default :func:`socket_path`) mode
    0600, after checking it is a socket of ``owner``.

    Raises:
        ControllerError: the path is missing, not a socket, or owned by another uid.
    """
    path = path or socket_path(number)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ControllerError(f"Xvfb reported display :{number} ready, but {path} is missing: {exc}") from exc
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != owner:
        raise ControllerError(f"{path} is not the socket of this display's Xvfb (uid {info.st_uid}, not {owner})")
    # /tmp/.X11-unix is sticky: only the owner (Xvfb's uid) could swap the path meanwhile.
    os.chmod(path, 0o600)


class PrivateSocketDir:
    """Where a sandboxed Xvfb makes its socket: ``/tmp/.X11-unix/.hud-gym-XXXX/x`` (bound as the
    sandbox's ``/tmp/.X11-unix``; Xvfb makes that folder 1777, its parent stays 0700), owned by
    ``owner``, the uid Xvfb runs as. Same filesystem as the public path, so the socket can be linked there.
    """

    def __init__(self, owner: int) -> None:
        self.owner = owner
        self.outer = Path(tempfile.mkdtemp(prefix=".hud-gym-", dir=SOCKET_DIR))
        self.path = self.outer / "x"
        self.path.mkdir(mode=0o700)
        if owner != os.geteuid():
            for folder in (self.outer, self.path):
                os.chown(folder, owner, -1)

    def publish(self, number: int) -> bool:
        """Make Xvfb's socket 0600 and link it at :func:`socket_path`; False if that path exists
        (another server has the number). The folder is removed either way.

        Raises:
            ControllerError: Xvfb's socket is missing or not its own.
        """
        private = str(self.path / f"X{number}")
        try:
            restrict_socket(number, self.owner, private)
            os.link(private, socket_path(number))
        except FileExistsError:
            return False
        finally:
            self.remove()
        return True

    def remove(self) -> None:
        """Remove the folders (idempotent; a sandbox's mount of them goes with them)."""
        for child in self.path.glob("*"):
            with contextlib.suppress(OSError):
                child.unlink()
        for folder in (self.path, self.outer):
            with contextlib.suppress(OSError):
                folder.rmdir()
