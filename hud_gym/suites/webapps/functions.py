"""The web apps' setup and evaluate functions, and the :class:`Task` a family's generator makes.

``webapp_start(app, seed, path)`` makes the episode's database from the seed (a copy of the seed's
template in the episode's own folder, :mod:`.server`), opens the app's page at ``path`` under the
episode's token, drops the tab's history and binds the tab to the episode
(:mod:`hud_gym.controllers.browser.binding`). A family's task has ``config["keep_page"]``: the
reset leaves the previous page in place (its episode ended: its pages are 404s) instead of loading
``about:blank`` first, so the app's page loads in the renderer already running.
``webapp_check(family, params)`` grades the state of *that* database (the one of the episode's
token) with the family's check: 1 when the task is done, else 0; a page the agent left changes
nothing (the state is the server's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hud_gym.controllers.browser.binding import bind
from hud_gym.core.gym_type import import_path
from hud_gym.evaluation import FunctionContext, Grade, evaluate_function, setup_function
from hud_gym.suites.webapps.families import CHECKS
from hud_gym.suites.webapps.oracle import Op
from hud_gym.suites.webapps.server import App, base_url, get_episode, start_episode
from hud_gym.task import Task

__all__ = ["APPS", "family_task", "webapp_check", "webapp_start"]

APPS: dict[str, str] = {
    "mail": "hud_gym.suites.webapps.mail:APP",
    "shop": "hud_gym.suites.webapps.shop:APP",
    "calendar": "hud_gym.suites.webapps.calendar:APP",
    "admin": "hud_gym.suites.webapps.admin:APP",
}
"""The apps, by name (import paths)."""


_PATH = re.compile(r"^/[A-Za-z0-9/_-]{0,200}$")
_STATE_KEY = "webapp_token"


@setup_function("browser")
async def webapp_start(ctx: FunctionContext, app: str, seed: int, path: str = "/") -> None:
    """Start an episode of ``app`` with the data of ``seed`` and open its page ``path``."""
    if app not in APPS:
        raise ValueError(f"no web app {app!r}; the apps: {', '.join(APPS)}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
        raise ValueError(f"a web app's seed is an int in 0 .. 2**31 - 1, got {seed!r}")
    if not isinstance(path, str) or not _PATH.match(path):
        raise ValueError(f"a web app's path is '/' followed by letters, digits, '/', '_' and '-', got {path!r}")
    the_app: App = import_path(APPS[app])
    episode = start_episode(the_app, seed, owner=id(ctx.controller))
    ctx.state[_STATE_KEY] = episode.token
    page = ctx.controller.state.page
    await page.goto(f"{base_url()}/e/{episode.token}/{app}{path}", wait_until="load", timeout=15_000)
    # The task keeps its page at the reset (no detour by about:blank: a same-site navigation reuses
    # the renderer); the tab's history, which the reset then keeps, is dropped here instead.
    session = await page.context.new_cdp_session(page)
    try:
        await session.send("Page.resetNavigationHistory")
    finally:
        await session.detach()
    await bind(ctx, page)


@evaluate_function("browser")
async def webapp_check(ctx: FunctionContext, family: str, params: dict[str, Any]) -> Grade:
    """1 when the episode's database shows ``family``'s task done (with ``params``), else 0.

    Raises:
        RuntimeError: the episode's setup started no web app (a broken task).
        ValueError: an unknown family.
    """
    episode = get_episode(str(ctx.state.get(_STATE_KEY)))
    if episode is None:
        raise RuntimeError("webapp_check grades the web app its setup started, and this episode started none")
    if family not in CHECKS:
        raise ValueError(f"no web-app family {family!r}")
    check = import_path(CHECKS[family])
    with episode.connect(readonly=True) as db:
        done, why = check(db, params)
    return Grade(reward=1.0 if done else 0.0, done=bool(done), content=why)


def family_task(
    family: str,
    app: str,
    seed: int,
    difficulty: int,
    prompt: str,
    params: dict[str, Any],
    plan: Sequence[Op],
    path: str = "/",
) -> Task:
    """A web-app family's task: its setup, its check, its metadata (with the oracle's plan)."""
    return Task(
        id=f"{family}-{seed}-d{difficulty}",
        prompt=prompt,
        gym="hud-browser",
        setup=[("webapp_start", app, seed, path)],  # type: ignore[list-item]
        evaluate=[("webapp_check", family, params)],  # type: ignore[list-item]
        config={"evaluate_every_step": True, "keep_page": True},
        metadata={
            "benchmark": "webapps",
            "family": family,
            "seed": seed,
            "difficulty": difficulty,
            "app": app,
            "plan": [[op.kind, op.target, op.text, op.tag] for op in plan],
        },
    )
