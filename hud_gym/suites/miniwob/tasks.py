"""MiniWoB++ as a bundled task set of the browser gym, from the ``miniwob`` package's own HTML.

The pages are served from a loopback HTTP server (one per process; the flight tasks need HTTP).
Each task's setup (``miniwob_start``) opens the task page (kept open across episodes; the last few
tasks' pages kept warm in parked contexts, :mod:`~hud_gym.controllers.browser.warm`, so a switch back loads nothing), then
starts a seeded episode in one ``page.evaluate``: same seed, same instance. The in-page time limit is
disabled. The setup binds the page to the episode (:mod:`hud_gym.controllers.browser.binding`: a token only this instance's
document carries). The evaluator (``miniwob_reward``) reads MiniWoB's raw reward and ``done`` from
that page (``WOB_RAW_REWARD_GLOBAL``, ``WOB_DONE_GLOBAL``), whatever tab is active; when the page
was left, reloaded or closed, the instance is gone and the episode is graded as MiniWoB's failure
(raw -1, done), never from another task's page or a new instance the agent opened. The
time-decayed reward the task would have given with its own time limit is in the grade's
``info["time_reward"]``. MiniWoB tasks are graded after
every step (``config["evaluate_every_step"]``), so the episode ends when the page says done.

Example:
    >>> import gymnasium, hud_gym
    >>> env = gymnasium.make("hud/Browser-v0", task="miniwob/click-test-2",
    ...                      observation_crop=MINIWOB_TASK_AREA)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import http.server
import importlib.resources
import re
import threading
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.browser.binding import bind, bound_page, carries_token
from hud_gym.evaluation import FunctionContext, Grade, TargetAbsent, evaluate_function, setup_function
from hud_gym.task import Task, TaskSet

__all__ = [
    "FLIGHT_TASKS",
    "miniwob_base_url",
    "miniwob_flight_taskset",
    "EXCLUDED_UPSTREAM",
    "extract_fields",
    "miniwob_html_root",
    "miniwob_official_taskset",
    "miniwob_task_names",
    "miniwob_taskset",
]

FLIGHT_TASKS: tuple[str, ...] = ("flight.AA", "flight.Alaska", "flight.Alaska-auto")

NO_TIME_LIMIT_MS = 1e9
"""The in-page episode limit we set (about 11 days): the agent's speed does not change the reward."""

# Tasks whose instances vary beyond the seed (timers, animations, the date), from the miniwob
# package's own registration.
NONDETERMINISTIC = frozenset(
    [
        "book-flight",
        "book-flight-nodelay",
        "choose-date",
        "choose-date-easy",
        "choose-date-medium",
        "choose-date-nodelay",
        "click-dialog",
        "click-dialog-2",
        "click-pie",
        "click-pie-nodelay",
        "click-scroll-list",
        "drag-cube",
        "scroll-text",
        "scroll-text-2",
        "search-engine",
        "social-media",
        "social-media-all",
        "social-media-some",
        "terminal",
        "order-food",
        "phone-book",
        "stock-market",
        "flight.AA",
        "flight.Alaska",
        "flight.Alaska-auto",
    ]
)

# Registered by neither the miniwob package nor its published results: "impossible without a
# no-delay version" (they wait for events: miniwob's docs/_scripts/gen_env_list.py).
EXCLUDED_UPSTREAM = frozenset(["chase-circle", "moving-items", "simon-says", "button-delay", "hover-shape"])

_START_JS = """async ({seed, mode, maxTime}) => {
  const loaded = Date.now() + 15000;  // a page just loaded: core.js sets up on its load event
  while (!(typeof core !== "undefined" && core.cover_div) && Date.now() < loaded) {
    await new Promise(r => setTimeout(r, 5));
  }
  if (window.__hudOriginalMaxTime === undefined) window.__hudOriginalMaxTime = core.EPISODE_MAX_TIME;
  core.endEpisode(0);
  Math.seedrandom(seed);
  core.setDataMode(mode);
  core.EPISODE_MAX_TIME = maxTime;
  // A page kept from an earlier episode keeps its elements' ref marks, stamped by the last
  // observation with WOB_EPISODE_ID, which a solved episode's end already moved on: they would
  // match this episode's and collide with the refs it hands out from 1 (a fresh page has none).
  document.querySelectorAll("[data-wob_ref]").forEach((e) => { delete e.dataset.wob_ref; delete e.dataset.wob_eps; });
  core.startEpisodeReal();
  const deadline = Date.now() + 10000;
  while (WOB_TASK_READY !== true && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 10));
  }
  const u = core.getUtterance();
  const structured = !!u && typeof u === "object";
  return {utterance: structured ? u.utterance : u, fields: structured ? (u.fields || null) : null,
          ready: WOB_TASK_READY === true, originalMaxTime: window.__hudOriginalMaxTime};
}"""

# Read directly: the env observes (a fresh compositor frame) between the action and the
# evaluation, so handlers that end the episode from a timer or an animation frame have run.
# ``null`` on a document that is not the episode's instance (another page, a reload).
_REWARD_JS = """(token) => (window.__hudEpisodeToken !== token || typeof WOB_DONE_GLOBAL === "undefined") ? null
  : ({done: !!WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL,
      reason: WOB_REWARD_REASON, originalMaxTime: window.__hudOriginalMaxTime})"""


def miniwob_html_root() -> Path:
    """The ``html`` folder of the installed ``miniwob`` package.

    Raises:
        ModuleNotFoundError: ``miniwob`` is not installed (the message says how to install it).
    """
    try:
        root = importlib.resources.files("miniwob") / "html"
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "the MiniWoB++ task set needs the 'miniwob' package: pip install 'hud-gym[miniwob]'"
        ) from None
    return Path(str(root))


def miniwob_task_names() -> list[str]:
    """The 130 MiniWoB++ task names (the pages in ``miniwob/html/miniwob``), sorted."""
    return sorted(p.stem for p in (miniwob_html_root() / "miniwob").glob("*.html"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the installed package's files, which never change while it runs: cached for a day
    without revalidation (and the clear reset keeps the cache for this origin)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "public, max-age=86400, immutable")
        super().end_headers()


_server_lock = threading.Lock()
_server: http.server.ThreadingHTTPServer | None = None


def miniwob_base_url() -> str:
    """The URL of the loopback HTTP server that serves the MiniWoB++ HTML (started on first use)."""
    global _server
    from hud_gym.controllers.browser.tabs import CACHE_KEPT_ORIGINS

    with _server_lock:
        if _server is None:
            handler = functools.partial(_QuietHandler, directory=str(miniwob_html_root()))
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, name="hud-gym-miniwob-http", daemon=True).start()
            _server = server
            CACHE_KEPT_ORIGINS.add(f"http://127.0.0.1:{server.server_address[1]}")
        return f"http://127.0.0.1:{_server.server_address[1]}"


def task_url(name: str) -> str:
    """The URL of a MiniWoB++ task page (``flight.X`` pages live under ``flight/X/wrapper.html``)."""
    if name.startswith("flight."):
        return f"{miniwob_base_url()}/flight/{name.split('.', 1)[1]}/wrapper.html"
    return f"{miniwob_base_url()}/miniwob/{name}.html"


def _task(name: str) -> Task:
    metadata: dict[str, Any] = {"benchmark": "miniwob", "nondeterministic": name in NONDETERMINISTIC}
    if name in EXCLUDED_UPSTREAM:
        metadata["excluded_upstream"] = True
    return Task(
        id=name,
        prompt=f"Solve the MiniWoB++ task '{name}': follow the instruction at the top of the page.",
        gym="hud-browser",
        setup=[("miniwob_start", name)],  # type: ignore[list-item]  # tuples are validated into FunctionConfig
        evaluate=[("miniwob_reward",)],  # type: ignore[list-item]
        config={"evaluate_every_step": True, "keep_page": True},
        metadata=metadata,
    )


def miniwob_taskset() -> TaskSet:
    """All 130 MiniWoB++ task pages (``load_taskset("miniwob")``); the 5 the official registry
    leaves out have ``metadata["excluded_upstream"]`` (:data:`EXCLUDED_UPSTREAM`)."""
    return TaskSet(
        tasks=[_task(n) for n in miniwob_task_names()],
        id="miniwob",
        description="MiniWoB++ (Farama) task pages, served on loopback; raw page reward.",
    )


def miniwob_official_taskset() -> TaskSet:
    """Exactly the 128 tasks of the official ``miniwob`` registry (``load_taskset("miniwob-official")``):
    the 125 pages it registers and the 3 FlightWoB sites, so that success rates compare with
    published ones."""
    names = [n for n in miniwob_task_names() if n not in EXCLUDED_UPSTREAM] + list(FLIGHT_TASKS)
    return TaskSet(
        tasks=[_task(n) for n in names],
        id="miniwob-official",
        description="The 128 tasks the official MiniWoB++ registry registers (125 pages + 3 flight sites).",
    )


def miniwob_flight_taskset() -> TaskSet:
    """The three FlightWoB tasks (``load_taskset("miniwob-flight")``)."""
    return TaskSet(
        tasks=[_task(n) for n in FLIGHT_TASKS],
        id="miniwob-flight",
        description="MiniWoB++ FlightWoB booking sites (HTTP only).",
    )


@setup_function("browser")
async def miniwob_start(ctx: FunctionContext, name: str, mode: str = "train") -> dict[str, Any]:
    """Open MiniWoB++ task ``name`` (unless it is already open) and start the episode seeded with
    the env's episode seed. The page's instruction becomes the agent's prompt."""
    # A task's name is checked as a name before it touches a path (no '../' probe of the host's files).
    plain = isinstance(name, str) and re.fullmatch(r"[a-z0-9][a-z0-9-]{0,99}", name) is not None
    if name not in FLIGHT_TASKS and not (plain and (miniwob_html_root() / "miniwob" / f"{name}.html").is_file()):
        raise ValueError(f"no MiniWoB++ task {name!r}")
    page = ctx.controller.state.page
    url = task_url(name)
    if page.url != url:
        if name in FLIGHT_TASKS:
            # The flight sites keep state in cookies and storage: loaded in place, never warm.
            await page.goto(url, wait_until="load", timeout=15_000)
        else:
            # A recently used task's page is kept warm, paused in a context of its own
            # (controllers/browser/warm.py); else loaded, its scripts from the HTTP cache.
            # Readiness is waited for in _START_JS, in the same round trip as the episode's start.
            page = await ctx.controller.warm.show(url, timeout=15.0)
    seed = ctx.seed if ctx.seed is not None else 0
    result = await page.evaluate(_START_JS, {"seed": seed, "mode": mode, "maxTime": NO_TIME_LIMIT_MS})
    if not result["ready"]:
        raise RuntimeError(f"MiniWoB++ task {name!r} did not become ready within 10 s")
    ctx.instruction = result["utterance"]
    ctx.info["fields"] = extract_fields(name, result["utterance"], result.get("fields"))
    ctx.info["data_mode"] = mode
    ctx.state["miniwob"] = {"task": name, "original_max_time_ms": result["originalMaxTime"]}
    await bind(ctx, page)
    return result


def extract_fields(name: str, utterance: str, structured: dict[str, Any] | None = None) -> list[list[str]]:
    """MiniWoB's ``fields`` of an instance: the task's key/value pairs as ``[key, value]`` lists
    (a key may repeat), from the page when it gives them (the flight sites), else parsed from
    the utterance by the ``miniwob`` package's own field extractor (``miniwob.fields``). An
    utterance the extractor does not match has no fields (the official env would raise)."""
    if structured is not None:
        return [[str(k), str(v)] for k, v in structured.items()]
    from miniwob.fields import get_field_extractor

    try:
        return [[str(k), str(v)] for k, v in get_field_extractor(name)(utterance or "")]
    except (KeyError, ValueError):
        return []


@evaluate_function("browser", reward_range=(-1.0, 1.0))
async def miniwob_reward(ctx: FunctionContext) -> Grade:
    """MiniWoB++'s raw reward (-1 to 1) and ``done``, read from the page ``miniwob_start`` bound.

    ``info["time_reward"]`` is the reward the task would have given with its own time limit
    (the time-decayed one, for tasks that decay it).

    Raises:
        TargetAbsent: the bound page was closed, left or reloaded (MiniWoB's failure, -1, done).
    """
    page, token = bound_page(ctx, "miniwob_reward")
    try:
        state = await page.evaluate(_REWARD_JS, token)
    except PlaywrightError:
        if page.is_closed() or not await carries_token(page, token):
            raise TargetAbsent("the task's page was left while it was being graded", final=True) from None
        raise
    if state is None:
        raise TargetAbsent(f"the task's page was left or reloaded (the tab shows {page.url[:200]!r})", final=True)
    raw = float(state["raw"] or 0.0)
    reward = float(state["reward"] or 0.0)
    time_reward = reward
    elapsed_ms = None
    if state["done"] and raw != 0 and reward != raw:
        # With our limit, reward = raw * (1 - elapsed / NO_TIME_LIMIT_MS): recover the elapsed
        # time, then apply the task's own limit.
        elapsed_ms = (1.0 - reward / raw) * NO_TIME_LIMIT_MS
        original = float(state["originalMaxTime"] or 10_000)
        time_reward = raw * max(0.0, 1.0 - elapsed_ms / original)
    return Grade(
        reward=raw if state["done"] else 0.0,
        done=bool(state["done"]),
        content=state["reason"] or ("done" if state["done"] else "in progress"),
        info={"raw_reward": raw, "time_reward": time_reward, "elapsed_ms": elapsed_ms, "reason": state["reason"]},
        raw=state,
    )
