"""The desktop gym's host-side functions lend the host's rights to no task and no agent (issue 23,
items 5, 6 and 7).

``download_file`` and ``file_content_check`` run in this process (root here) on paths and URLs a
task file names, in a home the sandbox's programs change at any moment. Attacked as the issue did:

- a link planted at the download's temporary name (``~/x.part -> a root-only file``, or dangling
  into a host folder) or at its target: no host file is written or created;
- a ``renameat2(RENAME_EXCHANGE)`` loop in the sandbox swapping a file of the home and a link to a
  root-only file, while ``file_content_check`` grades the file over and over: it never reads it;
- downloads of the host's loopback (every spelling of it), with and without the network, and
  through a redirect: refused with a setup error naming the rule, and the loopback server gets no
  request; without the network a download reaches the task's own server, started in its sandbox
  on the very port of the host's loopback server, and never the host's.

Every attack here worked on main before these fixes (the race within the first episodes).
"""

from __future__ import annotations

import os
import stat
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from local_site import lan_address

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import SetupError, Task
from hud_gym.controllers.ubuntu.profile import fresh_home_entries

pytestmark = pytest.mark.timeout(240)

try:
    from hud_gym.controllers.ubuntu.display import require_programs

    require_programs("openbox")
except Exception as _exc:
    pytest.skip(f"no desktop on this machine: {_exc}", allow_module_level=True)

PAYLOAD = b"downloaded for the task\n" * 40
SECRET = f"ROOT-ONLY-SECRET-{uuid.uuid4().hex}"

# Swaps ~/f (a file) and ~/l (a link to the root-only file) as fast as it can, in the sandbox.
SWAPPER = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "while True:\n"
    "    libc.renameat2(-100, b'f', -100, b'l', 2)\n"  # AT_FDCWD, RENAME_EXCHANGE
)


class Server:
    """An HTTP server on ``host`` in a thread, counting the requests it gets."""

    def __init__(self, host: str, routes: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                status, headers, body = routes.get(self.path, (404, {}, b"no such page"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        ThreadingHTTPServer.address_family = 10 if ":" in host else 2  # AF_INET6 / AF_INET
        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def loopback() -> Iterator[Server]:
    server = Server("127.0.0.1", {"/secret": (200, {}, b"loopback secret")})
    yield server
    server.close()


@pytest.fixture(scope="module")
def lan(loopback: Server) -> Iterator[Server]:
    address = lan_address()
    if address is None:
        pytest.skip("this host has no non-loopback address to serve a download from")
    to_loopback = f"http://127.0.0.1:{loopback.port}/secret"
    server = Server(
        address,
        {
            "/data": (200, {"Content-Length": str(len(PAYLOAD))}, PAYLOAD),
            "/moved": (302, {"Location": "/data"}, b""),
            "/to-loopback": (302, {"Location": to_loopback}, b""),
            "/to-localhost": (307, {"Location": f"http://localhost:{loopback.port}/secret"}, b""),
            "/big": (200, {}, b"x" * 5000),  # no Content-Length: the size shows only while reading
        },
    )
    server.address = address  # type: ignore[attr-defined]
    yield server
    server.close()


@pytest.fixture(scope="module")
def networked() -> Iterator[gymnasium.Env]:
    """A sandboxed desktop whose tasks may have the network, and run commands (inside the sandbox)."""
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_shell=True, allow_network=True)
    yield env
    env.close()


@pytest.fixture(scope="module")
def closed() -> Iterator[gymnasium.Env]:
    """A sandboxed desktop made as by default: no network for its tasks."""
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_shell=True)
    yield env
    env.close()


@pytest.fixture
def root_file(tmp_path: Path) -> Path:
    path = tmp_path / "root-only"
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


def reset(env: gymnasium.Env, setup: Any, evaluate: Any = None, network: bool = True) -> Path:
    env.reset(options={"task": Task(prompt="x", setup=setup, evaluate=evaluate, config={"network": network})})
    return Path(env.unwrapped.controller.state.home)


def url(server: Server, path: str) -> str:
    return f"http://{server.address}:{server.port}{path}"  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------- item 5: planted links


def test_a_link_planted_at_the_download_writes_no_host_file(
    networked: gymnasium.Env, lan: Server, root_file: Path, tmp_path: Path
) -> None:
    dangling = tmp_path / "created-through-the-link"
    for target in (root_file, dangling):  # an existing root-only file, and a dangling link
        setup = [("run", f"ln -s {target} ~/x.part"), ("download_file", url(lan, "/data"), "x")]
        home = reset(networked, setup)
        assert (home / "x").read_bytes() == PAYLOAD and not (home / "x").is_symlink()
        assert (home / "x").stat().st_uid == networked.unwrapped.controller.state.file_owner[0]
    assert root_file.read_text() == SECRET and stat.S_IMODE(root_file.stat().st_mode) == 0o600
    assert not dangling.exists()


def test_a_download_follows_a_redirect_and_keeps_its_bound(networked: gymnasium.Env, lan: Server) -> None:
    home = reset(networked, [("download_file", url(lan, "/moved"), "Desktop/notes.txt")])
    assert (home / "Desktop" / "notes.txt").read_bytes() == PAYLOAD
    with pytest.raises(SetupError, match="larger than max_bytes=1000"):
        big = {"url": url(lan, "/big"), "path": "big", "max_bytes": 1000}
        reset(networked, [{"function": "download_file", "kwargs": big}])
    # nothing left, no temporary file: the fresh home's profile only
    assert set(os.listdir(Path(networked.unwrapped.controller.state.home))) == fresh_home_entries()


# ------------------------------------------------------------------------------- item 6: the race


def test_file_content_check_never_reads_through_a_swapped_link(networked: gymnasium.Env, root_file: Path) -> None:
    seen = {"file": 0, "link": 0}
    for _episode in range(8):
        setup = [
            ("write_file", "f", "the task's own text"),
            ("run", f"ln -s {root_file} ~/l"),
            {"function": "launch", "kwargs": {"app": "python3", "args": ["-c", SWAPPER], "wait": False}},
        ]
        check = {"path": "f", "expected": "nothing"}  # a mismatch shows the text read
        evaluate = {"function": "file_content_check", "kwargs": check}
        reset(networked, setup, evaluate, network=False)
        for _ in range(40):
            grade = networked.unwrapped.evaluate()
            # Never the secret; never an evaluator error either (a link the agent swaps in is its failure).
            assert SECRET not in repr(grade) and grade.reward == 0.0 and not grade.is_error, grade
            seen["file" if "the task's own text" in (grade.content or "") else "link"] += 1
    assert seen["file"] and seen["link"], seen  # the swap was live: both states were graded


# ------------------------------------------------------------------------------- item 7: SSRF


LOOPBACK_SPELLINGS = ["127.0.0.1", "localhost", "127.1", "2130706433", "0x7f.0.0.1", "0.0.0.0", "[::ffff:127.0.0.1]"]


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_no_download_without_the_network(closed: gymnasium.Env, loopback: Server, spelling: str) -> None:
    """Without the network: nothing, or (once the episode's sandbox runs) its own loopback only."""
    before = len(loopback.requests)
    refused = "the episode has no network|on the episode's own loopback"
    download = ("download_file", f"http://{spelling}:{loopback.port}/secret", "x")
    for setup in ([download], [("run", "true"), download]):  # no sandbox yet; a running sandbox
        with pytest.raises(SetupError, match=refused):
            reset(closed, setup, network=False)
        assert len(loopback.requests) == before
        assert not (Path(closed.unwrapped.controller.state.home) / "x").exists()


def test_without_the_network_the_tasks_own_server_is_reached(closed: gymnasium.Env, loopback: Server) -> None:
    """A server the task starts in its sandbox, on the very port the host's loopback server has."""
    port = loopback.port
    before = len(loopback.requests)
    serve = ["-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", "site"]
    wait = f"for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
    setup = [
        ("write_file", "site/page.txt", "the task's own page"),
        {"function": "launch", "kwargs": {"app": "python3", "args": serve, "wait": False}},
        ("run", wait),
        ("download_file", f"http://localhost:{port}/page.txt", "got.txt"),
    ]
    home = reset(closed, setup, network=False)
    assert (home / "got.txt").read_text() == "the task's own page"
    assert len(loopback.requests) == before  # the host's server on that port: never asked


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_the_hosts_loopback_is_never_downloaded(networked: gymnasium.Env, loopback: Server, spelling: str) -> None:
    before = len(loopback.requests)
    with pytest.raises(SetupError, match="the host's loopback|unspecified address"):
        reset(networked, [("download_file", f"http://{spelling}:{loopback.port}/secret", "x")])
    assert len(loopback.requests) == before


@pytest.mark.parametrize("route", ["/to-loopback", "/to-localhost"])
def test_a_redirect_to_loopback_is_refused(networked: gymnasium.Env, lan: Server, loopback: Server, route: str) -> None:
    before, asked = len(loopback.requests), len(lan.requests)
    with pytest.raises(SetupError, match="the host's loopback"):
        reset(networked, [("download_file", url(lan, route), "x")])
    assert len(lan.requests) == asked + 1 and len(loopback.requests) == before
    assert not (Path(networked.unwrapped.controller.state.home) / "x").exists()
