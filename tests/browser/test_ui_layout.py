"""``hud-gym ui`` layout, in headless Chromium at 1280x800 over a real store served by the real
console script: numeric headers stand over their values (computed styles and boxes), the step
player fits a MiniWoB++ 160x210 frame to the viewport at a crisp integer zoom with the action,
the step's reward and its status above the fold (the run's final grade apart), the zoom control,
the element boxes drawn on the frames (recorded by a real ``elements=True`` browser env), the
job's settings, charts with axes, values and an empty state, filters by agent and task set, the
learning-curve page across tagged jobs, and the labelled live indicator."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

import hud_gym
from hud_gym import Task, TaskSet
from hud_gym.actions import ClickAction, Point, ResponseAction
from hud_gym.agents import MiniWoBScriptedAgent
from hud_gym.jobs import Job

pytestmark = pytest.mark.timeout(300)

HUD_GYM = Path(sys.executable).parent / "hud-gym"
VIEWPORT = {"width": 1280, "height": 800}


def _qa_policy(answer: str) -> Any:
    def policy(observation: dict[str, Any], history: list[Any], task: Task) -> list[Any]:
        if not history:
            return [ClickAction(point=Point(x=10, y=10))]
        return [ResponseAction(text=answer if task.id == "capital-france" else "no idea")]

    return policy


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui-layout-home")


@pytest.fixture(scope="module")
def jobs(home: Path) -> dict[str, Job]:
    qa = TaskSet(
        tasks=[hud_gym.get_task("qa-basic/capital-france"), hud_gym.get_task("qa-basic/largest-planet")], id="qa-basic"
    )
    early = hud_gym.run_job(_qa_policy("Rome"), qa, "ckpt 800", seed=0, metadata={"tags": {"ckpt": "800"}}, home=home)
    late = hud_gym.run_job(_qa_policy("Paris"), qa, "ckpt 1200", seed=0, metadata={"tags": {"ckpt": "1200"}}, home=home)

    def crash(observation: Any, history: Any, task: Any) -> Any:
        raise RuntimeError("down")

    failed = hud_gym.run_job(crash, qa, "all failed", seed=0, home=home)
    miniwob = hud_gym.run_job(
        MiniWoBScriptedAgent(),
        TaskSet(tasks=[hud_gym.get_task("miniwob/click-button")], id="miniwob"),
        "miniwob job",
        seed=3,
        max_steps=5,
        home=home,
    )
    return {"early": early, "late": late, "failed": failed, "miniwob": miniwob}


@pytest.fixture(scope="module")
def url(home: Path, jobs: dict[str, Job]) -> Iterator[str]:
    process = subprocess.Popen(
        [str(HUD_GYM), "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert "http://" in line, line
        yield line.split()[2]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    page.close()


def _open(page: Page, address: str, ready: str) -> None:
    page.goto(address, wait_until="load")
    page.wait_for_selector(ready, timeout=30_000)


def _box(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_numeric_headers_stand_over_their_right_aligned_values(url: str, page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    _open(tab, url, "[data-table=jobs] tbody tr")
    columns = tab.evaluate(
        """() => {
        const table = document.querySelector('[data-table=jobs] table');
        const heads = [...table.querySelectorAll('thead th')];
        const cells = [...table.querySelector('tbody tr').children];
        return heads.map((th, i) => ({
          key: th.dataset.key, th: getComputedStyle(th).textAlign, td: getComputedStyle(cells[i]).textAlign,
          thRight: th.getBoundingClientRect().right - parseFloat(getComputedStyle(th).paddingRight),
          tdRight: cells[i].getBoundingClientRect().right - parseFloat(getComputedStyle(cells[i]).paddingRight),
          thText: th.firstChild ? th.firstChild.textContent : '',
        }));
      }"""
    )
    numeric = {c["key"]: c for c in columns if c["td"] == "right"}
    assert set(numeric) == {"runs", "success_rate", "mean_reward", "errors"}
    for column in numeric.values():
        assert column["th"] == "right", column  # the header is aligned as its values are
        assert abs(column["thRight"] - column["tdRight"]) < 1.5, column
    for key in ("errors", "success_rate"):  # each value sits under its own header's text
        header = tab.locator(f"[data-table=jobs] th[data-key={key}]")
        index = [c["key"] for c in columns].index(key)
        cell = tab.locator("[data-table=jobs] tbody tr").first.locator("td").nth(index)
        hb, cb = header.bounding_box(), cell.bounding_box()
        assert hb is not None and cb is not None
        assert hb["x"] <= cb["x"] + cb["width"] / 2 <= hb["x"] + hb["width"]
    assert tab.locator("#live-label").inner_text() in ("live", "connecting…")
    tab.wait_for_function("() => document.getElementById('live-label').textContent === 'live'")
    assert tab.locator("#live-status").get_attribute("title")
    tab.locator("[data-filter='jobs:taskset']").select_option("miniwob")
    tab.wait_for_function("() => document.querySelectorAll('[data-table=jobs] tbody tr').length === 1")
    tab.locator("[data-filter='jobs:taskset']").select_option("")
    crash = tab.locator("[data-filter='jobs:agent'] option", has_text="crash").get_attribute("value")
    assert crash is not None
    tab.locator("[data-filter='jobs:agent']").select_option(crash)
    tab.wait_for_function("() => document.querySelectorAll('[data-table=jobs] tbody tr').length === 1")
    assert "all failed" in tab.locator("[data-table=jobs] tbody").inner_text()
    assert errors == []


def test_the_player_fits_the_frame_crisply_with_the_step_above_the_fold(
    url: str, jobs: dict[str, Job], page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    (run,) = jobs["miniwob"].load_trajectories()
    _open(tab, url + f"#/run/{run.trajectory_id}", "#step-label")
    tab.wait_for_function("() => document.querySelector('.player').dataset.zoom")
    img = tab.locator("#before .stage img")
    natural = img.evaluate("i => [i.naturalWidth, i.naturalHeight]")
    assert natural == [160, 210]
    zoom = float(tab.locator(".player").get_attribute("data-zoom") or 0)
    box = _box(tab, "#before .stage img")
    assert zoom >= 2 and zoom == int(zoom), zoom  # scaled up by a whole factor: crisp, not blurred
    assert box["width"] == pytest.approx(160 * zoom, abs=0.5) and box["height"] == pytest.approx(210 * zoom, abs=0.5)
    assert box["y"] + box["height"] <= VIEWPORT["height"]  # the whole frame fits the viewport
    assert img.evaluate("i => getComputedStyle(i).imageRendering") == "pixelated"
    for selector in ("#caption", "#step-reward", "#step-status", "#run-reward"):
        part = _box(tab, selector)
        assert part["y"] + part["height"] <= VIEWPORT["height"], selector  # above the fold
    assert tab.evaluate("() => document.scrollingElement.scrollTop") == 0
    assert tab.locator("#zoom-label").inner_text() == f"{int(zoom)}x"
    tab.locator("#zoom").select_option("1")
    tab.wait_for_function("() => document.querySelector('.player').dataset.zoom === '1'")
    assert _box(tab, "#before .stage img")["width"] == pytest.approx(160, abs=0.5)
    tab.locator("#zoom").select_option("fit")
    tab.wait_for_function(f"() => document.querySelector('.player').dataset.zoom === '{int(zoom)}'")
    assert errors == []


def test_element_boxes_are_drawn_on_the_frames(url: str, jobs: dict[str, Job], page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    (run,) = jobs["miniwob"].load_trajectories()
    data = tab.request.get(url + f"api/runs/{run.trajectory_id}").json()
    step = data["steps"][0]
    assert data["initial_elements"] and step["elements_before"] == data["initial_elements"]
    assert all(set(e) >= {"bbox"} and len(e.get("text", "")) <= 40 for e in step["elements_before"])
    assert "elements" not in step["info"]
    button = next(e for e in step["elements_before"] if e.get("tag") == "button")
    _open(tab, url + f"#/run/{run.trajectory_id}", "#step-label")
    tab.wait_for_function(
        "() => document.querySelector('#before canvas') && document.querySelector('#before canvas').width > 0"
    )
    x, y, w, h = (round(v) for v in button["bbox"])
    edge = tab.evaluate(
        "([x, y, h]) => [...document.querySelector('#before canvas').getContext('2d')"
        ".getImageData(x, Math.floor(y + h / 2), 1, 1).data]",
        [x, y, h],
    )
    assert edge[3] > 150 and edge[2] > 200 and edge[0] < 60, edge  # the box's blue outline on its left edge
    tab.locator("#show-elements").uncheck()
    tab.wait_for_function("() => !document.querySelector('#show-elements').checked")
    tab.wait_for_function(
        "([x, y, h]) => { const c = document.querySelector('#before canvas');"
        " return c && c.width > 0 && c.getContext('2d').getImageData(x, Math.floor(y + h / 2), 1, 1).data[3] === 0; }",
        arg=[x, y, h],
    )
    assert errors == []


def test_the_step_reward_is_apart_from_the_final_grade(
    url: str, jobs: dict[str, Job], page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    run = next(t for t in jobs["late"].load_trajectories() if t.task_id == "capital-france")
    data = tab.request.get(url + f"api/runs/{run.trajectory_id}").json()
    assert data["reward"] == 1.0 and data["steps"][0]["reward"] != 1.0
    _open(tab, url + f"#/run/{run.trajectory_id}", "#step-label:has-text('step 1 / 2')")
    shown_first = tab.locator("#step-reward").inner_text()
    assert shown_first == ("—" if data["steps"][0]["reward"] is None else "0")
    assert tab.locator("#run-reward").inner_text() == "1"
    assert "step reward" in tab.locator(".stepbar").inner_text()
    assert "final grade" in tab.locator("h1").inner_text()
    tab.keyboard.press("ArrowRight")
    tab.wait_for_selector("#step-label:has-text('step 2 / 2')")
    assert tab.locator("#step-reward").inner_text() == "1" and tab.locator("#step-status").inner_text() == "ok"
    assert errors == []


def test_the_job_page_shows_settings_and_charts_with_axes_values_and_an_empty_state(
    url: str, jobs: dict[str, Job], page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    _open(tab, url + f"#/job/{jobs['late'].id}", f"#settings[data-job='{jobs['late'].id}']")
    settings = {
        row.locator("dt").inner_text(): row.locator("dd").inner_text() for row in tab.locator("#settings > div").all()
    }
    assert settings["task set"] == "qa-basic" and settings["seed"] == "0" and settings["tags"] == "ckpt=1200"
    assert "policy" in settings["agent"] and settings["group size"] == "1"
    success = tab.locator("[data-chart=success] svg")
    assert success.locator(".axis-x").count() == 1 and success.locator(".axis-y").count() == 1
    assert success.locator(".y-tick").all_text_contents() == ["0%", "25%", "50%", "75%", "100%"]
    assert sorted(success.locator(".value").all_text_contents()) == ["0%", "100%"]
    assert sorted(success.locator(".x-tick").all_text_contents()) == ["capital-france", "largest-planet"]
    assert tab.locator("[data-chart=histogram] svg .bar").count() >= 1
    _open(tab, url + f"#/job/{jobs['failed'].id}", f"#settings[data-job='{jobs['failed'].id}']")
    assert "no graded run" in tab.locator("[data-chart=histogram].chart-empty").inner_text()
    assert "no graded run" in tab.locator("[data-chart=success].chart-empty").inner_text()
    assert "(failed)" in tab.locator("h1").inner_text()
    _open(tab, url + f"#/job/{jobs['miniwob'].id}", f"#settings[data-job='{jobs['miniwob'].id}']")
    assert '"elements":true' in tab.locator("[data-setting='env kwargs'] dd").inner_text()
    assert errors == []


def test_the_curves_page_plots_success_across_tagged_jobs(url: str, page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    _open(tab, url + "#/curves", "[data-chart=curves]")
    assert tab.locator("#curve-key").input_value() == "ckpt"
    curve = tab.locator("[data-chart=curves] svg")
    assert curve.locator(".x-tick").all_text_contents() == ["800", "1200"]  # in numeric order, not "1200" < "800"
    assert curve.locator(".value").all_text_contents() == ["0%", "50%"]
    assert curve.locator(".axis-title").all_text_contents() == ["ckpt", "success"]
    per_task = tab.locator("[data-chart='tasks-qa-basic']")
    assert per_task.locator(".legend").inner_text().split() == ["capital-france", "largest-planet"]
    assert per_task.locator("circle.point").count() == 4
    assert tab.locator("[data-table=curve-jobs] tbody tr").count() == 2
    _open(tab, url + "#/curves?key=nosuchkey", "[data-chart=curves]")
    assert tab.locator("[data-chart=curves]").get_attribute("class") == "chart-empty"
    assert errors == []
