"""The browser gym's controller: one isolated context per env in one shared Chromium.

Modules, one job each:

- :mod:`.controller`: :class:`BrowserController`, the owner of the session and its collaborators,
  and the CLA table its ``step`` runs (:data:`~.controller.ACTIONS`, a
  :class:`~hud_gym.controllers.dispatch.ActionTable` from CLA type to collaborator method);
- :mod:`.state`: the browser session (:class:`~.state.BrowserState`): the options and everything
  live (lease, context, tabs, dialogs, downloads, parked warm pages), shared by the collaborators;
- the collaborators, each a class that receives the state (and the collaborators it uses):
  :mod:`.tabs` (tabs, their DevTools sessions, windows, targets and popups, crashed tabs),
  :mod:`.downloads` (the download folder), :mod:`.contexts` (open and close the context),
  :mod:`.lifecycle` (the lease on the shared Chromium, the episode reset, health, close),
  :mod:`.input` (click, press, type, scroll, move, drag as trusted input events), :mod:`.custom`
  (the custom actions: ``goto``, ``new_tab``, ...), :mod:`.observation` (the frame after an
  action; :mod:`.capture` its screenshot and page state), :mod:`.warm` (warm pages, each in a
  parked context, for resets onto recently used task pages);
- :mod:`.extensions`: what the gym's suites add (custom actions, page probes), read from the
  suite registry (this package imports no suite);
- :mod:`.chromium` (the shared browsers), :mod:`.binary` (which Chromium, with which flags),
  :mod:`.session` (a tab's DevTools session),
  :mod:`.dialogs`, :mod:`.urls` (the navigation policy), :mod:`.keys` (CLA keys to Playwright's).

The collaborators depend on one another in one direction (``state <- downloads <- tabs <-
contexts, input, custom, observation <- lifecycle, warm <- controller``); none holds the
controller. The gym's functions and suites reach the session as ``ctx.controller.state``
(``state.page``, the active tab) and a collaborator by name (``ctx.controller.warm.show(url)``).

The gym's setup and evaluate functions (``functions.py``, and its suites', :mod:`hud_gym.suites`) are imported by the
function registry when a browser task first needs them.
"""

from hud_gym.controllers.browser.chromium import MANAGER, ChromiumManager, ChromiumNotFoundError, find_chromium
from hud_gym.controllers.browser.controller import CUSTOM_ACTIONS, BrowserController
from hud_gym.controllers.browser.keys import playwright_key

__all__ = [
    "CUSTOM_ACTIONS",
    "MANAGER",
    "BrowserController",
    "ChromiumManager",
    "ChromiumNotFoundError",
    "find_chromium",
    "playwright_key",
]
