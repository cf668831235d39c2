"""The child process of tests/browser/test_host_writes.py: one browser env whose tab crashes, then
closes; it reports what its launch started and made, driven line by line from stdin.

Run as ``python host_writes_child.py CAPTURE ROOT`` with ``HOME``, ``XDG_*`` and ``TMPDIR`` under
``ROOT`` (the test's own folder). Prints one JSON line after the crash: ``pids`` (the browser's
process tree and every process of this user whose command line names a path under ``ROOT``: the
Crashpad handlers, which double-fork to pid 1) and ``temp`` (the entries of ``TMPDIR``); on
``close`` it closes the env and prints the entries of ``TMPDIR`` again; on ``exit`` it exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

import gymnasium
import psutil

import hud_gym  # noqa: F401  (registers the gyms)
from hud_gym.controllers.browser.chromium import MANAGER
from hud_gym.controllers.process_utils import process_tree


def launch_pids(browser: int, root: str) -> list[int]:
    """The browser's tree and the processes of this user that name a path under ``root``."""
    pids = set(process_tree(browser))
    for proc in psutil.process_iter(["cmdline", "uids"]):
        try:
            if proc.info["uids"].real == os.geteuid() and any(root in a for a in proc.info["cmdline"] or []):
                pids.add(proc.pid)
        except (psutil.Error, TypeError, AttributeError):
            continue
    return sorted(pids - {os.getpid()})


async def crash(controller: Any) -> None:
    """Crash the env's tab (CDP ``Page.crash``) and wait until Playwright reports it."""
    session = await controller.tabs.session(controller.state.page)
    crashed = asyncio.ensure_future(controller.state.page.wait_for_event("crash"))
    command = asyncio.ensure_future(session.send("Page.crash"))  # never answered: the tab dies
    await crashed
    command.cancel()


def main(capture: str, root: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(320, 240), capture=capture)
    env.reset(seed=0)
    browser = MANAGER.browser_pid()
    assert browser is not None
    pids = launch_pids(browser, root)
    unwrapped = env.unwrapped
    unwrapped._runner.run(crash(unwrapped.controller), timeout=60)
    temp = sorted(os.listdir(tempfile.gettempdir()))
    print(json.dumps({"pids": pids, "temp": temp}), flush=True)
    for line in sys.stdin:
        if line.strip() == "close":
            env.close()
            print(json.dumps({"temp": sorted(os.listdir(tempfile.gettempdir()))}), flush=True)
        elif line.strip() == "exit":
            return


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
