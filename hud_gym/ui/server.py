"""Run the app: bind, print the URL, serve until stopped (Ctrl-C, SIGTERM).

Loopback by default. Any other address is an opt-in (``expose=True``, the CLI's ``--expose``) and
always needs a token: ``HUD_GYM_UI_TOKEN``, or a generated one printed in the URL. While it
listens, the app's URL is in the store's ``ui.json`` (:mod:`hud_gym.jobs.live_view`), where an env's
``live_view`` finds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from hud_gym.errors import HudGymError
from hud_gym.jobs.live_view import remove_ui_address, write_ui_address
from hud_gym.ui.app import is_loopback, make_app
from hud_gym.ui.data import StoreView

__all__ = ["TOKEN_ENV_VAR", "UIExposureError", "serve_ui", "ui_token"]

TOKEN_ENV_VAR = "HUD_GYM_UI_TOKEN"


class UIExposureError(HudGymError, ValueError):
    """A non-loopback address without the opt-in."""


def ui_token(host: str, expose: bool) -> str | None:
    """The token the app needs on ``host``: none on loopback; on another address (only with
    ``expose``) ``$HUD_GYM_UI_TOKEN`` or a new random one.

    Raises:
        UIExposureError: a non-loopback ``host`` without ``expose``.
    """
    if is_loopback(host):
        return None
    if not expose:
        raise UIExposureError(
            f"--host {host} would show the store to other machines: pass --expose to allow it "
            f"(a token is then required: ${TOKEN_ENV_VAR} or a generated one)"
        )
    return os.environ.get(TOKEN_ENV_VAR) or secrets.token_urlsafe(24)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family, reuse_port=False)


SHUTDOWN_TIMEOUT_S = 1.0
"""How long a stop waits for requests in flight (a page's API calls answer in milliseconds)."""


def _stop_on_signals(stop: asyncio.Event) -> None:
    """SIGTERM and SIGINT set ``stop`` (where the loop can take signals: the main thread)."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)


async def _serve(home: Path, host: str, port: int, token: str | None, ready: Callable[[str], None]) -> None:
    stop = asyncio.Event()
    _stop_on_signals(stop)
    view = await asyncio.to_thread(StoreView, home)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    runner = web.AppRunner(
        make_app(view, host=host, port=bound, token=token), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S
    )
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}/" + (f"?token={token}" if token else "")
        write_ui_address(home, url)
        ready(url)
        await stop.wait()
    finally:
        remove_ui_address(home)
        await runner.cleanup()


def serve_ui(
    home: Path, host: str = "127.0.0.1", port: int = 8000, *, expose: bool = False, ready: Callable[[str], None] = print
) -> None:
    """Serve the app over the store in ``home`` on ``host:port`` (0: a free port) until Ctrl-C
    or SIGTERM; ``ready`` gets the URL to open once the socket listens. Either signal stops it
    at once: its address leaves ``ui.json``, requests in flight get :data:`SHUTDOWN_TIMEOUT_S`.

    Raises:
        UIExposureError: a non-loopback ``host`` without ``expose``.
        OSError: the address cannot be bound.
    """
    token = ui_token(host, expose)
    try:
        asyncio.run(_serve(home, host, port, token, ready))
    except KeyboardInterrupt:
        pass
