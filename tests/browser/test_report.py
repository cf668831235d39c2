"""The HTML job report opened in a real headless Chromium: it loads with no console errors, shows
every trajectory (cards, rewards, status badges, filmstrips whose images decode), and a prompt
holding HTML/script stays text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_helpers import open_page
from playwright.sync_api import Browser

import hud_gym
from hud_gym import Task
from hud_gym.actions import ResponseAction, TypeAction
from hud_gym.cli.report import outcome_of, write_report
from hud_gym.jobs import Job

HOSTILE_PROMPT = (
    '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'">'
    " What is 2 + 2? </article><b>not bold</b>"
)


def _policy(observation: dict[str, Any], history: list[Any], task: Task) -> list[Any]:
    if task.id == "crash":
        raise RuntimeError("agent <crashed> & burned")
    if not history:
        return [TypeAction(text="thinking <b>")]
    return [ResponseAction(text="4" if task.id == "hostile" else "Paris")]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    """A stored QA job with a success, a wrong answer, a crashing agent and a hostile prompt, in
    groups of 2."""
    tasks = [
        hud_gym.get_task("qa-basic/capital-france"),
        hud_gym.get_task("qa-basic/largest-planet"),
        Task(id="crash", prompt="The agent crashes on this one.", target="x", gym="qa"),
        Task(id="hostile", prompt=HOSTILE_PROMPT, target="4", gym="qa"),
    ]
    return hud_gym.run_job(
        _policy,
        tasks,
        "report <test> & friends",
        group_size=2,
        max_concurrent=4,
        seed=0,
        max_steps=4,
        home=tmp_path_factory.mktemp("home"),
    )


@pytest.mark.timeout(120)
def test_report_loads_cleanly_and_shows_every_trajectory(job: Job, browser: Browser, tmp_path: Path) -> None:
    trajectories = job.load_trajectories()
    analytics = job.get_analytics()
    path = write_report(job, tmp_path / "report.html")
    assert path.stat().st_size < 1_000_000  # 8 runs, 20 screenshots downscaled to JPEG
    page, errors = open_page(browser, path.as_uri())
    try:
        page.wait_for_function("Array.from(document.images).every(i => i.complete)")
        assert page.title() == "report <test> & friends · hud-gym report"
        assert page.inner_text("#job-name") == "report <test> & friends"

        cards = page.locator("article.trajectory")
        assert cards.count() == len(trajectories) == 8
        shown = {card.get_attribute("id")[2:]: card for card in cards.all()}
        for trajectory in trajectories:
            card = shown[trajectory.trajectory_id]
            assert card.get_attribute("data-outcome") == outcome_of(trajectory)
            reward = card.locator(".reward").inner_text()
            if trajectory.failed:
                assert reward == f"no reward ({trajectory.status})" and card.locator(".badge").inner_text() == (
                    f"run failed: {trajectory.status}"
                )
                assert card.locator(".error-text").inner_text() == trajectory.error
            else:
                assert reward == f"reward {trajectory.reward:g}"
            frames = card.locator("figure.frame")
            assert frames.count() == 1 + len(trajectory.steps)
            step_rewards = [float(t.split("=")[1]) for t in card.locator(".step-reward").all_inner_texts()]
            assert step_rewards == trajectory.step_rewards
            json_blocks = card.locator("figure.frame pre").all_text_contents()
            assert len(json_blocks) == len(trajectory.steps)

        images = page.evaluate(
            "Array.from(document.querySelectorAll('figure.frame img'))"
            ".map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        assert len(images) == sum(1 + len(t.steps) for t in trajectories) == 20
        assert all(complete and width == 360 and height == 202 for complete, width, height in images)

        # The hostile prompt is text: no script ran, no element was injected.
        assert page.evaluate("window.__pwned") is None
        hostile = [shown[t.trajectory_id] for t in trajectories if t.task_id == "hostile"]
        assert all(card.locator(".prompt").inner_text() == HOSTILE_PROMPT for card in hostile)
        assert page.locator("article.trajectory b, article.trajectory script, .prompt img").count() == 0
        assert "thinking <b>" in hostile[0].locator(".actions").first.inner_text()

        # Tables: one row per task and per group, with the analytics' figures.
        assert page.locator("#task-table tbody tr").count() == len(analytics.per_task) == 4
        assert page.locator("#group-table tbody tr").count() == len(analytics.per_group) == 4
        assert page.locator('[data-card="success rate"] .value').inner_text() == (
            f"{analytics.success_rate * 100:.0f}%"
        )
        assert page.locator('[data-card="errors"] .value').inner_text() == str(analytics.errors) == "2"

        # The filters show one outcome at a time.
        page.click('.filters button[data-filter="error"]')
        assert page.locator("article.trajectory:visible").count() == 2
        page.click('.filters button[data-filter="all"]')
        assert page.locator("article.trajectory:visible").count() == 8
        page.locator("figure.frame img").first.click()
        assert page.locator("dialog#zoom[open] img").get_attribute("src").startswith("data:image/jpeg;base64,")
        page.mouse.click(5, 5)
        assert page.locator("dialog#zoom[open]").count() == 0

        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert (tmp_path / "report.png").stat().st_size > 10_000
        assert errors == []
    finally:
        page.close()


@pytest.mark.timeout(60)
def test_linked_report_loads_its_screenshots_from_the_store(job: Job, browser: Browser, tmp_path: Path) -> None:
    path = write_report(job, tmp_path / "linked" / "report.html", images="link", max_trajectories=3)
    page, errors = open_page(browser, path.as_uri())
    try:
        page.wait_for_function("Array.from(document.images).every(i => i.complete)")
        assert page.locator("article.trajectory").count() == 3
        assert "Showing the first 3 of 8 trajectories" in page.inner_text("main")
        sizes = page.evaluate("Array.from(document.querySelectorAll('figure.frame img')).map(i => i.naturalWidth)")
        assert sizes and all(width == 1280 for width in sizes)  # the stored files, full size
        assert errors == []
    finally:
        page.close()
