"""One browser step, three ways, at 1280x720 on the same Chromium (medians over 30 steps):

(a) the common way: Playwright ``page.mouse.click`` + ``page.screenshot()`` (PNG) + Pillow decode;
(b) ours: ``env.step(ClickAction)`` of ``hud/Browser-v0``, returning a fresh observation;
(c) the floor of our capture: ``page.mouse.click`` + CDP ``Page.captureScreenshot`` (JPEG) +
    simplejpeg decode, no env.

Targets: (b) <= 0.25 x (a) and (b) <= 1.5 x (c). The click toggles a button's colour each time,
so every frame differs from the previous one. The page is a typical article-with-form page
(text, a form, a gradient "photo"). Run: ``python -m benchmarks.browser_step [--steps N]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import statistics
import time
from collections.abc import Awaitable
from typing import Any

import numpy as np
import simplejpeg
from PIL import Image

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import ClickAction
from hud_gym.controllers.browser.controller import BrowserController
from hud_gym.envs.browser import BrowserEnv

SIZE = (1280, 720)
BUTTON = (640, 130)

PAGE = """<!doctype html><html><head><title>Benchmark article</title><style>
body { margin: 0; font: 15px/1.5 sans-serif; color: #222; }
header { background: #1d3557; color: white; padding: 12px 24px; font-size: 22px; }
nav a { color: #a8dadc; margin-right: 16px; font-size: 15px; }
main { display: flex; gap: 24px; padding: 16px 24px; }
article { flex: 2; } aside { flex: 1; }
.photo { height: 220px; border-radius: 8px;
  background: radial-gradient(circle at 30% 40%, #f4a261, transparent 60%),
              radial-gradient(circle at 70% 60%, #2a9d8f, transparent 55%),
              linear-gradient(135deg, #264653, #e9c46a 50%, #e76f51); }
#toggle { position: absolute; left: 560px; top: 100px; width: 160px; height: 60px; font-size: 18px;
  background: #2a9d8f; color: white; border: 0; border-radius: 6px; }
form label { display: block; margin: 8px 0 2px; } form input, form select, form textarea { width: 90%; }
</style></head><body>
<header>Daily Benchmark <nav><a href="#">Home</a><a href="#">World</a><a href="#">Science</a><a href="#">About</a></nav></header>
<button id="toggle" onclick="this.style.background = this.style.background === 'crimson' ? '#2a9d8f' : 'crimson'">Toggle</button>
<main><article><h1>Measuring what an agent sees</h1><div class="photo"></div>
ARTICLE
</article><aside><h3>Subscribe</h3><form>
<label>Name</label><input value="Ada Lovelace"><label>Email</label><input value="ada@example.org">
<label>Topic</label><select><option>Science</option><option>World</option></select>
<label>Message</label><textarea rows="4">Hello there.</textarea><p><button type="button">Send</button></p>
</form><h3>Most read</h3><ol><li>One frame per step</li><li>Fresh pixels</li><li>Fast resets</li></ol></aside></main>
</body></html>"""
PARAGRAPH = (
    "<p>Reinforcement learning agents that act on web pages observe pixels after every action. "
    "The observation must show the page after the action took effect, and it must arrive fast "
    "enough that the browser is not the bottleneck of training. This paragraph is filler text "
    "that gives the page the density of a real article, with <a href='#'>links</a> and <b>bold</b> words.</p>"
)
HTML = PAGE.replace("ARTICLE", PARAGRAPH * 6)


async def _bare_page(controller: BrowserController) -> tuple[Any, Any, Any]:
    """A page of its own (a second context of the env's Chromium) for (a) and (c)."""
    assert controller.state.browser is not None
    context = await controller.state.browser.new_context(viewport={"width": SIZE[0], "height": SIZE[1]})
    page = await context.new_page()
    await page.set_content(HTML)
    cdp = await context.new_cdp_session(page)
    return context, page, cdp


async def _common(page: Any) -> np.ndarray:
    """(a): Playwright click + PNG screenshot + Pillow decode."""
    await page.mouse.click(*BUTTON)
    png = await page.screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


async def _floor(page: Any, cdp: Any, quality: int) -> np.ndarray:
    """(c): click + CDP JPEG capture + simplejpeg decode."""
    await page.mouse.click(*BUTTON)
    shot = await cdp.send("Page.captureScreenshot", {"format": "jpeg", "quality": quality, "optimizeForSpeed": True})
    return simplejpeg.decode_jpeg(base64.b64decode(shot["data"]), colorspace="RGB")


async def _timed(coro: Awaitable[Any]) -> float:
    started = time.perf_counter()
    await coro
    return (time.perf_counter() - started) * 1000


def run(steps: int = 30, rounds: int = 3) -> dict[str, float]:
    """Median ms of each measure. (a), (b), (c) are interleaved step by step (b, c, a, b, c,
    a, ...) so that load from elsewhere on the machine weighs on all three alike."""
    env = BrowserEnv(screen_size=SIZE, max_steps=1_000_000, capture="cdp")
    samples: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    try:
        env.reset(seed=0)
        runner = env.unwrapped._runner
        controller = env.unwrapped.controller
        runner.run(controller.state.page.set_content(HTML))
        context, page, cdp = runner.run(_bare_page(controller))
        quality = controller.state.options.jpeg_quality
        for i in range(steps * rounds + 3):
            started = time.perf_counter()
            _, _, _, _, info = env.step(ClickAction(point=BUTTON))
            b = (time.perf_counter() - started) * 1000
            assert info["status"] == "ok", info
            c = runner.run(_timed(_floor(page, cdp, quality)))
            a = runner.run(_timed(_common(page)))
            if i >= 3:
                add("b", b)
                add("c", c)
                add("a", a)
        for _ in range(steps):
            add(
                "capture",
                runner.run(
                    _timed(
                        cdp.send(
                            "Page.captureScreenshot", {"format": "jpeg", "quality": quality, "optimizeForSpeed": True}
                        )
                    )
                ),
            )
            add("png", runner.run(_timed(page.screenshot())))
        runner.run(context.close())
        controller.state.options = controller.state.options.model_copy(update={"elements": True})
        for i in range(steps + 3):
            started = time.perf_counter()
            env.step(ClickAction(point=BUTTON))
            if i >= 3:
                add("b_elements", (time.perf_counter() - started) * 1000)
        controller.state.options = controller.state.options.model_copy(update={"elements": False})
        for _ in range(10):
            started = time.perf_counter()
            env.reset(seed=0)
            add("reset", (time.perf_counter() - started) * 1000)
    finally:
        env.close()
    return {key: statistics.median(values) for key, values in samples.items()}


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    r = run(args.steps, args.rounds)
    print(f"browser step at {SIZE[0]}x{SIZE[1]}, medians of {args.steps * args.rounds} interleaved steps")
    print(f"{'measure':<58} {'ms':>7}")
    print(f"{'(a) Playwright click + page.screenshot PNG + PIL decode':<58} {r['a']:>7.1f}")
    print(f"{'(b) env.step(ClickAction) -> fresh observation':<58} {r['b']:>7.1f}")
    print(f"{'(c) click + CDP captureScreenshot JPEG + simplejpeg':<58} {r['c']:>7.1f}")
    print(f"{'    CDP captureScreenshot JPEG alone':<58} {r['capture']:>7.1f}")
    print(f"{'    page.screenshot PNG alone':<58} {r['png']:>7.1f}")
    print(f"{'    env.step with elements=True':<58} {r['b_elements']:>7.1f}")
    print(f"{'env.reset (clear mode, about:blank)':<58} {r['reset']:>7.1f}")
    print(f"(b)/(a) = {r['b'] / r['a']:.2f}  (target <= 0.25)")
    print(f"(b)/(c) = {r['b'] / r['c']:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
