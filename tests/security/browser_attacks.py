"""Hostile pages and the host secrets they go after, for the browser security tests.

(Imported as ``browser_attacks``: pytest puts this folder on ``sys.path`` for its test modules.)

:class:`AttackSite` serves, on loopback, pages that try to reach a URL themselves: a link the agent
clicks, an HTTP redirect, a script redirect, an iframe, and a ``window.open`` on a click.
:func:`secrets_of_host` names the host content a test must never find (each with a marker only
that content contains): ``/etc/passwd``, ``/etc/shadow``, the listing of ``/root`` and of
``$HUD_GYM_HOME``. :func:`everything_seen` gathers all an agent or a task could read after an
attack: the observation text, the step info, the task's grade (``text_matches`` and
``page_contains`` over the page), and the text of every frame of every tab, read from the pages
themselves (what their screenshots show).
"""

from __future__ import annotations

import asyncio
import html
import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from hud_gym.task import Task

FULL_PAGE = "position:fixed;left:0;top:0;width:100%;height:100%;display:block;font-size:40px"
CLICK = (200, 200)
"""Where the agent clicks on a link or popup page (the link covers the viewport)."""

PAGE_VECTORS = ("link", "redirect", "script", "iframe", "popup")
"""The ways an :class:`AttackSite` page reaches a URL."""


@dataclass(frozen=True)
class Secret:
    """A host resource, the URL that would show it, and a string only its content contains."""

    name: str
    url: str
    marker: str


def secrets_of_host(hud_gym_home: Path) -> list[Secret]:
    """The host content no task or agent may read (those this machine has)."""
    found = []
    for path in ("/etc/passwd", "/etc/shadow"):
        try:
            first = Path(path).read_text().splitlines()[0]
        except (OSError, IndexError):
            continue
        found.append(Secret(path, f"file://{path}", first))
    found.append(Secret("/root listing", "file:///root/", "Index of /root"))
    secret = hud_gym_home / "hud-gym-home-secret-3f9c.db"
    secret.write_text("secret")
    found.append(Secret("$HUD_GYM_HOME listing", f"file://{hud_gym_home}/", secret.name))
    return found


def probe_task(secret: Secret) -> Task:
    """An episode whose grade shows what the page holds: ``text_matches`` of the body (its content
    quotes the text) and ``page_contains`` of the secret's marker (the page and its same-origin
    frames)."""
    return Task(
        id="probe",
        prompt="Read the page.",
        gym="hud-browser",
        evaluate=[("text_matches", "body", "(?s).*"), ("page_contains", secret.marker)],
    )


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        target = parse_qs(parts.query).get("to", [""])[0]
        if parts.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", target)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(attack_page(parts.path.strip("/"), target).encode())


def attack_page(vector: str, target: str) -> str:
    """The HTML of a page that reaches ``target`` by ``vector`` (one of :data:`PAGE_VECTORS`)."""
    quoted, js = html.escape(target, quote=True), json.dumps(target)
    if vector == "redirect":  # served by the attack site as an HTTP 302; from a file: page, a meta refresh
        return f"<!doctype html><meta http-equiv='refresh' content='0;url={quoted}'><title>attack redirect</title>"
    body = {
        "link": f"<a id='go' href='{quoted}' style='{FULL_PAGE}'>open</a>",
        "script": f"<p>moving on</p><script>location.href = {js};</script>",
        "iframe": f"<iframe src='{quoted}' style='width:100%;height:600px'></iframe>",
        "popup": f"<button style='{FULL_PAGE}' onclick='window.open({html.escape(js)})'>open</button>",
    }[vector]
    return f"<!doctype html><title>attack {vector}</title><body>{body}</body>"


@contextmanager
def attack_site() -> Iterator[str]:
    """Serve the attack pages on loopback; yield the base URL (``{base}/{vector}?to={url}``)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="attack-site", daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def attack_url(base: str, vector: str, target: str) -> str:
    return f"{base}/{vector}?to={quote(target, safe='')}"


FRAME_READ_TIMEOUT_S = 5.0
_FRAME_TEXT = "() => document.documentElement ? document.documentElement.innerText : ''"


async def _frame_texts(controller: Any) -> list[str]:
    texts = []
    for page in list(controller.state.pages):
        texts.append(page.url)
        for frame in page.frames:
            if not frame.url:  # a refused load: the frame never navigated, so holds nothing it fetched
                texts.append("<not navigated>")
                continue
            try:  # a frame whose load was refused may never get a script context: nothing to read there
                texts.append(await asyncio.wait_for(frame.evaluate(_FRAME_TEXT), FRAME_READ_TIMEOUT_S))
            except Exception as exc:
                texts.append(f"<{type(exc).__name__}>")
    return texts


def everything_seen(env: Any, observation: Any, info: dict[str, Any], secret: Secret) -> str:
    """All the text an agent, a task's grade (of :func:`probe_task`) or the pages' own state hold
    after an attack (an in-process controller: its pages are read on the env's loop)."""
    grade = env.unwrapped.evaluate()
    text_grade, contains_grade = grade.info["grades"]
    assert contains_grade["reward"] == 0.0, f"page_contains found {secret.name}: {contains_grade}"
    seen = [str(observation["text"]), json.dumps(info, default=str), text_grade["content"] or ""]
    seen += env.unwrapped._runner.run(_frame_texts(env.unwrapped.controller), timeout=30)
    return "\n".join(seen)
