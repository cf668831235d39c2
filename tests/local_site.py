"""A loopback HTTP server for a folder of fixture files (tests never reach the internet)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextlib.contextmanager
def serve_directory(directory: Path, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``directory`` on ``host`` (a free port, uncached) and yield its base URL."""
    server = http.server.ThreadingHTTPServer((host, 0), functools.partial(_QuietHandler, directory=str(directory)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name=f"http-{directory.name}", daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def lan_address() -> str | None:
    """An IPv4 address of this host that is neither loopback nor link-local (what a desktop
    episode with the network may download from: never the host's loopback), or ``None``."""
    import ipaddress

    import psutil

    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family.name == "AF_INET":
                ip = ipaddress.ip_address(address.address)
                if not (ip.is_loopback or ip.is_link_local):
                    return str(address.address)
    return None
