"""The downloads of the browser session: saved in the env's own download folder, listed per episode.

Every tab's ``download`` event (:mod:`.tabs`) saves the file in the background under its suggested
name (numbered when taken) in ``state.download_dir``, a private folder made at start and removed
at close; its path is added to ``state.downloads``, the episode's list, which the observation
reports (``info["downloads"]``) and the gym's functions read. A reset cancels the saves in
progress and empties the folder.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from playwright.async_api import Download
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.browser.dialogs import retrieve
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.temp_folders import make_temp_folder

__all__ = ["BrowserDownloads"]


class BrowserDownloads:
    """The download folder of ``state`` and the saves in progress."""

    def __init__(self, state: BrowserState) -> None:
        self.state = state

    def make_folder(self) -> None:
        """Make the env's download folder (removed on :meth:`remove_folder`, or with the state)."""
        self.state.download_dir = make_temp_folder("hud-gym-downloads-", self.state)

    def on_download(self, download: Download) -> None:
        """A tab's ``download`` event: save the file in the background."""
        task = asyncio.ensure_future(self._save(download))
        self.state.background.add(task)
        task.add_done_callback(self.state.background.discard)
        task.add_done_callback(retrieve)

    async def _save(self, download: Download) -> None:
        folder = self.state.download_dir
        assert folder is not None
        name = Path(download.suggested_filename or "download").name or "download"
        target = folder / name
        stem, suffix, n = target.stem, target.suffix, 1
        while target.exists():
            target = folder / f"{stem} ({n}){suffix}"
            n += 1
        try:
            await download.save_as(target)
        except PlaywrightError:
            return
        self.state.downloads.append(str(target))

    async def wait(self, timeout: float = 10.0) -> list[str]:
        """Wait for the downloads in progress to be saved; return the episode's downloads."""
        pending = [t for t in self.state.background if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        return list(self.state.downloads)

    def cancel(self) -> None:
        """Cancel the saves in progress (a reset, or the context closing)."""
        for task in list(self.state.background):
            task.cancel()

    def clear_folder(self) -> None:
        """Empty the download folder and the episode's list (a reset)."""
        self.state.downloads = []
        folder = self.state.download_dir
        if folder is None:
            return
        for path in folder.iterdir():
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def remove_folder(self) -> None:
        """Remove the download folder (the controller closing)."""
        if self.state.download_dir is not None:
            shutil.rmtree(self.state.download_dir, ignore_errors=True)
