"""Who may connect to a private Xvfb: the uid it runs as, never another local uid.

The display's cookie (``-auth``) keeps clients without it out, but a client of the display may turn
that check off (``xhost +``, ``XSetAccessControl``): the agent can, from the xterm of its desktop.
What then still keeps other local users out is who may reach the server's sockets at all:

- **the filesystem socket** ``/tmp/.X11-unix/X<n>``: X servers make it mode 0777. As soon as Xvfb
  is ready, :func:`restrict_socket` makes it 0600: only its owner (the uid Xvfb runs as: the env's
  sandbox uid, or this process's user) connects, and root through ``CAP_DAC_OVERRIDE``. In the
  desktop's sandboxes the socket is bound read-only, so the agent, which runs as its owner, cannot
  change its mode back.
- **the abstract socket** ``@/tmp/.X11-unix/X<n>``: an abstract name has no permissions, and is
  reachable from every process of the host's network namespace. Xvfb is started with ``-nolisten
  local`` (no abstract socket), and :class:`AbstractNameHold` binds the name first, without listening
  on it, for the display's life: nobody else can take it (pose as the display to clients, which try
  the abstract name first), and a client trying it is refused and falls back to the file.
"""

from __future__ import annotations

import os
import socket
import stat

from hud_gym.controllers.base import ControllerError

__all__ = ["AbstractNameHold", "restrict_socket", "socket_path"]


def socket_path(number: int) -> str:
    """The filesystem socket of display ``number``."""
    return f"/tmp/.X11-unix/X{number}"


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


def restrict_socket(number: int, owner: int) -> None:
    """Make display ``number``'s filesystem socket mode 0600, after checking it is a socket of ``owner``.

    Raises:
        ControllerError: the path is missing, not a socket, or owned by another uid.
    """
    path = socket_path(number)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ControllerError(f"Xvfb reported display :{number} ready, but {path} is missing: {exc}") from exc
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != owner:
        raise ControllerError(f"{path} is not the socket of this display's Xvfb (uid {info.st_uid}, not {owner})")
    # /tmp/.X11-unix is sticky: only the owner (Xvfb's uid) could swap the path meanwhile.
    os.chmod(path, 0o600)
