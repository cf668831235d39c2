"""The three model agents through the official SDKs against the replay server, on the QA gym (a real
env, cheap to start): ``run_job`` and ``rollout`` with every agent, retries, failures that end a
run ``policy_error`` with ``reward=None`` while the job goes on, the one-line errors, HUD-style
agents, and ``hud-gym run --agent claude|operator|openai``."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import API, FAST_RETRY
from replay_checks import image_size
from replay_replies import (
    Fail,
    chat_completion,
    claude_message,
    computer_call,
    output_message,
    response,
    text,
    tool_use,
)
from replay_server import ReplayServer
from typer.testing import CliRunner

import hud_gym
from hud_gym.actions import ResponseAction, TypeAction
from hud_gym.agents import Agent, AgentConfigError, ClaudeAgent, OpenAICompatibleAgent, OperatorAgent
from hud_gym.cli.app import app
from hud_gym.core.loop import get_loop_thread
from hud_gym.wrappers.rollout.grpo import rollout, rollout_group

pytestmark = pytest.mark.timeout(120)

KINDS = ("claude", "operator", "openai")
FRANCE, PLANET = "qa-basic/capital-france", "qa-basic/largest-planet"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def typing(kind: str, value: str) -> list[dict[str, Any]]:
    """The model turns that type ``value`` and press Enter (the QA gym's submit)."""
    if kind == "claude":
        return [
            claude_message(text("Typing."), tool_use("type", text=value)),
            claude_message(tool_use("key", text="Return")),
        ]
    if kind == "operator":
        return [
            response(computer_call({"type": "type", "text": value})),
            response(computer_call({"type": "keypress", "keys": ["ENTER"]})),
        ]
    return [chat_completion(f"write({value!r})\npress('enter')")]


def answer(kind: str, value: str) -> dict[str, Any]:
    """The model's final turn, answering ``value`` (no tool call)."""
    if kind == "claude":
        return claude_message(text(value))
    if kind == "operator":
        return response(output_message(value))
    return chat_completion(f"answer({value!r})")


def run(coro: Any) -> Any:
    """Run on hud-gym's event loop, where run_job runs (the agents' SDK clients live there)."""
    return get_loop_thread().run(coro)


@pytest.mark.parametrize("kind", KINDS)
def test_each_agent_solves_tasks_in_a_job_one_agent_per_run(
    kind: str, replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    france = replay.script(API[kind], "capital of France", typing(kind, "Paris"))
    planet = replay.script(API[kind], "planet is the largest", [answer(kind, "Jupiter")])
    job = hud_gym.run_job(make_agent(kind), [FRANCE, PLANET], f"{kind}-job", group_size=2, max_concurrent=4)
    runs = job.load_trajectories()
    assert sorted((t.task_id, t.status, t.reward) for t in runs) == [
        ("capital-france", "ok", 1.0),
        ("capital-france", "ok", 1.0),
        ("largest-planet", "ok", 1.0),
        ("largest-planet", "ok", 1.0),
    ]
    assert len(france.requests) == 2 * len(typing(kind, "Paris")) and len(planet.requests) == 2
    typed = next(t for t in runs if t.task_id == "capital-france")
    assert {"type": "type", "text": "Paris", "enter_after": False} in typed.steps[0].actions
    trace = typed.steps[0].policy_trace  # stored in the job store and read back
    assert trace["model"] and trace["attempts"] == 1 and trace["usage"]
    assert job.to_dict()["metadata"]["run"]["agent"] == type(make_agent(kind)).__name__


@pytest.mark.parametrize("kind", KINDS)
def test_a_rate_limit_then_success_is_retried(kind: str, replay: ReplayServer, make_agent: Callable[..., Any]) -> None:
    script = replay.script(
        API[kind],
        "capital of France",
        [answer(kind, "Paris")],
        fail_first=[Fail(429, "slow down", {"retry-after-ms": "20"})],
    )
    trajectory = run(rollout(FRANCE, make_agent(kind)))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    assert script.calls == 2
    trace = trajectory.steps[0].policy_trace
    assert trace["attempts"] == 2 and "429" in trace["retries"][0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_error_forever_is_a_policy_error_and_the_job_goes_on(
    kind: str, replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    broken = replay.script(API[kind], "capital of France", [], fail_always=Fail(500, "the GPU caught fire"))
    replay.script(API[kind], "planet is the largest", [answer(kind, "Jupiter")])
    job = hud_gym.run_job(make_agent(kind), [FRANCE, PLANET], f"{kind}-500", max_concurrent=2)
    runs = {t.task_id: t for t in job.load_trajectories()}
    failed = runs["capital-france"]
    assert (failed.status, failed.reward) == ("policy_error", None)
    summary, _, traceback = failed.error.partition("\n")  # one line, then the crash's traceback (issue 28, item 10)
    assert "HTTP 500" in summary and "the GPU caught fire" in summary and "after 3 attempts" in summary
    assert traceback.lstrip().startswith("Traceback (most recent call last)"), traceback[:200]
    assert broken.calls == FAST_RETRY.attempts
    assert (runs["largest-planet"].status, runs["largest-planet"].reward) == ("ok", 1.0)
    analytics = job.get_analytics()
    assert analytics.errors == 1 and analytics.error_counts == {"policy_error": 1}


def test_an_unusable_reply_is_a_policy_error_quoting_it(replay: ReplayServer, make_agent: Callable[..., Any]) -> None:
    replay.script("chat", "capital of France", [chat_completion("Hmm, I am not sure what to do here.")])
    replay.script("anthropic", "capital of France", [claude_message(tool_use("fly", coordinate=[1, 2]))])
    chat = run(rollout(FRANCE, make_agent("openai")))
    assert (chat.status, chat.reward) == ("policy_error", None)
    assert "no action in the model's reply: 'Hmm, I am not sure what to do here.'" in chat.error
    claude = run(rollout(FRANCE, make_agent("claude")))
    assert (claude.status, claude.reward) == ("policy_error", None) and "Unsupported action type: 'fly'" in claude.error


def test_claude_answers_every_tool_use_keeps_the_newest_screenshots_and_reports_the_cursor(
    replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    script = replay.script(
        "anthropic",
        "capital of France",
        [
            claude_message(tool_use("left_click", coordinate=[512, 384]), tool_use("type", text="Par")),
            claude_message(tool_use("cursor_position")),
            claude_message(tool_use("zoom", region=[0, 0, 512, 384])),
            claude_message(tool_use("type", text="is")),
            claude_message(tool_use("key", text="Return")),
        ],
        max_images=2,
    )
    trajectory = run(rollout(FRANCE, make_agent("claude", max_screenshots=2, enable_zoom=True)))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    assert [s.policy_trace.get("queued", False) for s in trajectory.steps] == [False, True, False, False, False, False]
    assert script.requests[0].body["tools"][0]["enable_zoom"] is True
    zoomed = script.requests[4].body["messages"][-1]["content"][0]["content"][0]["source"]["data"]
    assert image_size(zoomed) == (1024, 768)  # the top-left quarter, scaled up to the frame
    # Two tool_use blocks ran as two steps, both answered (by id) in the next request.
    second = script.requests[1].body["messages"][-1]["content"]
    assert [b["type"] for b in second] == ["tool_result", "tool_result"]
    cursor = script.requests[2].body["messages"][-1]["content"][0]["content"]
    assert cursor == [{"type": "text", "text": "X=512,Y=384"}]  # the env's pointer, back in the agent's frame
    assert trajectory.steps[0].actions[0]["point"] == {"x": 640, "y": 360}  # 1024x768 -> 1280x720


def test_claude_toolset_version(replay: ReplayServer, make_agent: Callable[..., Any]) -> None:
    script = replay.script(
        "anthropic",
        "capital of France",
        [
            claude_message(tool_use("type", toolset=True, text="Paris")),
            claude_message(tool_use("key", toolset=True, text="Return")),
        ],
    )
    agent = make_agent("claude", tool_version="computer_toolset_20260801", display_size=None)
    trajectory = run(rollout(FRANCE, agent))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    run(agent.aclose())  # closes its connections; a later run makes a new client
    assert run(rollout(FRANCE, agent)).reward == 1.0
    assert script.requests[0].body["tools"] == [
        {"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": False}}}
    ]
    assert script.requests[0].frame == (1280, 720) and "betas" not in script.requests[0].body


def test_hud_signature_client_and_adapter(replay: ReplayServer) -> None:
    from anthropic import AsyncAnthropic

    from hud_gym.adapters import ClaudeAdapter

    script = replay.script("anthropic", "capital of France", [answer("claude", "Paris")])
    client = AsyncAnthropic(base_url=replay.url, api_key="test-key", max_retries=0)
    agent = ClaudeAgent(client, ClaudeAdapter(1280, 800))  # HUD's ClaudeAgent(client, adapter)
    assert run(rollout(FRANCE, agent)).reward == 1.0
    tool = script.requests[0].body["tools"][0]
    assert (tool["display_width_px"], tool["display_height_px"]) == (1280, 800) == script.requests[0].frame


def test_operator_chains_responses_and_acknowledges_safety_checks(
    replay: ReplayServer, make_agent: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    check = {"id": "sc_1", "code": "malicious_instructions", "message": "The page asks for credentials."}
    script = replay.script(
        "responses",
        "capital of France",
        [
            response(computer_call({"type": "type", "text": "Paris"}, safety=[check])),
            response(computer_call({"type": "wait"}, {"type": "keypress", "keys": ["ENTER"]}, batched=True)),
        ],
    )
    trajectory = run(rollout(FRANCE, make_agent("operator")))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    assert trajectory.steps[0].policy_trace["acknowledged_safety_checks"] == [check]
    assert "acknowledges safety check sc_1 (malicious_instructions)" in caplog.text
    second = script.requests[1].body
    assert "previous_response_id" not in script.requests[0].body
    assert second["previous_response_id"] == script.turns[0]["id"]  # chained to the response it answers
    assert second["input"][0]["acknowledged_safety_checks"] == [check]
    assert trajectory.steps[1].actions == [{"type": "wait", "time": 1000}, {"type": "press", "keys": ["enter"]}]
    replay.clear()
    replay.script(
        "responses", "capital of France", [response(computer_call({"type": "type", "text": "x"}, safety=[check]))]
    )
    refused = run(rollout(FRANCE, make_agent("operator", acknowledge_safety_checks=False)))
    assert refused.status == "policy_error" and "malicious_instructions" in refused.error


def test_openai_compatible_trace_env_errors_and_relative_coordinates(
    replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    script = replay.script(
        "chat",
        "capital of France",
        [
            chat_completion('{"type": "custom", "action": "fly"}'),
            chat_completion(
                "click(x=500, y=500)\nwrite('Paris')\npress('enter')",
                choice={
                    "logprobs": {"content": [{"token": "click", "logprob": -0.1, "bytes": None, "top_logprobs": []}]}
                },
            ),
        ],
        frame=(640, 360),
        max_images=1,
    )
    agent = make_agent("openai", display_size=(640, 360), coordinates="relative", max_screenshots=1, logprobs=True)
    trajectory = run(rollout(FRANCE, agent))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    assert trajectory.steps[0].status == "action_error"
    feedback = script.requests[1].body["messages"][-1]["content"][0]["text"]
    assert "Your last action failed:" in feedback and "fly" in feedback
    assert trajectory.steps[1].actions[0]["point"] == {"x": 640, "y": 360}  # 0-1000 of a 1280x720 screen
    trace = trajectory.steps[1].policy_trace
    assert trace["completion"].startswith("click(") and trace["usage"]["completion_tokens"] == 12
    assert trace["logprobs"] == [{"token": "click", "logprob": -0.1}] and trace["format"] == "pyautogui"
    assert [m["role"] for m in trace["prompt"]] == ["system", "user", "assistant", "user"]
    assert trace["prompt"][1]["content"][1] == {"type": "text", "text": "(an earlier screenshot, omitted)"}
    assert trace["prompt"][3]["content"][1] == {"type": "image", "screenshot": 1}
    assert json.dumps(trace)  # JSON all the way (stored as is)


class HudStyle(Agent):
    """A HUD-style agent: only fetch_response; state per episode."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0

    def reset(self) -> None:
        super().reset()
        self.turns = 0

    async def fetch_response(self, observation: dict[str, Any]) -> tuple[list[Any], bool]:
        self.turns += 1
        if self.turns == 1:
            return [{"type": "type", "text": "Paris"}], False
        return [{"type": "response", "text": "Paris"}], True


class DuckPredict:
    """HUD's duck-typed style: a sync predict(observation) -> (actions, done), no act."""

    def predict(self, observation: Any) -> tuple[list[Any], bool]:
        return [TypeAction(text="Paris")], True


def test_hud_style_agents_run_in_jobs_and_groups() -> None:
    assert isinstance(HudStyle(), Agent) and isinstance(DuckPredict(), Agent)
    job = hud_gym.run_job(HudStyle, [FRANCE], "hud-style", group_size=3, max_concurrent=3)
    assert [t.reward for t in job.load_trajectories()] == [1.0] * 3  # one agent per run: each typed once
    group = run(rollout_group(FRANCE, HudStyle(), 2))
    assert group.rewards() == [1.0, 1.0]
    duck = run(rollout(FRANCE, DuckPredict()))
    # done without a response action: the episode ends with an empty response after the typing.
    assert duck.steps[0].actions[-1] == ResponseAction(text="").model_dump(mode="json", exclude_none=True)
    assert duck.status == "ok" and duck.reward == 0.0
    env = hud_gym.make(FRANCE)  # the sync facade: act() from plain code runs predict on hud-gym's loop
    try:
        observation, info = env.reset(seed=0)
        agent = HudStyle()
        assert agent.act(observation, info) == [TypeAction(text="Paris")]
        assert agent.act(observation, info) == [ResponseAction(text="Paris")]
    finally:
        env.close()


def test_one_line_errors(replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(
        AgentConfigError, match=r"^ClaudeAgent needs an API key: pass api_key=\.\.\. or set ANTHROPIC_API_KEY$"
    ):
        ClaudeAgent()
    with pytest.raises(AgentConfigError, match="OPENAI_API_KEY"):
        OperatorAgent()
    with pytest.raises(AgentConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleAgent("m")
    with pytest.raises(AgentConfigError, match="model"):
        OpenAICompatibleAgent(base_url=replay.url)
    with pytest.raises(AgentConfigError, match="tool_version"):
        ClaudeAgent(api_key="k", tool_version="computer_1999")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    trajectory = run(rollout(FRANCE, OpenAICompatibleAgent("m", base_url=url, retry=FAST_RETRY)))
    assert (trajectory.status, trajectory.reward) == ("policy_error", None)
    assert "the server is unreachable (after 3 attempts)" in trajectory.error and url in trajectory.error

    def user_error(*args: str) -> str:
        result = CliRunner().invoke(app, ["run", "qa-basic", "--task", "capital-france", *args])
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
        return lines[0]

    assert "ANTHROPIC_API_KEY" in user_error("--agent", "claude")
    assert "OPENAI_API_KEY" in user_error("--agent", "operator", "--base-url", replay.url + "/v1")
    assert f"cannot reach the model server at {url}" in user_error(
        "--agent", "openai", "--model", "m", "--base-url", url
    )
    assert "needs the served model's name" in user_error("--agent", "openai", "--base-url", replay.url + "/v1")
    assert "--model configure the model agents" in user_error("--agent", "scripted", "--model", "m")


@pytest.mark.parametrize("kind", KINDS)
def test_hud_gym_run_with_a_model_agent(kind: str, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    script = replay.script(API[kind], "capital of France", [answer(kind, "Paris")])
    base_url = replay.url if kind == "claude" else replay.url + "/v1"
    model = {"claude": "claude-test", "operator": "computer-use-test", "openai": "vlm-test"}[kind]
    result = CliRunner().invoke(
        app,
        [
            "run",
            "qa-basic",
            "--task",
            "capital-france",
            "--agent",
            kind,
            "--model",
            model,
            "--base-url",
            base_url,
            "--max-tokens",
            "256",
            "--temperature",
            "0.5",
            "--system-prompt",
            "Be brief.",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["analytics"]["success_rate"] == 1.0, hud_gym.load_job(out["job"]["id"]).load_trajectories()[0].error
    assert out["job"]["metadata"]["agent"] == f"{kind} ({model})"
    body = script.requests[0].body
    assert body["model"] == model and body.get("temperature") == 0.5
    assert body.get("max_tokens", body.get("max_output_tokens")) == 256
    sent = body.get("system") or body.get("instructions") or body["messages"][0]["content"]
    assert "Be brief." in sent
