"""The loopback HTTP server of the web apps, and the episodes whose SQLite databases it serves.

One server per process (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, started on first use). Each
episode is an :class:`EpisodeDB`: a random 128-bit token, an app, and a real SQLite database in the
episode's own folder (``<private temp dir>/<token>/app.sqlite``, made by the host in a 0700 folder it
created: no path comes from a task or an agent). The database is a copy of the seed's *template*:
the app's data made once per ``(app, seed)`` in memory and kept as the bytes of its SQLite file
(:func:`template`, :meth:`sqlite3.Connection.serialize`); an episode writes only its own copy, so
every episode of a seed starts from exactly the seed's state, at the cost of one file write. The app's pages live under
``/e/<token>/<app>/...``: a page of another episode, or of an episode that ended, is a 404, so an
agent can change only its own episode's state, and the evaluator reads only that database.

A new episode on the same env (its controller) deletes that env's previous episode: one folder per
live env; the process's folder is deleted when it exits (after a ``SIGKILL``, by the next process
that starts the server: :mod:`hud_gym.controllers.temp_folders`). Requests are bounded (:data:`MAX_BODY` bytes of form data, :data:`MAX_FIELD` characters a
field) and every value is escaped before it is shown.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import secrets
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hud_gym.controllers.temp_folders import make_temp_folder
from hud_gym.suites.webapps.pages import Response, not_found

__all__ = [
    "MAX_BODY",
    "MAX_FIELD",
    "App",
    "EpisodeDB",
    "Request",
    "base_url",
    "end_episode",
    "start_episode",
    "template",
]

MAX_BODY = 64 * 1024
"""Bytes of a request body the server reads (a longer one is refused)."""
MAX_FIELD = 2000
"""Characters of a form or query field kept."""
_PATH = re.compile(r"^/e/([0-9a-f]{32})/([a-z]+)(/[A-Za-z0-9/_-]*)?$")


@dataclass
class Request:
    """One request to an app: its method, path inside the app, fields (query and form), database."""

    method: str
    path: str
    fields: dict[str, list[str]]
    db: sqlite3.Connection
    base: str

    def get(self, name: str, default: str = "") -> str:
        """The field's first value (bounded), else ``default``."""
        values = self.fields.get(name)
        return values[0][:MAX_FIELD] if values else default

    def all(self, name: str) -> list[str]:
        """Every value of the field (bounded), e.g. the checked boxes of a list."""
        return [v[:MAX_FIELD] for v in self.fields.get(name, [])[:200]]


@dataclass(frozen=True)
class App:
    """A web app: how its database is made from a seed, and its pages."""

    name: str
    create: Callable[[sqlite3.Connection, int], None]
    handle: Callable[[Request], Response]


@dataclass
class EpisodeDB:
    """A live episode: its token, app, database file and the lock its requests take."""

    token: str
    app: App
    path: Path
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def connect(self, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection to the episode's database (committed and closed after the block)."""
        uri = f"file:{self.path}?mode={'ro' if readonly else 'rw'}"
        with self.lock:
            conn = sqlite3.connect(uri, uri=True, timeout=10)
            try:
                yield conn
                conn.commit()
            finally:
                conn.close()


_lock = threading.Lock()
_server: http.server.ThreadingHTTPServer | None = None
_root: Path | None = None


class _RootOwner:
    """What the episodes' folder belongs to: it lives as long as the module (to interpreter exit)."""


_ROOT_OWNER = _RootOwner()
_episodes: dict[str, EpisodeDB] = {}
_by_owner: dict[int, str] = {}


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET", b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 <= length <= MAX_BODY:
            self._send(Response(413, "<h1>Request too large</h1>"))
            return
        self._serve("POST", self.rfile.read(length))

    def _serve(self, method: str, body: bytes) -> None:
        parts = urlsplit(self.path[:4096])
        match = _PATH.match(parts.path)
        episode = _episodes.get(match.group(1)) if match else None
        if match is None or episode is None or episode.app.name != match.group(2):
            self._send(not_found())
            return
        fields = parse_qs(parts.query, max_num_fields=400)
        if body:
            for key, values in parse_qs(body.decode("utf-8", "replace"), max_num_fields=400).items():
                fields.setdefault(key, []).extend(values)
        base = f"/e/{episode.token}/{episode.app.name}"
        with episode.connect() as db:
            response = episode.app.handle(Request(method, match.group(3) or "/", fields, db, base))
        self._send(response)

    def _send(self, response: Response) -> None:
        data = response.body.encode()
        self.send_response(response.status)
        if response.location:
            self.send_header("Location", response.location)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


def base_url() -> str:
    """The server's URL (started on first use)."""
    global _server, _root
    with _lock:
        if _server is None:
            # Named with this process's pid and start time: removed at exit, or swept by the next
            # process after a SIGKILL (hud_gym.controllers.temp_folders).
            _root = make_temp_folder("hud-gym-webapps-", _ROOT_OWNER)
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, name="hud-gym-webapps-http", daemon=True).start()
            _server = server
        return f"http://127.0.0.1:{_server.server_address[1]}"


@lru_cache(maxsize=512)
def template(app: App, seed: int) -> bytes:
    """The SQLite file of ``app``'s data for ``seed`` (made once in memory, then cached)."""
    conn = sqlite3.connect(":memory:")
    try:
        with conn:
            app.create(conn, seed)
        return conn.serialize()
    finally:
        conn.close()


def start_episode(app: App, seed: int, owner: int) -> EpisodeDB:
    """A new episode of ``app`` with the database of ``seed`` (a copy of its :func:`template`);
    ``owner`` (the env's controller id) has one live episode: its previous one is ended."""
    base_url()
    assert _root is not None
    data = template(app, seed)
    token = secrets.token_hex(16)
    folder = _root / token
    folder.mkdir(mode=0o700)
    episode = EpisodeDB(token=token, app=app, path=folder / "app.sqlite")
    fd = os.open(episode.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    with _lock:
        previous = _by_owner.get(owner)
        _episodes[token] = episode
        _by_owner[owner] = token
    if previous is not None:
        end_episode(previous)
    return episode


def end_episode(token: str) -> None:
    """Forget the episode and delete its folder."""
    with _lock:
        episode = _episodes.pop(token, None)
    if episode is not None:
        with episode.lock:
            shutil.rmtree(episode.path.parent, ignore_errors=True)


def get_episode(token: str) -> EpisodeDB | None:
    """The live episode of ``token``, if any."""
    return _episodes.get(token)
