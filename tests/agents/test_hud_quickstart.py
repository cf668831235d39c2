"""The HUD SDK README's quick start (``/work/shared/seeds/``), run on ``hud_gym.hud`` (issue 15):
the block as written, imports changed from ``hud`` to ``hud_gym.hud``, ``google.com`` a local
search page, and Claude the loopback replay server (``ANTHROPIC_BASE_URL``, the SDK's own
setting), scripted to click the search bar, type and answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from replay_replies import claude_message, text, tool_use
from replay_server import ReplayServer, Request

pytestmark = pytest.mark.timeout(180)


def test_readme_quick_start_block(
    replay: ReplayServer, site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.url)

    def click_search_bar(request: Request) -> dict:
        width, height = request.frame or (1024, 768)
        return claude_message(tool_use("left_click", coordinate=[round(100 * width / 1280), round(35 * height / 720)]))

    replay.script(
        "anthropic",
        "capybara",
        [click_search_bar, claude_message(tool_use("type", text="capybara")), claude_message(text("Done."))],
    )
    printed: list[str] = []

    # seed: README.md, "Simple Browser Example with Claude Computer Use"
    from hud_gym.hud import gym, job
    from hud_gym.hud.agent import ClaudeAgent
    from hud_gym.hud.task import Task

    @job("test-run")
    async def main():
        task = Task(
            prompt="Insert the text 'capybara' into the search bar",
            gym="hud-browser",
            setup=("goto", f"{site}/search.html"),  # the seed: ("goto", "google.com")
            evaluate=("contains_text", "capybara"),
        )

        # Create environment using the gym module
        env = await gym.make(task)

        # Initialize Operator agent (API key is loaded automatically)
        agent = ClaudeAgent()

        # Agent loop with predict and step functions
        obs, _ = await env.reset()  # Gets first observation
        for i in range(5):  # noqa: B007  (the seed's loop, as written)
            actions, done = await agent.predict(obs)

            obs, reward, terminated, info = await env.step(actions)
            if done or terminated:
                break

        # Evaluate and close
        result = await env.evaluate()
        printed.append(f"Evaluation result: {result}")
        await env.close()
        return result

    result = asyncio.run(main())
    assert float(result) == 1.0 and printed[0].startswith("Evaluation result: reward=1.0")
    from hud_gym.jobs import list_jobs

    [stored] = list_jobs()
    [trajectory] = stored.load_trajectories()
    assert (stored.name, trajectory.status, trajectory.reward) == ("test-run", "ok", 1.0)
