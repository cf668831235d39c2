"""The desktop gym's controller: a private Xvfb display per env, openbox, XTEST input, MIT-SHM capture.

Modules, one job each:

- :mod:`.controller`: :class:`UbuntuController`, the ``Controller`` over the parts, its CLA table
  (:data:`~.controller.ACTIONS`: action type -> a part's method) and the observation;
- :mod:`.state`: the desktop session every part receives (:class:`~.state.DesktopState`: the
  options, the X connection, the folders);
- :mod:`.lifecycle`: start, episode reset, health, close;
- :mod:`.input`: the pointer and keyboard actions as XTEST events;
- :mod:`.desktop`: the API of the gym's functions: permissions, processes, windows, clipboard;
- :mod:`.custom`: the custom actions (``launch``, ``key_sequence``, ``clipboard_set``);
- :mod:`.policy`: what ``launch`` starts and which paths a task reaches (pure functions);
- the session and its pieces: :mod:`.session`, :mod:`.display`, :mod:`.sandboxed`,
  :mod:`.processes`; the home as host code sees it: :mod:`.homefs` (over :mod:`.beneath`);
  downloads by the episode's network rules: :mod:`.download` (over :mod:`.addresses`); the X side:
  :mod:`.xinput`, :mod:`.keysyms`, :mod:`.windows` (over :mod:`hud_gym.controllers.x11`'s connection
  and capture, shared with the headed browser); the shipped apps: :mod:`.apps`.

The parts are objects the controller owns, each given the one state object (composition, no
inheritance between them): ``controller.lifecycle``, ``controller.input``, ``controller.desktop``
(what the gym's functions use: ``ctx.controller.desktop``) and ``controller.custom`` (which is given
the input and desktop parts too); ``controller.state`` is the session they share (one X
connection, one pending settle).

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
    _functions = None  # type: ignore[assignment]
