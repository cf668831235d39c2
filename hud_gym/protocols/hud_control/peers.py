"""Who is on the other end of a loopback TCP connection: the uid owning the peer's socket.

HUD's control channel carries no credential of its own (``hud`` 0.6.21's client sends none), so a
hud-gym control server binds loopback only and answers only connections whose peer socket belongs
to its own user: the kernel's socket table (``/proc/net/tcp``, ``/proc/net/tcp6``) says which uid
owns the socket at the peer's address and port.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

__all__ = ["peer_uid"]


def _proc_address(host: str, port: int) -> str:
    """``host:port`` as the kernel's table writes it (32-bit words in host byte order, hex)."""
    packed = ipaddress.ip_address(host).packed
    words = [packed[i : i + 4] for i in range(0, len(packed), 4)]
    hexed = "".join(int.from_bytes(word, "little").to_bytes(4, "big").hex().upper() for word in words)
    return f"{hexed}:{port:04X}"


def peer_uid(
    peer: tuple[str, int] | tuple[str, int, int, int], local: tuple[str, int] | tuple[str, int, int, int]
) -> int | None:
    """The uid owning the socket at ``peer`` connected to ``local``, or ``None`` when the kernel's
    table has no such socket (not on this machine)."""
    family = socket.AF_INET6 if ":" in peer[0] else socket.AF_INET
    table = Path("/proc/net/tcp6" if family == socket.AF_INET6 else "/proc/net/tcp")
    want_local, want_remote = _proc_address(peer[0], peer[1]), _proc_address(local[0], local[1])
    try:
        lines = table.read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 7 and fields[1] == want_local and fields[2] == want_remote:
            return int(fields[7])
    return None
