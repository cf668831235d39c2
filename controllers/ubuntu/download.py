"""Downloads for the desktop's tasks (``download_file``): with the episode's network rules, into its home.

The download is made by this process (the host side, root often), so it must not lend the
host's rights to the task, whose file names the URL and the path, nor to the agent, whose
programs can change the home (plant a link) at any moment.

The network: the episode's own rules.

- An episode without the network (its task does not ask for it with ``config.network``, or the
  env is not made with ``allow_network=True``) downloads nothing: refused before any name is
  resolved or any connection made. (Its sandbox has only a loopback of its own; this process is
  not in it, so "the task's own server" is not reachable from here either.)
- An episode with the network: the URL's host name is resolved once, here, and every address it
  resolves to is checked; the connection goes to that checked address (the name is sent as the
  ``Host`` header and as the TLS server name, whose certificate is verified), so a second answer
  of the name server (DNS rebinding) is never asked for. Refused: the host's loopback (127.0.0.0/8,
  ``::1``, and every spelling of them: ``localhost``, ``2130706433``, ``127.1``, ``0x7f.1``,
  ``::ffff:127.0.0.1``), the unspecified address and ``0.0.0.0/8`` (connecting to them reaches this
  host), link-local addresses (``169.254.169.254``: a cloud's metadata service; ``fe80::/10``),
  multicast, reserved, and IPv4-compatible IPv6 addresses. The LAN stays reachable: the env's
  owner gave the episode the host's network, as its own programs have it.
- Redirects (at most :data:`MAX_REDIRECTS`) are followed by hand, each through the same checks
  (``http``/``https`` only); a redirect to loopback is refused like a first URL.
- Bounded: at most ``max_bytes`` (:data:`MAX_DOWNLOAD_BYTES` at most), and ``timeout`` seconds in all.

The file: written through :meth:`~hud_gym.controllers.ubuntu.homefs.HomeFiles.replace` (a fresh
file, never a link, in the target's folder opened beneath the home, given to the sandbox's uid,
renamed over the target), so no planted link (``~/x.part -> /etc/shadow``, dangling or not) is
ever followed. Nothing is left when the download fails.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import urllib3
from urllib3.util import make_headers, parse_url

from hud_gym.controllers.ubuntu.homefs import HomeFiles

__all__ = ["MAX_DOWNLOAD_BYTES", "MAX_REDIRECTS", "DownloadRefused", "checked_address", "download"]

MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
"""The largest download a task may ask for (its ``max_bytes`` defaults to it)."""
MAX_REDIRECTS = 5
"""Redirects followed, each checked as the first URL was."""
MAX_URL_CHARS = 8192
_CHUNK = 1 << 16
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


class DownloadRefused(PermissionError):
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


def checked_address(host: str, port: int) -> str:
    """The address to connect to for ``host``: resolved once; every address it has is checked.

    Raises:
        DownloadRefused: one of its addresses is refused (see the module docstring).
        OSError: it does not resolve.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise OSError(f"download_file: cannot resolve {_short(host)!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        reason = _refusal(address)
        if reason is not None:
            raise DownloadRefused(
                f"download_file: {_short(host)!r} is {address}, {reason}: a task's download never reaches "
                "the host's loopback or link-local services"
            )
    return addresses[0]


def _request(url: str, network: bool, deadline: float) -> tuple[urllib3.HTTPConnectionPool, urllib3.BaseHTTPResponse]:
    """One GET of ``url`` (not following redirects) to its checked address."""
    parts = parse_url(url)
    scheme = (parts.scheme or "").lower()
    if scheme not in ("http", "https") or not parts.host:
        raise DownloadRefused(f"download_file takes http or https URLs with a host, got {_short(url)!r}")
    if not network:
        raise DownloadRefused(
            f"download_file: the episode has no network, so {_short(url)!r} is not fetched: the task must ask "
            "for it (config: {network: true}) on an env made with allow_network=True"
        )
    port = parts.port or (443 if scheme == "https" else 80)
    host = parts.host.strip("[]")
    address = checked_address(host, port)
    remaining = max(deadline - time.monotonic(), 0.1)
    timeout = urllib3.Timeout(connect=min(remaining, 30.0), read=remaining)
    pool: urllib3.HTTPConnectionPool
    if scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address, port, timeout=timeout, retries=False, server_hostname=host, assert_hostname=host
        )
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
    headers = {
        "Host": (parts.netloc or host).rsplit("@", 1)[-1],
        "Accept-Encoding": "identity",
        "User-Agent": "hud-gym",
    }
    if parts.auth:
        headers.update(make_headers(basic_auth=parts.auth))
    try:
        response = pool.urlopen(
            "GET", parts.request_uri, headers=headers, redirect=False, retries=False, preload_content=False
        )
    except BaseException:
        pool.close()
        raise
    return pool, response


def _body(response: urllib3.BaseHTTPResponse, url: str, limit: int, deadline: float) -> Iterator[bytes]:
    size = 0
    for chunk in response.stream(_CHUNK):
        size += len(chunk)
        if size > limit:
            raise DownloadRefused(f"download_file: {_short(url)!r} is larger than max_bytes={limit}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"download_file: {_short(url)!r} took longer than its timeout")
        yield chunk


def _fetch(url: str, files: HomeFiles, target: Path, network: bool, limit: int, deadline: float) -> int:
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        pool, response = _request(current, network, deadline)
        try:
            if response.status in _REDIRECT_STATUSES:
                location = response.headers.get("Location")
                if not location:
                    raise OSError(f"download_file: {_short(current)!r} redirects nowhere (HTTP {response.status})")
                current = urljoin(current, location)
                continue
            if not 200 <= response.status < 300:
                raise OSError(f"download_file: {_short(current)!r} answered HTTP {response.status}")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise DownloadRefused(f"download_file: {_short(current)!r} has {length} bytes, over max_bytes={limit}")
            return files.replace(target, _body(response, current, limit, deadline))
        finally:
            response.release_conn()
            pool.close()
    raise OSError(f"download_file: {_short(url)!r} redirects more than {MAX_REDIRECTS} times")


def download(
    url: str,
    files: HomeFiles,
    target: Path,
    *,
    network: bool,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
    timeout: float = 60.0,
) -> int:
    """Download ``url`` to ``target`` (in ``files``' home) with the episode's network rules (see the
    module docstring); returns the number of bytes written.

    Raises:
        ValueError: a bad ``url``, ``max_bytes`` or ``timeout``.
        DownloadRefused: the rules refuse the URL, a redirect, or the size.
        TimeoutError: it took longer than ``timeout`` seconds.
        OSError: the download failed (the message names the URL and the cause).
    """
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS:
        raise ValueError(f"download_file takes a URL of at most {MAX_URL_CHARS} characters")
    if not 0 < max_bytes <= MAX_DOWNLOAD_BYTES:
        raise ValueError(f"download_file: max_bytes must be between 1 and {MAX_DOWNLOAD_BYTES}, got {max_bytes}")
    if not 0 < timeout <= 3600:
        raise ValueError(f"download_file: timeout must be between 0 and 3600 seconds, got {timeout}")
    deadline = time.monotonic() + timeout
    try:
        return _fetch(url, files, target, network, max_bytes, deadline)
    except urllib3.exceptions.TimeoutError as exc:
        raise TimeoutError(f"download_file: {_short(url)!r} timed out: {exc}") from None
    except urllib3.exceptions.HTTPError as exc:
        raise OSError(f"download_file: {_short(url)!r} failed: {_short(str(exc), 500)}") from None
