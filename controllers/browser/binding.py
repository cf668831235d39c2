"""Which page grades a browser task: the instance its setup made, never a page the agent opened.

An agent must not be graded on a page it made itself: another task's page on the same loopback
server, the same task opened again in a new tab or reloaded (a new instance), a ``data:`` page
holding the text an evaluator looks for. So every setup function that opens or changes the page
*binds* it to the episode (:func:`bind`): the page's document gets the episode's random token (a
non-enumerable ``window`` property no other document has) and its origin is recorded. The
evaluators that read the page's state then grade only a bound page (:func:`graded_page`), as the
task's ``config["graded_pages"]`` says:

- ``"origin"`` (the default): the active tab, when its document carries the token or its origin
  (``http(s)`` or ``file``) is one the setup opened: a link followed inside the task's site
  counts, a ``data:`` page, ``about:blank`` or another site does not;
- ``"instance"``: only a document the setup made (the token): a reload, or the same URL opened
  in a new tab, does not count;
- ``"any"``: the active tab whatever it shows (the task is to navigate somewhere).

A task whose setup opened no page binds nothing, and its evaluators read the active tab (the
agent's navigation is the task). A page that is not the task's is graded as the task's failure
(:class:`~hud_gym.evaluation.absent.TargetAbsent`), never as an ``eval_error``. A suite's own
evaluator can read the page its setup bound, whatever tab is active, and only that instance's
episode (a benchmark suite's reward does).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.controllers.browser.tabs import origin_of
from hud_gym.evaluation import FunctionContext
from hud_gym.evaluation.absent import TargetAbsent

__all__ = ["GRADED_PAGES", "GradedPages", "PageBinding", "bind", "bound_page", "carries_token", "graded_page"]

GradedPages = Literal["origin", "instance", "any"]
GRADED_PAGES: tuple[str, ...] = get_args(GradedPages)

_STATE_KEY = "page_binding"

_MARK_JS = """(token) => { Object.defineProperty(window, "__hudEpisodeToken",
  {value: token, configurable: true, enumerable: false, writable: false}); }"""

_CARRIES_JS = "(token) => window.__hudEpisodeToken === token"


@dataclass
class PageBinding:
    """The episode's binding: its token, the tab the setup bound last, the origins it opened."""

    token: str
    page: Page | None = None
    origins: set[str] = field(default_factory=set)


def binding_of(ctx: FunctionContext) -> PageBinding | None:
    """The episode's binding, ``None`` when its setup bound no page."""
    binding = ctx.state.get(_STATE_KEY)
    return binding if isinstance(binding, PageBinding) else None


async def bind(ctx: FunctionContext, page: Page) -> PageBinding:
    """Bind ``page``'s current document to the episode (its token set, its origin recorded).

    Raises:
        playwright.async_api.Error: the page could not be marked (the setup then fails).
    """
    binding = binding_of(ctx)
    if binding is None:
        binding = ctx.state[_STATE_KEY] = PageBinding(token=secrets.token_hex(16))
    await page.evaluate(_MARK_JS, binding.token)
    binding.page = page
    origin = origin_of(page.url)
    if origin is not None:
        binding.origins.add(origin)
    return binding


async def carries_token(page: Page, token: str) -> bool:
    """Whether ``page``'s document is one the episode's setup bound (False for a page that is
    closed or cannot be read, e.g. in the middle of a navigation)."""
    if page.is_closed():
        return False
    try:
        return bool(await page.evaluate(_CARRIES_JS, token))
    except PlaywrightError:
        return False


def bound_page(ctx: FunctionContext, what: str) -> tuple[Page, str]:
    """The tab the setup bound and the episode's token.

    Raises:
        RuntimeError: the setup bound no page (``what`` needs a setup that does: a broken task).
        TargetAbsent: that tab was closed (final: the instance is gone).
    """
    binding = binding_of(ctx)
    if binding is None or binding.page is None:
        raise RuntimeError(f"{what} grades the page its setup opened, and this episode's setup opened none")
    if binding.page.is_closed():
        raise TargetAbsent("the task's tab was closed", final=True)
    return binding.page, binding.token


def _mode(ctx: FunctionContext) -> str:
    mode: Any = (ctx.task.config or {}).get("graded_pages", "origin") if ctx.task is not None else "origin"
    if mode not in GRADED_PAGES:
        raise ValueError(f"task config 'graded_pages' must be one of {GRADED_PAGES}, got {mode!r}")
    return str(mode)


async def graded_page(ctx: FunctionContext) -> Page:
    """The page an evaluator of page state reads: the active tab, when it is the episode's (see
    the module docstring).

    Raises:
        TargetAbsent: the active tab shows a page the setup did not make.
        ValueError: an unknown ``config["graded_pages"]``.
    """
    page: Page = ctx.controller.state.page
    mode = _mode(ctx)
    binding = binding_of(ctx)
    if binding is None or mode == "any":
        return page
    if mode == "origin" and origin_of(page.url) in binding.origins:
        return page
    if await carries_token(page, binding.token):
        return page
    raise TargetAbsent(f"the active tab shows {page.url[:200]!r}, not the page this task's setup opened")
