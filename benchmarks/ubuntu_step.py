"""One desktop step at 1280x720, the common way and ours, on the same Xvfb (medians):

(a) the common way: ``pyautogui.click`` with its default 0.1 s pause + ``pyautogui.screenshot()``
    (scrot on X11) + conversion to a numpy array;
(b) ours: ``env.step(ClickAction)`` of ``hud/Ubuntu-v0``, returning a fresh observation;

plus the parts: a raw XTEST click + ``XSync``, one MIT-SHM grab + RGB conversion, XTEST typing of
20 characters, and ``env.reset()`` on a live display (empty desktop, and with an app to kill).

Target: (b) <= 0.1 x (a); reset median <= 1 s. The click target is the event-log window's toggle,
which changes colour on every click, so every frame differs from the previous one. (b), the grab
(of the screen (b) left settled), the raw click and (a) are interleaved step by step. Run: ``python -m benchmarks.ubuntu_step [--steps N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image
from Xlib import X
from Xlib import display as xdisplay
from Xlib.ext import xtest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import ClickAction
from hud_gym.envs.ubuntu import UbuntuEnv

SIZE = (1280, 720)


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def _open_eventlog(env: UbuntuEnv, log: str) -> tuple[int, int]:
    """Start the event-log window (as ``launch`` does: in the sandbox when there is one), its log
    ``log`` in the env's home; returns the centre of its toggle."""
    controller = env.controller
    assert controller is not None
    argv = controller.desktop.launch_argv("eventlog", ["--log", log, "--geometry", "+200+150"])
    log = str(controller.desktop.resolve_path(log))
    env._runner.run(controller.desktop.spawn(argv))
    env._runner.run(controller.desktop.wait_for_window("event log"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8") as handle:
            geometry = [json.loads(line) for line in handle if '"geometry"' in line]
        if geometry:
            x, y, w, h = geometry[-1]["toggle"]
            return x + w // 2, y + h // 2
        time.sleep(0.01)
    raise RuntimeError("the event-log window did not show up")


def run(steps: int = 30) -> dict[str, float]:
    """Measure; returns the medians in ms (and the ratio)."""
    env = UbuntuEnv(screen_size=SIZE, max_steps=1_000_000)
    try:
        env.reset(seed=0)
        controller = env.controller
        assert controller is not None
        log = "bench-events.jsonl"
        target = _open_eventlog(env, log)
        env.step(ClickAction(point=target))

        # pyautogui binds to $DISPLAY when imported; pyscreeze uses scrot when it sees an X11
        # session (as a desktop session sets XDG_SESSION_TYPE).
        os.environ["DISPLAY"] = controller.state.display
        os.environ["XAUTHORITY"] = str(controller.state.xauthority)  # the display's cookie
        os.environ["XDG_SESSION_TYPE"] = "x11"
        import pyautogui

        assert pyautogui.PAUSE == 0.1

        def common() -> np.ndarray:
            pyautogui.click(*target)
            return np.asarray(pyautogui.screenshot())

        raw = xdisplay.Display(controller.state.display)

        def raw_click() -> None:
            xtest.fake_input(raw, X.MotionNotify, x=target[0], y=target[1])
            xtest.fake_input(raw, X.ButtonPress, 1)
            xtest.fake_input(raw, X.ButtonRelease, 1)
            raw.sync()

        capture = controller.state.capture
        assert capture is not None
        results: dict[str, list[float]] = {"a": [], "b": [], "raw_click": [], "grab": [], "mss_grab": []}
        monitor = {"left": 0, "top": 0, "width": SIZE[0], "height": SIZE[1]}

        def public_grab() -> np.ndarray:
            shot = capture._mss.grab(monitor)
            return np.asarray(Image.frombuffer("RGB", shot.size, shot.raw, "raw", "BGRX", 0, 1))

        shape = common().shape  # warm-up (scrot, imports)
        assert shape == (SIZE[1], SIZE[0], 3), shape
        for _ in range(steps):
            results["b"].append(_timed(lambda: env.step(ClickAction(point=target))))
            results["grab"].append(_timed(capture.grab))  # on the settled screen (b left)
            results["raw_click"].append(_timed(raw_click))
            results["a"].append(_timed(common))
        raw.close()
        # Separately: interleaved, its 3.7 MB allocations would slow the other measurements down.
        results["mss_grab"] = [_timed(public_grab) for _ in range(steps)]

        async def typing() -> float:
            xin = controller.state.input
            assert xin is not None and controller.state.conn is not None
            started = time.perf_counter()
            xin.type_text("the quick brown fox!")
            controller.state.conn.sync()
            return (time.perf_counter() - started) * 1000

        results["type20"] = [env._runner.run(typing()) for _ in range(steps)]
        results["reset_empty"] = [_timed(lambda: env.reset()) for _ in range(10)]
        with_app = []
        for _ in range(10):
            env.reset()
            _open_eventlog(env, log)
            with_app.append(_timed(lambda: env.reset()))
        results["reset_app"] = with_app
        medians = {name: statistics.median(values) for name, values in results.items()}
        medians["ratio"] = medians["b"] / medians["a"]
        medians["backend"] = capture.backend  # type: ignore[assignment]
        return medians
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    m = run(args.steps)
    rows = [
        ("(a) `pyautogui.click` (default 0.1 s pause) + `pyautogui.screenshot()` (scrot) + numpy", m["a"]),
        ("(b) `env.step(ClickAction)` returning a fresh observation", m["b"]),
        ("raw XTEST click + `XSync`", m["raw_click"]),
        ("XTEST typing of 20 characters + `XSync`", m["type20"]),
        ("MIT-SHM grab (mss's segment, read in place) + BGRX->RGB: our capture", m["grab"]),
        ("`mss.grab()` (copies the segment into a new bytearray) + BGRX->RGB", m["mss_grab"]),
        ("`env.reset()`, empty desktop", m["reset_empty"]),
        ("`env.reset()`, killing an app (Tk window)", m["reset_app"]),
    ]
    print("| measure | ms |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value:.1f} |")
    print(f"\n(b)/(a) = {m['ratio']:.3f} (target <= 0.1); capture: {m['backend']}")


if __name__ == "__main__":
    main()
