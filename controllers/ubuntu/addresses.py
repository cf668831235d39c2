"""Which addresses a task's download may connect to (:mod:`.download`), by the episode's rules.

An episode with the network may reach the network, never this host: the host's loopback in every
spelling (``127.0.0.0/8``, ``::1``, ``::ffff:127.0.0.1``; ``localhost``, ``2130706433``,
``127.1``, ``0x7f.1`` all resolve there), the unspecified addresses and ``0.0.0.0/8`` (a
connection to them reaches this host), link-local addresses (``169.254.169.254``: a cloud's
metadata service; ``fe80::/10``), multicast, reserved and IPv4-compatible IPv6 addresses are
refused. An episode without the network reaches only loopback addresses, in its own network
namespace (its sandbox's: only its own servers listen there). A name is resolved once, every
address it has is checked, and the caller connects to the address returned (never resolving
again: no DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket

from hud_gym.errors import HudGymError

__all__ = ["NO_NETWORK", "DownloadRefused", "checked_address"]

_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
NO_NETWORK = (
    "the episode has no network: the task must ask for it (config: {network: true}) on an env made with "
    "allow_network=True; without it a download reaches only the task's own servers on its sandbox's loopback"
)


class DownloadRefused(HudGymError, PermissionError):
    """A download the episode's network rules do not allow (the message names the rule)."""


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _refusal(address: str) -> str | None:
    """Why ``address`` may not be connected to for a task, or ``None``."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif int(ip) >> 32 == 0 and not ip.is_unspecified and not ip.is_loopback:
            return "an IPv4-compatible IPv6 address"
    if ip.is_loopback:
        return "the host's loopback"
    if ip.is_unspecified or ip in _THIS_NETWORK:
        return "an unspecified address (it reaches this host)"
    if ip.is_link_local:
        return "a link-local address (a cloud's metadata service lives there)"
    if ip.is_multicast or ip.is_reserved:
        return "a multicast or reserved address"
    return None


def _is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def checked_address(host: str, port: int, own_loopback: bool = False) -> str:
    """The address to connect to for ``host``: resolved once; every address it has is checked
    (``own_loopback``: in the episode's own namespace, where only loopback addresses are its own).

    Raises:
        DownloadRefused: one of its addresses is refused (see the module docstring).
        OSError: it does not resolve.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        hint = f" ({NO_NETWORK})" if own_loopback else ""
        raise OSError(f"download_file: cannot resolve {_short(host)!r}: {exc}{hint}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        if own_loopback and not _is_loopback(address):
            raise DownloadRefused(f"download_file: {_short(host)!r} is {address}: {NO_NETWORK}")
        reason = None if own_loopback else _refusal(address)
        if reason is not None:
            raise DownloadRefused(
                f"download_file: {_short(host)!r} is {address}, {reason}: a task's download never reaches "
                "the host's loopback or link-local services"
            )
    return addresses[0]
