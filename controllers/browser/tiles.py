"""The screen of a shared headed browser: a grid of tiles, one per env, each a virtual monitor.

One headed Chromium (:mod:`.headed`) serves up to :func:`tiles_per_browser` envs whose pages
have the same viewport. Its Xvfb's screen is a grid of equal cells declared as RandR monitors
(:mod:`hud_gym.controllers.x11.monitors`): cell 0 is the *parking* monitor (primary, at the
screen's origin, where Chromium opens a new window before it is placed), cells 1..N are the envs'
tiles. An env's windows (its tabs' window, the popups its pages open) are moved onto its tile and
made fullscreen there (``--kiosk`` fills the window's monitor, without tab strip or toolbar), so
the viewport's pixels start at the tile's top-left corner and are grabbed from there.

A monitor is the viewport's size (at least :data:`MIN_WINDOW_WIDTH` wide: Chromium makes no
narrower window), at the top-left corner of a larger cell, which holds a window in its normal state too (Playwright sizes a
page's window to the viewport plus the browser UI when it opens a tab there, which leaves
fullscreen until the env puts it back), so such a window stays on its own tile.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from hud_gym.controllers.x11.monitors import Rect

__all__ = ["MIN_WINDOW_WIDTH", "TILES_PER_BROWSER", "WINDOW_INSETS", "TileLayout", "tiles_per_browser"]

TILES_PER_BROWSER = 1
"""Envs one headed browser serves by default: one, a browser per env (the least CPU per step: 0 stale
frames in 6,000 toggles). ``HUD_GYM_HEADED_TILES=N`` shares one browser between N envs of the same
viewport (8: 0.40x the memory of 8 headless browsers), which is not the default yet: with several
envs stepping at once the browser's CPU per step doubles (``benchmarks/README.md``). Its "late"
frames (a window that stopped drawing after a navigation or a new tab, issue 13) were Chromium's
MIT-SHM presenter losing a swap acknowledgement; headed browsers run with ``--no-xshm`` since
(:data:`~.headed.HEADED_ARGS`)."""


def tiles_per_browser() -> int:
    """:data:`TILES_PER_BROWSER`, or ``HUD_GYM_HEADED_TILES`` when set.

    Raises:
        ValueError: ``HUD_GYM_HEADED_TILES`` is not a whole number from 1 to 64.
    """
    raw = os.environ.get("HUD_GYM_HEADED_TILES", "").strip()
    if not raw:
        return TILES_PER_BROWSER
    if not raw.isdigit() or not 1 <= int(raw) <= 64:
        raise ValueError(f"HUD_GYM_HEADED_TILES must be a whole number from 1 to 64, got {raw!r}")
    return int(raw)


MIN_WINDOW_WIDTH = 500
WINDOW_INSETS = (8, 85)
"""What Playwright adds to the viewport when it sizes a headed window (Linux): the browser UI."""
PAD = 2


@dataclass(frozen=True)
class TileLayout:
    """The grid of a headed browser whose pages have ``viewport``, with ``tiles`` env tiles."""

    viewport: tuple[int, int]
    tiles: int = TILES_PER_BROWSER

    @property
    def cell(self) -> tuple[int, int]:
        """``(width, height)`` of a cell (a monitor)."""
        width = max(self.viewport[0] + WINDOW_INSETS[0], MIN_WINDOW_WIDTH) + PAD
        return width, self.viewport[1] + WINDOW_INSETS[1] + PAD

    @property
    def columns(self) -> int:
        return math.ceil(math.sqrt(self.tiles + 1))

    @property
    def screen(self) -> tuple[int, int]:
        """The Xvfb screen: every cell (the parking one too)."""
        rows = math.ceil((self.tiles + 1) / self.columns)
        return self.columns * self.cell[0], rows * self.cell[1]

    def _cell_rect(self, index: int) -> Rect:
        width, height = self.cell
        row, column = divmod(index, self.columns)
        return column * width, row * height, width, height

    def origin(self, tile: int) -> tuple[int, int]:
        """The top-left corner of env tile ``tile`` (0-based), where its viewport is drawn.

        Raises:
            ValueError: no such tile.
        """
        if not 0 <= tile < self.tiles:
            raise ValueError(f"tile {tile} out of range (0..{self.tiles - 1})")
        x, y, _, _ = self._cell_rect(tile + 1)
        return x, y

    @property
    def monitor(self) -> tuple[int, int]:
        """``(width, height)`` of a monitor: a fullscreen window's size (the viewport, at least
        :data:`MIN_WINDOW_WIDTH` wide, plus a pixel), at its cell's top-left corner."""
        return max(self.viewport[0], MIN_WINDOW_WIDTH) + 1, self.viewport[1] + 1

    def monitors(self) -> list[Rect]:
        """The monitors to declare: the parking cell's first (primary), then the env tiles'."""
        return [(*self._cell_rect(index)[:2], *self.monitor) for index in range(self.tiles + 1)]

    def window_size_arg(self) -> str:
        """Chromium's ``--window-size`` (a new window's normal size: inside a cell)."""
        return f"--window-size={self.cell[0] - PAD},{self.cell[1] - PAD}"
