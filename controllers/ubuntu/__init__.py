"""The desktop gym's controller: a private Xvfb display per env, openbox, XTEST input, MIT-SHM capture.

The gym's setup and evaluate functions (``functions.py``) are imported here when present (and by
the function registry when a desktop task first needs them).
"""

from __future__ import annotations

import importlib

from hud_gym.controllers.ubuntu.controller import (
    CUSTOM_ACTIONS,
    LAUNCHABLE,
    PIXELS_PER_WHEEL_CLICK,
    UbuntuController,
    wheel_clicks,
)
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError

__all__ = [
    "CUSTOM_ACTIONS",
    "LAUNCHABLE",
    "PIXELS_PER_WHEEL_CLICK",
    "DesktopNotAvailableError",
    "UbuntuController",
    "wheel_clicks",
]

try:
    _functions = importlib.import_module("hud_gym.controllers.ubuntu.functions")
except ModuleNotFoundError as _exc:  # functions.py not there (yet): the controller works without it
    if _exc.name != "hud_gym.controllers.ubuntu.functions":
        raise
    _functions = None
