"""The browser gym's controller: one isolated context per env in one shared Chromium.

The gym's setup and evaluate functions (``functions.py``, ``miniwob.py``) are imported by the
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
