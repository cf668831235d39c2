"""The browser gym's controller: one isolated context per env in one shared Chromium.

Modules, one job each:

- :mod:`.controller`: :class:`BrowserController`, the parts put together, and the CLA table its
  ``step`` runs (:data:`~.controller.ACTIONS`, a :class:`~hud_gym.controllers.dispatch.ActionTable`);
- :mod:`.state`: its options and the state the parts share;
- :mod:`.lifecycle`: the lease on the shared Chromium, the context, the episode reset, close;
- :mod:`.tabs`: tabs, their DevTools sessions, targets and popups, downloads, crashed tabs;
- :mod:`.input`: click, press, type, scroll, move, drag as trusted input events;
- :mod:`.custom`: the custom actions (``goto``, ``new_tab``, ...);
- :mod:`.observation`: the frame after an action; :mod:`.capture` its screenshot and page state;
- :mod:`.warm`: warm pages, each in a parked context, for resets onto recently used task pages;
- :mod:`.extensions`: what the gym's suites add (custom actions, page probes), read from the
  suite registry (this package imports no suite);
- :mod:`.chromium` (the shared browsers), :mod:`.binary` (which Chromium, with which flags),
  :mod:`.session` (a tab's DevTools session),
  :mod:`.dialogs`, :mod:`.urls` (the navigation policy), :mod:`.keys` (CLA keys to Playwright's).

The parts are mixins of one class, stacked so that each uses only the ones below it
(``state <- tabs <- lifecycle <- input, custom, observation <- controller``), rather than objects
composed by the controller: they all work on one browser context and its tabs (the active tab,
its DevTools session, the pointer), which composition would split across objects that each need
the others, behind forwarding properties. A mixin keeps ``self.page`` one hop away on the step's
hot path, and the public attributes (``page``, ``pages``, ``pointer``, ``downloads``, ...) where
the gym's functions and the tests use them.

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
