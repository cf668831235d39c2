"""Agents for the bounds tests, importable by ``hud-gym run --agent bounds_agents:NAME`` from this folder."""

from __future__ import annotations

from typing import Any

from hud_gym.actions import ResponseAction
from hud_gym.wrappers.rollout.grpo import PolicyOutput


class HeavyTrace:
    """A policy trace holding 512 KiB (a trainer's tensors), stored as its short ``str``."""

    def __init__(self) -> None:
        self.data = bytearray(512 * 1024)

    def __str__(self) -> str:
        return "heavy trace"


def answer_with_trace(observation: dict[str, Any], history: list[Any], task: Any) -> PolicyOutput:
    """Answer ``4`` at once, with a :class:`HeavyTrace` on the step."""
    return PolicyOutput(actions=[ResponseAction(text="4")], trace=HeavyTrace())
