"""How long the real desktop apps take to show their main window on ``hud/Ubuntu-v0``.

One env (1280x720, openbox, the default sandbox). Per app, in order, three starts, each timed
from the spawn in the episode's sandbox to the first window whose title names the app:

- **cold**: the app's first start in this run, in a fresh episode's home (the home profile only:
  the app creates its own caches and settings; the OS page cache holds whatever earlier runs
  left, which this benchmark does not drop: the box is shared);
- **new episode**: its second start, after a reset (a fresh home again): what every task that
  launches the app pays;
- **warm**: its third start, in the same home as the second (the app's own profile and caches
  already made), after the second was ended with SIGTERM (so LibreOffice removes its lock).

Run: ``python -m benchmarks.desktop_apps [--apps gimp,vlc]``. Prints a Markdown table and the
load average.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from typing import Any

import gymnasium
import psutil

import hud_gym  # noqa: F401  (registers the ids)

TITLES: dict[str, str] = {
    "libreoffice-calc": "LibreOffice Calc",
    "libreoffice-writer": "LibreOffice Writer",
    "libreoffice-impress": "LibreOffice Impress",
    "gimp": "GNU Image Manipulation Program",
    "vlc": "VLC media player",
    "thunderbird": "Thunderbird",
    "gedit": "gedit",
    "pcmanfm": "home",
    "chromium": "Chromium",
    "xterm": "xterm",
}
"""App -> a substring of its main window's title (PCManFM names the folder: the home's)."""
TIMEOUT = 180.0


def _run(env: Any, coro: Any) -> Any:
    return env.unwrapped._runner.run(coro, timeout=TIMEOUT)


def start_ms(env: Any, app: str) -> float:
    """Milliseconds from launching ``app`` to its main window."""
    controller = env.unwrapped.controller

    async def launch() -> None:
        await controller.desktop.spawn(controller.desktop.launch_argv(app, []))

    async def windows() -> list[dict[str, Any]]:
        return list(await controller.desktop.windows())

    began = time.perf_counter()
    _run(env, launch())
    while not any(TITLES[app] in w["title"] for w in _run(env, windows())):
        if time.perf_counter() - began > TIMEOUT:
            raise TimeoutError(f"{app} showed no main window in {TIMEOUT} s")
        time.sleep(0.02)
    return (time.perf_counter() - began) * 1000


def end_apps(env: Any) -> None:
    """SIGTERM every process of the episode's sandbox (SIGKILL after 30 s), and wait for them."""
    pids = env.unwrapped.controller.desktop.pids().get("tasks", set())
    processes = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            process.send_signal(signal.SIGTERM)
            processes.append(process)
        except psutil.Error:
            continue
    _, alive = psutil.wait_procs(processes, timeout=30)
    for process in alive:
        process.kill()
    psutil.wait_procs(alive, timeout=10)


def measure(env: Any, app: str) -> tuple[float, float, float]:
    """(cold, new episode, warm) start ms of ``app``."""
    env.reset()
    cold = start_ms(env, app)
    env.reset()
    episode = start_ms(env, app)
    time.sleep(2)  # let it finish writing its profile
    end_apps(env)
    warm = start_ms(env, app)
    env.reset()
    return cold, episode, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(TITLES), help="comma-separated apps (default: all)")
    apps = parser.parse_args().apps.split(",")
    env = gymnasium.make("hud/Ubuntu-v0", max_steps=100_000, in_container=False)
    try:
        env.reset(seed=0)
        load = os.getloadavg()
        print("| app | cold ms | new episode ms | warm ms |\n|---|---:|---:|---:|")
        for app in apps:
            cold, episode, warm = measure(env, app)
            print(f"| {app} | {cold:.0f} | {episode:.0f} | {warm:.0f} |", flush=True)
        after = os.getloadavg()
        print(f"\nload average (1 min) {load[0]:.1f} before, {after[0]:.1f} after; {os.cpu_count()} cores")
    finally:
        env.close()


if __name__ == "__main__":
    main()
