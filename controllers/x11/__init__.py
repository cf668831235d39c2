"""X11 displays of the gyms that draw on one (the desktop gym; headed browsers): private Xvfb
servers (:mod:`.xvfb`) authorised by a fresh MIT-MAGIC-COOKIE each (:mod:`.xauth`)."""

from hud_gym.controllers.x11.xauth import (
    ProcessAuthority,
    new_cookie,
    process_authority,
    write_display_authority,
)
from hud_gym.controllers.x11.xvfb import FIRST_DISPLAY, XvfbServer, start_xvfb

__all__ = [
    "FIRST_DISPLAY",
    "ProcessAuthority",
    "XvfbServer",
    "new_cookie",
    "process_authority",
    "start_xvfb",
    "write_display_authority",
]
