"""Constants shared by the agent tests (a module of its own: ``conftest`` names another module
when the whole suite runs)."""

from __future__ import annotations

from hud_gym.agents import RetryPolicy

FAST_RETRY = RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05)
"""Retries without the production waits (the behaviour is the same)."""

API = {"claude": "anthropic", "operator": "responses", "openai": "chat"}
"""The replay server's API name of each agent kind."""
