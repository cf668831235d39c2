"""Fixtures of the agent tests: the replay server (one per session, its scripts cleared for each
test) and the three model agents pointed at it through the official SDKs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agent_helpers import FAST_RETRY
from replay_server import ReplayServer

pytest.importorskip("anthropic")
pytest.importorskip("openai")

from hud_gym.agents import ClaudeAgent, OpenAICompatibleAgent, OperatorAgent


@pytest.fixture(scope="session")
def replay_server() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    yield server
    server.stop()


@pytest.fixture
def replay(replay_server: ReplayServer) -> Iterator[ReplayServer]:
    """The replay server with no scripts; the test fails if any request of ours failed a check."""
    replay_server.clear()
    yield replay_server
    problems = list(replay_server.problems)
    replay_server.clear()
    assert not problems, f"requests that broke the providers' rules: {problems}"


@pytest.fixture
def make_agent(replay: ReplayServer) -> Callable[..., Any]:
    """``make_agent("claude" | "operator" | "openai", **options)``: an agent talking to the replay server."""

    def make(kind: str, **options: Any) -> Any:
        options.setdefault("retry", FAST_RETRY)
        if kind == "claude":
            return ClaudeAgent(base_url=replay.url, api_key="test-key", **options)
        if kind == "operator":
            return OperatorAgent(base_url=replay.url + "/v1", api_key="test-key", **options)
        options.setdefault("model", "vlm-test")
        return OpenAICompatibleAgent(base_url=replay.url + "/v1", **options)

    return make
