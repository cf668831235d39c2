"""``hud-gym ui``: the real server (the installed console script, a subprocess) over a real store,
driven over HTTP and in headless Chromium.

The store holds a QA job run by ``run_job``: a policy that clicks at a known point, types, then
answers (a success), a crashing agent (``policy_error``: no reward, shown "—"), and a hostile
prompt and reply; in groups of 2. Proven here: what the API answers (absent rewards stay absent,
advantages as ``group_advantages``), what a client cannot do (write, read outside the images
directory, use another Host, reach it on another address without the opt-in and a token), and in
Chromium: every page loads with no console error, the step player steps with the keyboard, the
click is drawn at its pixel (read back from a screenshot), hostile strings stay text, filters and
sorting change the rows, and a job written by another process appears without a reload."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import open_page
from PIL import Image
from playwright.sync_api import Browser, Page

import hud_gym
from hud_gym import Task
from hud_gym.actions import ClickAction, Point, ResponseAction, TypeAction
from hud_gym.advantages import group_advantages
from hud_gym.jobs import Job

pytestmark = pytest.mark.timeout(120)

HUD_GYM = Path(sys.executable).parent / "hud-gym"
HOSTILE = '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'"> What is 2 + 2?'
CLICK = (40, 30)
FRAME = (320, 180)


def _policy(observation: dict[str, Any], history: list[Any], task: Task) -> list[Any]:
    if task.id == "crash":
        raise RuntimeError("agent <crashed> & burned")
    if not history:
        return [ClickAction(point=Point(x=CLICK[0], y=CLICK[1]))]
    if len(history) == 1:
        return [TypeAction(text="<b>typed</b>")]
    if task.id == "hostile":
        return [ResponseAction(text="<script>window.__pwned = 'reply'</script>4")]
    return [ResponseAction(text="Paris")]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui-home")


@pytest.fixture(scope="module")
def job(home: Path) -> Job:
    tasks = [
        hud_gym.get_task("qa-basic/capital-france"),
        Task(id="crash", prompt="The agent crashes on this one.", target="x", gym="qa"),
        Task(id="hostile", prompt=HOSTILE, target="4", gym="qa"),
    ]
    return hud_gym.run_job(
        _policy,
        tasks,
        "ui <job>",
        group_size=2,
        max_concurrent=4,
        seed=0,
        env_kwargs={"observation_size": FRAME},
        home=home,
    )


def _start(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [str(HUD_GYM), "ui", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HUD_GYM_HOME": str(home), **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "http://" not in line:
        process.kill()
        raise AssertionError(f"no URL: {line!r} {process.stderr.read() if process.stderr else ''}")
    return process, line.split()[2]


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def url(home: Path, job: Job) -> Iterator[str]:
    process, address = _start(home)
    yield address
    _stop(process)


def _get(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _json(url: str) -> Any:
    status, body = _get(url)
    assert status == 200, body
    return json.loads(body)


# ------------------------------------------------------------------ the API


def test_the_api_shows_the_store_with_absent_rewards_absent(url: str, job: Job) -> None:
    assert url.startswith("http://127.0.0.1:")
    (listed,) = _json(url + "api/jobs")
    assert listed["id"] == job.id and listed["name"] == "ui <job>" and listed["runs"] == 6
    assert listed["errors"] == 2 and listed["success_rate"] == 1.0
    data = _json(url + f"api/jobs/{job.id}")
    crashed = [r for r in data["runs"] if r["task_id"] == "crash"]
    assert len(crashed) == 2 and all(r["reward"] is None and r["status"] == "policy_error" for r in crashed)
    run = _json(url + f"api/runs/{next(r['id'] for r in data['runs'] if r['task_id'] == 'capital-france')}")
    first = run["steps"][0]
    assert first["actions"] == [{"type": "click", "point": {"x": CLICK[0], "y": CLICK[1]}, "button": "left"}]
    assert first["frame_before"] == run["initial_frame"] and first["frame_after"] != first["frame_before"]
    assert run["steps"][1]["frame_before"] == first["frame_after"]  # the frame the agent saw at step 1
    status, body = _get(url.rstrip("/") + first["frame_before"])
    assert status == 200 and Image.open(io.BytesIO(body)).size == FRAME
    group = _json(url + f"api/groups/{run['group_id']}")
    assert [r["reward"] for r in group["runs"]] == [1.0, 1.0] and [r["advantage"] for r in group["runs"]] == [0.0, 0.0]
    crash_group = _json(url + f"api/groups/{crashed[0]['group_id']}")
    assert [r["advantage"] for r in crash_group["runs"]] == [None, None]
    assert list(group_advantages([None, None])) == [0.0, 0.0]  # the convention: no reward, no signal
    compared = _json(url + f"api/compare/{job.id}/{job.id}")
    assert {t["task_id"]: t["success_rate_diff"] for t in compared["tasks"]} == {
        "capital-france": 0.0,
        "crash": None,
        "hostile": 0.0,
    }


def test_a_client_cannot_write_read_outside_the_images_or_use_another_host(url: str, home: Path, job: Job) -> None:
    assert _get(url + "api/jobs", method="POST")[0] == 405
    assert _get(url + f"api/jobs/{job.id}", method="DELETE")[0] == 405
    outside = home.parent / "secret.jpg"
    outside.write_bytes(b"secret")
    (home / "images" / "escape.jpg").symlink_to(outside)
    (home / "images" / "db.jpg").symlink_to(home / "hud_gym.db")
    for path in (
        "images/../hud_gym.db",
        "images/%2e%2e/hud_gym.db",
        "images/%2e%2e%2fhud_gym.db",
        "images/..%2f..%2fsecret.jpg",
        "images//etc/passwd",
        "images/%2fetc%2fpasswd",
        "images/escape.jpg",
        "images/db.jpg",
        "images/" + job.id,  # a directory
        "static/../../hud_gym.db",
        "static/app.py",
    ):
        status, body = _get(url + path)
        assert status == 404 and b"secret" not in body and b"SQLite" not in body, path
    assert _get(url + "api/jobs", headers={"Host": "attacker.example:80"})[0] == 421  # DNS rebinding
    status, _ = _get(url)
    assert status == 200
    with urllib.request.urlopen(url, timeout=10) as response:
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Frame-Options"] == "DENY"


def test_another_address_needs_the_opt_in_and_a_token(home: Path, job: Job) -> None:
    refused = subprocess.run(
        [str(HUD_GYM), "ui", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
        check=False,
    )
    assert refused.returncode == 2 and "pass --expose" in refused.stderr
    process, address = _start(home, "--host", "0.0.0.0", "--expose", env={"HUD_GYM_UI_TOKEN": "s3cret-token"})
    try:
        assert address.endswith("/?token=s3cret-token")
        base = address.split("?")[0]
        assert _get(base + "api/jobs")[0] == 401
        assert _get(base + "api/jobs?token=wrong")[0] == 401
        assert _get(base + "api/jobs?token=s3cret-token")[0] == 200
        assert _get(base + "api/jobs", headers={"Cookie": "hud_gym_ui_token=s3cret-token"})[0] == 200
    finally:
        _stop(process)


# ------------------------------------------------------------------ in Chromium


def _keep_screenshot(page: Page, name: str) -> None:
    """With ``HUD_GYM_UI_SCREENSHOTS=DIR``, save the page as ``DIR/name`` (the README's images)."""
    folder = os.environ.get("HUD_GYM_UI_SCREENSHOTS")
    if folder:
        shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        shot.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(Path(folder) / name, optimize=True)


def _go(page: Page, hash_: str, ready: str) -> None:
    page.evaluate("hash => { location.hash = hash; }", hash_)
    page.wait_for_selector(ready, timeout=20_000)


def test_every_page_loads_clean_and_hostile_strings_stay_text(url: str, job: Job, browser: Browser) -> None:
    data = _json(url + f"api/jobs/{job.id}")
    hostile = next(r for r in data["runs"] if r["task_id"] == "hostile")
    page, errors = open_page(browser, url)
    try:
        page.wait_for_selector("text=ui <job>")
        _go(page, f"#/job/{job.id}", "[data-table=runs] tbody tr")
        assert page.locator("[data-table=runs] tbody tr").count() == 6
        crash_rows = page.locator("[data-table=runs] tbody tr", has_text="policy_error")
        assert crash_rows.count() == 2 and "—" in crash_rows.first.inner_text()
        _go(page, f"#/run/{hostile['id']}", "#prompt")
        assert page.locator("#prompt").inner_text() == HOSTILE
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.wait_for_selector("#step-label:has-text('step 3 / 3')")
        assert "<script>window.__pwned = 'reply'</script>4" in page.locator("#actions").inner_text()
        _go(page, f"#/group/{hostile['group_id']}", "[data-run]")
        assert page.locator("[data-run]").count() == 2
        _go(page, f"#/compare/{job.id}/{job.id}", "[data-table=compare] tbody tr")
        _go(page, "#/live", "h1:has-text('Runs in progress')")
        assert page.evaluate("window.__pwned") is None
        sources = page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))")
        assert sources == ["/static/charts.js", "/static/app.js"]  # only the app's own
        assert errors == [], errors
    finally:
        page.close()


def test_the_player_steps_with_the_keyboard_and_draws_the_click_at_its_pixel(
    url: str, job: Job, browser: Browser
) -> None:
    data = _json(url + f"api/jobs/{job.id}")
    run = next(r for r in data["runs"] if r["task_id"] == "capital-france")
    page, errors = open_page(browser, url + f"#/run/{run['id']}")
    try:
        page.wait_for_selector("#step-label:has-text('step 1 / 3')")
        assert page.locator("#caption").inner_text() == f"click left at ({CLICK[0]}, {CLICK[1]})"
        stage = page.locator("#before .stage")
        page.wait_for_function("() => document.querySelector('#before canvas').width > 0")
        box = stage.locator("img").bounding_box()
        assert box is not None
        shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        scale = box["width"] / FRAME[0]
        x, y = round(box["x"] + CLICK[0] * scale), round(box["y"] + CLICK[1] * scale)
        red, green, blue = shot.getpixel((x, y))
        assert red > 200 and green < 80 and blue < 80, (red, green, blue)
        _keep_screenshot(page, "ui-run.png")
        far = shot.getpixel((round(box["x"] + (CLICK[0] + 60) * scale), round(box["y"] + (CLICK[1] + 60) * scale)))
        assert not (far[0] > 200 and far[1] < 80)  # the marker is at the click, not everywhere
        assert page.locator("#after canvas").count() == 0  # the frame after has no overlay
        page.keyboard.press("ArrowRight")
        page.wait_for_selector("#step-label:has-text('step 2 / 3')")
        assert page.locator("#caption").inner_text() == 'type "<b>typed</b>"'
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("#step-label:has-text('step 1 / 3')")
        page.locator("#fps").select_option("10")
        page.locator("#play").click()
        page.wait_for_selector("#step-label:has-text('step 3 / 3')", timeout=10_000)
        assert errors == []
    finally:
        page.close()


def test_filters_and_sorting_change_the_rows(url: str, job: Job, browser: Browser) -> None:
    page, errors = open_page(browser, url + f"#/job/{job.id}")
    try:
        rows = page.locator("[data-table=runs] tbody tr")
        page.wait_for_selector("[data-table=runs] tbody tr")
        assert rows.count() == 6
        _keep_screenshot(page, "ui-job.png")
        page.locator("[data-filter='runs:status']").select_option("policy_error")
        page.wait_for_function("() => document.querySelectorAll('[data-table=runs] tbody tr').length === 2")
        page.locator("[data-filter='runs:status']").select_option("")
        page.locator("[data-filter='runs:_text']").fill("hostile")
        page.locator("[data-filter='runs:_text']").press("Enter")
        page.wait_for_function("() => document.querySelectorAll('[data-table=runs] tbody tr').length === 2")
        page.locator("[data-filter='runs:_text']").fill("")
        page.locator("[data-filter='runs:_text']").press("Enter")
        page.wait_for_function("() => document.querySelectorAll('[data-table=runs] tbody tr').length === 6")
        tasks = page.locator("[data-table=tasks] tbody tr td:first-child")
        page.locator("[data-table=tasks] th[data-key=task_id]").click()
        page.wait_for_selector("[data-table=tasks] th.sorted-asc")
        ascending = tasks.all_inner_texts()
        page.locator("[data-table=tasks] th[data-key=task_id]").click()
        page.wait_for_selector("[data-table=tasks] th.sorted-desc")
        assert tasks.all_inner_texts() == list(reversed(ascending)) == ["hostile", "crash", "capital-france"]
        page.locator("[data-table=tasks] a", has_text="crash").click()  # a task row links to its runs
        page.wait_for_function("() => document.querySelectorAll('[data-table=runs] tbody tr').length === 2")
        assert page.locator("[data-table=runs] tbody tr", has_text="policy_error").count() == 2
        assert errors == []
    finally:
        page.close()


@pytest.mark.timeout(180)
def test_a_job_written_by_another_process_appears_without_a_reload(url: str, home: Path, browser: Browser) -> None:
    page, errors = open_page(browser, url)
    try:
        page.wait_for_selector("[data-table=jobs] tbody tr")
        page.evaluate("window.__same_page = true")
        writer = textwrap.dedent("""
            import hud_gym
            from hud_gym import ResponseAction
            hud_gym.run_job(lambda o, h, t: [ResponseAction(text="Paris")], ["qa-basic/capital-france"], "written later")
        """)
        subprocess.run(
            [sys.executable, "-c", writer], env={**os.environ, "HUD_GYM_HOME": str(home)}, check=True, timeout=120
        )
        page.wait_for_selector("text=written later", timeout=20_000)
        _keep_screenshot(page, "ui-jobs.png")
        assert page.evaluate("window.__same_page") is True  # no reload happened
        assert errors == []
    finally:
        page.close()


def test_the_static_report_draws_each_action_on_the_frame_the_agent_saw(
    job: Job, browser: Browser, tmp_path: Path
) -> None:
    from hud_gym.cli.report import write_report

    run = next(t for t in job.load_trajectories() if t.task_id == "capital-france")
    path = write_report(job, tmp_path / "report.html", frame_width=FRAME[0])
    page, errors = open_page(browser, path.as_uri())
    try:
        card = page.locator(f"#t-{run.trajectory_id}")
        figures = card.locator("figure.frame")
        assert figures.count() == len(run.steps) + 1
        first = figures.nth(0)
        assert first.get_attribute("data-step") == "0"
        assert first.locator("img").get_attribute("alt") == "reset screenshot, with step 1's action"
        assert figures.nth(len(run.steps)).get_attribute("data-step") == "end"
        assert first.locator("svg.overlay circle").count() == 1
        assert figures.nth(1).locator("svg.overlay").count() == 0  # a typed text has no place on the frame
        first.scroll_into_view_if_needed()
        box = first.locator("img").bounding_box()
        assert box is not None
        shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        scale = box["width"] / FRAME[0]
        red, green, blue = shot.getpixel((round(box["x"] + CLICK[0] * scale), round(box["y"] + CLICK[1] * scale)))
        assert red > 200 and green < 80 and blue < 80, (red, green, blue)
        assert errors == []
    finally:
        page.close()
