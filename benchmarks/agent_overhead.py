"""The model agents' own cost per step, against a local server, beside the env step it drives.

Each agent plays episodes of ``--episode`` steps on ``hud/Browser-v0`` at 1280x720 (the article
page of :mod:`benchmarks.browser_step`); a loopback server (the tests' replay server, which also
checks every request) answers each model call at once with a click. Per step:

- **overhead**: ``agent.predict`` wall time minus the model call (``policy_trace["latency_s"]``:
  the SDK's request, the loopback round trip, the server). That is our agent loop: the adapter,
  the message building, the screenshot resized to the agent's frame and encoded, the reply parsed;
- **env step**: ``env.astep(actions)`` of the same step (a click and a fresh observation).

The agents run interleaved step by step (so load from elsewhere weighs on all alike); medians.
Target: overhead <= 5 ms at 1280x720, stated as a ratio of the env step. Run:
``python -m benchmarks.agent_overhead [--steps N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.browser_step import BUTTON, HTML, SIZE
from hud_gym.adapters.images import encode_image, resize
from hud_gym.agents import ClaudeAgent, OpenAICompatibleAgent, OperatorAgent, RetryPolicy
from hud_gym.envs.browser import BrowserEnv

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "agents"))
from replay_replies import chat_completion, claude_message, computer_call, response, tool_use
from replay_server import ReplayServer, Request

PROMPT = "Toggle the button of the benchmark article."


def _click(api: str, frame: tuple[int, int]) -> Any:
    def turn(request: Request) -> dict[str, Any]:
        x, y = round(BUTTON[0] * frame[0] / SIZE[0]), round(BUTTON[1] * frame[1] / SIZE[1])
        if api == "anthropic":
            return claude_message(tool_use("left_click", coordinate=[x, y]))
        if api == "responses":
            return response(computer_call({"type": "click", "x": x, "y": y, "button": "left"}))
        return chat_completion(f"click(x={x}, y={y})")

    return turn


def _agents(server: ReplayServer, steps: int) -> dict[str, tuple[Any, str]]:
    retry = RetryPolicy(attempts=1)
    v1 = server.url + "/v1"
    return {
        "ClaudeAgent, 1024x768 frame (resize + JPEG)": (
            ClaudeAgent(base_url=server.url, api_key="local", retry=retry),
            "anthropic",
        ),
        "ClaudeAgent, env frame 1280x720 (JPEG)": (
            ClaudeAgent(base_url=server.url, api_key="local", retry=retry, display_size=None),
            "anthropic",
        ),
        "OperatorAgent, 1024x768 frame (resize + JPEG)": (
            OperatorAgent(base_url=v1, api_key="local", retry=retry, environment="browser"),
            "responses",
        ),
        "OpenAICompatibleAgent, env frame 1280x720 (JPEG)": (
            OpenAICompatibleAgent("local-vlm", base_url=v1, retry=retry),
            "chat",
        ),
    }


async def _measure(
    env: BrowserEnv, agents: dict[str, tuple[Any, str]], steps: int, episode: int
) -> dict[str, dict[str, list[float]]]:
    samples: dict[str, dict[str, list[float]]] = {name: {"overhead": [], "env": [], "call": []} for name in agents}
    observation, info = await env.areset(seed=0)
    await env._runner.run_async(env.controller.state.page.set_content(HTML))
    info = {**info, "prompt": PROMPT}
    warmup = 3
    for index in range(steps + warmup):
        if index % episode == 0:
            for agent, _ in agents.values():
                agent.reset()
        for name, (agent, _) in agents.items():
            started = time.perf_counter()
            actions, _ = await agent.predict(observation, info)
            predicted = time.perf_counter()
            observation, _, _, _, step_info = await env.astep(actions)
            stepped = time.perf_counter()
            assert step_info["status"] == "ok", step_info
            info = {**step_info, "prompt": PROMPT}
            if index >= warmup:
                call = agent.last_trace["latency_s"]
                samples[name]["overhead"].append((predicted - started - call) * 1000)
                samples[name]["call"].append(call * 1000)
                samples[name]["env"].append((stepped - predicted) * 1000)
    for agent, _ in agents.values():
        await agent.aclose()
    return samples


def _pieces(env: BrowserEnv, rounds: int = 30) -> dict[str, float]:
    """The screenshot work alone: resize 1280x720 -> 1024x768, JPEG q85 at each size."""
    observation, _ = env.reset(seed=0)
    frame = observation["screenshot"]
    small = resize(frame, (1024, 768))
    timings: dict[str, list[float]] = {"resize": [], "jpeg_1024": [], "jpeg_1280": []}
    for _ in range(rounds):
        for key, work in (
            ("resize", lambda: resize(frame, (1024, 768))),
            ("jpeg_1024", lambda: encode_image(small)),
            ("jpeg_1280", lambda: encode_image(frame)),
        ):
            started = time.perf_counter()
            work()
            timings[key].append((time.perf_counter() - started) * 1000)
    return {key: statistics.median(values) for key, values in timings.items()}


def run(steps: int = 60, episode: int = 15) -> dict[str, Any]:
    """Medians per agent (ms) and the screenshot pieces."""
    server = ReplayServer().start()
    env = BrowserEnv(screen_size=SIZE, max_steps=1_000_000)
    try:
        agents = _agents(server, steps)
        for agent, api in agents.values():
            frame = agent.adapter._agent_frame or SIZE
            server.script(api, PROMPT, [_click(api, frame)] * (episode + 5))
        samples = asyncio.run(_measure(env, agents, steps, episode))
        pieces = _pieces(env)
    finally:
        env.close()
        server.stop()
    if server.problems:
        raise AssertionError(f"the server refused requests: {server.problems[:3]}")
    result: dict[str, Any] = {
        name: {key: statistics.median(values) for key, values in s.items()} for name, s in samples.items()
    }
    result["pieces"] = pieces
    return result


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--episode", type=int, default=15, help="steps per episode (a fresh conversation)")
    args = parser.parse_args(argv)
    r = run(args.steps, args.episode)
    pieces = r.pop("pieces")
    print(
        f"agent overhead per step at {SIZE[0]}x{SIZE[1]}, medians of {args.steps} interleaved steps "
        f"(episodes of {args.episode})"
    )
    print(f"{'agent':<50} {'overhead ms':>12} {'env step ms':>12} {'ratio':>7} {'local call ms':>14}")
    for name, m in r.items():
        print(
            f"{name:<50} {m['overhead']:>12.2f} {m['env']:>12.1f} {m['overhead'] / m['env']:>7.3f} {m['call']:>14.1f}"
        )
    print(
        f"screenshot pieces: resize 1280x720->1024x768 {pieces['resize']:.2f} ms, JPEG q85 1024x768 "
        f"{pieces['jpeg_1024']:.2f} ms, JPEG q85 1280x720 {pieces['jpeg_1280']:.2f} ms"
    )
    print("target: overhead <= 5 ms at 1280x720")


if __name__ == "__main__":
    main()
