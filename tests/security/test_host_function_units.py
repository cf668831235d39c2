"""The host-side functions' confinement without a desktop (issue 23, items 5-7; the full paths
through a desktop env: tests/security/test_host_functions.py): what ``download_file`` may reach
(the address rules of :mod:`hud_gym.controllers.ubuntu.download` on every spelling of the host,
one resolution per hop), a download to a temporary home, and the hard-link rule of
:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles`."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from local_site import lan_address

from hud_gym.controllers.ubuntu.download import DownloadRefused, download
from hud_gym.controllers.ubuntu.homefs import HomeFiles

pytestmark = pytest.mark.timeout(60)

REFUSED = [
    "http://127.0.0.1/",
    "http://localhost/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0.0.0.0/",
    "http://0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "https://127.0.0.1/",
    "ftp://example.com/x",
    "file:///etc/passwd",
    "http:///x",
]


@pytest.mark.parametrize("url", REFUSED)
def test_the_host_and_other_schemes_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(DownloadRefused):
        download(url, HomeFiles(tmp_path), tmp_path / "x", network=True, timeout=5)
    assert os.listdir(tmp_path) == []


@pytest.fixture
def lan_server() -> Iterator[tuple[str, list[str]]]:
    address = lan_address()
    if address is None:
        pytest.skip("no non-loopback address on this host")
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Host", ""))
            body = b"hello"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((address, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"{address}:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_a_lan_download_is_written_as_a_fresh_file(tmp_path: Path, lan_server: tuple[str, list[str]]) -> None:
    netloc, seen = lan_server
    outside = tmp_path / "outside"
    home = tmp_path / "home"
    home.mkdir()
    (home / "x.txt").symlink_to(outside)  # dangling, out of the home: replaced, never followed
    size = download(f"http://{netloc}/a", HomeFiles(home), home / "x.txt", network=True)
    assert size == 5 and (home / "x.txt").read_bytes() == b"hello" and not (home / "x.txt").is_symlink()
    assert not outside.exists() and os.listdir(home) == ["x.txt"] and seen == [netloc]
    with pytest.raises(DownloadRefused, match="the episode has no network"):
        download(f"http://{netloc}/a", HomeFiles(home), home / "y.txt", network=False)
    assert seen == [netloc]


def test_the_name_is_resolved_once_and_its_checked_address_connected_to(
    tmp_path: Path, lan_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a name that answers a LAN address to the check and loopback afterwards."""
    netloc, seen = lan_server
    address, port = netloc.rsplit(":", 1)
    real = socket.getaddrinfo
    answers = iter([address] + ["127.0.0.1"] * 10)

    def rebinding(host: object, *args: object, **kwargs: object) -> object:
        if host == "rebind.invalid":
            return real(next(answers), *args, **kwargs)  # type: ignore[arg-type]
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    size = download(f"http://rebind.invalid:{port}/a", HomeFiles(tmp_path), tmp_path / "a", network=True)
    assert size == 5 and seen == [f"rebind.invalid:{port}"]  # the checked address, with the name as Host
    with pytest.raises(DownloadRefused, match="the host's loopback"):  # the next resolution is checked again
        download(f"http://rebind.invalid:{port}/a", HomeFiles(tmp_path), tmp_path / "b", network=True)


def test_a_hard_link_to_another_users_file_is_not_read(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a file to another uid needs root")
    home = tmp_path / "home"
    home.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("root only")
    secret.chmod(0o600)
    os.link(secret, home / "linked")
    owner = (os.getuid() + 1, os.getgid() + 1)  # the sandbox's uid: not the secret's owner
    with pytest.raises(PermissionError, match="hard link"):
        HomeFiles(home, owner).read_bytes(home / "linked", 100)
    own = home / "own"
    own.write_text("mine")
    os.chown(own, *owner)
    os.link(own, home / "own-too")  # the sandbox's own files may have several links
    assert HomeFiles(home, owner).read_bytes(home / "own-too", 100) == b"mine"
