"""Downloads for the desktop's tasks (``download_file``): with the episode's network rules, into its home.

The download is made by this process (the host side, root often), so it must not lend the
host's rights to the task, whose file names the URL and the path, nor to the agent, whose
programs can change the home (plant a link) at any moment.

The network: the episode's own rules.

- An episode without the network (its task does not ask for it with ``config.network``, or the
  env is not made with ``allow_network=True``) reaches only its own servers: those its programs
  listen with on its sandbox's own loopback. The download then runs in a thread of its own that
  enters the sandbox's network namespace (``setns``) first, so ``127.0.0.1`` there is the
  sandbox's loopback, where only the task's programs listen (the host's loopback is not in that
  namespace at all); only loopback addresses are asked for. Nothing is declared by the task: the
  kernel decides what is its own. Without a running sandbox (no program started yet, or
  ``sandbox=False``) it downloads nothing: refused before any name is resolved.
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

import ctypes
import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin

import urllib3
from urllib3.util import make_headers, parse_url

from hud_gym.controllers.ubuntu.addresses import NO_NETWORK, DownloadRefused, checked_address
from hud_gym.controllers.ubuntu.homefs import HomeFiles

__all__ = ["MAX_DOWNLOAD_BYTES", "MAX_REDIRECTS", "DownloadRefused", "checked_address", "download"]

MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
"""The largest download a task may ask for (its ``max_bytes`` defaults to it)."""
MAX_REDIRECTS = 5
"""Redirects followed, each checked as the first URL was."""
MAX_URL_CHARS = 8192
_CHUNK = 1 << 16
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


Reach = Literal["network", "own", "none"]
"""What a download may reach: the network (not the host), the episode's own loopback, nothing."""


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _request(url: str, reach: Reach, deadline: float) -> tuple[urllib3.HTTPConnectionPool, urllib3.BaseHTTPResponse]:
    """One GET of ``url`` (not following redirects) to its checked address."""
    parts = parse_url(url)
    scheme = (parts.scheme or "").lower()
    if scheme not in ("http", "https") or not parts.host:
        raise DownloadRefused(f"download_file takes http or https URLs with a host, got {_short(url)!r}")
    if reach == "none":
        raise DownloadRefused(f"download_file: {_short(url)!r} is not fetched: {NO_NETWORK}")
    port = parts.port or (443 if scheme == "https" else 80)
    host = parts.host.strip("[]")
    address = checked_address(host, port, own_loopback=reach == "own")
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
    except urllib3.exceptions.NewConnectionError as exc:
        pool.close()
        where = "on the episode's own loopback (never the host's)" if reach == "own" else ""
        raise OSError(f"download_file: nothing answers at {_short(url)!r} {where}: {exc}") from None
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


def _fetch(url: str, files: HomeFiles, target: Path, reach: Reach, limit: int, deadline: float) -> int:
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        pool, response = _request(current, reach, deadline)
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


def _in_namespace(netns: int, work: Callable[[], int]) -> int:
    """``work()`` in a new thread that first enters the network namespace ``netns`` (a thread's
    network namespace is its own: the thread ends with the work, no other code runs in it)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            if _libc.setns(netns, _CLONE_NEWNET) != 0:
                code = ctypes.get_errno() or errno.EPERM
                raise OSError(code, f"cannot enter the episode's network namespace: {os.strerror(code)}")
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001  (handed to the caller's thread)
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="hud-gym-download-own-network", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return int(outcome["value"])


def download(
    url: str,
    files: HomeFiles,
    target: Path,
    *,
    network: bool,
    own_network: int | None = None,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
    timeout: float = 60.0,
) -> int:
    """Download ``url`` to ``target`` (in ``files``' home) with the episode's network rules (see the
    module docstring); returns the number of bytes written.

    Args:
        network: the episode has the host's network.
        own_network: else, a descriptor of the episode's own network namespace (its sandbox's),
            where its own servers listen; ``None``: none, nothing is downloaded.

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
    reach: Reach = "network" if network else "own" if own_network is not None else "none"
    try:
        if reach == "own":
            assert own_network is not None
            return _in_namespace(own_network, lambda: _fetch(url, files, target, reach, max_bytes, deadline))
        return _fetch(url, files, target, reach, max_bytes, deadline)
    except urllib3.exceptions.TimeoutError as exc:
        raise TimeoutError(f"download_file: {_short(url)!r} timed out: {exc}") from None
    except urllib3.exceptions.HTTPError as exc:
        raise OSError(f"download_file: {_short(url)!r} failed: {_short(str(exc), 500)}") from None
