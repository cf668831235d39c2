"""``hud-gym ui``: the aiohttp application over a :class:`~hud_gym.ui.data.StoreView`.

One HTML page (``/``) with its script and style, a JSON API under ``/api/`` and the stored
screenshots under ``/images/``. What a client may do, whatever it sends:

- **read only**: every method but ``GET`` and ``HEAD`` is refused (405), and the store is opened
  ``query_only``;
- **no host reach**: ``/images/`` serves image files inside the store's ``images`` directory and
  nothing else (no ``..``, no absolute path, no symlink pointing out); nothing else touches files;
- **no other site's pages**: the ``Host`` header must be the address the app is bound to (or
  ``localhost``), which defeats DNS rebinding; responses forbid framing and inline scripts (CSP);
- **a token when exposed**: bound to a non-loopback address, every request must carry the token
  (``?token=`` once, then a cookie); on loopback none is needed.

All strings reach the page as JSON and are put in the DOM as text (``textContent``), never as
HTML, so a hostile prompt, action or model reply renders as text.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from importlib import resources
from typing import Any

from aiohttp import web

from hud_gym.jobs.errors import JobNotFoundError, TrajectoryNotFoundError
from hud_gym.ui.data import StoreView

__all__ = ["TOKEN_COOKIE", "is_loopback", "make_app"]

TOKEN_COOKIE = "hud_gym_ui_token"
VIEW: web.AppKey[StoreView] = web.AppKey("view", StoreView)
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STATIC = {"app.js": "text/javascript", "charts.js": "text/javascript", "style.css": "text/css"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _json(data: Any) -> web.Response:
    return web.Response(text=json.dumps(data, allow_nan=False, default=str), content_type="application/json")


def _static(name: str) -> str:
    return resources.files("hud_gym.ui").joinpath("static", name).read_text(encoding="utf-8")


def make_app(
    view: StoreView, *, host: str = "127.0.0.1", port: int = 8000, token: str | None = None
) -> web.Application:
    """The app for ``view``, bound (by the caller) to ``host:port``.

    Raises:
        ValueError: a non-loopback ``host`` without a ``token``.
    """
    if not is_loopback(host) and not token:
        raise ValueError(f"the UI on {host} (not loopback) needs a token")
    allowed_hosts = {f"{name}:{port}" for name in (host, "localhost", "127.0.0.1", "[::1]")} | {host, "localhost"}

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD"], text="the UI is read-only")
        if request.host not in allowed_hosts and host not in ("0.0.0.0", "::"):
            raise web.HTTPMisdirectedRequest(text="unknown Host header")
        if token:
            given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise web.HTTPUnauthorized(text="a token is needed: open the URL hud-gym ui printed")
        response = await handler(request)
        if token and request.query.get("token"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    app = web.Application(middlewares=[guard])
    app[VIEW] = view
    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/api/version", api_version)
    app.router.add_get("/api/jobs", api_jobs)
    app.router.add_get("/api/jobs/{job_id}", api_job)
    app.router.add_get("/api/compare/{a}/{b}", api_compare)
    app.router.add_get("/api/runs/{run_id}", api_run)
    app.router.add_get("/api/groups/{group_id}", api_group)
    app.router.add_get("/api/live", api_live)
    app.router.add_get("/api/live/env/{env_id}", api_env_run)
    app.router.add_get("/api/curves", api_curves)
    app.router.add_get("/images/{path:.+}", image)
    return app


async def index(request: web.Request) -> web.Response:
    return web.Response(text=_static("index.html"), content_type="text/html")


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC:
        raise web.HTTPNotFound()
    return web.Response(text=_static(name), content_type=STATIC[name])


async def _call(request: web.Request, method: str, *args: str) -> web.Response:
    view = request.app[VIEW]
    try:
        return _json(await asyncio.to_thread(getattr(view, method), *args))
    except (JobNotFoundError, TrajectoryNotFoundError) as exc:
        raise web.HTTPNotFound(text=str(exc)) from None


async def api_version(request: web.Request) -> web.Response:
    return await _call(request, "version")


async def api_jobs(request: web.Request) -> web.Response:
    return await _call(request, "jobs")


async def api_job(request: web.Request) -> web.Response:
    return await _call(request, "job", request.match_info["job_id"])


async def api_compare(request: web.Request) -> web.Response:
    return await _call(request, "compare", request.match_info["a"], request.match_info["b"])


async def api_run(request: web.Request) -> web.Response:
    return await _call(request, "run", request.match_info["run_id"])


async def api_group(request: web.Request) -> web.Response:
    return await _call(request, "group", request.match_info["group_id"])


async def api_live(request: web.Request) -> web.Response:
    return await _call(request, "running_runs")


async def api_env_run(request: web.Request) -> web.Response:
    return await _call(request, "env_run", request.match_info["env_id"])


async def api_curves(request: web.Request) -> web.Response:
    return await _call(request, "curves", request.query.get("key", "")[:64])


async def image(request: web.Request) -> web.StreamResponse:
    path = request.app[VIEW].image_path(request.match_info["path"])
    if path is None:
        raise web.HTTPNotFound()
    return web.FileResponse(path)
